//! Fused forms of the model's elementwise blocks: SiLU gate, RMSNorm, softmax, per-token
//! log-probability/entropy scoring, and attention (blocked, never storing the scores).
//!
//! Written with burn tensor ops, each block records a chain of elementwise nodes, and on burn's
//! CPU backend (Flex) most of those run on one core: in a GRPO step they took more wall time than
//! the matrix products. With the `flex` feature (on by default) these functions check whether the
//! backend is Flex or `Autodiff<Flex>` and then run one row-parallel kernel, recorded as one
//! autodiff node with a hand-derived backward step. On every other backend (CUDA, ndarray, other
//! float types) they run the plain tensor-op versions, which define the semantics; the tests
//! check the two against each other, values and gradients.

#[cfg(feature = "flex")]
mod attention;
#[cfg(feature = "flex")]
mod autodiff;
#[cfg(feature = "flex")]
mod autodiff_products;
#[cfg(feature = "flex")]
mod dispatch;
#[cfg(feature = "flex")]
mod downcast;
#[cfg(feature = "flex")]
mod flash;
#[cfg(feature = "flex")]
mod flex;
#[cfg(feature = "flex")]
mod gemm;
#[cfg(feature = "flex")]
mod half_linear;
#[cfg(feature = "flex")]
mod kv_append;
#[cfg(feature = "flex")]
mod products;
#[cfg(feature = "flex")]
mod rows;

#[cfg(all(test, feature = "flex"))]
mod attention_tests;
#[cfg(all(test, feature = "flex"))]
mod half_tests;
mod plain;
#[cfg(all(test, feature = "flex"))]
mod tests;

use std::sync::Arc;

use burn::prelude::*;

use crate::model::AttentionMask;

/// `silu(gate) * up`, elementwise.
pub(crate) fn silu_mul<B: Backend, const D: usize>(
    gate: Tensor<B, D>,
    up: Tensor<B, D>,
) -> Tensor<B, D> {
    #[cfg(feature = "flex")]
    let (gate, up) = match dispatch::silu_mul(gate, up) {
        Ok(out) => return out,
        Err(inputs) => inputs,
    };
    plain::silu_mul(gate, up)
}

/// `x / sqrt(mean(x²) + eps) * weight` over the last dimension.
pub(crate) fn rms_norm<B: Backend, const D: usize>(
    x: Tensor<B, D>,
    weight: Tensor<B, 1>,
    eps: f64,
) -> Tensor<B, D> {
    #[cfg(feature = "flex")]
    let (x, weight) = match dispatch::rms_norm(x, weight, eps) {
        Ok(out) => return out,
        Err(inputs) => inputs,
    };
    plain::rms_norm(x, weight, eps)
}

/// Softmax over the last dimension of `x + bias` (`bias`: a constant of `x`'s shape, such as an
/// attention mask; no gradient flows to it).
pub(crate) fn softmax_last<B: Backend, const D: usize>(
    x: Tensor<B, D>,
    bias: Option<Tensor<B, D>>,
) -> Tensor<B, D> {
    #[cfg(feature = "flex")]
    let (x, bias) = match dispatch::softmax_last(x, bias) {
        Ok(out) => return out,
        Err(inputs) => inputs,
    };
    plain::softmax_last(x, bias)
}

/// Per position of `logits` (`[batch, len, vocab]`, divided by `temperature` first) and its
/// target id (`targets`, `[batch, len]`): `log p(target)` and, when `with_entropy`, the entropy
/// of the distribution, each `[batch, len]`.
pub(crate) fn token_scores<B: Backend>(
    logits: Tensor<B, 3>,
    targets: Tensor<B, 2, Int>,
    temperature: f32,
    with_entropy: bool,
) -> (Tensor<B, 2>, Option<Tensor<B, 2>>) {
    let scale = if temperature > 0.0 {
        1.0 / temperature
    } else {
        1.0
    };
    #[cfg(feature = "flex")]
    let (logits, targets) = match dispatch::token_scores(logits, targets, scale) {
        Ok(scores) => {
            let [batch, len, _] = scores.dims();
            let logprobs = scores.clone().slice([0..batch, 0..len, 0..1]);
            let entropies = scores.slice([0..batch, 0..len, 1..2]);
            return (
                logprobs.squeeze_dim(2),
                with_entropy.then(|| entropies.squeeze_dim(2)),
            );
        }
        Err(inputs) => inputs,
    };
    plain::token_scores(logits, targets, scale, with_entropy)
}

/// `x`, `[n, q, p, dim]`, as a contiguous `[n, p, q, dim]` (the two middle axes swapped: heads
/// to the front of a projection, or back behind the positions), each row rotated by `rope`
/// (cosines and signed sines, `[n, p, q, dim]`, constants) when given:
/// `out_j = x_j * cos_j + x_(j + dim/2 mod dim) * sin_j`.
///
/// `Err(x)` (untouched) where no fused kernel applies; the caller then swaps and rotates with
/// tensor ops.
pub(crate) fn swap_middle<B: Backend>(
    x: Tensor<B, 4>,
    rope: Option<(&Tensor<B, 4>, &Tensor<B, 4>)>,
) -> Result<Tensor<B, 4>, Tensor<B, 4>> {
    #[cfg(feature = "flex")]
    {
        dispatch::swap_middle(x, rope.map(|(cos, sin)| (cos.clone(), sin.clone())))
    }
    #[cfg(not(feature = "flex"))]
    {
        let _ = rope;
        Err(x)
    }
}

/// `x · weight + bias` for `x` `[tokens, in]`, `weight` `[in, out]` and `bias` `[out]`.
///
/// A half-precision (bf16/f16) `weight` beside an `f32` `x` is a frozen LoRA base
/// ([`crate::lora::BaseDtype`]): on Flex it is widened to `f32` one block at a time (forward and
/// input gradient) and stays half precision in the graph; elsewhere the product runs in the
/// weight's type and the result is cast back to `x`'s (see [`plain::linear`]).
pub(crate) fn linear<B: Backend>(
    x: Tensor<B, 2>,
    weight: Tensor<B, 2>,
    bias: Option<Tensor<B, 1>>,
) -> Tensor<B, 2> {
    #[cfg(feature = "flex")]
    let (x, weight, bias) = match dispatch::linear(x, weight, bias) {
        Ok(out) => return out,
        Err(inputs) => inputs,
    };
    plain::linear(x, weight, bias)
}

/// `a · b` per matrix, `[batch, group, m, k] x [batch, group, k, n]`, equal leading dimensions.
pub(crate) fn matmul<B: Backend>(a: Tensor<B, 4>, b: Tensor<B, 4>) -> Tensor<B, 4> {
    #[cfg(feature = "flex")]
    let (a, b) = match dispatch::matmul(a, b) {
        Ok(out) => return out,
        Err(inputs) => inputs,
    };
    plain::matmul(a, b)
}

/// Grouped-query attention of `queries` (`[batch, heads, seq, dim]`, already scaled by
/// `1 / sqrt(dim)`) over `keys` and `values` (`[batch, kv_heads, total, dim]`; query head `h`
/// reads key head `h / (heads / kv_heads)`), each query seeing the keys `mask` allows; returns
/// `[batch, seq, heads * dim]` (the heads of a position side by side, as the output projection
/// reads them).
///
/// On Flex and `Autodiff<Flex>`, for calls [`takes_blocked_kernel`] picks (from
/// [`BLOCKED_MIN_SCORES`] scores per head on, and decode steps over at least
/// [`BLOCKED_DECODE_MIN_KEYS`] cached positions), this is the blocked kernel of `flash`: the
/// `[batch, heads, seq, total]` scores and probabilities are never stored, and `bias` is not
/// called. Elsewhere (and for shorter calls: short decode steps, short prompts) it is
/// `softmax(q · kᵀ + bias) · v` with `bias()` (`[batch, heads, seq, total]`, `mask`'s additive
/// form).
pub(crate) fn attention<B: Backend>(
    queries: Tensor<B, 4>,
    keys: Tensor<B, 4>,
    values: Tensor<B, 4>,
    mask: &Arc<AttentionMask>,
    bias: impl FnOnce() -> Tensor<B, 4>,
) -> Tensor<B, 3> {
    let [_, seq, total] = mask.dims();
    #[cfg(feature = "flex")]
    let (queries, keys, values) = if takes_blocked_kernel(seq, total) {
        match dispatch::attention(queries, keys, values, mask) {
            Ok(out) => return out,
            Err(inputs) => inputs,
        }
    } else {
        (queries, keys, values)
    };
    #[cfg(not(feature = "flex"))]
    let _ = (seq, total);
    composed_attention(queries, keys, values, bias())
}

/// Scores per head (`seq * total`) from which [`attention`] runs the blocked kernel on Flex.
/// Below it the whole-matrix products and the fused softmax were faster (a decode step, a
/// 64-token GRPO step: one batched product against many small per-block `gemm` calls), and the
/// scores they store are small.
#[cfg_attr(not(feature = "flex"), allow(dead_code))]
pub(crate) const BLOCKED_MIN_SCORES: usize = 1 << 16;

/// Cached positions from which a decode step (one query per row) runs the blocked kernel on
/// Flex. Below it the whole-matrix products, which hand every step's whole cache to `gemm` to be
/// packed, are as fast or faster; above it they fall behind (`bench_multi_turn`, figures in the
/// book's write-up on decoding at long caches). Short caches keeping the products also keeps the
/// numerics of short, toy-sized rollouts as they were.
#[cfg_attr(not(feature = "flex"), allow(dead_code))]
pub(crate) const BLOCKED_DECODE_MIN_KEYS: usize = 1024;

/// Whether [`attention`] runs the blocked kernel (on Flex) for `seq` queries over `total` keys.
#[cfg_attr(not(feature = "flex"), allow(dead_code))]
pub(crate) fn takes_blocked_kernel(seq: usize, total: usize) -> bool {
    seq * total >= BLOCKED_MIN_SCORES || (seq == 1 && total >= BLOCKED_DECODE_MIN_KEYS)
}

/// [`attention`] as products and a softmax over the whole `[batch, heads, seq, total]` scores.
fn composed_attention<B: Backend>(
    queries: Tensor<B, 4>,
    keys: Tensor<B, 4>,
    values: Tensor<B, 4>,
    bias: Tensor<B, 4>,
) -> Tensor<B, 3> {
    let [batch, heads, seq, dim] = queries.dims();
    let [_, kv_heads, total, _] = keys.dims();
    let group = heads / kv_heads;
    // Queries of one key head side by side: [batch, kv_heads, group * seq, dim].
    let queries = queries.reshape([batch, kv_heads, group * seq, dim]);
    let scores = matmul(queries, keys.swap_dims(2, 3)).reshape([batch, heads, seq, total]);
    let weights = softmax_last(scores, Some(bias)).reshape([batch, kv_heads, group * seq, total]);
    let context = matmul(weights, values).reshape([batch, heads, seq, dim]);
    swap_middle(context, None)
        .unwrap_or_else(|context| context.swap_dims(1, 2))
        .reshape([batch, seq, heads * dim])
}

/// `past` (`[batch, heads, len, dim]`) with `new` (`[batch, heads, count, dim]`) appended along
/// the positions: a key/value cache step. On Flex (inference) the cache keeps spare room and
/// grows in place; elsewhere this is a concatenation.
pub(crate) fn append_positions<B: Backend>(past: Tensor<B, 4>, new: Tensor<B, 4>) -> Tensor<B, 4> {
    #[cfg(feature = "flex")]
    let (past, new) = match dispatch::append_positions(past, new) {
        Ok(out) => return out,
        Err(inputs) => inputs,
    };
    Tensor::cat(vec![past, new], 2)
}
