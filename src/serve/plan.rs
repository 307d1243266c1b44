//! Turning a validated request into generation rows: sampling settings, prompts, stops.

use agent_rl_core::generation::{GenerationRow, SamplingConfig};
use agent_rl_core::{ChatTokenizer, Message, Role, ToolSpec};
use serde_json::Value;

use super::bounded_encode::encode_within;
use super::error::ApiError;
use super::wire::{SamplingFields, WireMessage};

/// Most stop strings per request (OpenAI's limit).
const MAX_STOPS: usize = 4;
/// Most alternatives per token (OpenAI's limit).
pub(crate) const MAX_TOP_LOGPROBS: usize = 20;

/// What the handlers know about the served model.
#[derive(Debug, Clone)]
pub(crate) struct ModelLimits {
    /// Context length (`max_position_embeddings`).
    pub max_positions: usize,
    /// Embedding rows (ids must be below it).
    pub vocab_size: usize,
    /// Largest `max_tokens` accepted.
    pub max_tokens_limit: usize,
    /// Budget when none is given.
    pub default_max_tokens: usize,
    /// Largest `n`.
    pub max_n: usize,
}

/// The request's sampling, validated: everything but the prompts.
#[derive(Debug, Clone)]
pub(crate) struct SamplingPlan {
    /// Choices per prompt.
    pub n: usize,
    /// Sampling settings (budget filled in per prompt).
    pub sampling: SamplingConfig,
    /// The budget asked for, if any.
    pub max_tokens: Option<usize>,
    /// Stop strings.
    pub stops: Vec<String>,
    /// Stream server-sent events.
    pub stream: bool,
    /// Send a usage chunk at the end of a stream.
    pub include_usage: bool,
}

impl SamplingPlan {
    /// Validates the shared fields.
    ///
    /// # Errors
    /// 400 naming the field.
    pub fn from_fields(fields: &SamplingFields, limits: &ModelLimits) -> Result<Self, ApiError> {
        let n = fields.n.unwrap_or(1);
        if n == 0 || n > limits.max_n {
            return Err(ApiError::invalid(
                "n",
                format!("n must be in 1..={}, got {n}", limits.max_n),
            ));
        }
        let temperature = fields.temperature.unwrap_or(1.0);
        if !(temperature.is_finite() && (0.0..=2.0).contains(&temperature)) {
            return Err(ApiError::invalid(
                "temperature",
                "temperature must be in [0, 2]",
            ));
        }
        let top_p = fields.top_p.unwrap_or(1.0);
        if !(top_p > 0.0 && top_p <= 1.0) {
            return Err(ApiError::invalid("top_p", "top_p must be in (0, 1]"));
        }
        let top_k = match fields.top_k {
            None | Some(-1) => 0,
            Some(k) if k >= 0 => k as usize,
            Some(k) => {
                return Err(ApiError::invalid(
                    "top_k",
                    format!("top_k must be -1 (off) or >= 0, got {k}"),
                ));
            }
        };
        let min_p = fields.min_p.unwrap_or(0.0);
        if !(0.0..=1.0).contains(&min_p) {
            return Err(ApiError::invalid("min_p", "min_p must be in [0, 1]"));
        }
        for (name, value) in [
            ("presence_penalty", fields.presence_penalty),
            ("frequency_penalty", fields.frequency_penalty),
        ] {
            if value.is_some_and(|v| v != 0.0) {
                return Err(ApiError::invalid(
                    name,
                    format!("{name} is not supported by this server (send 0 or omit it)"),
                ));
            }
        }
        let max_tokens = fields.max_completion_tokens.or(fields.max_tokens);
        if let Some(budget) = max_tokens {
            let param = if fields.max_completion_tokens.is_some() {
                "max_completion_tokens"
            } else {
                "max_tokens"
            };
            if budget == 0 || budget > limits.max_tokens_limit {
                return Err(ApiError::invalid(
                    param,
                    format!(
                        "{param} must be in 1..={} on this server, got {budget}",
                        limits.max_tokens_limit
                    ),
                ));
            }
        }
        let stops = fields
            .stop
            .clone()
            .map(|s| s.into_vec())
            .unwrap_or_default();
        if stops.len() > MAX_STOPS || stops.iter().any(String::is_empty) {
            return Err(ApiError::invalid(
                "stop",
                format!("stop takes at most {MAX_STOPS} non-empty strings"),
            ));
        }
        let sampling = SamplingConfig {
            max_new_tokens: 0,
            temperature,
            top_k,
            top_p,
            min_p,
            seed: fields.seed.unwrap_or_else(rand::random),
            stop_token_ids: Vec::new(),
            stop_strings: stops.clone(),
            ignore_eos: fields.ignore_eos,
            decode_shards: 1,
        };
        Ok(Self {
            n,
            sampling,
            max_tokens,
            stops,
            stream: fields.stream,
            include_usage: fields.stream_options.is_some_and(|o| o.include_usage),
        })
    }

    /// The `n` rows of one prompt, checked against the vocabulary and the context.
    ///
    /// # Errors
    /// 400 naming `param` when the prompt is empty, holds an id outside the vocabulary, or
    /// does not leave room for the budget.
    pub fn rows(
        &self,
        prompt: &[u32],
        top_logprobs: usize,
        limits: &ModelLimits,
        param: &str,
    ) -> Result<Vec<GenerationRow>, ApiError> {
        if prompt.is_empty() {
            return Err(ApiError::invalid(param, "the prompt is empty"));
        }
        if let Some(&id) = prompt.iter().find(|&&id| id as usize >= limits.vocab_size) {
            return Err(ApiError::invalid(
                param,
                format!(
                    "token id {id} is outside the vocabulary of {} ids",
                    limits.vocab_size
                ),
            ));
        }
        let room = limits.max_positions.saturating_sub(prompt.len());
        let budget = match self.max_tokens {
            Some(budget) if budget > room => {
                return Err(ApiError::invalid(
                    if param == "messages" {
                        "max_tokens"
                    } else {
                        param
                    },
                    format!(
                        "this model's context is {} tokens; the prompt has {} and {budget} more were requested",
                        limits.max_positions,
                        prompt.len()
                    ),
                ));
            }
            Some(budget) => budget,
            None => limits.default_max_tokens.min(room),
        };
        if budget == 0 {
            return Err(ApiError::invalid(
                param,
                format!(
                    "the prompt ({} tokens) fills the model's context of {}",
                    prompt.len(),
                    limits.max_positions
                ),
            ));
        }
        let sampling = SamplingConfig {
            max_new_tokens: budget,
            ..self.sampling.clone()
        };
        Ok((0..self.n)
            .map(|stream| GenerationRow {
                prompt: prompt.to_vec(),
                sampling: sampling.clone(),
                stream: stream as u64,
                top_logprobs,
            })
            .collect())
    }
}

/// `tool_choice`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ToolChoice {
    /// Never parse calls out of the output.
    None,
    /// The model decides.
    Auto,
    /// The output starts with a call (the tool-call opening is put after the prompt).
    Required,
    /// The output calls this function (opening and name put after the prompt).
    Named(String),
}

impl ToolChoice {
    /// Parses `tool_choice` against the tools offered.
    ///
    /// # Errors
    /// 400 for an unknown value, or a forced call with no (or without that) tool.
    pub fn parse(value: Option<&Value>, tools: &[ToolSpec]) -> Result<Self, ApiError> {
        let choice = match value {
            None | Some(Value::Null) => {
                if tools.is_empty() {
                    Self::None
                } else {
                    Self::Auto
                }
            }
            Some(Value::String(s)) if s == "none" => Self::None,
            Some(Value::String(s)) if s == "auto" => Self::Auto,
            Some(Value::String(s)) if s == "required" => Self::Required,
            Some(Value::Object(map)) => match map
                .get("function")
                .and_then(|f| f.get("name"))
                .and_then(Value::as_str)
            {
                Some(name) => Self::Named(name.to_owned()),
                None => {
                    return Err(ApiError::invalid(
                        "tool_choice",
                        "a tool_choice object needs `function.name`",
                    ));
                }
            },
            Some(other) => {
                return Err(ApiError::invalid(
                    "tool_choice",
                    format!(
                        "tool_choice must be \"none\", \"auto\", \"required\" or a function object, got {other}"
                    ),
                ));
            }
        };
        match &choice {
            Self::Required if tools.is_empty() => Err(ApiError::invalid(
                "tool_choice",
                "tool_choice `required` needs `tools`",
            )),
            Self::Named(name) if !tools.iter().any(|t| t.name() == name) => Err(ApiError::invalid(
                "tool_choice",
                format!("tool_choice names `{name}`, which is not among `tools`"),
            )),
            _ => Ok(choice),
        }
    }

    /// Text forced after the generation prompt.
    pub fn prefill(&self, tool_call_prefix: &str) -> String {
        match self {
            Self::Required => tool_call_prefix.to_owned(),
            Self::Named(name) => format!(
                "{tool_call_prefix}{{\"name\": {}, \"arguments\": ",
                Value::String(name.clone())
            ),
            Self::None | Self::Auto => String::new(),
        }
    }
}

/// The messages as core [`Message`]s: text parts joined, `developer` read as `system`, tool
/// results given the name of the call they answer when they carry none.
///
/// # Errors
/// 400 naming `messages[i]` for an unknown role or content that is not text.
pub(crate) fn core_messages(messages: &[WireMessage]) -> Result<Vec<Message>, ApiError> {
    if messages.is_empty() {
        return Err(ApiError::invalid("messages", "messages must not be empty"));
    }
    let mut out: Vec<Message> = Vec::with_capacity(messages.len());
    for (index, wire) in messages.iter().enumerate() {
        let role = match wire.role.as_str() {
            "system" | "developer" => Role::System,
            "user" => Role::User,
            "assistant" => Role::Assistant,
            "tool" => Role::Tool,
            other => {
                return Err(ApiError::invalid(
                    format!("messages[{index}].role"),
                    format!("unknown role `{other}`"),
                ));
            }
        };
        let content = match &wire.content {
            Value::Null => None,
            Value::String(text) => Some(text.clone()),
            Value::Array(parts) => {
                let mut text = String::new();
                for part in parts {
                    match part.get("text").and_then(Value::as_str) {
                        Some(piece)
                            if part
                                .get("type")
                                .and_then(Value::as_str)
                                .is_none_or(|t| t == "text") =>
                        {
                            text.push_str(piece)
                        }
                        _ => {
                            return Err(ApiError::invalid(
                                format!("messages[{index}].content"),
                                "only text content parts are supported",
                            ));
                        }
                    }
                }
                Some(text)
            }
            _ => {
                return Err(ApiError::invalid(
                    format!("messages[{index}].content"),
                    "content must be a string, a list of text parts, or null",
                ));
            }
        };
        let mut name = wire.name.clone();
        if role == Role::Tool && name.is_none() {
            name = wire.tool_call_id.as_ref().and_then(|id| {
                out.iter()
                    .rev()
                    .flat_map(|m| &m.tool_calls)
                    .find(|c| c.id.as_ref() == Some(id))
                    .map(|c| c.name.clone())
            });
        }
        out.push(Message {
            role,
            content,
            tool_calls: wire.tool_calls.clone().unwrap_or_default(),
            tool_call_id: wire.tool_call_id.clone(),
            name,
        });
    }
    Ok(out)
}

/// Encodes the conversation with the chat template plus the forced prefill, refusing it as
/// soon as it clearly exceeds the context.
///
/// # Errors
/// 400 on `messages` when the template cannot render the conversation or the prompt does not
/// fit the context.
pub(crate) fn chat_prompt(
    tokenizer: &ChatTokenizer,
    messages: &[Message],
    tools: &[ToolSpec],
    prefill: &str,
    limits: &ModelLimits,
) -> Result<Vec<u32>, ApiError> {
    let text = tokenizer
        .apply_chat_template(messages, tools, true)
        .map_err(|err| {
            ApiError::invalid(
                "messages",
                format!("the chat template cannot render this conversation: {err}"),
            )
        })?;
    text_prompt(tokenizer, &format!("{text}{prefill}"), limits, "messages")
}

/// Encodes a text prompt, refusing it as soon as it clearly exceeds the context.
///
/// # Errors
/// 400 naming `param` when the text does not fit the context or cannot be encoded.
pub(crate) fn text_prompt(
    tokenizer: &ChatTokenizer,
    text: &str,
    limits: &ModelLimits,
    param: &str,
) -> Result<Vec<u32>, ApiError> {
    encode_within(tokenizer, text, limits.max_positions, param)
}
