//! [`RemotePolicy`]: a [`Policy`] answered by any OpenAI-compatible endpoint.

use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use agent_rl_core::generation::{FinishReason, Generation, SamplingConfig};
use agent_rl_core::tool_calls::MalformedToolCall;
use agent_rl_core::{
    ChatRequest, ChatTokenizer, Completion, CoreError, HermesToolCallParser, Message, ParsedOutput,
    Policy, ToolCall, ToolCallParser,
};
use serde_json::{Map, Value, json};

use super::config::RemoteConfig;
use super::http::Http;

/// A chat policy behind an OpenAI-compatible HTTP API (`agent-rl serve`, vLLM, SGLang,
/// llama.cpp, OpenAI).
///
/// Requests run concurrently (up to `max_concurrency`). Each asks for log-probabilities and,
/// with vLLM's `return_token_ids`, for the token ids: when the answer carries them
/// (`agent-rl serve` always does) the completion is token-exact and decoded and parsed here
/// as [`agent_rl_core::BurnPolicy`] would; otherwise the text is re-tokenized with the local
/// tokenizer (if one was given) and counted in [`RemotePolicy::retokenized`], since the ids may
/// then differ from what the model sampled.
///
/// Request `i` of a call samples with seed `sampling.seed + i` (wrapping), so equal prompts in
/// one call get different samples and a call is reproducible on a server that honours `seed`.
pub struct RemotePolicy {
    http: Http,
    model: String,
    max_concurrency: usize,
    tokenizer: Option<Arc<ChatTokenizer>>,
    parser: Arc<dyn ToolCallParser>,
    retokenized: AtomicU64,
}

impl std::fmt::Debug for RemotePolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemotePolicy")
            .field("endpoint", &self.http.url(""))
            .field("model", &self.model)
            .finish()
    }
}

impl RemotePolicy {
    /// A client for `config` (the API key is read from `config.api_key_env` now).
    ///
    /// # Errors
    /// [`CoreError::InvalidArgument`] for a bad config or an unset key variable.
    pub fn new(config: &RemoteConfig) -> Result<Self, CoreError> {
        Ok(Self {
            http: Http::new(config)?,
            model: config.model.clone(),
            max_concurrency: config.max_concurrency,
            tokenizer: None,
            parser: Arc::new(HermesToolCallParser::default()),
            retokenized: AtomicU64::new(0),
        })
    }

    /// Decodes returned token ids, and re-tokenizes answers without them, with `tokenizer`
    /// (the served model's).
    #[must_use]
    pub fn with_tokenizer(mut self, tokenizer: Arc<ChatTokenizer>) -> Self {
        self.tokenizer = Some(tokenizer);
        self
    }

    /// Parses tool calls out of decoded text with `parser` (default: Hermes / Qwen2.5).
    #[must_use]
    pub fn with_parser(mut self, parser: Box<dyn ToolCallParser>) -> Self {
        self.parser = Arc::from(parser);
        self
    }

    /// Another client to the same endpoint and model, sharing this one's connection pool,
    /// tokenizer and parser, with its own [`Self::retokenized`] count (e.g. one per simulated
    /// customer).
    #[must_use]
    pub fn fork(&self) -> Self {
        Self {
            http: self.http.clone(),
            model: self.model.clone(),
            max_concurrency: self.max_concurrency,
            tokenizer: self.tokenizer.clone(),
            parser: Arc::clone(&self.parser),
            retokenized: AtomicU64::new(0),
        }
    }

    /// Completions so far whose token ids did not come from the server (re-tokenized text, or
    /// none at all without a tokenizer): their ids and log-probabilities are not the sampler's.
    pub fn retokenized(&self) -> u64 {
        self.retokenized.load(Ordering::Relaxed)
    }

    /// Asks the server to load the PEFT adapter in `dir` (a path on the server's machine) as
    /// `name` — vLLM's `POST /v1/load_lora_adapter`, which `agent-rl serve
    /// --allow-runtime-lora` and `vllm serve --enable-lora` (with runtime updating allowed)
    /// answer. Loading a name again replaces the adapter: this is how a trainer publishes each
    /// step's weights. Requests then reach it with `model` = `name`.
    ///
    /// # Errors
    /// [`CoreError::Remote`] when the server refuses or cannot load it.
    pub fn load_lora_adapter(&self, name: &str, dir: &std::path::Path) -> Result<(), CoreError> {
        let body = json!({"lora_name": name, "lora_path": dir.display().to_string()});
        self.http.post("/load_lora_adapter", &body).map(|_| ())
    }

    /// Asks the server to replace its base weights with the Hugging Face checkpoint in `dir` (a
    /// path on the server's machine, the served model's architecture) — SGLang's `POST
    /// /update_weights_from_disk`, which `agent-rl serve --allow-weight-updates` answers too.
    /// This is how a full fine-tuning trainer publishes each step's weights. Requests keep
    /// naming the base model.
    ///
    /// # Errors
    /// [`CoreError::Remote`] when the server refuses or cannot load it.
    pub fn update_weights_from_disk(&self, dir: &std::path::Path) -> Result<(), CoreError> {
        let body = json!({"model_path": dir.display().to_string()});
        let url = self.http.root_url("/update_weights_from_disk");
        self.http.post_to(url, &body).map(|_| ())
    }

    /// Asks the server to forget adapter `name` (vLLM's `POST /v1/unload_lora_adapter`).
    ///
    /// # Errors
    /// [`CoreError::Remote`] when the server refuses (e.g. no such adapter).
    pub fn unload_lora_adapter(&self, name: &str) -> Result<(), CoreError> {
        self.http
            .post("/unload_lora_adapter", &json!({"lora_name": name}))
            .map(|_| ())
    }

    /// Sends later requests to `model` (e.g. an adapter just loaded).
    pub fn set_model(&mut self, model: impl Into<String>) {
        self.model = model.into();
    }

    /// The sampling fields of request `index` of a call (both endpoints).
    fn sampling_body(&self, sampling: &SamplingConfig, index: usize) -> Value {
        let mut body = json!({
            "model": self.model,
            "n": 1,
            "temperature": sampling.temperature,
            "top_p": sampling.top_p,
            "max_tokens": sampling.max_new_tokens,
            "seed": sampling.seed.wrapping_add(index as u64),
            "return_token_ids": true,
        });
        if !sampling.stop_strings.is_empty() {
            body["stop"] = json!(sampling.stop_strings);
        }
        if sampling.top_k > 0 {
            body["top_k"] = json!(sampling.top_k);
        }
        if sampling.min_p > 0.0 {
            body["min_p"] = json!(sampling.min_p);
        }
        if sampling.ignore_eos {
            body["ignore_eos"] = json!(true);
        }
        body
    }

    /// The request body of one chat request.
    fn body(&self, request: &ChatRequest, sampling: &SamplingConfig, index: usize) -> Value {
        let messages: Vec<Value> = request.messages.iter().map(openai_message).collect();
        let mut body = self.sampling_body(sampling, index);
        body["messages"] = Value::Array(messages);
        body["logprobs"] = json!(true);
        if !request.tools.is_empty() {
            body["tools"] = json!(request.tools);
        }
        body
    }

    /// Runs `one(i)` for `i` in `0..count` on up to `max_concurrency` threads, in order.
    fn fan_out<T: Send>(
        &self,
        count: usize,
        path: &str,
        one: impl Fn(usize) -> Result<T, CoreError> + Sync,
    ) -> Result<Vec<T>, CoreError> {
        let next = AtomicUsize::new(0);
        let results: Mutex<Vec<Option<Result<T, CoreError>>>> =
            Mutex::new((0..count).map(|_| None).collect());
        std::thread::scope(|scope| {
            for _ in 0..self.max_concurrency.min(count) {
                scope.spawn(|| {
                    loop {
                        let index = next.fetch_add(1, Ordering::Relaxed);
                        if index >= count {
                            break;
                        }
                        let result = one(index);
                        if let Ok(mut slots) = results.lock() {
                            slots[index] = Some(result);
                        }
                    }
                });
            }
        });
        let slots = results.into_inner().map_err(|_| CoreError::Remote {
            endpoint: self.http.url(path),
            reason: "a request thread panicked".into(),
        })?;
        slots
            .into_iter()
            .map(|slot| {
                slot.unwrap_or_else(|| {
                    Err(CoreError::Remote {
                        endpoint: self.http.url(path),
                        reason: "a request was never sent".into(),
                    })
                })
            })
            .collect()
    }

    /// Token in, token out: samples one continuation of each prompt (token ids, e.g. a chat
    /// template rendered locally) through `POST /v1/completions`, returning the sampled ids and
    /// their log-probabilities exactly as the server reports them — nothing is decoded and
    /// re-encoded, so RL trainers can score the very tokens the server sampled. Request `i`
    /// samples with seed `sampling.seed + i`. Needs a server that returns `token_ids` (`agent-rl
    /// serve` always; vLLM with `return_token_ids`).
    ///
    /// # Errors
    /// [`CoreError::InvalidArgument`] for invalid sampling settings or `stop_token_ids` (not
    /// sent: `agent-rl serve` has no such field); [`CoreError::Remote`] for transport failures
    /// and answers without token ids or with a log-probability missing.
    pub fn complete_ids(
        &self,
        prompts: &[Vec<u32>],
        sampling: &SamplingConfig,
    ) -> Result<Vec<Generation>, CoreError> {
        sampling.validate()?;
        if !sampling.stop_token_ids.is_empty() {
            return Err(CoreError::InvalidArgument {
                field: "sampling.stop_token_ids".into(),
                reason: "is not sent to remote endpoints; use eos ids or stop strings".into(),
            });
        }
        self.fan_out(prompts.len(), "/completions", |index| {
            let mut body = self.sampling_body(sampling, index);
            body["prompt"] = json!(prompts[index]);
            body["logprobs"] = json!(0);
            let answer = self.http.post_json("/completions", &body)?;
            self.generation(&answer)
        })
    }

    /// Turns one `/v1/completions` answer into a generation (ids and log-probabilities required).
    fn generation(&self, answer: &Value) -> Result<Generation, CoreError> {
        let remote = |reason: &str| CoreError::Remote {
            endpoint: self.http.url("/completions"),
            reason: reason.into(),
        };
        let choice = &answer["choices"][0];
        let token_ids: Vec<u32> = choice["token_ids"]
            .as_array()
            .ok_or_else(|| {
                remote(
                    "the answer has no `choices[0].token_ids`; token-level rollouts need a server \
                     that returns them (agent-rl serve, or vLLM with return_token_ids)",
                )
            })?
            .iter()
            .map(|v| v.as_u64().and_then(|id| u32::try_from(id).ok()))
            .collect::<Option<_>>()
            .ok_or_else(|| remote("`choices[0].token_ids` holds a value that is not a token id"))?;
        let logprobs: Vec<f32> = choice["logprobs"]["token_logprobs"]
            .as_array()
            .map(|values| {
                values
                    .iter()
                    .map(|v| v.as_f64().map(|lp| lp as f32))
                    .collect::<Option<Vec<_>>>()
            })
            .unwrap_or_default()
            .filter(|values| values.len() == token_ids.len())
            .ok_or_else(|| {
                remote("the answer lacks a log-probability for every token (`logprobs.token_logprobs`)")
            })?;
        let finish_reason = match choice["finish_reason"].as_str() {
            Some("length") => FinishReason::Length,
            _ => FinishReason::Stop,
        };
        Ok(Generation {
            token_ids,
            logprobs,
            finish_reason,
            top_logprobs: Vec::new(),
        })
    }

    /// Turns one chat answer into a completion.
    fn completion(&self, answer: &Value) -> Result<Completion, CoreError> {
        let endpoint = self.http.url("/chat/completions");
        let choice = &answer["choices"][0];
        if !choice.is_object() {
            return Err(CoreError::Remote {
                endpoint,
                reason: "the answer has no `choices[0]`".into(),
            });
        }
        let finish_reason = match choice["finish_reason"].as_str() {
            Some("length") => FinishReason::Length,
            _ => FinishReason::Stop,
        };
        let returned_ids: Option<Vec<u32>> = choice["token_ids"].as_array().map(|ids| {
            ids.iter()
                .filter_map(|v| v.as_u64().map(|id| id as u32))
                .collect()
        });
        let mut logprobs: Vec<f32> = choice["logprobs"]["content"]
            .as_array()
            .map(|entries| {
                entries
                    .iter()
                    .map(|e| e["logprob"].as_f64().unwrap_or(f64::NAN) as f32)
                    .collect()
            })
            .unwrap_or_default();
        if let (Some(ids), Some(tokenizer)) = (&returned_ids, &self.tokenizer) {
            let text = tokenizer.decode(ids, true)?;
            let parsed = self.parser.parse(&text);
            logprobs.resize(ids.len(), f32::NAN);
            return Ok(Completion {
                token_ids: ids.clone(),
                logprobs,
                text,
                parsed,
                finish_reason,
            });
        }
        let message = &choice["message"];
        let content = message["content"].as_str().unwrap_or("").to_owned();
        let mut parsed = ParsedOutput {
            content: content.trim().to_owned(),
            ..ParsedOutput::default()
        };
        for call in message["tool_calls"].as_array().into_iter().flatten() {
            match serde_json::from_value::<ToolCall>(call.clone()) {
                Ok(call) => parsed.tool_calls.push(call),
                Err(err) => parsed.malformed.push(MalformedToolCall {
                    raw: call.to_string(),
                    reason: err.to_string(),
                }),
            }
        }
        let token_ids = match (returned_ids, &self.tokenizer) {
            (Some(ids), _) => ids,
            (None, tokenizer) => {
                self.retokenized.fetch_add(1, Ordering::Relaxed);
                let ids = match tokenizer {
                    Some(tokenizer) => tokenizer.encode(&content)?,
                    None => Vec::new(),
                };
                logprobs.clear();
                ids
            }
        };
        logprobs.resize(token_ids.len(), f32::NAN);
        Ok(Completion {
            token_ids,
            logprobs,
            text: content,
            parsed,
            finish_reason,
        })
    }
}

/// A message in OpenAI's request shape (tool-call arguments as a JSON string).
fn openai_message(message: &Message) -> Value {
    let mut out = Map::new();
    out.insert("role".into(), json!(message.role.as_str()));
    out.insert("content".into(), json!(message.content));
    if !message.tool_calls.is_empty() {
        let calls: Vec<Value> = message
            .tool_calls
            .iter()
            .enumerate()
            .map(|(i, call)| {
                json!({"id": call.id.clone().unwrap_or_else(|| format!("call_{i}")), "type": "function",
                       "function": {"name": call.name, "arguments": call.arguments.to_string()}})
            })
            .collect();
        out.insert("tool_calls".into(), Value::Array(calls));
    }
    if let Some(id) = &message.tool_call_id {
        out.insert("tool_call_id".into(), json!(id));
    }
    if let Some(name) = &message.name {
        out.insert("name".into(), json!(name));
    }
    Value::Object(out)
}

impl Policy for RemotePolicy {
    fn generate(
        &mut self,
        requests: &[ChatRequest],
        sampling: &SamplingConfig,
    ) -> Result<Vec<Completion>, CoreError> {
        sampling.validate()?;
        self.fan_out(requests.len(), "/chat/completions", |index| {
            self.http
                .post_json(
                    "/chat/completions",
                    &self.body(&requests[index], sampling, index),
                )
                .and_then(|answer| self.completion(&answer))
        })
    }
}

impl agent_rl_core::generation::TokenGenerator for RemotePolicy {
    fn generate_ids(
        &self,
        contexts: &[Vec<u32>],
        sampling: &SamplingConfig,
    ) -> Result<Vec<Generation>, CoreError> {
        self.complete_ids(contexts, sampling)
    }
}
