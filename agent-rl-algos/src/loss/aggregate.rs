//! Reduction of per-token losses to a scalar: the four GRPO normalisations.

use burn::tensor::{Tensor, backend::Backend};
use serde::{Deserialize, Serialize};

/// How per-token losses are normalised into the batch loss (TRL's `loss_type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LossType {
    /// Mean over each sequence's tokens, then mean over sequences (original GRPO; favours short
    /// sequences).
    Grpo,
    /// Sum over all tokens of the micro-batch divided by its token count.
    Bnpo,
    /// Sum over all tokens divided by `batch × max_completion_length`, a constant
    /// (Dr. GRPO, [arXiv:2503.20783](https://arxiv.org/abs/2503.20783)).
    DrGrpo,
    /// Sum over all tokens divided by the active-token count of the whole optimiser step
    /// (DAPO, [arXiv:2503.14476](https://arxiv.org/abs/2503.14476); TRL's default).
    Dapo,
}

/// Mean of `values` over the positions where `mask` is 1 (0 when the mask is empty).
///
/// # Shapes
/// - `values`, `mask`: same shape; returns `[1]`.
pub fn masked_mean<B: Backend, const D: usize>(
    values: Tensor<B, D>,
    mask: Tensor<B, D>,
) -> Tensor<B, 1> {
    (values * mask.clone()).sum() / mask.sum().clamp_min(1.0)
}

/// Reduces per-token losses to the micro-batch loss.
///
/// The result is ready to be summed over `gradient_accumulation_steps` micro-batches: `grpo`,
/// `bnpo` and `dr_grpo` are divided by it, while `dapo` divides by `num_items_in_batch`, the
/// active-token count of all micro-batches of the step (this micro-batch's count when there is one).
///
/// # Shapes
/// - `per_token_loss`, `mask`: `[batch, steps]`; returns `[1]`.
pub fn aggregate_loss<B: Backend>(
    per_token_loss: Tensor<B, 2>,
    mask: Tensor<B, 2>,
    loss_type: LossType,
    max_completion_length: usize,
    num_items_in_batch: f32,
    gradient_accumulation_steps: usize,
) -> Tensor<B, 1> {
    let [batch, _] = per_token_loss.dims();
    let accumulation = gradient_accumulation_steps.max(1) as f32;
    let masked = per_token_loss * mask.clone();
    match loss_type {
        LossType::Grpo => {
            let lengths = mask.sum_dim(1).clamp_min(1.0);
            (masked.sum_dim(1) / lengths)
                .mean()
                .div_scalar(accumulation)
        }
        LossType::Bnpo => (masked.sum() / mask.sum().clamp_min(1.0)).div_scalar(accumulation),
        LossType::DrGrpo => masked
            .sum()
            .div_scalar((batch * max_completion_length) as f32 * accumulation),
        LossType::Dapo => masked.sum().div_scalar(num_items_in_batch.max(1.0)),
    }
}
