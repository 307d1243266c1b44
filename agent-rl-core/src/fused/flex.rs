//! The fused kernels on burn Flex tensors (inference, and the forward half of the autodiff ops).

use burn::tensor::{Shape, TensorData};
use burn_flex::FlexTensor;

use super::rows;

/// `x`'s elements as a row-major `f32` slice (`x` must be an `f32` tensor made contiguous by
/// [`contiguous`]).
pub(super) fn values(x: &FlexTensor) -> &[f32] {
    x.storage::<f32>()
}

/// `x` with row-major storage that starts at its first element (a copy only when needed).
pub(super) fn contiguous(x: &FlexTensor) -> FlexTensor {
    x.to_contiguous()
}

/// A contiguous `f32` tensor of `shape` holding `values`.
pub(super) fn from_values(shape: Shape, values: Vec<f32>) -> FlexTensor {
    FlexTensor::from_data(TensorData::new(values, shape))
}

/// The shape of `x`.
pub(super) fn shape_of(x: &FlexTensor) -> Shape {
    x.layout().shape().clone()
}

/// `silu(gate) * up` of two contiguous tensors of one shape.
pub(super) fn silu_mul(gate: &FlexTensor, up: &FlexTensor) -> FlexTensor {
    from_values(shape_of(gate), rows::silu_mul(values(gate), values(up)))
}

/// Softmax over the last dimension of contiguous `x + bias`.
pub(super) fn softmax(x: &FlexTensor, bias: Option<&FlexTensor>) -> FlexTensor {
    let shape = shape_of(x);
    let width = shape[shape.num_dims() - 1];
    from_values(shape, rows::softmax(values(x), bias.map(values), width))
}

/// RMSNorm over the last dimension of contiguous `x`, and each row's inverse RMS.
pub(super) fn rms_norm(x: &FlexTensor, weight: &FlexTensor, eps: f32) -> (FlexTensor, Vec<f32>) {
    let (out, inv_rms) = rows::rms_norm(values(x), values(weight), eps);
    (from_values(shape_of(x), out), inv_rms)
}

/// `[..., 2]`: the scaled log-probability of each row's target and the row's entropy, from
/// contiguous logits `[..., vocab]`; and each row's log-sum-exp.
pub(super) fn token_scores(
    logits: &FlexTensor,
    targets: &[u32],
    scale: f32,
) -> (FlexTensor, Vec<f32>) {
    let shape = shape_of(logits);
    let width = shape[shape.num_dims() - 1];
    let input = rows::ScoreRows {
        logits: values(logits),
        targets,
        width,
        scale,
    };
    let (out, log_sum_exp) = input.forward();
    let mut dims = shape.to_vec();
    if let Some(last) = dims.last_mut() {
        *last = 2;
    }
    (from_values(Shape::from(dims), out), log_sum_exp)
}

/// Contiguous `x`, `[n, q, p, dim]`, as `[n, p, q, dim]`; rows rotated by `rope` (cosines and
/// signed sines in the output layout), or by its transpose when `transpose` (tables in `x`'s
/// layout).
pub(super) fn swap_middle(
    x: &FlexTensor,
    rope: Option<(&FlexTensor, &FlexTensor)>,
    transpose: bool,
) -> FlexTensor {
    let shape = shape_of(x);
    let [n, q, p, dim] = [shape[0], shape[1], shape[2], shape[3]];
    let rope = rope.map(|(cos, sin)| rows::Rope {
        cos: values(cos),
        sin: values(sin),
    });
    let out = rows::swap_middle(values(x), [n, p, q, dim], rope, transpose);
    from_values(Shape::from(vec![n, p, q, dim]), out)
}
