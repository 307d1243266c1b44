//! The SiLU-gated MLP: `down(silu(gate(x)) * up(x))`, gate and up fused in one projection.

use burn::nn::Linear;
use burn::prelude::*;
use burn::tensor::activation::silu;

use super::attention::contiguous;

/// Qwen2's MLP.
#[derive(Module, Debug)]
pub struct Mlp<B: Backend> {
    /// `[hidden, 2 * intermediate]`: HF's `gate_proj` then `up_proj`, transposed and joined.
    pub gate_up_proj: Linear<B>,
    /// `[intermediate, hidden]`: HF's `down_proj`, transposed.
    pub down_proj: Linear<B>,
    /// Width of the gated layer.
    pub intermediate_size: usize,
}

impl<B: Backend> Mlp<B> {
    /// # Shapes
    /// - `x`: `[batch, seq, hidden]` → `[batch, seq, hidden]`
    pub fn forward(&self, x: Tensor<B, 3>) -> Tensor<B, 3> {
        let gate_up = self.gate_up_proj.forward(x);
        let width = self.intermediate_size;
        let gate = contiguous(gate_up.clone().narrow(2, 0, width));
        let up = contiguous(gate_up.narrow(2, width, width));
        self.down_proj.forward(silu(gate) * up)
    }
}
