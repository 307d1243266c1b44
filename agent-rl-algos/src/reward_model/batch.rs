//! Tokenised preference pairs and their scoring in one padded forward pass.

use agent_rl_core::{ChatTokenizer, Qwen2ForSequenceClassification};
use burn::prelude::*;

use crate::error::Result;
use crate::reward_model::dataset::{PreferenceDataset, tokenize_side};

/// One pair as token ids.
#[derive(Debug, Clone, PartialEq)]
pub struct TokenizedPair {
    /// The chosen sequence.
    pub chosen: Vec<u32>,
    /// The rejected sequence.
    pub rejected: Vec<u32>,
    /// The pair's margin (0 when the row had none).
    pub margin: f32,
}

/// Tokenised pairs, with how many were dropped for length.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TokenizedPairs {
    /// The pairs kept.
    pub pairs: Vec<TokenizedPair>,
    /// Pairs dropped because a side was longer than `max_length` (TRL's filter).
    pub num_filtered: usize,
    /// Whether any row carried a `margin` (the loss then subtracts margins, 0 for rows without).
    pub has_margin: bool,
}

/// Tokenises every pair of `dataset`, dropping pairs with a side longer than `max_length`.
///
/// # Errors
/// [`crate::AlgoError::DatasetRow`] naming the file and line of a row that cannot be rendered or
/// tokenised, or whose tokens fall outside the model's vocabulary of `vocab_size`.
pub fn tokenize_pairs(
    tokenizer: &ChatTokenizer,
    dataset: &PreferenceDataset,
    max_length: Option<usize>,
    vocab_size: usize,
) -> Result<TokenizedPairs> {
    let mut out = TokenizedPairs::default();
    for (pair, origin) in dataset.iter() {
        let side = |which| {
            tokenize_side(tokenizer, which, &pair.tools)
                .map_err(|err| origin.error(err.to_string()))
        };
        let (chosen, rejected) = (side(&pair.chosen)?, side(&pair.rejected)?);
        for ids in [&chosen, &rejected] {
            if ids.is_empty() {
                return Err(origin.error("a side renders to no tokens"));
            }
            if let Some(&id) = ids.iter().find(|&&id| id as usize >= vocab_size) {
                return Err(origin.error(format!(
                    "token id {id} is outside the model's vocabulary of {vocab_size}"
                )));
            }
        }
        if max_length.is_some_and(|max| chosen.len() > max || rejected.len() > max) {
            out.num_filtered += 1;
            continue;
        }
        out.has_margin |= pair.margin.is_some();
        out.pairs.push(TokenizedPair {
            chosen,
            rejected,
            margin: pair.margin.unwrap_or(0.0),
        });
    }
    Ok(out)
}

/// `rows` right-padded with `pad_id` (as TRL's collator pads), with their masks.
pub fn right_pad(rows: &[&[u32]], pad_id: u32) -> (Vec<Vec<u32>>, Vec<Vec<bool>>) {
    let width = rows.iter().map(|row| row.len()).max().unwrap_or(0);
    rows.iter()
        .map(|row| {
            let mut ids = row.to_vec();
            ids.resize(width, pad_id);
            let mask = (0..width).map(|i| i < row.len()).collect();
            (ids, mask)
        })
        .unzip()
}

/// The chosen and rejected scores of `pairs`, from one forward pass over the `2 × pairs`
/// right-padded sequences (chosen first, as TRL batches them).
///
/// # Shapes
/// → `([pairs], [pairs])`
pub fn pair_scores<B: Backend>(
    model: &Qwen2ForSequenceClassification<B>,
    pairs: &[&TokenizedPair],
    pad_id: u32,
) -> (Tensor<B, 1>, Tensor<B, 1>) {
    let rows: Vec<&[u32]> = pairs
        .iter()
        .map(|p| p.chosen.as_slice())
        .chain(pairs.iter().map(|p| p.rejected.as_slice()))
        .collect();
    let (ids, mask) = right_pad(&rows, pad_id);
    let scores = model.score_ids(&ids, Some(&mask));
    let count = pairs.len();
    (
        scores.clone().narrow(0, 0, count),
        scores.narrow(0, count, count),
    )
}
