//! Generation that carries its key/value cache from one call to the next, so a multi-turn
//! episode feeds each new segment (a tool result, a user reply) once instead of re-running the
//! whole conversation at every turn.

use burn::prelude::*;

use super::config::SamplingConfig;
use super::generate::{Generation, StopStringCheck, check_token_ids, prefill, sample_rows};
use super::rows::{RowHooks, RowSpec, RowStopCheck};
use crate::error::CoreError;
use crate::model::{KvCache, Qwen2ForCausalLm};

/// The result of [`generate_continuations`].
#[derive(Debug)]
pub struct Continued<B: Backend> {
    /// The new tokens of each row.
    pub generations: Vec<Generation>,
    /// Every row's cache: its earlier tokens, its segment, and its new tokens except the last
    /// one (which has not been through the model yet: feed it at the start of the row's next
    /// segment). [`KvCache::real_lengths`] says how many tokens each row holds.
    pub cache: KvCache<B>,
}

/// Appends `segments[i]` to row `i` of `cache` (a fresh cache when `None`: the segments are
/// then whole prompts) and generates a continuation of every row, as
/// [`generate_ids_with_stop`](super::generate_ids_with_stop) would from the row's full token
/// sequence: the same RNG streams (row `i` draws from stream `i`), the same stopping rules,
/// and, up to floating-point rounding, the same log-probabilities. All rows decode in one batch
/// (`sampling.decode_shards` is not used).
///
/// # Errors
/// [`CoreError::InvalidArgument`] for invalid sampling settings, an empty segment, a cache
/// whose row count differs from the number of segments, a token id outside the vocabulary, or
/// a row whose cached tokens, segment and budget exceed `max_position_embeddings`.
pub fn generate_continuations<B: Backend>(
    model: &Qwen2ForCausalLm<B>,
    cache: Option<KvCache<B>>,
    segments: &[Vec<u32>],
    sampling: &SamplingConfig,
    eos_ids: &[u32],
    stop_check: Option<StopStringCheck<'_>>,
) -> Result<Continued<B>, CoreError> {
    sampling.validate()?;
    let config = model.config();
    let invalid = |field: &str, reason: String| CoreError::InvalidArgument {
        field: field.into(),
        reason,
    };
    if let Some(row) = segments.iter().position(Vec::is_empty) {
        return Err(invalid("segments", format!("segment {row} is empty")));
    }
    check_token_ids(segments, config.vocab_size, "segments")?;
    let cached = match &cache {
        Some(cache) if cache.mask.len() != segments.len() => {
            return Err(invalid(
                "cache",
                format!(
                    "the cache holds {} rows but {} segments were given",
                    cache.mask.len(),
                    segments.len()
                ),
            ));
        }
        Some(cache) => cache.real_lengths(),
        None => vec![0; segments.len()],
    };
    for (row, (segment, cached)) in segments.iter().zip(&cached).enumerate() {
        let length = cached + segment.len();
        if length + sampling.max_new_tokens > config.max_position_embeddings {
            return Err(invalid(
                "max_new_tokens",
                format!(
                    "row {row}: {length} tokens + max_new_tokens {} exceeds \
                     max_position_embeddings {}",
                    sampling.max_new_tokens, config.max_position_embeddings
                ),
            ));
        }
    }
    if segments.is_empty() {
        return Ok(Continued {
            generations: Vec::new(),
            cache: cache.unwrap_or_else(|| model.new_cache(0)),
        });
    }
    let (cache, logits) = prefill(model, segments, cache);
    if sampling.max_new_tokens == 0 {
        return Ok(Continued {
            generations: segments.iter().map(|_| Generation::default()).collect(),
            cache,
        });
    }
    let specs: Vec<RowSpec<'_>> = segments
        .iter()
        .enumerate()
        .map(|(row, segment)| RowSpec {
            prompt: segment,
            sampling,
            stream: row as u64,
            top_logprobs: 0,
        })
        .collect();
    let row_check = |_: usize, ids: &[u32]| stop_check.is_some_and(|check| check(ids));
    let hooks = RowHooks {
        stop_check: stop_check.map(|_| &row_check as RowStopCheck<'_>),
        on_token: None,
    };
    let (generations, kept) = sample_rows(model, cache, logits, &specs, eos_ids, hooks, true)?;
    Ok(Continued {
        generations,
        cache: kept.unwrap_or_else(|| model.new_cache(segments.len())),
    })
}
