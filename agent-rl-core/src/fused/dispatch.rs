//! Routing from generic tensors to the Flex kernels: `Ok` with the fused result when the backend
//! is Flex or `Autodiff<Flex>` and the inputs are `f32` of matching shapes, `Err` with the inputs
//! untouched otherwise (the caller then runs the plain tensor-op version).

use burn::prelude::*;
use burn::tensor::{DType, TensorPrimitive};
use burn_flex::Flex;

use std::sync::Arc;

use super::attention::{self as flash, head_rows_tensor};
use super::autodiff::{self, AutodiffFlex};
use super::autodiff_products;
use super::downcast::{downcast, upcast};
use super::flex::{self as kernels, contiguous};
use super::half_linear::{self, is_half};
use super::kv_append;
use super::products::{self, viewable};
use crate::model::AttentionMask;

/// Where a value of a generic backend lives.
enum Reached<T, F, A> {
    /// On Flex (inference).
    Flex(F),
    /// On `Autodiff<Flex>` (training).
    Autodiff(A),
    /// On any other backend.
    Other(T),
}

/// Moves `value` into its Flex or `Autodiff<Flex>` form when the backend is one of those.
fn reach<T: 'static, F: 'static, A: 'static>(value: T) -> Reached<T, F, A> {
    match downcast::<T, F>(value) {
        Ok(on_flex) => Reached::Flex(on_flex),
        Err(value) => match downcast::<T, A>(value) {
            Ok(on_autodiff) => Reached::Autodiff(on_autodiff),
            Err(value) => Reached::Other(value),
        },
    }
}

/// The float primitive of `x`.
fn primitive<B: Backend, const D: usize>(x: Tensor<B, D>) -> B::FloatTensorPrimitive {
    x.into_primitive().tensor()
}

/// A tensor around a float primitive.
fn wrap<B: Backend, const D: usize>(x: B::FloatTensorPrimitive) -> Tensor<B, D> {
    Tensor::from_primitive(TensorPrimitive::Float(x))
}

/// Both tensors `f32` and of one shape.
fn same_f32<B: Backend, const D: usize>(a: &Tensor<B, D>, b: &Tensor<B, D>) -> bool {
    a.dtype() == DType::F32 && b.dtype() == DType::F32 && a.shape() == b.shape()
}

type Pair<B, const D: usize> = (Tensor<B, D>, Tensor<B, D>);

/// See [`super::silu_mul`].
pub(super) fn silu_mul<B: Backend, const D: usize>(
    gate: Tensor<B, D>,
    up: Tensor<B, D>,
) -> Result<Tensor<B, D>, Pair<B, D>> {
    if !same_f32(&gate, &up) {
        return Err((gate, up));
    }
    match reach::<_, Pair<Flex, D>, Pair<AutodiffFlex, D>>((gate, up)) {
        Reached::Flex((gate, up)) => {
            let (gate, up) = (contiguous(&primitive(gate)), contiguous(&primitive(up)));
            Ok(upcast(wrap::<Flex, D>(kernels::silu_mul(&gate, &up))))
        }
        Reached::Autodiff((gate, up)) => Ok(upcast(wrap::<AutodiffFlex, D>(autodiff::silu_mul(
            primitive(gate),
            primitive(up),
        )))),
        Reached::Other(inputs) => Err(inputs),
    }
}

/// See [`super::rms_norm`].
pub(super) fn rms_norm<B: Backend, const D: usize>(
    x: Tensor<B, D>,
    weight: Tensor<B, 1>,
    eps: f64,
) -> Result<Tensor<B, D>, (Tensor<B, D>, Tensor<B, 1>)> {
    let width_matches = x.dims()[D - 1] == weight.dims()[0];
    if !(width_matches && x.dtype() == DType::F32 && weight.dtype() == DType::F32) {
        return Err((x, weight));
    }
    let eps = eps as f32;
    type On<B, const D: usize> = (Tensor<B, D>, Tensor<B, 1>);
    match reach::<_, On<Flex, D>, On<AutodiffFlex, D>>((x, weight)) {
        Reached::Flex((x, weight)) => {
            let (x, weight) = (contiguous(&primitive(x)), contiguous(&primitive(weight)));
            Ok(upcast(wrap::<Flex, D>(
                kernels::rms_norm(&x, &weight, eps).0,
            )))
        }
        Reached::Autodiff((x, weight)) => Ok(upcast(wrap::<AutodiffFlex, D>(autodiff::rms_norm(
            primitive(x),
            primitive(weight),
            eps,
        )))),
        Reached::Other(inputs) => Err(inputs),
    }
}

type Biased<B, const D: usize> = (Tensor<B, D>, Option<Tensor<B, D>>);

/// See [`super::softmax_last`].
pub(super) fn softmax_last<B: Backend, const D: usize>(
    x: Tensor<B, D>,
    bias: Option<Tensor<B, D>>,
) -> Result<Tensor<B, D>, Biased<B, D>> {
    let bias_fits = bias
        .as_ref()
        .is_none_or(|b| b.dims() == x.dims() && b.dtype() == DType::F32);
    if x.dtype() != DType::F32 || !bias_fits {
        return Err((x, bias));
    }
    match reach::<_, Biased<Flex, D>, Biased<AutodiffFlex, D>>((x, bias)) {
        Reached::Flex((x, bias)) => {
            let bias = bias.map(|b| contiguous(&primitive(b)));
            let out = kernels::softmax(&contiguous(&primitive(x)), bias.as_ref());
            Ok(upcast(wrap::<Flex, D>(out)))
        }
        Reached::Autodiff((x, bias)) => Ok(upcast(wrap::<AutodiffFlex, D>(
            autodiff::softmax_last(primitive(x), bias.map(primitive)),
        ))),
        Reached::Other(inputs) => Err(inputs),
    }
}

/// Logits `[batch, len, vocab]` and target ids `[batch, len]`.
type Scored<B> = (Tensor<B, 3>, Tensor<B, 2, Int>);

/// See [`super::token_scores`]: `[batch, len, 2]` log-probabilities and entropies.
pub(super) fn token_scores<B: Backend>(
    logits: Tensor<B, 3>,
    targets: Tensor<B, 2, Int>,
    scale: f32,
) -> Result<Tensor<B, 3>, Scored<B>> {
    let [batch, len, vocab] = logits.dims();
    if logits.dtype() != DType::F32 || targets.dims() != [batch, len] {
        return Err((logits, targets));
    }
    let ids: Option<Vec<u32>> = targets
        .to_data()
        .convert::<i64>()
        .into_vec::<i64>()
        .ok()
        .and_then(|ids| {
            ids.into_iter()
                .map(|id| u32::try_from(id).ok().filter(|&id| (id as usize) < vocab))
                .collect()
        });
    let Some(ids) = ids else {
        return Err((logits, targets));
    };
    match reach::<_, Tensor<Flex, 3>, Tensor<AutodiffFlex, 3>>(logits) {
        Reached::Flex(logits) => {
            let logits = contiguous(&primitive(logits));
            Ok(upcast(wrap::<Flex, 3>(
                kernels::token_scores(&logits, &ids, scale).0,
            )))
        }
        Reached::Autodiff(logits) => Ok(upcast(wrap::<AutodiffFlex, 3>(autodiff::token_scores(
            primitive(logits),
            ids,
            scale,
        )))),
        Reached::Other(logits) => Err((logits, targets)),
    }
}

type Tables<B> = Option<(Tensor<B, 4>, Tensor<B, 4>)>;

/// See [`super::swap_middle`].
pub(super) fn swap_middle<B: Backend>(
    x: Tensor<B, 4>,
    rope: Tables<B>,
) -> Result<Tensor<B, 4>, Tensor<B, 4>> {
    let [n, q, p, dim] = x.dims();
    let tables_fit = rope.as_ref().is_none_or(|(cos, sin)| {
        [cos, sin]
            .iter()
            .all(|t| t.dims() == [n, p, q, dim] && t.dtype() == DType::F32)
    });
    if x.dtype() != DType::F32 || !tables_fit || dim % 2 != 0 {
        return Err(x);
    }
    match reach::<_, (Tensor<Flex, 4>, Tables<Flex>), (Tensor<AutodiffFlex, 4>, Tables<AutodiffFlex>)>(
        (x, rope),
    ) {
        Reached::Flex((x, rope)) => {
            let rope =
                rope.map(|(cos, sin)| (contiguous(&primitive(cos)), contiguous(&primitive(sin))));
            let out = kernels::swap_middle(
                &contiguous(&primitive(x)),
                rope.as_ref().map(|(cos, sin)| (cos, sin)),
                false,
            );
            Ok(upcast(wrap::<Flex, 4>(out)))
        }
        Reached::Autodiff((x, rope)) => {
            let rope = rope.map(|(cos, sin)| (primitive(cos), primitive(sin)));
            Ok(upcast(wrap::<AutodiffFlex, 4>(autodiff::swap_middle(
                primitive(x),
                rope,
            ))))
        }
        Reached::Other((x, _)) => Err(x),
    }
}

type Linear<B> = (Tensor<B, 2>, Tensor<B, 2>, Option<Tensor<B, 1>>);

/// See [`super::linear`].
pub(super) fn linear<B: Backend>(
    x: Tensor<B, 2>,
    weight: Tensor<B, 2>,
    bias: Option<Tensor<B, 1>>,
) -> Result<Tensor<B, 2>, Linear<B>> {
    let [_, features] = x.dims();
    let [rows, width] = weight.dims();
    if features == rows && x.dtype() == DType::F32 && is_half(weight.dtype()) {
        return half_precision_linear(x, weight, bias);
    }
    let fits = features == rows
        && x.dtype() == DType::F32
        && weight.dtype() == DType::F32
        && bias
            .as_ref()
            .is_none_or(|b| b.dims() == [width] && b.dtype() == DType::F32);
    if !fits {
        return Err((x, weight, bias));
    }
    match reach::<_, Linear<Flex>, Linear<AutodiffFlex>>((x, weight, bias)) {
        Reached::Flex((x, weight, bias)) => {
            let bias = bias.map(|b| viewable(&primitive(b)));
            let out = products::linear(
                &viewable(&primitive(x)),
                &viewable(&primitive(weight)),
                bias.as_ref(),
            );
            Ok(upcast(wrap::<Flex, 2>(out)))
        }
        Reached::Autodiff((x, weight, bias)) => Ok(upcast(wrap::<AutodiffFlex, 2>(
            autodiff_products::linear(primitive(x), primitive(weight), bias.map(primitive)),
        ))),
        Reached::Other(inputs) => Err(inputs),
    }
}

/// [`linear`] with a half-precision weight: widened per block on Flex, and under autodiff only
/// while the weight is frozen (untracked); `Err` otherwise.
fn half_precision_linear<B: Backend>(
    x: Tensor<B, 2>,
    weight: Tensor<B, 2>,
    bias: Option<Tensor<B, 1>>,
) -> Result<Tensor<B, 2>, Linear<B>> {
    let width = weight.dims()[1];
    if !bias
        .as_ref()
        .is_none_or(|b| b.dims() == [width] && b.dtype() == DType::F32)
    {
        return Err((x, weight, bias));
    }
    match reach::<_, Linear<Flex>, Linear<AutodiffFlex>>((x, weight, bias)) {
        Reached::Flex((x, weight, bias)) => {
            let bias = bias.map(primitive);
            let out =
                half_linear::forward(&viewable(&primitive(x)), &primitive(weight), bias.as_ref());
            Ok(upcast(wrap::<Flex, 2>(out)))
        }
        Reached::Autodiff((x, weight, bias)) => {
            let (x, weight, bias) = (primitive(x), primitive(weight), bias.map(primitive));
            if weight.is_tracked() {
                let inputs = (wrap(x), wrap(weight), bias.map(wrap));
                return Err(upcast::<Linear<AutodiffFlex>, _>(inputs));
            }
            Ok(upcast(wrap::<AutodiffFlex, 2>(half_linear::linear(
                x, weight, bias,
            ))))
        }
        Reached::Other(inputs) => Err(inputs),
    }
}

/// See [`super::matmul`].
pub(super) fn matmul<B: Backend>(
    a: Tensor<B, 4>,
    b: Tensor<B, 4>,
) -> Result<Tensor<B, 4>, Pair<B, 4>> {
    let ([a0, a1, _, k], [b0, b1, rows, _]) = (a.dims(), b.dims());
    let fits =
        [a0, a1] == [b0, b1] && k == rows && a.dtype() == DType::F32 && b.dtype() == DType::F32;
    if !fits {
        return Err((a, b));
    }
    match reach::<_, Pair<Flex, 4>, Pair<AutodiffFlex, 4>>((a, b)) {
        Reached::Flex((a, b)) => {
            let out = products::batched_matmul(
                &viewable(&primitive(a)),
                &viewable(&primitive(b)),
                false,
                false,
            );
            Ok(upcast(wrap::<Flex, 4>(out)))
        }
        Reached::Autodiff((a, b)) => Ok(upcast(wrap::<AutodiffFlex, 4>(
            autodiff_products::matmul(primitive(a), primitive(b)),
        ))),
        Reached::Other(inputs) => Err(inputs),
    }
}

/// See [`super::append_positions`]: in place on Flex, `Err` elsewhere (autodiff included, whose
/// cache must stay a graph node).
pub(super) fn append_positions<B: Backend>(
    past: Tensor<B, 4>,
    new: Tensor<B, 4>,
) -> Result<Tensor<B, 4>, Pair<B, 4>> {
    let ([b, h, _, d], [nb, nh, _, nd]) = (past.dims(), new.dims());
    let fits = [b, h, d] == [nb, nh, nd] && past.dtype() == DType::F32 && new.dtype() == DType::F32;
    if !fits {
        return Err((past, new));
    }
    match downcast::<_, Pair<Flex, 4>>((past, new)) {
        Ok((past, new)) => {
            let out = kv_append::append(primitive(past), &primitive(new));
            Ok(upcast(wrap::<Flex, 4>(out)))
        }
        Err(inputs) => Err(inputs),
    }
}

/// Queries, keys and values.
type Triple<B> = (Tensor<B, 4>, Tensor<B, 4>, Tensor<B, 4>);

/// See [`super::attention`]: the blocked kernel on Flex and `Autodiff<Flex>`, `Err` elsewhere or
/// when the shapes do not fit.
pub(super) fn attention<B: Backend>(
    queries: Tensor<B, 4>,
    keys: Tensor<B, 4>,
    values: Tensor<B, 4>,
    mask: &Arc<AttentionMask>,
) -> Result<Tensor<B, 3>, Triple<B>> {
    let ([batch, heads, seq, dim], key_dims) = (queries.dims(), keys.dims());
    let [key_batch, kv_heads, total, key_dim] = key_dims;
    let fits = key_dims == values.dims()
        && key_batch == batch
        && key_dim == dim
        && kv_heads > 0
        && heads % kv_heads == 0
        && mask.dims() == [batch, seq, total]
        && [&queries, &keys, &values]
            .iter()
            .all(|t| t.dtype() == DType::F32);
    if !fits {
        return Err((queries, keys, values));
    }
    match reach::<_, Triple<Flex>, Triple<AutodiffFlex>>((queries, keys, values)) {
        Reached::Flex((queries, keys, values)) => {
            let [q, k, v] = [queries, keys, values].map(|t| head_rows_tensor(&primitive(t)));
            let (out, _) = flash::forward(&q, &k, &v, mask);
            Ok(upcast(wrap::<Flex, 3>(out)))
        }
        Reached::Autodiff((queries, keys, values)) => {
            Ok(upcast(wrap::<AutodiffFlex, 3>(flash::attention(
                primitive(queries),
                primitive(keys),
                primitive(values),
                Arc::clone(mask),
            ))))
        }
        Reached::Other(inputs) => Err(inputs),
    }
}
