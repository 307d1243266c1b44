//! Request bodies in OpenAI's JSON shapes (unknown fields are ignored, as OpenAI clients send
//! many; fields we cannot honour are rejected by the handlers, never silently dropped).

use agent_rl_core::{ToolCall, ToolSpec};
use serde::Deserialize;
use serde_json::Value;

/// `stop`: one string or a list.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum StopField {
    /// One stop string.
    One(String),
    /// Several (OpenAI allows up to 4).
    Many(Vec<String>),
}

impl StopField {
    /// The stop strings as a list.
    pub fn into_vec(self) -> Vec<String> {
        match self {
            StopField::One(s) => vec![s],
            StopField::Many(v) => v,
        }
    }
}

/// `stream_options`.
#[derive(Debug, Clone, Copy, PartialEq, Default, Deserialize)]
pub struct StreamOptions {
    /// Send a last chunk with `usage`.
    #[serde(default)]
    pub include_usage: bool,
}

/// Sampling fields shared by both endpoints.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
pub struct SamplingFields {
    /// The model (or adapter) name.
    pub model: String,
    /// Choices per prompt (default 1).
    pub n: Option<usize>,
    /// 0–2 (default 1; 0 = greedy).
    pub temperature: Option<f32>,
    /// Nucleus mass in (0, 1].
    pub top_p: Option<f32>,
    /// vLLM extension: keep the k most likely tokens.
    pub top_k: Option<i64>,
    /// vLLM extension: minimum probability relative to the top token.
    pub min_p: Option<f32>,
    /// Token budget.
    pub max_tokens: Option<usize>,
    /// Token budget (newer name; wins over `max_tokens`).
    pub max_completion_tokens: Option<usize>,
    /// Sampler seed (random when absent).
    pub seed: Option<u64>,
    /// Stop strings.
    pub stop: Option<StopField>,
    /// Stream server-sent events.
    #[serde(default)]
    pub stream: bool,
    /// Streaming options.
    pub stream_options: Option<StreamOptions>,
    /// vLLM extension: do not stop at eos.
    #[serde(default)]
    pub ignore_eos: bool,
    /// Unsupported unless 0.
    pub presence_penalty: Option<f32>,
    /// Unsupported unless 0.
    pub frequency_penalty: Option<f32>,
}

/// A message as clients send it (`content` a string, a list of text parts, or null).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct WireMessage {
    /// `system`, `developer`, `user`, `assistant` or `tool`.
    pub role: String,
    /// Text or text parts.
    #[serde(default)]
    pub content: Value,
    /// Calls made by an assistant message (`arguments` a JSON string or object).
    #[serde(default)]
    pub tool_calls: Option<Vec<ToolCall>>,
    /// For tool messages: the call answered.
    #[serde(default)]
    pub tool_call_id: Option<String>,
    /// Author or tool name.
    #[serde(default)]
    pub name: Option<String>,
}

/// `POST /v1/chat/completions`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ChatCompletionRequest {
    /// Sampling fields.
    #[serde(flatten)]
    pub sampling: SamplingFields,
    /// The conversation.
    pub messages: Vec<WireMessage>,
    /// Tools offered.
    #[serde(default)]
    pub tools: Option<Vec<ToolSpec>>,
    /// `none`, `auto`, `required` or `{"type": "function", "function": {"name": …}}`.
    #[serde(default)]
    pub tool_choice: Option<Value>,
    /// Return log-probabilities of the sampled tokens.
    #[serde(default)]
    pub logprobs: bool,
    /// Alternatives per token (0–20; needs `logprobs`).
    pub top_logprobs: Option<usize>,
}

/// `prompt` of `/v1/completions`: text, texts, token ids, or lists of token ids.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum PromptField {
    /// One text.
    Text(String),
    /// Several texts.
    Texts(Vec<String>),
    /// One prompt as token ids.
    Ids(Vec<u32>),
    /// Several prompts as token ids.
    IdLists(Vec<Vec<u32>>),
}

/// `POST /v1/completions`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct CompletionRequest {
    /// Sampling fields.
    #[serde(flatten)]
    pub sampling: SamplingFields,
    /// The prompt(s).
    pub prompt: PromptField,
    /// Legacy log-probabilities: the number of alternatives per token (0–20).
    pub logprobs: Option<usize>,
    /// Unsupported when true.
    #[serde(default)]
    pub echo: bool,
    /// Unsupported unless 1.
    pub best_of: Option<usize>,
}

/// vLLM's `POST /v1/load_lora_adapter`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct LoadLoraRequest {
    /// The name requests use as `model`.
    pub lora_name: String,
    /// PEFT adapter directory on the server (`adapter_config.json`,
    /// `adapter_model.safetensors`).
    pub lora_path: String,
}

/// SGLang's `POST /update_weights_from_disk`: replace the served weights with a checkpoint.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct UpdateWeightsRequest {
    /// Hugging Face checkpoint directory on the server (`config.json`, safetensors) with the
    /// served model's architecture.
    pub model_path: String,
    /// Accepted for SGLang compatibility; only `"auto"` (the default) and `"safetensors"` are
    /// supported.
    #[serde(default)]
    pub load_format: Option<String>,
}

/// vLLM's `POST /v1/unload_lora_adapter`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct UnloadLoraRequest {
    /// The adapter's name.
    pub lora_name: String,
    /// Accepted for vLLM compatibility, unused.
    #[serde(default)]
    pub lora_int_id: Option<i64>,
}
