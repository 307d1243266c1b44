//! Sampling settings and finish reasons.

use serde::{Deserialize, Serialize};

use crate::error::CoreError;

/// How to sample new tokens.
///
/// `temperature == 0` means greedy decoding (top-k/top-p/min-p are then ignored).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SamplingConfig {
    /// Maximum number of tokens to generate per sequence. Default 256.
    pub max_new_tokens: usize,
    /// Softmax temperature; `0` = greedy. Default 1.0.
    pub temperature: f32,
    /// Keep only the `k` most likely tokens; `0` = off. Default 0.
    pub top_k: usize,
    /// Nucleus sampling: keep the smallest set of tokens whose probability reaches `p`; `1` = off.
    pub top_p: f32,
    /// Drop tokens whose probability is below `min_p` × the top probability; `0` = off.
    pub min_p: f32,
    /// Seed of the sampler; the same seed, prompts and model give the same tokens.
    pub seed: u64,
    /// Token ids that end a sequence besides the tokenizer's eos ids.
    pub stop_token_ids: Vec<u32>,
    /// Strings that end a sequence when they appear in the decoded completion (kept in the output).
    pub stop_strings: Vec<String>,
    /// Ignore eos ids (stop only on `max_new_tokens`, stop strings and `stop_token_ids`).
    pub ignore_eos: bool,
    /// Decode the batch as this many shards on parallel threads (equal prompts stay together).
    /// On a CPU backend one decoding step is mostly small, single-threaded kernels, so two
    /// half-batches on two cores finish sooner than one full batch; on a GPU keep 1 (one large
    /// batch). Each sequence keeps its own RNG stream, so the tokens do not depend on it.
    /// Default 1.
    pub decode_shards: usize,
}

impl Default for SamplingConfig {
    fn default() -> Self {
        Self {
            max_new_tokens: 256,
            temperature: 1.0,
            top_k: 0,
            top_p: 1.0,
            min_p: 0.0,
            seed: 0,
            stop_token_ids: Vec::new(),
            stop_strings: Vec::new(),
            ignore_eos: false,
            decode_shards: 1,
        }
    }
}

impl SamplingConfig {
    /// Greedy decoding with the given budget.
    pub fn greedy(max_new_tokens: usize) -> Self {
        Self {
            max_new_tokens,
            temperature: 0.0,
            ..Self::default()
        }
    }

    /// True when decoding is greedy.
    pub fn is_greedy(&self) -> bool {
        self.temperature == 0.0
    }

    /// Checks every field's range.
    ///
    /// # Errors
    /// [`CoreError::InvalidArgument`] naming the field and its valid range.
    pub fn validate(&self) -> Result<(), CoreError> {
        let bad = |field: &str, reason: &str| {
            Err(CoreError::InvalidArgument {
                field: field.into(),
                reason: reason.into(),
            })
        };
        if !(self.temperature.is_finite() && self.temperature >= 0.0) {
            return bad("temperature", "must be finite and >= 0 (0 = greedy)");
        }
        if !(self.top_p > 0.0 && self.top_p <= 1.0) {
            return bad("top_p", "must be in (0, 1] (1 = off)");
        }
        if !(0.0..=1.0).contains(&self.min_p) {
            return bad("min_p", "must be in [0, 1] (0 = off)");
        }
        Ok(())
    }
}

/// Why a sequence stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FinishReason {
    /// An eos id or a stop token id was generated (it is included in the token ids).
    Stop,
    /// A stop string appeared in the decoded text.
    StopString,
    /// `max_new_tokens` was reached (the completion is truncated).
    Length,
}

impl FinishReason {
    /// The OpenAI-style name: `"stop"` for eos and stop strings, `"length"` when truncated.
    pub fn as_openai(self) -> &'static str {
        match self {
            FinishReason::Stop | FinishReason::StopString => "stop",
            FinishReason::Length => "length",
        }
    }
}
