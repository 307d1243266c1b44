//! The SiLU-gated MLP: `down(silu(gate(x)) * up(x))`, gate and up fused in one projection.

use burn::nn::Linear;
use burn::prelude::*;

use super::layout::{token_linear, token_linear_part};
use crate::lora::{MlpLora, with_delta};

/// Qwen2's MLP.
#[derive(Module, Debug)]
pub struct Mlp<B: Backend> {
    /// `[hidden, 2 * intermediate]`: HF's `gate_proj` then `up_proj`, transposed and joined.
    pub gate_up_proj: Linear<B>,
    /// `[intermediate, hidden]`: HF's `down_proj`, transposed.
    pub down_proj: Linear<B>,
    /// Width of the gated layer.
    pub intermediate_size: usize,
    /// Low-rank adapters on gate/up/down (see [`crate::lora`]); `None` without LoRA.
    pub lora: Option<MlpLora<B>>,
}

impl<B: Backend> Mlp<B> {
    /// # Shapes
    /// - `x`: `[batch, seq, hidden]` → `[batch, seq, hidden]`
    pub fn forward(&self, x: Tensor<B, 3>) -> Tensor<B, 3> {
        let width = self.intermediate_size;
        let lora = self.lora.as_ref();
        let gate = token_linear_part(&self.gate_up_proj, x.clone(), 0, width);
        let gate = with_delta(lora.and_then(|l| l.gate_proj.as_ref()), &x, gate);
        let up = token_linear_part(&self.gate_up_proj, x.clone(), width, width);
        let up = with_delta(lora.and_then(|l| l.up_proj.as_ref()), &x, up);
        let hidden = crate::fused::silu_mul(gate, up);
        let delta = lora
            .and_then(|l| l.down_proj.as_ref())
            .map(|adapter| adapter.delta(hidden.clone()));
        let out = token_linear(&self.down_proj, hidden);
        match delta {
            Some(delta) => out + delta,
            None => out,
        }
    }
}
