//! Batched generation with a KV cache.

use burn::prelude::*;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

use super::config::{FinishReason, SamplingConfig};
use super::rows::{RowHooks, RowSpec};
use super::sampler::{sample_token, top_logprobs};
use super::shared_prefix::UniqueRows;
use crate::error::CoreError;
use crate::model::Qwen2ForCausalLm;
use crate::model::{KvCache, qwen2_ids_tensor};

/// The new tokens of one sequence.
#[derive(Debug, Clone, PartialEq)]
pub struct Generation {
    /// New token ids (the eos or stop id that ended the sequence included).
    pub token_ids: Vec<u32>,
    /// Log-probability of each new token (see [`crate::Completion::logprobs`]).
    pub logprobs: Vec<f32>,
    /// Why the sequence stopped.
    pub finish_reason: FinishReason,
    /// Per new token, the most likely alternatives `(id, log-probability)` under the same
    /// distribution as `logprobs`, most likely first; empty unless asked for
    /// ([`super::GenerationRow::top_logprobs`]).
    pub top_logprobs: Vec<Vec<(u32, f32)>>,
}

impl Default for Generation {
    fn default() -> Self {
        Self::empty()
    }
}

impl Generation {
    /// No tokens yet (finish reason `Length` until something else stops it).
    pub(super) fn empty() -> Self {
        Self {
            token_ids: Vec::new(),
            logprobs: Vec::new(),
            finish_reason: FinishReason::Length,
            top_logprobs: Vec::new(),
        }
    }
}

/// Decides whether generated ids end with a stop string (the caller decodes them).
pub type StopStringCheck<'a> = &'a (dyn Fn(&[u32]) -> bool + Sync);

/// Generates continuations of `prompts` (token ids, any lengths) in one left-padded batch.
///
/// The prompt is processed once (equal prompts once between them); each further step feeds one token per live sequence through
/// the KV cache, and finished sequences leave the batch. Each sequence draws from its own
/// ChaCha8 stream seeded with `(sampling.seed, index)`, so results do not depend on batch
/// composition. Stops on `eos_ids` (unless `ignore_eos`), `sampling.stop_token_ids`,
/// `max_new_tokens`, and, with `stop_check`, stop strings.
///
/// # Errors
/// [`CoreError::InvalidArgument`] for invalid sampling settings, an empty prompt, a token id
/// outside the model's vocabulary, or a prompt plus budget beyond `max_position_embeddings`.
pub fn generate_ids<B: Backend>(
    model: &Qwen2ForCausalLm<B>,
    prompts: &[Vec<u32>],
    sampling: &SamplingConfig,
    eos_ids: &[u32],
) -> Result<Vec<Generation>, CoreError> {
    generate_ids_with_stop(model, prompts, sampling, eos_ids, None)
}

/// [`generate_ids`] with a stop-string check on each sequence's new ids.
///
/// # Errors
/// As [`generate_ids`].
pub fn generate_ids_with_stop<B: Backend>(
    model: &Qwen2ForCausalLm<B>,
    prompts: &[Vec<u32>],
    sampling: &SamplingConfig,
    eos_ids: &[u32],
    stop_check: Option<StopStringCheck<'_>>,
) -> Result<Vec<Generation>, CoreError> {
    sampling.validate()?;
    let config = model.config();
    let width = prompts.iter().map(Vec::len).max().unwrap_or(0);
    if prompts.iter().any(Vec::is_empty) {
        return Err(CoreError::InvalidArgument {
            field: "prompts".into(),
            reason: "a prompt is empty".into(),
        });
    }
    check_token_ids(prompts, config.vocab_size, "prompts")?;
    if width + sampling.max_new_tokens > config.max_position_embeddings {
        return Err(CoreError::InvalidArgument {
            field: "max_new_tokens".into(),
            reason: format!(
                "prompt length {width} + max_new_tokens {} exceeds max_position_embeddings {}",
                sampling.max_new_tokens, config.max_position_embeddings
            ),
        });
    }
    if prompts.is_empty() || sampling.max_new_tokens == 0 {
        return Ok(prompts.iter().map(|_| Generation::empty()).collect());
    }
    let shards = decode_shards(prompts, sampling.decode_shards);
    let row_check = |_: usize, ids: &[u32]| stop_check.is_some_and(|check| check(ids));
    let hooks = RowHooks {
        stop_check: stop_check.map(|_| &row_check as &(dyn Fn(usize, &[u32]) -> bool + Sync)),
        on_token: None,
    };
    let spec = |row: usize| RowSpec {
        prompt: &prompts[row],
        sampling,
        stream: row as u64,
        top_logprobs: 0,
    };
    if shards.len() == 1 {
        let rows: Vec<RowSpec<'_>> = (0..prompts.len()).map(spec).collect();
        return decode_batch(model, &rows, eos_ids, hooks);
    }
    // One rayon task per shard (on a pool thread, the kernels' own parallel loops split work
    // locally instead of queueing it from outside); each sequence keeps its own RNG stream (its
    // index in `prompts`).
    let results: Vec<_> = shards
        .par_iter()
        .map(|rows| {
            let shard: Vec<RowSpec<'_>> = rows.iter().map(|&r| spec(r)).collect();
            decode_batch(model, &shard, eos_ids, hooks)
        })
        .collect();
    let mut out: Vec<Option<Generation>> = vec![None; prompts.len()];
    for (rows, result) in shards.iter().zip(results) {
        for (&row, generation) in rows.iter().zip(result?) {
            out[row] = Some(generation);
        }
    }
    Ok(out.into_iter().map(Option::unwrap_or_default).collect())
}

/// Checks that every id of `rows` is below `vocab_size` (the model's embedding rows): an id
/// beyond it would index past the embedding matrix.
///
/// # Errors
/// [`CoreError::InvalidArgument`] naming `field`, the row, the position and the id.
///
/// ```
/// use agent_rl_core::generation::check_token_ids;
///
/// assert!(check_token_ids(&[vec![1, 2, 3]], 4, "ids").is_ok());
/// let err = check_token_ids(&[vec![1], vec![2, 99_999]], 4, "ids").unwrap_err();
/// assert!(err.to_string().contains("99999"));
/// ```
pub fn check_token_ids(rows: &[Vec<u32>], vocab_size: usize, field: &str) -> Result<(), CoreError> {
    for (row, ids) in rows.iter().enumerate() {
        if let Some((position, &id)) = ids
            .iter()
            .enumerate()
            .find(|&(_, &id)| id as usize >= vocab_size)
        {
            return Err(CoreError::InvalidArgument {
                field: field.into(),
                reason: format!(
                    "token id {id} (row {row}, position {position}) is outside the model's \
                     vocabulary of {vocab_size} ids"
                ),
            });
        }
    }
    Ok(())
}

/// Splits the rows into at most `shards` groups of similar size, keeping equal prompts together
/// (they share one prefill).
fn decode_shards(prompts: &[Vec<u32>], shards: usize) -> Vec<Vec<usize>> {
    let unique = UniqueRows::of(prompts);
    let groups = unique.representatives.len();
    let count = shards.clamp(1, groups.max(1));
    let mut members: Vec<Vec<usize>> = vec![Vec::new(); groups];
    for (row, &group) in unique.of_row.iter().enumerate() {
        members[group].push(row);
    }
    let mut out: Vec<Vec<usize>> = vec![Vec::new(); count];
    for group in members {
        if let Some(smallest) = out.iter_mut().min_by_key(|rows| rows.len()) {
            smallest.extend(group);
        }
    }
    out.retain(|rows| !rows.is_empty());
    for rows in &mut out {
        rows.sort_unstable();
    }
    out
}

/// Decodes one batch of rows, each with its own settings and RNG stream; `hooks` see each
/// row by its index in `rows`.
pub(super) fn decode_batch<B: Backend>(
    model: &Qwen2ForCausalLm<B>,
    rows: &[RowSpec<'_>],
    eos_ids: &[u32],
    hooks: RowHooks<'_>,
) -> Result<Vec<Generation>, CoreError> {
    let prompts: Vec<&[u32]> = rows.iter().map(|row| row.prompt).collect();
    let (cache, logits) = prefill(model, &prompts, None);
    let (generations, _) = sample_rows(model, cache, logits, rows, eos_ids, hooks, false)?;
    Ok(generations)
}

/// Runs `segments` (left-padded into one block) through the model after `cache`'s rows, or
/// into a fresh cache when `cache` is `None` (equal segments then computed once and fanned
/// out). Returns the cache and each row's next-token logits, `[rows, 1, vocab]`.
pub(super) fn prefill<B: Backend, S: AsRef<[u32]>>(
    model: &Qwen2ForCausalLm<B>,
    segments: &[S],
    cache: Option<KvCache<B>>,
) -> (KvCache<B>, Tensor<B, 3>) {
    let segments: Vec<&[u32]> = segments.iter().map(AsRef::as_ref).collect();
    let width = segments.iter().map(|s| s.len()).max().unwrap_or(0);
    let padded: Vec<Vec<u32>> = segments
        .iter()
        .map(|p| {
            std::iter::repeat_n(0, width - p.len())
                .chain(p.iter().copied())
                .collect()
        })
        .collect();
    let mask: Vec<Vec<bool>> = segments
        .iter()
        .map(|p| (0..width).map(|i| i >= width - p.len()).collect())
        .collect();
    let device = model.device();
    let last = |hidden: Tensor<B, 3>| {
        let [batch, seq, hidden_size] = hidden.dims();
        model.logits(hidden.slice([0..batch, seq - 1..seq, 0..hidden_size]))
    };
    if let Some(mut cache) = cache {
        let hidden =
            model.forward_hidden(qwen2_ids_tensor(&padded, &device), &mask, Some(&mut cache));
        return (cache, last(hidden));
    }
    // Equal prompts (a GRPO group's K samples) are prefilled once and fanned out.
    let unique = UniqueRows::of(&segments);
    let mut cache = model.new_cache(unique.representatives.len());
    let hidden = model.forward_hidden(
        qwen2_ids_tensor(&unique.pick(&padded), &device),
        &unique.pick(&mask),
        Some(&mut cache),
    );
    let mut logits = last(hidden);
    if unique.has_repeats() {
        cache.retain(&unique.of_row);
        logits = logits.select(0, unique.of_row_tensor(&device));
    }
    (cache, logits)
}

/// Samples every row of `cache` from `logits` (`[rows, 1, vocab]`) until it stops, row `i`
/// with `rows[i]`'s settings and RNG stream, feeding each sampled token back through the cache;
/// finished rows leave the batch. `hooks` see each row by its index in `rows`. With
/// `keep_cache`, also returns the cache of every row as it left (its tokens up to, not
/// including, the last sampled one), rows in their original order.
pub(super) fn sample_rows<B: Backend>(
    model: &Qwen2ForCausalLm<B>,
    mut cache: KvCache<B>,
    mut logits: Tensor<B, 3>,
    specs: &[RowSpec<'_>],
    eos_ids: &[u32],
    hooks: RowHooks<'_>,
    keep_cache: bool,
) -> Result<(Vec<Generation>, Option<KvCache<B>>), CoreError> {
    let vocab = model.config().vocab_size;
    let device = model.device();
    let rows = specs.len();
    let mut rngs: Vec<ChaCha8Rng> = specs
        .iter()
        .map(|row| {
            let mut rng = ChaCha8Rng::seed_from_u64(row.sampling.seed);
            rng.set_stream(row.stream);
            rng
        })
        .collect();
    let mut out: Vec<Generation> = (0..rows).map(|_| Generation::empty()).collect();
    let mut left: Vec<(Vec<usize>, KvCache<B>)> = Vec::new();
    let mut live: Vec<usize> = (0..rows).collect();
    loop {
        let host = logits
            .into_data()
            .convert::<f32>()
            .into_vec::<f32>()
            .map_err(|err| CoreError::InvalidArgument {
                field: "logits".into(),
                reason: format!("{err:?}"),
            })?;
        let mut next_live = Vec::new();
        let mut next_tokens = Vec::new();
        for (row, &index) in live.iter().enumerate() {
            let spec = &specs[index];
            let sampling = spec.sampling;
            let row_logits = &host[row * vocab..(row + 1) * vocab];
            let (token, logprob) = sample_token(row_logits, sampling, &mut rngs[index]);
            let generation = &mut out[index];
            generation.token_ids.push(token);
            generation.logprobs.push(logprob);
            if spec.top_logprobs > 0 {
                let top = top_logprobs(row_logits, sampling, spec.top_logprobs);
                generation.top_logprobs.push(top);
            }
            if let Some(on_token) = hooks.on_token {
                on_token(index, token, logprob);
            }
            let stop_id = (!sampling.ignore_eos && eos_ids.contains(&token))
                || sampling.stop_token_ids.contains(&token);
            if stop_id {
                generation.finish_reason = FinishReason::Stop;
            } else if hooks
                .stop_check
                .is_some_and(|check| check(index, &generation.token_ids))
            {
                generation.finish_reason = FinishReason::StopString;
            } else if generation.token_ids.len() < sampling.max_new_tokens {
                next_live.push(row);
                next_tokens.push(token);
            }
        }
        if next_live.is_empty() {
            if keep_cache {
                left.push((live, cache));
            }
            break;
        }
        if next_live.len() < live.len() {
            if keep_cache {
                let finished: Vec<usize> = (0..live.len())
                    .filter(|row| !next_live.contains(row))
                    .collect();
                let mut part = cache.clone();
                part.retain(&finished);
                left.push((finished.iter().map(|&row| live[row]).collect(), part));
            }
            cache.retain(&next_live);
            live = next_live.iter().map(|&row| live[row]).collect();
        }
        let step_ids: Vec<Vec<u32>> = next_tokens.into_iter().map(|t| vec![t]).collect();
        let step_mask = vec![vec![true]; step_ids.len()];
        let hidden = model.forward_hidden(
            qwen2_ids_tensor(&step_ids, &device),
            &step_mask,
            Some(&mut cache),
        );
        logits = model.logits(hidden);
    }
    let kept = keep_cache.then(|| KvCache::assemble(left, rows));
    Ok((out, kept))
}

#[cfg(test)]
mod tests {
    use super::decode_shards;

    #[test]
    fn shards_balance_rows_and_keep_equal_prompts_together() {
        let prompts = vec![vec![1], vec![2], vec![1], vec![3], vec![2], vec![1]];
        let shards = decode_shards(&prompts, 2);
        assert_eq!(shards, [vec![0, 2, 5], vec![1, 3, 4]]);
        assert_eq!(decode_shards(&prompts, 1), [vec![0, 1, 2, 3, 4, 5]]);
        // Never more shards than distinct prompts.
        assert_eq!(decode_shards(&[vec![7], vec![7]], 4), [vec![0, 1]]);
    }
}
