//! Importance-sampling log-weights per token (GRPO/PPO) or per sequence (GSPO).

use burn::tensor::{Tensor, backend::Backend};
use serde::{Deserialize, Serialize};

/// Granularity of the importance ratio π_θ / π_old (TRL's `importance_sampling_level`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ImportanceSamplingLevel {
    /// One ratio per token (GRPO, PPO).
    Token,
    /// One ratio per sequence: the exponential of the mean token log-ratio
    /// (GSPO, [arXiv:2507.18071](https://arxiv.org/abs/2507.18071)). Best paired with [`LossType::Grpo`](crate::LossType::Grpo).
    Sequence,
}

/// Log importance weights from the per-token log-ratio `log π_θ − log π_old`.
///
/// Token level returns `log_ratio` itself; sequence level returns the masked mean over each row
/// (an empty row counts as length 1, giving 0).
///
/// # Shapes
/// - `log_ratio`, `mask`: `[batch, steps]`
/// - returns `[batch, steps]` (token) or `[batch, 1]` (sequence)
pub fn log_importance_weights<B: Backend>(
    log_ratio: Tensor<B, 2>,
    mask: Tensor<B, 2>,
    level: ImportanceSamplingLevel,
) -> Tensor<B, 2> {
    match level {
        ImportanceSamplingLevel::Token => log_ratio,
        ImportanceSamplingLevel::Sequence => {
            let lengths = mask.clone().sum_dim(1).clamp_min(1.0);
            (log_ratio * mask).sum_dim(1) / lengths
        }
    }
}
