//! The [`Policy`] abstraction: anything that turns chat requests into completions.

use serde::{Deserialize, Serialize};

use crate::conversation::{Message, ToolSpec};
use crate::error::CoreError;
use crate::generation::{FinishReason, SamplingConfig};
use crate::tool_calls::ParsedOutput;

/// One chat request: the conversation so far and the tools on offer.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ChatRequest {
    /// The conversation; the policy renders it with its chat template and a generation prompt.
    pub messages: Vec<Message>,
    /// Tools offered (rendered by the chat template).
    #[serde(default)]
    pub tools: Vec<ToolSpec>,
}

/// One generated completion.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Completion {
    /// New token ids only (eos included when it ended the sequence).
    pub token_ids: Vec<u32>,
    /// Log-probability of each new token under the model's distribution scaled by the sampling
    /// temperature (raw logits when greedy), before top-k/top-p/min-p filtering — the quantity
    /// TRL's trainers compute as the old policy's log-probabilities.
    pub logprobs: Vec<f32>,
    /// Decoded text of the new tokens, special tokens removed.
    pub text: String,
    /// `text` parsed into content and tool calls.
    pub parsed: ParsedOutput,
    /// Why generation stopped.
    pub finish_reason: FinishReason,
}

/// How much of the model's context a request's prompt takes (see [`Policy::context_fit`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContextFit {
    /// Tokens of the rendered prompt (chat template, tools and generation prompt included).
    pub prompt_tokens: usize,
    /// The model's context length (`max_position_embeddings`).
    pub context_tokens: usize,
}

impl ContextFit {
    /// Tokens the context leaves for the answer after the prompt (0 when the prompt fills it).
    pub fn room(&self) -> usize {
        self.context_tokens.saturating_sub(self.prompt_tokens)
    }
}

/// Anything that answers chat requests: the burn model, or a remote server client.
pub trait Policy {
    /// Generates one completion per request.
    ///
    /// # Errors
    /// Invalid sampling settings, prompts that do not fit the model, template failures.
    fn generate(
        &mut self,
        requests: &[ChatRequest],
        sampling: &SamplingConfig,
    ) -> Result<Vec<Completion>, CoreError>;

    /// The prompt length of `request` against the model's context, when the policy knows the
    /// model's context (a local model); `None` (the default) when it cannot tell, as for a
    /// remote server, which then reports an over-long prompt as a generation error.
    ///
    /// # Errors
    /// Template or tokenizer failures while rendering the prompt.
    fn context_fit(&self, request: &ChatRequest) -> Result<Option<ContextFit>, CoreError> {
        let _ = request;
        Ok(None)
    }
}
