//! Batches whose rows differ: each sequence with its own prompt, sampling settings, RNG stream
//! and number of reported alternatives — the shape a server needs to decode unrelated requests
//! together.

use burn::prelude::*;

use super::config::SamplingConfig;
use super::generate::{Generation, check_token_ids, decode_batch};
use crate::error::CoreError;
use crate::model::Qwen2ForCausalLm;

/// One sequence of a [`generate_rows`] batch.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct GenerationRow {
    /// Prompt token ids (not empty, each below the model's vocabulary size).
    pub prompt: Vec<u32>,
    /// This row's sampling settings (`decode_shards` is ignored: the batch is decoded as one).
    pub sampling: SamplingConfig,
    /// The ChaCha8 stream of the row's sampler (seeded with `sampling.seed`): [`super::generate_ids`]
    /// gives row `i` stream `i`, so the same seed and stream reproduce its tokens in any batch.
    pub stream: u64,
    /// How many most likely alternatives to record per new token
    /// ([`Generation::top_logprobs`]); 0 = none.
    pub top_logprobs: usize,
}

/// Decides whether row `index`'s new ids end with one of its stop strings.
pub type RowStopCheck<'a> = &'a (dyn Fn(usize, &[u32]) -> bool + Sync);

/// Called after each sampled token with the row index, the token and its log-probability.
pub type TokenSink<'a> = &'a (dyn Fn(usize, u32, f32) + Sync);

/// Callbacks of one [`generate_rows`] call.
#[derive(Clone, Copy, Default)]
pub struct RowHooks<'a> {
    /// Stop-string check per row (none: only token ids and budgets stop rows).
    pub stop_check: Option<RowStopCheck<'a>>,
    /// Sees every token as it is sampled (for streaming).
    pub on_token: Option<TokenSink<'a>>,
}

impl std::fmt::Debug for RowHooks<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RowHooks")
            .field("stop_check", &self.stop_check.is_some())
            .field("on_token", &self.on_token.is_some())
            .finish()
    }
}

/// One row as the decoder sees it.
pub(super) struct RowSpec<'a> {
    pub(super) prompt: &'a [u32],
    pub(super) sampling: &'a SamplingConfig,
    pub(super) stream: u64,
    pub(super) top_logprobs: usize,
}

/// Generates every row in one left-padded batch with a KV cache; row `i` samples with its own
/// settings from stream `rows[i].stream`, so its tokens do not depend on the other rows (up to
/// float rounding of the padded batch).
///
/// # Errors
/// [`CoreError::InvalidArgument`] naming the row for invalid sampling settings, an empty prompt,
/// a token id outside the vocabulary, or a prompt plus budget beyond `max_position_embeddings`.
pub fn generate_rows<B: Backend>(
    model: &Qwen2ForCausalLm<B>,
    rows: &[GenerationRow],
    eos_ids: &[u32],
    hooks: RowHooks<'_>,
) -> Result<Vec<Generation>, CoreError> {
    let config = model.config();
    let width = rows.iter().map(|r| r.prompt.len()).max().unwrap_or(0);
    for (index, row) in rows.iter().enumerate() {
        let bad = |reason: String| CoreError::InvalidArgument {
            field: format!("rows[{index}]"),
            reason,
        };
        row.sampling
            .validate()
            .map_err(|err| bad(err.to_string()))?;
        if row.prompt.is_empty() {
            return Err(bad("the prompt is empty".into()));
        }
        if width + row.sampling.max_new_tokens > config.max_position_embeddings {
            return Err(bad(format!(
                "batch prompt width {width} + max_new_tokens {} exceeds max_position_embeddings {}",
                row.sampling.max_new_tokens, config.max_position_embeddings
            )));
        }
    }
    let prompts: Vec<Vec<u32>> = rows.iter().map(|r| r.prompt.clone()).collect();
    check_token_ids(&prompts, config.vocab_size, "rows")?;
    let live: Vec<usize> = (0..rows.len())
        .filter(|&i| rows[i].sampling.max_new_tokens > 0)
        .collect();
    let specs: Vec<RowSpec<'_>> = live
        .iter()
        .map(|&i| RowSpec {
            prompt: &rows[i].prompt,
            sampling: &rows[i].sampling,
            stream: rows[i].stream,
            top_logprobs: rows[i].top_logprobs,
        })
        .collect();
    let stop_check = hooks.stop_check;
    let on_token = hooks.on_token;
    let mapped_stop =
        |row: usize, ids: &[u32]| stop_check.is_some_and(|check| check(live[row], ids));
    let mapped_sink = |row: usize, token: u32, logprob: f32| {
        if let Some(sink) = on_token {
            sink(live[row], token, logprob);
        }
    };
    let inner = RowHooks {
        stop_check: stop_check.map(|_| &mapped_stop as RowStopCheck<'_>),
        on_token: on_token.map(|_| &mapped_sink as TokenSink<'_>),
    };
    let mut out: Vec<Generation> = rows.iter().map(|_| Generation::default()).collect();
    if !specs.is_empty() {
        for (&row, generation) in live
            .iter()
            .zip(decode_batch(model, &specs, eos_ids, inner)?)
        {
            out[row] = generation;
        }
    }
    Ok(out)
}
