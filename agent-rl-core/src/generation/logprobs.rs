//! Teacher-forced per-token log-probabilities and entropies (differentiable).

use burn::prelude::*;
use burn::tensor::backend::AutodiffBackend;

use super::shared_prefix::{UniqueRows, index_tensor};
use crate::model::{CheckpointedLayers, Qwen2ForCausalLm};

/// Per-token scores of the last `K` tokens of each sequence.
#[derive(Debug, Clone)]
pub struct TokenScores<B: Backend> {
    /// `[batch, K]`: `log p(token_t | tokens_<t)` under `logits / temperature`.
    pub logprobs: Tensor<B, 2>,
    /// `[batch, K]`: entropy of the predictive distribution at each of those positions.
    pub entropies: Tensor<B, 2>,
}

/// Scores the last `completion_len` tokens of `input_ids` given everything before them.
///
/// This is what trainers compute their losses from: on an autodiff backend the result carries
/// gradients to every weight. `mask` marks real tokens (left padding of prompts and right
/// padding of completions both false); scores at padding positions are meaningless and must be
/// masked by the caller. Logits are divided by `temperature` first, as TRL does.
///
/// # Shapes
/// - `input_ids`: `[batch, seq]`, `completion_len < seq` → `[batch, completion_len]`
///
/// # Panics
/// When an id is not below the model's `vocab_size` (the embedding lookup is out of range):
/// ids from outside the process are checked first with
/// [`check_token_ids`](super::check_token_ids); [`generate_ids`](super::generate_ids) and
/// tokenizers that passed [`ChatTokenizer::check_model_vocab`](crate::ChatTokenizer::check_model_vocab)
/// only produce valid ids.
pub fn token_scores<B: Backend>(
    model: &Qwen2ForCausalLm<B>,
    input_ids: Tensor<B, 2, Int>,
    mask: &[Vec<bool>],
    completion_len: usize,
    temperature: f32,
) -> TokenScores<B> {
    let (logits, targets) = completion_logits(model, input_ids, mask, completion_len);
    let (logprobs, entropies) = crate::fused::token_scores(logits, targets, temperature, true);
    let entropies = entropies.unwrap_or_else(|| logprobs.zeros_like());
    TokenScores {
        logprobs,
        entropies,
    }
}

/// [`token_scores`]' log-probabilities alone, without the entropies: for the frozen reference
/// model and old-policy scores, where an entropy would cost a pass over `[batch, K, vocab]` for
/// nothing.
///
/// # Panics
/// As [`token_scores`], on ids outside the vocabulary.
pub fn token_logprobs<B: Backend>(
    model: &Qwen2ForCausalLm<B>,
    input_ids: Tensor<B, 2, Int>,
    mask: &[Vec<bool>],
    completion_len: usize,
    temperature: f32,
) -> Tensor<B, 2> {
    let (logits, targets) = completion_logits(model, input_ids, mask, completion_len);
    crate::fused::token_scores(logits, targets, temperature, false).0
}

/// `[batch, K, vocab]` logits predicting the last `completion_len` tokens, and those tokens
/// (`[batch, K]`).
fn completion_logits<B: Backend>(
    model: &Qwen2ForCausalLm<B>,
    input_ids: Tensor<B, 2, Int>,
    mask: &[Vec<bool>],
    completion_len: usize,
) -> (Tensor<B, 3>, Tensor<B, 2, Int>) {
    let [batch, seq] = input_ids.dims();
    let start = seq - completion_len;
    let hidden = match shared_prompts(&input_ids, mask, start) {
        Some(unique) => shared_prompt_hidden(model, input_ids.clone(), mask, start, &unique),
        None => {
            let (inputs, mask) = scored_inputs(&input_ids, mask);
            predicting(model.forward_hidden(inputs, &mask, None), completion_len)
        }
    };
    let targets = input_ids.slice([0..batch, start..seq]);
    (model.logits(hidden), targets)
}

/// The ids and mask a scoring forward runs on: all but the last column (the last token predicts
/// nothing scored).
fn scored_inputs<B: Backend>(
    input_ids: &Tensor<B, 2, Int>,
    mask: &[Vec<bool>],
) -> (Tensor<B, 2, Int>, Vec<Vec<bool>>) {
    let [batch, seq] = input_ids.dims();
    let inputs = input_ids.clone().slice([0..batch, 0..seq - 1]);
    let mask = mask
        .iter()
        .map(|row| row.iter().take(seq - 1).copied().collect())
        .collect();
    (inputs, mask)
}

/// The last `completion_len` positions of the hidden states of [`scored_inputs`].
fn predicting<B: Backend>(hidden: Tensor<B, 3>, completion_len: usize) -> Tensor<B, 3> {
    let [batch, positions, hidden_size] = hidden.dims();
    let start = positions + 1 - completion_len;
    hidden.slice([0..batch, start - 1..positions, 0..hidden_size])
}

/// [`token_scores`] with activation checkpointing per decoder layer: the scores and the layers
/// to differentiate the loss through ([`CheckpointedLayers::backward`], in place of
/// `loss.backward()`).
///
/// Every row runs its whole sequence (rows that share a prompt do not share its forward here).
///
/// # Shapes
/// - `input_ids`: `[batch, seq]`, `completion_len < seq` → `[batch, completion_len]`
pub fn token_scores_checkpointed<B: AutodiffBackend>(
    model: &Qwen2ForCausalLm<B>,
    input_ids: Tensor<B, 2, Int>,
    mask: &[Vec<bool>],
    completion_len: usize,
    temperature: f32,
) -> (TokenScores<B>, CheckpointedLayers<B>) {
    let [batch, seq] = input_ids.dims();
    let (inputs, scored_mask) = scored_inputs(&input_ids, mask);
    let (hidden, layers) = model.forward_hidden_checkpointed(inputs, &scored_mask);
    let logits = model.logits(predicting(hidden, completion_len));
    let targets = input_ids.slice([0..batch, seq - completion_len..seq]);
    let (logprobs, entropies) = crate::fused::token_scores(logits, targets, temperature, true);
    let entropies = entropies.unwrap_or_else(|| logprobs.zeros_like());
    let scores = TokenScores {
        logprobs,
        entropies,
    };
    (scores, layers)
}

/// Groups the rows whose first `start` columns (ids and mask) are equal, when some are.
fn shared_prompts<B: Backend>(
    input_ids: &Tensor<B, 2, Int>,
    mask: &[Vec<bool>],
    start: usize,
) -> Option<UniqueRows> {
    let [batch, seq] = input_ids.dims();
    if start == 0 || batch < 2 || mask.len() != batch {
        return None;
    }
    let ids = input_ids
        .clone()
        .into_data()
        .convert::<i64>()
        .into_vec::<i64>()
        .ok()?;
    let prompts: Vec<(&[i64], &[bool])> = (0..batch)
        .map(|row| (&ids[row * seq..row * seq + start], &mask[row][..start]))
        .collect();
    let unique = UniqueRows::of(&prompts);
    unique.has_repeats().then_some(unique)
}

/// The hidden states that predict the last `seq - start` tokens, with each distinct prompt
/// (the first `start` columns) run once and its keys/values fanned out to its rows through the
/// KV cache. Same values as the plain forward; gradients of the shared prompt sum over its rows.
///
/// # Shapes
/// - `input_ids`: `[batch, seq]` → `[batch, seq - start, hidden]`
fn shared_prompt_hidden<B: Backend>(
    model: &Qwen2ForCausalLm<B>,
    input_ids: Tensor<B, 2, Int>,
    mask: &[Vec<bool>],
    start: usize,
    unique: &UniqueRows,
) -> Tensor<B, 3> {
    let [batch, seq] = input_ids.dims();
    let device = input_ids.device();
    let prompt_ids = input_ids
        .clone()
        .slice([0..batch, 0..start])
        .select(0, index_tensor(&unique.representatives, &device));
    let prompt_mask: Vec<Vec<bool>> = unique
        .pick(mask)
        .into_iter()
        .map(|row| row[..start].to_vec())
        .collect();
    let mut cache = model.new_cache(unique.representatives.len());
    let prompt_hidden = model.forward_hidden(prompt_ids, &prompt_mask, Some(&mut cache));
    let [prompts, _, hidden_size] = prompt_hidden.dims();
    let last_prompt = prompt_hidden
        .slice([0..prompts, start - 1..start, 0..hidden_size])
        .select(0, unique.of_row_tensor(&device));
    if seq - start == 1 {
        return last_prompt;
    }
    cache.retain(&unique.of_row);
    // The last token predicts nothing scored: it is not run.
    let completion_mask: Vec<Vec<bool>> = mask
        .iter()
        .map(|row| row[start..seq - 1].to_vec())
        .collect();
    let completion_hidden = model.forward_hidden(
        input_ids.slice([0..batch, start..seq - 1]),
        &completion_mask,
        Some(&mut cache),
    );
    Tensor::cat(vec![last_prompt, completion_hidden], 1)
}
