//! The HTTP routes: `/v1/models`, `/v1/chat/completions`, `/v1/completions`, vLLM's adapter
//! routes, SGLang's `/update_weights_from_disk`, `/metrics`, `/health`. Every failure is an OpenAI-shaped JSON error with a 4xx/5xx status.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::{Arc, RwLock};

use agent_rl_core::{ChatTokenizer, ToolCallParser};
use axum::Router;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use tokio::sync::mpsc::{UnboundedReceiver, unbounded_channel};
use tokio::sync::oneshot;

use super::auth::ApiKey;
use super::engine::{Command, Engine, Job, JobEvent};
use super::error::ApiError;
use super::plan::{
    MAX_TOP_LOGPROBS, ModelLimits, SamplingPlan, ToolChoice, chat_prompt, core_messages,
};
use super::response::{
    chat_logprobs, chat_message, completion_logprobs, final_text, fresh_id, unix_now, usage,
};
use super::stream::{StreamKind, StreamPlan, sse_response};
use super::wire::{
    ChatCompletionRequest, CompletionRequest, LoadLoraRequest, PromptField, UnloadLoraRequest,
    UpdateWeightsRequest,
};
use agent_rl_core::generation::{Generation, GenerationRow};

/// Shared state of the handlers.
pub(crate) struct AppState {
    pub engine: Engine,
    pub tokenizer: Arc<ChatTokenizer>,
    pub parser: Arc<dyn ToolCallParser>,
    pub limits: ModelLimits,
    pub model_name: String,
    pub tool_call_prefix: String,
    pub max_request_bytes: usize,
    pub api_key: Option<ApiKey>,
    pub created: u64,
    /// `/v1/load_lora_adapter` and `/v1/unload_lora_adapter` are allowed.
    pub allow_runtime_lora: bool,
    /// `/update_weights_from_disk` is allowed.
    pub allow_weight_updates: bool,
    /// Names of the loaded adapters.
    pub adapters: RwLock<BTreeSet<String>>,
}

/// The router over `state`.
pub(crate) fn router(state: Arc<AppState>) -> Router {
    let limit = state.max_request_bytes;
    Router::new()
        .route("/v1/models", get(models))
        .route("/v1/chat/completions", post(chat))
        .route("/v1/completions", post(completions))
        .route("/v1/load_lora_adapter", post(load_lora))
        .route("/v1/unload_lora_adapter", post(unload_lora))
        .route("/update_weights_from_disk", post(update_weights))
        .route("/metrics", get(metrics))
        .route("/health", get(|| async { StatusCode::OK }))
        .fallback(|| async {
            ApiError {
                status: StatusCode::NOT_FOUND,
                message: "no such endpoint".into(),
                kind: "invalid_request_error",
                param: None,
                code: Some("not_found"),
            }
        })
        .layer(DefaultBodyLimit::max(limit))
        .with_state(state)
}

impl AppState {
    fn authorize(&self, headers: &HeaderMap) -> Result<(), ApiError> {
        self.api_key
            .as_ref()
            .map_or(Ok(()), |key| key.check(headers))
    }

    fn parse<T: DeserializeOwned>(
        &self,
        body: Result<Bytes, BytesRejection>,
    ) -> Result<T, ApiError> {
        let body = body.map_err(|rejection| {
            if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
                ApiError::too_large(self.max_request_bytes)
            } else {
                ApiError::bad_json(rejection.body_text())
            }
        })?;
        serde_json::from_slice(&body)
            .map_err(|err| ApiError::bad_json(format!("invalid request body: {err}")))
    }

    /// The adapter a `model` name selects (`None`: the base model).
    fn check_model(&self, name: &str) -> Result<Option<String>, ApiError> {
        if name == self.model_name {
            return Ok(None);
        }
        let known = self.adapters.read().is_ok_and(|names| names.contains(name));
        if known {
            Ok(Some(name.to_owned()))
        } else {
            Err(ApiError::unknown_model(name))
        }
    }

    fn submit(
        &self,
        adapter: Option<String>,
        rows: Vec<GenerationRow>,
        stops: Vec<String>,
        stream: bool,
    ) -> Result<UnboundedReceiver<JobEvent>, ApiError> {
        let (events, receiver) = unbounded_channel();
        self.engine.submit(Job {
            adapter,
            rows,
            stops,
            stream_tokens: stream,
            events,
        })?;
        Ok(receiver)
    }

    /// Sends the worker the command `make` builds around a reply channel and waits for the
    /// reply.
    async fn ask<T>(
        &self,
        make: impl FnOnce(oneshot::Sender<T>) -> Command,
    ) -> Result<T, ApiError> {
        let (reply, answer) = oneshot::channel();
        self.engine.command(make(reply))?;
        answer
            .await
            .map_err(|_| ApiError::internal("the generation worker stopped"))
    }

    fn check_lora_allowed(&self) -> Result<(), ApiError> {
        forbidden_unless(
            self.allow_runtime_lora,
            "loading adapters at run time is off (start the server with --allow-runtime-lora)",
            "lora_loading_disabled",
        )
    }

    fn check_weight_updates_allowed(&self) -> Result<(), ApiError> {
        forbidden_unless(
            self.allow_weight_updates,
            "replacing the weights at run time is off (start the server with \
             --allow-weight-updates)",
            "weight_updates_disabled",
        )
    }
}

/// 403 with `message` and `code` unless `allowed`.
fn forbidden_unless(allowed: bool, message: &str, code: &'static str) -> Result<(), ApiError> {
    if allowed {
        return Ok(());
    }
    Err(ApiError {
        status: StatusCode::FORBIDDEN,
        message: message.into(),
        kind: "invalid_request_error",
        param: None,
        code: Some(code),
    })
}

/// Waits for the job's generations.
async fn wait(mut events: UnboundedReceiver<JobEvent>) -> Result<Vec<Generation>, ApiError> {
    while let Some(event) = events.recv().await {
        if let JobEvent::Done(result) = event {
            return result.map_err(ApiError::internal);
        }
    }
    Err(ApiError::internal("the generation worker stopped"))
}

async fn models(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    state.authorize(&headers).map(|()| {
        let mut data = vec![json!({
            "id": state.model_name, "object": "model", "created": state.created,
            "owned_by": "agent-rl", "root": state.model_name, "parent": null,
            "max_model_len": state.limits.max_positions,
        })];
        if let Ok(names) = state.adapters.read() {
            data.extend(names.iter().map(|name| json!({
                "id": name, "object": "model", "created": state.created, "owned_by": "agent-rl",
                "root": name, "parent": state.model_name, "max_model_len": state.limits.max_positions,
            })));
        }
        axum::Json(json!({"object": "list", "data": data})).into_response()
    })
}

/// vLLM's `POST /v1/load_lora_adapter {"lora_name", "lora_path"}`: a PEFT adapter directory
/// on the server's disk, served under `lora_name`; loading a name again replaces it (so a
/// trainer can publish each step's adapter under one name).
async fn load_lora(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    state.authorize(&headers)?;
    state.check_lora_allowed()?;
    let request: LoadLoraRequest = state.parse(body)?;
    if request.lora_name.is_empty() || request.lora_name == state.model_name {
        return Err(ApiError::invalid(
            "lora_name",
            "lora_name must be non-empty and differ from the base model's name",
        ));
    }
    let loaded = state
        .ask(|reply| Command::LoadAdapter {
            name: request.lora_name.clone(),
            path: PathBuf::from(&request.lora_path),
            reply,
        })
        .await?;
    match loaded {
        Ok(()) => {
            if let Ok(mut names) = state.adapters.write() {
                names.insert(request.lora_name.clone());
            }
            Ok(format!(
                "Success: LoRA adapter '{}' added successfully.",
                request.lora_name
            )
            .into_response())
        }
        Err(message) => Err(ApiError::invalid(
            "lora_path",
            format!("cannot load the adapter: {message}"),
        )),
    }
}

/// SGLang's `POST /update_weights_from_disk {"model_path"}`: the served base weights are
/// replaced by the checkpoint (same architecture) between generation batches, and loaded
/// adapters are re-read onto them; answers SGLang's `{"success": true, "message"}`.
async fn update_weights(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    state.authorize(&headers)?;
    state.check_weight_updates_allowed()?;
    let request: UpdateWeightsRequest = state.parse(body)?;
    if let Some(format) = request.load_format.as_deref()
        && !matches!(format, "auto" | "safetensors")
    {
        return Err(ApiError::invalid(
            "load_format",
            format!("load_format `{format}` is not supported (auto or safetensors)"),
        ));
    }
    let loaded = state
        .ask(|reply| Command::LoadWeights {
            path: PathBuf::from(&request.model_path),
            reply,
        })
        .await?;
    match loaded {
        Ok(message) => Ok(axum::Json(json!({"success": true, "message": message})).into_response()),
        Err(message) => Err(ApiError::invalid(
            "model_path",
            format!("cannot load the weights: {message}"),
        )),
    }
}

/// vLLM's `POST /v1/unload_lora_adapter {"lora_name"}`.
async fn unload_lora(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    state.authorize(&headers)?;
    state.check_lora_allowed()?;
    let request: UnloadLoraRequest = state.parse(body)?;
    if let Ok(mut names) = state.adapters.write() {
        names.remove(&request.lora_name);
    }
    let removed = state
        .ask(|reply| Command::UnloadAdapter {
            name: request.lora_name.clone(),
            reply,
        })
        .await?;
    if removed {
        Ok(format!(
            "Success: LoRA adapter '{}' removed successfully.",
            request.lora_name
        )
        .into_response())
    } else {
        Err(ApiError {
            param: Some("lora_name".into()),
            ..ApiError::unknown_model(&request.lora_name)
        })
    }
}

async fn metrics(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    state
        .authorize(&headers)
        .map(|()| state.engine.metrics.prometheus().into_response())
}

async fn chat(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    state.authorize(&headers)?;
    let request: ChatCompletionRequest = state.parse(body)?;
    let adapter = state.check_model(&request.sampling.model)?;
    let plan = SamplingPlan::from_fields(&request.sampling, &state.limits)?;
    let top_logprobs = match request.top_logprobs {
        Some(_) if !request.logprobs => {
            return Err(ApiError::invalid(
                "top_logprobs",
                "top_logprobs needs `logprobs: true`",
            ));
        }
        Some(k) if k > MAX_TOP_LOGPROBS => {
            return Err(ApiError::invalid(
                "top_logprobs",
                format!("top_logprobs must be in 0..={MAX_TOP_LOGPROBS}"),
            ));
        }
        Some(k) => k,
        None => 0,
    };
    let tools = request.tools.clone().unwrap_or_default();
    let choice = ToolChoice::parse(request.tool_choice.as_ref(), &tools)?;
    let messages = core_messages(&request.messages)?;
    let prefill = choice.prefill(&state.tool_call_prefix);
    let prompt = chat_prompt(&state.tokenizer, &messages, &tools, &prefill)?;
    let rows = plan.rows(&prompt, top_logprobs, &state.limits, "messages")?;
    let parse_tools = !tools.is_empty() && choice != ToolChoice::None;
    let events = state.submit(adapter, rows, plan.stops.clone(), plan.stream)?;
    let id = fresh_id("chatcmpl-");
    let created = unix_now();
    if plan.stream {
        let stream = StreamPlan {
            kind: StreamKind::Chat {
                parse_tools,
                prefill,
            },
            id,
            created,
            model: request.sampling.model.clone(),
            stops: plan.stops,
            logprobs: request.logprobs,
            include_usage: plan.include_usage,
            prompt_tokens: prompt.len(),
            choice_index: (0..plan.n).collect(),
        };
        return Ok(sse_response(state, stream, events));
    }
    let generations = wait(events).await?;
    let mut choices = Vec::new();
    for (index, generation) in generations.iter().enumerate() {
        let (text, mut reason) = final_text(&state.tokenizer, generation, &plan.stops);
        let (message, calls) = chat_message(
            &format!("{prefill}{text}"),
            state.parser.as_ref(),
            parse_tools,
        );
        if calls && reason == "stop" {
            reason = "tool_calls";
        }
        let logprobs = if request.logprobs {
            chat_logprobs(&state.tokenizer, generation)
        } else {
            Value::Null
        };
        choices.push(
            json!({"index": index, "message": message, "logprobs": logprobs,
            "finish_reason": reason, "token_ids": generation.token_ids}),
        );
    }
    let completion_tokens = generations.iter().map(|g| g.token_ids.len()).sum();
    Ok(axum::Json(json!({
        "id": id, "object": "chat.completion", "created": created, "model": request.sampling.model,
        "choices": choices, "usage": usage(prompt.len(), completion_tokens),
        "prompt_token_ids": prompt,
    }))
    .into_response())
}

async fn completions(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    state.authorize(&headers)?;
    let request: CompletionRequest = state.parse(body)?;
    let adapter = state.check_model(&request.sampling.model)?;
    if request.echo {
        return Err(ApiError::invalid(
            "echo",
            "echo is not supported by this server",
        ));
    }
    if request.best_of.is_some_and(|b| b != 1) {
        return Err(ApiError::invalid(
            "best_of",
            "best_of is not supported by this server (send 1 or omit it)",
        ));
    }
    let top_logprobs = request.logprobs.unwrap_or(0);
    if top_logprobs > MAX_TOP_LOGPROBS {
        return Err(ApiError::invalid(
            "logprobs",
            format!("logprobs must be in 0..={MAX_TOP_LOGPROBS}"),
        ));
    }
    let plan = SamplingPlan::from_fields(&request.sampling, &state.limits)?;
    let encode = |text: &str| {
        state
            .tokenizer
            .encode(text)
            .map_err(|err| ApiError::invalid("prompt", err.to_string()))
    };
    let prompts: Vec<Vec<u32>> = match &request.prompt {
        PromptField::Text(text) => vec![encode(text)?],
        PromptField::Texts(texts) => texts.iter().map(|t| encode(t)).collect::<Result<_, _>>()?,
        PromptField::Ids(ids) => vec![ids.clone()],
        PromptField::IdLists(lists) => lists.clone(),
    };
    if prompts.is_empty() || prompts.len() * plan.n > state.limits.max_n.max(1) * 4 {
        return Err(ApiError::invalid(
            "prompt",
            "give between 1 and a few prompts (at most 4 × max_n sequences)",
        ));
    }
    let mut rows = Vec::new();
    for (index, prompt) in prompts.iter().enumerate() {
        rows.extend(plan.rows(
            prompt,
            top_logprobs,
            &state.limits,
            &format!("prompt[{index}]"),
        )?);
    }
    let events = state.submit(adapter, rows, plan.stops.clone(), plan.stream)?;
    let id = fresh_id("cmpl-");
    let created = unix_now();
    let prompt_tokens: usize = prompts.iter().map(Vec::len).sum();
    if plan.stream {
        let stream = StreamPlan {
            kind: StreamKind::Completion,
            id,
            created,
            model: request.sampling.model.clone(),
            stops: plan.stops,
            logprobs: request.logprobs.is_some(),
            include_usage: plan.include_usage,
            prompt_tokens,
            choice_index: (0..prompts.len() * plan.n).collect(),
        };
        return Ok(sse_response(state, stream, events));
    }
    let generations = wait(events).await?;
    let choices: Vec<Value> = generations
        .iter()
        .enumerate()
        .map(|(index, generation)| {
            let (text, reason) = final_text(&state.tokenizer, generation, &plan.stops);
            let logprobs = if request.logprobs.is_some() {
                completion_logprobs(&state.tokenizer, generation)
            } else {
                Value::Null
            };
            json!({"index": index, "text": text, "logprobs": logprobs, "finish_reason": reason,
                   "token_ids": generation.token_ids, "prompt_token_ids": prompts[index / plan.n]})
        })
        .collect();
    let completion_tokens = generations.iter().map(|g| g.token_ids.len()).sum();
    Ok(axum::Json(json!({
        "id": id, "object": "text_completion", "created": created, "model": request.sampling.model,
        "choices": choices, "usage": usage(prompt_tokens, completion_tokens),
    }))
    .into_response())
}
