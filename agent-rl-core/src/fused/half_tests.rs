//! The half-precision linear layer ([`super::half_linear`]): against an `f32` product with the
//! same (rounded) weight on `Autodiff<Flex>` and Flex, across several column blocks, for a plain,
//! a transposed (tied embedding) and a sliced (fused projection) weight; and the plain
//! tensor-op path (the product in bf16) within bf16 tolerance.

use burn::prelude::*;
use burn::tensor::{DType, FloatDType};
use burn_flex::Flex;

use super::plain;
use super::tests::{Ad, assert_close, leaf, weights_like};

/// The frozen weights a model would hold: `[24, 70]` as stored, the transpose of a `[70, 24]`
/// embedding, and columns `9..49` of a fused `[24, 90]` projection; each in `dtype`, untracked.
fn frozen_weights(dtype: FloatDType) -> Vec<(&'static str, Tensor<Ad, 2>)> {
    let half = |x: Tensor<Ad, 2>| x.detach().set_require_grad(false).cast(dtype);
    vec![
        ("plain", half(leaf([24, 70], 31))),
        ("transposed", half(leaf([70, 24], 32)).transpose()),
        ("sliced", half(leaf([24, 90], 33)).narrow(1, 9, 40)),
    ]
}

/// `out` and the gradient of `sum(out * weights)` with respect to `x`.
fn output_and_input_grad(
    out: Tensor<Ad, 2>,
    x: &Tensor<Ad, 2>,
) -> (Tensor<Flex, 2>, Tensor<Flex, 2>) {
    let weights = weights_like(&out, 77);
    let grads = (out.clone() * weights).sum().backward();
    (out.inner(), x.grad(&grads).expect("x has a gradient"))
}

#[test]
fn half_weights_widen_exactly_in_the_fused_product() {
    for dtype in [FloatDType::BF16, FloatDType::F16] {
        for (what, weight) in frozen_weights(dtype) {
            assert_eq!(weight.dtype(), DType::from(dtype));
            let width = weight.dims()[1];
            let x = leaf([37, 24], 34);
            let bias = leaf([width], 35).detach().set_require_grad(false);
            let fused = super::linear(x.clone(), weight.clone(), Some(bias.clone()));
            assert_eq!(fused.dtype(), DType::F32);
            let (out, d_x) = output_and_input_grad(fused, &x);
            let widened = weight.clone().cast(FloatDType::F32);
            let x_ref = leaf([37, 24], 34);
            let reference = plain::linear(x_ref.clone(), widened, Some(bias.clone()));
            let (want, d_want) = output_and_input_grad(reference, &x_ref);
            let what = format!("{what} {dtype:?}");
            assert_close(out, want.clone(), &what);
            assert_close(d_x, d_want, &format!("{what}: input gradient"));
            let inner = super::linear(x.inner(), weight.inner(), Some(bias.inner()));
            assert_close(inner, want, &format!("{what} (inference)"));
        }
    }
}

#[test]
fn the_plain_path_multiplies_in_bf16_within_its_tolerance() {
    for (what, weight) in frozen_weights(FloatDType::BF16) {
        let x = leaf([37, 24], 36);
        let (out, d_x) = output_and_input_grad(plain::linear(x.clone(), weight.clone(), None), &x);
        let x_ref = leaf([37, 24], 36);
        let widened = weight.cast(FloatDType::F32);
        let (want, d_want) =
            output_and_input_grad(plain::linear(x_ref.clone(), widened, None), &x_ref);
        for (name, got, want) in [("output", out, want), ("input gradient", d_x, d_want)] {
            let (got, want) = (
                got.into_data().into_vec::<f32>().expect("f32"),
                want.into_data().into_vec::<f32>().expect("f32"),
            );
            let scale = want.iter().fold(0.0f32, |m, v| m.max(v.abs()));
            let worst = got
                .iter()
                .zip(&want)
                .fold(0.0f32, |m, (a, b)| m.max((a - b).abs()));
            // Inputs rounded to 8 mantissa bits: errors of a few 2^-8 of the largest value.
            assert!(worst <= 2e-2 * scale, "{what} {name}: {worst} of {scale}");
            assert!(
                worst > 0.0,
                "{what} {name}: no rounding at all; was bf16 used?"
            );
        }
    }
}
