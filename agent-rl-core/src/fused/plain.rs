//! The tensor-op versions of the fused blocks: they define what the kernels compute, run on
//! every backend without a kernel, and are what the tests compare the kernels with.

use burn::prelude::*;
use burn::tensor::FloatDType;
use burn::tensor::activation::{log_softmax, silu, softmax};

/// `silu(gate) * up`.
pub(crate) fn silu_mul<B: Backend, const D: usize>(
    gate: Tensor<B, D>,
    up: Tensor<B, D>,
) -> Tensor<B, D> {
    silu(gate) * up
}

/// `x / sqrt(mean(x²) + eps) * weight` over the last dimension.
pub(crate) fn rms_norm<B: Backend, const D: usize>(
    x: Tensor<B, D>,
    weight: Tensor<B, 1>,
    eps: f64,
) -> Tensor<B, D> {
    let inv_rms = x
        .clone()
        .square()
        .mean_dim(D - 1)
        .add_scalar(eps)
        .sqrt()
        .recip();
    x * inv_rms * weight.unsqueeze::<D>()
}

/// Softmax over the last dimension of `x + bias`.
pub(crate) fn softmax_last<B: Backend, const D: usize>(
    x: Tensor<B, D>,
    bias: Option<Tensor<B, D>>,
) -> Tensor<B, D> {
    match bias {
        Some(bias) => softmax(x + bias, D - 1),
        None => softmax(x, D - 1),
    }
}

/// `log p(target)` and (when `with_entropy`) the entropy at `scale * logits`.
pub(crate) fn token_scores<B: Backend>(
    logits: Tensor<B, 3>,
    targets: Tensor<B, 2, Int>,
    scale: f32,
    with_entropy: bool,
) -> (Tensor<B, 2>, Option<Tensor<B, 2>>) {
    let logits = if scale == 1.0 {
        logits
    } else {
        logits.mul_scalar(scale)
    };
    let logp = log_softmax(logits, 2);
    let logprobs = logp
        .clone()
        .gather(2, targets.unsqueeze_dim::<3>(2))
        .squeeze_dim::<2>(2);
    let entropies = with_entropy.then(|| {
        (logp.clone().exp() * logp)
            .sum_dim(2)
            .neg()
            .squeeze_dim::<2>(2)
    });
    (logprobs, entropies)
}

/// `x · weight + bias`. When `weight` has another float type than `x` (a half-precision frozen
/// base), `x` is cast to the weight's type for the product and the result cast back: the graph
/// then keeps the weight itself (no widened copy) and the product runs at the weight's precision,
/// as PyTorch's autocast does.
pub(crate) fn linear<B: Backend>(
    x: Tensor<B, 2>,
    weight: Tensor<B, 2>,
    bias: Option<Tensor<B, 1>>,
) -> Tensor<B, 2> {
    let (x_dtype, w_dtype) = (x.dtype(), weight.dtype());
    if x_dtype == w_dtype {
        return burn::tensor::module::linear(x, weight, bias);
    }
    // A float tensor's type is always a float type.
    let (x_float, w_float) = (FloatDType::from(x_dtype), FloatDType::from(w_dtype));
    let out = x.cast(w_float).matmul(weight).cast(x_float);
    match bias {
        Some(bias) => out + bias.cast(x_float).unsqueeze(),
        None => out,
    }
}

/// `a · b` per matrix.
pub(crate) fn matmul<B: Backend>(a: Tensor<B, 4>, b: Tensor<B, 4>) -> Tensor<B, 4> {
    a.matmul(b)
}

/// The middle axes of `x` swapped, rows rotated by `rope` (cosines, signed sines) when given.
#[cfg(test)]
pub(crate) fn swap_middle<B: Backend>(
    x: Tensor<B, 4>,
    rope: Option<(&Tensor<B, 4>, &Tensor<B, 4>)>,
) -> Tensor<B, 4> {
    let x = x.swap_dims(1, 2);
    let Some((cos, sin)) = rope else {
        return x;
    };
    let [n, p, q, dim] = x.dims();
    let half = dim / 2;
    let swapped = Tensor::cat(
        vec![
            x.clone().slice([0..n, 0..p, 0..q, half..dim]),
            x.clone().slice([0..n, 0..p, 0..q, 0..half]),
        ],
        3,
    );
    x * cos.clone() + swapped * sin.clone()
}

/// Grouped-query attention with the whole score matrix: `softmax(q · kᵀ + bias) · v`, each key
/// head repeated for its query heads; `[batch, seq, heads * dim]`.
#[cfg(test)]
pub(crate) fn attention<B: Backend>(
    queries: Tensor<B, 4>,
    keys: Tensor<B, 4>,
    values: Tensor<B, 4>,
    bias: Tensor<B, 4>,
) -> Tensor<B, 3> {
    let [batch, heads, seq, dim] = queries.dims();
    let [_, kv_heads, total, _] = keys.dims();
    let per_query_head = |x: Tensor<B, 4>| {
        x.unsqueeze_dim::<5>(2)
            .repeat_dim(2, heads / kv_heads)
            .reshape([batch, heads, total, dim])
    };
    let scores = queries.matmul(per_query_head(keys).swap_dims(2, 3));
    softmax(scores + bias, 3)
        .matmul(per_query_head(values))
        .swap_dims(1, 2)
        .reshape([batch, seq, heads * dim])
}
