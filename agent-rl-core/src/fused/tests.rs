//! Each fused kernel against its tensor-op version ([`super::plain`]) on the same inputs:
//! outputs on Flex and on `Autodiff<Flex>`, and gradients for every input. Shapes are odd and
//! large enough that the kernels split their rows over several tasks.

use burn::backend::Autodiff;
use burn::prelude::*;
use burn::tensor::TensorData;
use burn_flex::Flex;

use super::plain;

pub(super) type Ad = Autodiff<Flex>;

/// Deterministic values in `[-2, 2)`.
pub(super) fn values(count: usize, seed: u64) -> Vec<f32> {
    let mut state = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15).wrapping_add(1);
    (0..count)
        .map(|_| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            ((state >> 40) as f32 / (1u64 << 24) as f32) * 4.0 - 2.0
        })
        .collect()
}

/// A leaf that wants a gradient.
pub(super) fn leaf<const D: usize>(shape: [usize; D], seed: u64) -> Tensor<Ad, D> {
    let data = TensorData::new(values(shape.iter().product(), seed), shape);
    Tensor::<Ad, D>::from_data(data, &Default::default()).require_grad()
}

/// A constant of the same shape, to weight outputs before summing them into a loss.
pub(super) fn weights_like<const D: usize>(x: &Tensor<Ad, D>, seed: u64) -> Tensor<Ad, D> {
    let shape = x.dims();
    let data = TensorData::new(values(shape.iter().product(), seed), shape);
    Tensor::from_data(data, &Default::default())
}

pub(super) fn assert_close<B: Backend, const D: usize>(
    actual: Tensor<B, D>,
    expected: Tensor<B, D>,
    what: &str,
) {
    assert_eq!(actual.dims(), expected.dims(), "{what}: shapes");
    let actual = actual
        .into_data()
        .convert::<f32>()
        .into_vec::<f32>()
        .unwrap_or_default();
    let expected = expected
        .into_data()
        .convert::<f32>()
        .into_vec::<f32>()
        .unwrap_or_default();
    assert!(!expected.is_empty(), "{what}: no values");
    let scale = expected.iter().fold(1.0f32, |m, v| m.max(v.abs()));
    for (i, (a, e)) in actual.iter().zip(&expected).enumerate() {
        assert!(
            (a - e).abs() <= 2e-5 * scale,
            "{what}[{i}]: fused {a} vs plain {e}"
        );
    }
}

/// Gradients of `sum(out * weights)` for each leaf.
fn grads<const D: usize, const L: usize>(
    out: Tensor<Ad, D>,
    weights: &Tensor<Ad, D>,
    leaves: [&Tensor<Ad, 2>; L],
) -> Vec<Tensor<Flex, 2>> {
    let grads = (out * weights.clone()).sum().backward();
    leaves
        .iter()
        .map(|leaf| leaf.grad(&grads).expect("the leaf has a gradient"))
        .collect()
}

/// Checks fused against plain on `Autodiff<Flex>` (output and the gradient of every leaf) and on
/// Flex (output). Leaves are flattened to 2-D for the gradient check; `build` reshapes them.
fn check<const D: usize, const L: usize>(
    what: &str,
    leaves: [Tensor<Ad, 2>; L],
    fused: impl Fn(&[Tensor<Ad, 2>; L]) -> Tensor<Ad, D>,
    reference: impl Fn(&[Tensor<Ad, 2>; L]) -> Tensor<Ad, D>,
    fused_inner: impl Fn(&[Tensor<Flex, 2>; L]) -> Tensor<Flex, D>,
) {
    let out_fused = fused(&leaves);
    let out_plain = reference(&leaves);
    let weights = weights_like(&out_plain, 99);
    assert_close(out_fused.clone().inner(), out_plain.clone().inner(), what);
    let refs: [&Tensor<Ad, 2>; L] = std::array::from_fn(|i| &leaves[i]);
    let grads_fused = grads(out_fused, &weights, refs);
    let grads_plain = grads(out_plain.clone(), &weights, refs);
    for (i, (f, p)) in grads_fused.into_iter().zip(grads_plain).enumerate() {
        assert_close(f, p, &format!("{what}: gradient of input {i}"));
    }
    let inner: [Tensor<Flex, 2>; L] = std::array::from_fn(|i| leaves[i].clone().inner());
    assert_close(
        fused_inner(&inner),
        out_plain.inner(),
        &format!("{what} (inference)"),
    );
}

#[test]
fn silu_mul_matches_its_tensor_ops() {
    let shape = [111, 700];
    check(
        "silu_mul",
        [leaf(shape, 1), leaf(shape, 2)],
        |[g, u]| super::silu_mul(g.clone(), u.clone()),
        |[g, u]| plain::silu_mul(g.clone(), u.clone()),
        |[g, u]| super::silu_mul(g.clone(), u.clone()),
    );
}

#[test]
fn rms_norm_matches_its_tensor_ops() {
    check(
        "rms_norm",
        [leaf([205, 256], 3), leaf([1, 256], 4)],
        |[x, w]| super::rms_norm(x.clone(), w.clone().reshape([256]), 1e-6),
        |[x, w]| plain::rms_norm(x.clone(), w.clone().reshape([256]), 1e-6),
        |[x, w]| super::rms_norm(x.clone(), w.clone().reshape([256]), 1e-6),
    );
}

#[test]
fn softmax_matches_its_tensor_ops() {
    let four = |x: &Tensor<Ad, 2>| x.clone().reshape([2, 3, 40, 130]);
    let bias = weights_like(
        &Tensor::<Ad, 4>::zeros([2, 3, 40, 130], &Default::default()),
        6,
    );
    let inner_bias = bias.clone().inner();
    check(
        "softmax",
        [leaf([240, 130], 5)],
        |[x]| super::softmax_last(four(x), None),
        |[x]| plain::softmax_last(four(x), None),
        |[x]| super::softmax_last(x.clone().reshape([2, 3, 40, 130]), None),
    );
    check(
        "softmax with bias",
        [leaf([240, 130], 5)],
        |[x]| super::softmax_last(four(x), Some(bias.clone())),
        |[x]| plain::softmax_last(four(x), Some(bias.clone())),
        |[x]| super::softmax_last(x.clone().reshape([2, 3, 40, 130]), Some(inner_bias.clone())),
    );
}

#[test]
fn token_scores_match_their_tensor_ops() {
    let (batch, len, vocab) = (3, 50, 384);
    let ids: Vec<i64> = values(batch * len, 6)
        .iter()
        .map(|v| ((v + 2.0) / 4.0 * vocab as f32) as i64 % vocab as i64)
        .collect();
    let targets = |device: &_| {
        Tensor::<Ad, 2, Int>::from_data(TensorData::new(ids.clone(), [batch, len]), device)
    };
    let inner_targets = |device: &_| {
        Tensor::<Flex, 2, Int>::from_data(TensorData::new(ids.clone(), [batch, len]), device)
    };
    let three = |x: &Tensor<Ad, 2>| x.clone().reshape([batch, len, vocab]);
    // Both outputs side by side, so that the check weights both gradients.
    let joined = |(logp, entropy): (Tensor<Ad, 2>, Option<Tensor<Ad, 2>>)| {
        Tensor::cat(vec![logp, entropy.expect("entropies were asked for")], 1)
    };
    check(
        "token_scores",
        [leaf([batch * len, vocab], 7)],
        |[x]| {
            joined(super::token_scores(
                three(x),
                targets(&x.device()),
                0.7,
                true,
            ))
        },
        |[x]| {
            joined(plain::token_scores(
                three(x),
                targets(&x.device()),
                1.0 / 0.7,
                true,
            ))
        },
        |[x]| {
            let (logp, entropy) = super::token_scores(
                x.clone().reshape([batch, len, vocab]),
                inner_targets(&x.device()),
                0.7,
                true,
            );
            Tensor::cat(vec![logp, entropy.expect("entropies were asked for")], 1)
        },
    );
}

#[test]
fn swap_middle_with_and_without_rotation_matches_its_tensor_ops() {
    let (n, q, p, dim) = (2, 7, 3, 64);
    let tables = |seed| {
        weights_like(
            &Tensor::<Ad, 4>::zeros([n, p, q, dim], &Default::default()),
            seed,
        )
    };
    let (cos, sin) = (tables(11), tables(12));
    let (inner_cos, inner_sin) = (cos.clone().inner(), sin.clone().inner());
    let four = |x: &Tensor<Ad, 2>| x.clone().reshape([n, q, p, dim]);
    for rotate in [true, false] {
        let rope = rotate.then_some((&cos, &sin));
        let inner_rope = rotate.then_some((&inner_cos, &inner_sin));
        check(
            &format!("swap_middle (rotate: {rotate})"),
            [leaf([n * q * p, dim], 13)],
            |[x]| super::swap_middle(four(x), rope).expect("the fused kernel applies"),
            |[x]| plain::swap_middle(four(x), rope),
            |[x]| {
                super::swap_middle(x.clone().reshape([n, q, p, dim]), inner_rope)
                    .expect("the fused kernel applies")
            },
        );
    }
}

#[test]
fn linear_on_strided_views_matches_its_tensor_ops() {
    // The input is a transposed view and the weight and bias are slices of fused parameters,
    // as in the model.
    let part = |w: &Tensor<Ad, 2>| w.clone().narrow(1, 50, 100);
    let bias = |b: &Tensor<Ad, 2>| b.clone().reshape([200]).narrow(0, 50, 100);
    check(
        "linear",
        [leaf([96, 300], 21), leaf([96, 200], 22), leaf([1, 200], 23)],
        |[x, w, b]| super::linear(x.clone().transpose(), part(w), Some(bias(b))),
        |[x, w, b]| plain::linear(x.clone().transpose(), part(w), Some(bias(b))),
        |[x, w, b]| {
            let bias = b.clone().reshape([200]).narrow(0, 50, 100);
            super::linear(
                x.clone().transpose(),
                w.clone().narrow(1, 50, 100),
                Some(bias),
            )
        },
    );
    check(
        "linear without bias",
        [leaf([300, 96], 24), leaf([96, 130], 25)],
        |[x, w]| super::linear(x.clone(), w.clone(), None),
        |[x, w]| plain::linear(x.clone(), w.clone(), None),
        |[x, w]| super::linear(x.clone(), w.clone(), None),
    );
}

#[test]
fn batched_matmul_with_a_transposed_operand_matches_its_tensor_ops() {
    let a = |x: &Tensor<Ad, 2>| x.clone().reshape([2, 3, 40, 64]);
    let b = |x: &Tensor<Ad, 2>| x.clone().reshape([2, 3, 50, 64]).swap_dims(2, 3);
    check(
        "matmul",
        [leaf([240, 64], 31), leaf([300, 64], 32)],
        |[x, y]| super::matmul(a(x), b(y)),
        |[x, y]| plain::matmul(a(x), b(y)),
        |[x, y]| {
            super::matmul(
                x.clone().reshape([2, 3, 40, 64]),
                y.clone().reshape([2, 3, 50, 64]).swap_dims(2, 3),
            )
        },
    );
}

#[test]
fn kv_append_grows_in_place_and_equals_concatenation() {
    let device = Default::default();
    let block = |len: usize, seed: u64| {
        Tensor::<Flex, 4>::from_data(
            TensorData::new(values(2 * 3 * len * 8, seed), [2, 3, len, 8]),
            &device,
        )
    };
    let mut cache = block(5, 40);
    let mut expected = cache.clone();
    let mut held = Vec::new();
    for (step, len) in [1usize, 1, 3, 1, 20, 1].into_iter().enumerate() {
        let new = block(len, 41 + step as u64);
        expected = Tensor::cat(vec![expected, new.clone()], 2);
        cache = super::append_positions(cache, new);
        assert_close(
            cache.clone(),
            expected.clone(),
            &format!("cache after step {step}"),
        );
        if step == 2 {
            // Someone else holds the cache: the next append must not write into their buffer.
            held.push((cache.clone(), expected.clone()));
        }
    }
    for (kept, kept_expected) in held {
        assert_close(kept, kept_expected, "a held cache is left unchanged");
    }
}

#[test]
fn a_grown_cache_keeps_its_rows_when_selected() {
    let device = Default::default();
    let block = |len: usize, seed: u64| {
        Tensor::<Flex, 4>::from_data(
            TensorData::new(values(3 * 2 * len * 8, seed), [3, 2, len, 8]),
            &device,
        )
    };
    let first = block(5, 50);
    let second = block(1, 51);
    let grown = super::append_positions(first.clone(), second.clone());
    let expected = Tensor::cat(vec![first, second], 2);
    let rows = Tensor::<Flex, 1, Int>::from_data(TensorData::new(vec![2i64, 0], [2]), &device);
    assert_close(
        grown.select(0, rows.clone()),
        expected.select(0, rows),
        "selected rows of a grown cache",
    );
}
