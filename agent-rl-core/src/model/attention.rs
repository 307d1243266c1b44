//! Grouped-query self-attention with fused q/k/v, rotary embeddings and an optional KV cache.

use burn::nn::Linear;
use burn::prelude::*;
use burn::tensor::activation::softmax;

use super::mask::AttentionInputs;

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
        let qkv = self.qkv_proj.forward(x);
        // Each head group as its own contiguous [batch, seq, count, dim] block.
        let split = |start: usize, count: usize| {
            contiguous(qkv.clone().narrow(2, start * dim, count * dim))
                .reshape([batch, seq, count, dim])
        };
        let queries = inputs.rotary.rotate_queries(split(0, heads));
        let mut keys = inputs
            .rotary
            .rotate_keys(split(heads, kv_heads))
            .swap_dims(1, 2);
        let mut values = split(heads + kv_heads, kv_heads).swap_dims(1, 2);
        if let Some(slot) = cache {
            if let Some((past_keys, past_values)) = slot.take() {
                keys = Tensor::cat(vec![past_keys, keys], 2);
                values = Tensor::cat(vec![past_values, values], 2);
            }
            *slot = Some((keys.clone(), values.clone()));
        }
        let total = keys.dims()[2];
        let group = heads / kv_heads;
        // Queries of one key head side by side: [batch, kv_heads, group * seq, dim]. The rotary
        // tables already applied the 1/sqrt(dim) scale.
        let queries = queries
            .swap_dims(1, 2)
            .reshape([batch, kv_heads, group * seq, dim]);
        let scores = queries
            .matmul(keys.swap_dims(2, 3))
            .reshape([batch, heads, seq, total])
            + inputs.bias.clone();
        let weights = softmax(scores, 3).reshape([batch, kv_heads, group * seq, total]);
        let context = weights
            .matmul(values)
            .reshape([batch, heads, seq, dim])
            .swap_dims(1, 2)
            .reshape([batch, seq, heads * dim]);
        self.o_proj.forward(context)
    }
}

/// `x` with its elements in row-major order in memory (a copy only when they are not).
///
/// Elementwise kernels on CPU backends are vectorised for contiguous operands and fall back to a
/// scalar index walk otherwise, so a strided view (a `narrow` of a fused projection) is worth one
/// copy before the elementwise work. A reshape to the same shape is that copy on every backend.
pub(crate) fn contiguous<B: Backend, const D: usize>(x: Tensor<B, D>) -> Tensor<B, D> {
    let dims = x.dims();
    x.reshape(dims)
}
