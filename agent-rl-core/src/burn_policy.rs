//! [`BurnPolicy`]: the burn Qwen2 model + tokenizer + tool-call parser as a [`Policy`].

use std::sync::Arc;

use burn::prelude::*;

use crate::chat::ChatTokenizer;
use crate::error::CoreError;
use crate::generation::{Generation, SamplingConfig, generate_ids_with_stop};
use crate::model::Qwen2ForCausalLm;
use crate::policy::{ChatRequest, Completion, ContextFit, Policy};
use crate::tool_calls::{HermesToolCallParser, ToolCallParser};

/// The local model as a chat policy: renders requests with the chat template, generates with
/// the KV cache, decodes and parses tool calls.
pub struct BurnPolicy<B: Backend> {
    /// The model (use `model.valid()` of a training model for rollouts).
    pub model: Qwen2ForCausalLm<B>,
    /// Tokenizer with the chat template.
    pub tokenizer: Arc<ChatTokenizer>,
    /// Tool-call format of the model's output.
    pub parser: Box<dyn ToolCallParser>,
}

impl<B: Backend> std::fmt::Debug for BurnPolicy<B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BurnPolicy")
            .field("config", self.model.config())
            .finish()
    }
}

impl<B: Backend> BurnPolicy<B> {
    /// A policy with the Qwen2.5 (Hermes) tool-call parser.
    pub fn new(model: Qwen2ForCausalLm<B>, tokenizer: Arc<ChatTokenizer>) -> Self {
        Self {
            model,
            tokenizer,
            parser: Box::new(HermesToolCallParser::default()),
        }
    }

    /// Generates from token-id prompts and turns the results into completions.
    ///
    /// # Errors
    /// As [`generate_ids_with_stop`], and tokenizer failures while decoding.
    pub fn complete_ids(
        &self,
        prompts: &[Vec<u32>],
        sampling: &SamplingConfig,
    ) -> Result<Vec<Completion>, CoreError> {
        let tokenizer = &self.tokenizer;
        let stops = &sampling.stop_strings;
        let check = |ids: &[u32]| {
            tokenizer
                .decode(ids, false)
                .is_ok_and(|text| stops.iter().any(|s| text.contains(s.as_str())))
        };
        let stop_check: Option<crate::generation::StopStringCheck<'_>> =
            if stops.is_empty() { None } else { Some(&check) };
        let generations = generate_ids_with_stop(
            &self.model,
            prompts,
            sampling,
            &tokenizer.eos_ids,
            stop_check,
        )?;
        generations
            .into_iter()
            .map(|g| self.to_completion(g))
            .collect()
    }

    fn to_completion(&self, generation: Generation) -> Result<Completion, CoreError> {
        let text = self.tokenizer.decode(&generation.token_ids, true)?;
        let parsed = self.parser.parse(&text);
        Ok(Completion {
            token_ids: generation.token_ids,
            logprobs: generation.logprobs,
            text,
            parsed,
            finish_reason: generation.finish_reason,
        })
    }
}

impl<B: Backend> Policy for BurnPolicy<B> {
    fn generate(
        &mut self,
        requests: &[ChatRequest],
        sampling: &SamplingConfig,
    ) -> Result<Vec<Completion>, CoreError> {
        let prompts = requests
            .iter()
            .map(|r| self.tokenizer.encode_chat(&r.messages, &r.tools, true))
            .collect::<Result<Vec<_>, _>>()?;
        self.complete_ids(&prompts, sampling)
    }

    fn context_fit(&self, request: &ChatRequest) -> Result<Option<ContextFit>, CoreError> {
        let prompt = self
            .tokenizer
            .encode_chat(&request.messages, &request.tools, true)?;
        Ok(Some(ContextFit {
            prompt_tokens: prompt.len(),
            context_tokens: self.model.config().max_position_embeddings,
        }))
    }
}
