//! Grouped-query self-attention with fused q/k/v, rotary embeddings and an optional KV cache.

use burn::nn::Linear;
use burn::prelude::*;

use super::layout::{token_linear, token_linear_part};
use super::mask::AttentionInputs;
use super::rotary::Rotate;
use crate::lora::{AttentionLora, with_delta};

/// Qwen2 attention: q/k/v with bias, o without, `num_heads / num_kv_heads` queries per key head.
#[derive(Module, Debug)]
pub struct Attention<B: Backend> {
    /// `[hidden, (heads + 2 * kv_heads) * head_dim]`: HF's q, k, v projections, transposed, joined.
    pub qkv_proj: Linear<B>,
    /// `[heads * head_dim, hidden]`: HF's `o_proj`, transposed, no bias.
    pub o_proj: Linear<B>,
    /// Query heads.
    pub num_heads: usize,
    /// Key/value heads.
    pub num_kv_heads: usize,
    /// Width of one head.
    pub head_dim: usize,
    /// Low-rank adapters on q/k/v/o (see [`crate::lora`]); `None` without LoRA.
    pub lora: Option<AttentionLora<B>>,
}

impl<B: Backend> Attention<B> {
    /// Attends over the cached and new positions; appends the new keys/values to `cache`.
    ///
    /// # Shapes
    /// - `x`: `[batch, seq, hidden]` → `[batch, seq, hidden]`
    /// - `cache`: keys/values `[batch, kv_heads, past, head_dim]`
    pub fn forward(
        &self,
        x: Tensor<B, 3>,
        inputs: &AttentionInputs<B>,
        cache: Option<&mut Option<(Tensor<B, 4>, Tensor<B, 4>)>>,
    ) -> Tensor<B, 3> {
        let [batch, seq, _] = x.dims();
        let (heads, kv_heads, dim) = (self.num_heads, self.num_kv_heads, self.head_dim);
        // Each head group from its slice of the fused weight, moved to [batch, count, seq, dim]
        // and rotated in one pass.
        let lora = self.lora.as_ref();
        let project = |start: usize, count: usize, adapter, rotate: Rotate| {
            let base = token_linear_part(&self.qkv_proj, x.clone(), start * dim, count * dim);
            let projected = with_delta(adapter, &x, base).reshape([batch, seq, count, dim]);
            inputs.rotary.heads_first(projected, rotate)
        };
        let queries = project(
            0,
            heads,
            lora.and_then(|l| l.q_proj.as_ref()),
            Rotate::Queries,
        );
        let mut keys = project(
            heads,
            kv_heads,
            lora.and_then(|l| l.k_proj.as_ref()),
            Rotate::Keys,
        );
        let mut values = project(
            heads + kv_heads,
            kv_heads,
            lora.and_then(|l| l.v_proj.as_ref()),
            Rotate::None,
        );
        if let Some(slot) = cache {
            if let Some((past_keys, past_values)) = slot.take() {
                keys = crate::fused::append_positions(past_keys, keys);
                values = crate::fused::append_positions(past_values, values);
            }
            *slot = Some((keys.clone(), values.clone()));
        }
        // The rotary tables already applied the 1/sqrt(dim) scale to the queries.
        let context =
            crate::fused::attention(queries, keys, values, &inputs.mask, || inputs.bias());
        let delta = lora
            .and_then(|l| l.o_proj.as_ref())
            .map(|adapter| adapter.delta(context.clone()));
        let out = token_linear(&self.o_proj, context);
        match delta {
            Some(delta) => out + delta,
            None => out,
        }
    }
}
