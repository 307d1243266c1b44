//! Tensor layouts that keep CPU kernels on their fast paths.
//!
//! burn's CPU backend vectorises elementwise ops only for contiguous operands, and a `Linear` on a
//! `[batch, seq, in]` input runs `batch` small matrix products, whose weight gradient is then a
//! `[batch, in, out]` tensor summed over the batch. Both cost more than the arithmetic they wrap;
//! these helpers avoid them and are free (or one copy) on every backend.

use burn::nn::Linear;
use burn::prelude::*;

/// `x` with its elements in row-major order in memory (a copy only when they are not).
///
/// A strided view (a `narrow` of a fused projection, a transpose) is worth one copy before
/// elementwise work. A reshape to the same shape is that copy on every backend.
pub(crate) fn contiguous<B: Backend, const D: usize>(x: Tensor<B, D>) -> Tensor<B, D> {
    let dims = x.dims();
    x.reshape(dims)
}

/// `linear` applied to every token as one `[batch * seq, in] x [in, out]` product, so that the
/// backward pass computes the weight gradient as one product too.
///
/// # Shapes
/// - `x`: `[batch, seq, in]` → `[batch, seq, out]`
pub(crate) fn token_linear<B: Backend>(linear: &Linear<B>, x: Tensor<B, 3>) -> Tensor<B, 3> {
    let width = linear.weight.dims()[1];
    token_linear_part(linear, x, 0, width)
}

/// Output features `start..start + width` of `linear` (one part of a fused projection), computed
/// from that slice of the weight: the result is contiguous, and the backward pass scatters into
/// the small weight gradient instead of into a `[tokens, fused width]` activation gradient.
///
/// # Shapes
/// - `x`: `[batch, seq, in]` → `[batch, seq, width]`
pub(crate) fn token_linear_part<B: Backend>(
    linear: &Linear<B>,
    x: Tensor<B, 3>,
    start: usize,
    width: usize,
) -> Tensor<B, 3> {
    let [batch, seq, features] = x.dims();
    let weight = linear.weight.val();
    let weight = if width == weight.dims()[1] {
        weight
    } else {
        weight.narrow(1, start, width)
    };
    let bias = linear
        .bias
        .as_ref()
        .map(|bias| bias.val().narrow(0, start, width));
    let tokens = contiguous(x).reshape([batch * seq, features]);
    crate::fused::linear(tokens, weight, bias).reshape([batch, seq, width])
}
