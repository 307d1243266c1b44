//! Root-mean-square layer norm, as Qwen2 computes it.

use burn::module::Param;
use burn::prelude::*;

/// `y = x / sqrt(mean(x²) + eps) * weight`.
#[derive(Module, Debug)]
pub struct RmsNorm<B: Backend> {
    /// Per-channel scale, shape `[hidden]` (HF key `…norm.weight`).
    pub weight: Param<Tensor<B, 1>>,
    /// Added to the mean square before the square root.
    pub eps: f64,
}

impl<B: Backend> RmsNorm<B> {
    /// A norm with the given scale.
    pub fn new(weight: Tensor<B, 1>, eps: f64) -> Self {
        Self {
            weight: Param::from_tensor(weight),
            eps,
        }
    }

    /// Normalises over the last dimension.
    ///
    /// # Shapes
    /// - `x`: `[batch, seq, hidden]` → `[batch, seq, hidden]`
    pub fn forward(&self, x: Tensor<B, 3>) -> Tensor<B, 3> {
        crate::fused::rms_norm(x, self.weight.val(), self.eps)
    }
}
