//! A frozen LoRA base held in half precision (`LoraConfig::base_dtype`): its storage really is
//! bf16/f16, the fused Flex path computes what an `f32` base holding the rounded weights
//! computes, within bf16 tolerance of the unrounded `f32` base, only the adapters train, merging
//! gives an ordinary `f32` model, and a backend without half precision refuses it.

use agent_rl_core::Qwen2ForCausalLm;
use agent_rl_core::generation::token_scores;
use agent_rl_core::lora::{BaseDtype, LoraConfig, apply_lora};
use agent_rl_core::weights::random_model;
use burn::backend::{Autodiff, Flex, NdArray};
use burn::module::{AutodiffModule, Module, ModuleMapper, ModuleVisitor, Param, ParamId};
use burn::optim::GradientsParams;
use burn::prelude::*;
use burn::tensor::{DType, FloatDType};

use crate::common::assert_close;
use crate::lora_model::{
    adamw_step_moves_only, adapted, adapter_ids, config, ids, invalid_field, params,
    scores_and_grads,
};

type A = Autodiff<Flex>;

fn lora(base_dtype: BaseDtype) -> LoraConfig {
    LoraConfig {
        r: 4,
        alpha: 8.0,
        base_dtype,
        ..LoraConfig::default()
    }
}

/// Every parameter widened to `f32` (same values).
struct Widen;

impl<B: Backend> ModuleMapper<B> for Widen {
    fn map_float<const D: usize>(&mut self, param: Param<Tensor<B, D>>) -> Param<Tensor<B, D>> {
        if param.dtype() == DType::F32 {
            return param;
        }
        param.map(|tensor| tensor.cast(FloatDType::F32))
    }
}

/// Every float parameter's dtype and stored bytes.
struct Storage(Vec<(ParamId, DType, usize, usize)>);

impl<B: Backend> ModuleVisitor<B> for Storage {
    fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<B, D>>) {
        let data = param.val().into_data();
        self.0
            .push((param.id, data.dtype, data.num_elements(), data.bytes.len()));
    }
}

fn storage<B: Backend>(model: &Qwen2ForCausalLm<B>) -> Vec<(ParamId, DType, usize, usize)> {
    let mut visitor = Storage(Vec::new());
    model.visit(&mut visitor);
    visitor.0
}

/// `|a - b| / |b|` (Euclidean norms).
fn relative_error(a: &[f32], b: &[f32]) -> f32 {
    let diff: f32 = a.iter().zip(b).map(|(x, y)| (x - y).powi(2)).sum();
    let norm: f32 = b.iter().map(|y| y * y).sum();
    (diff / norm).sqrt()
}

#[test]
fn the_frozen_base_is_stored_in_half_precision() {
    for (base_dtype, dtype) in [(BaseDtype::Bf16, DType::BF16), (BaseDtype::F16, DType::F16)] {
        let model = adapted::<A>(&lora(base_dtype));
        assert_eq!(model.base_weight_dtype(), dtype);
        let adapters = adapter_ids(&model);
        let (mut half_bytes, mut half_values) = (0, 0);
        for (id, found, count, bytes) in storage(&model) {
            if adapters.contains(&id) {
                assert_eq!(found, DType::F32, "adapter {id}");
                assert_eq!(bytes, 4 * count);
            } else if found == dtype {
                assert_eq!(bytes, 2 * count, "{id}: {found:?} holds 2 bytes a value");
                half_bytes += bytes;
                half_values += count;
            } else {
                // Norm weights and q/k/v biases stay f32: a few values per layer.
                assert_eq!(found, DType::F32, "{id}");
                assert!(count <= 128, "{id}: {count} f32 values left in the base");
            }
        }
        // Embedding (tied head) and the four projection matrices of both layers.
        let shape = config();
        let (h, i, q) = (
            shape.hidden_size,
            shape.intermediate_size,
            shape.head_size(),
        );
        let kv = shape.kv_heads() * q;
        let per_layer = h * (shape.num_attention_heads * q + 2 * kv)
            + shape.num_attention_heads * q * h
            + h * 2 * i
            + i * h;
        let expected = shape.vocab_size * h + shape.num_hidden_layers * per_layer;
        assert_eq!(half_values, expected);
        assert_eq!(half_bytes, 2 * expected);
        // Inference (the rollout model) keeps the half-precision storage too.
        assert_eq!(model.valid().base_weight_dtype(), dtype);
    }
}

#[test]
#[allow(clippy::print_stderr)] // the measured error, for the README
fn a_bf16_base_matches_the_f32_base_within_bf16_tolerance() {
    let (f32_scores, f32_grads) = scores_and_grads(&adapted::<A>(&lora(BaseDtype::F32)));
    for base_dtype in [BaseDtype::Bf16, BaseDtype::F16] {
        let half = adapted::<A>(&lora(base_dtype));
        let (half_scores, half_grads) = scores_and_grads(&half);
        // The same (rounded) weights held in f32: the block-widened products equal plain f32
        // products up to summation order.
        let rounded = half.clone().map(&mut Widen);
        assert_eq!(rounded.base_weight_dtype(), DType::F32);
        let (rounded_scores, rounded_grads) = scores_and_grads(&rounded);
        assert_close(
            &half_scores,
            &rounded_scores,
            1e-5,
            1e-5,
            "scores vs rounded",
        );
        // Rounding the base to 8 (bf16) or 11 (f16) mantissa bits (relative steps of 2^-8,
        // 2^-11) moves the scores by about that much and the gradients, which pass through
        // both layers' rounded weights twice and cancel in sums, by a few times more.
        let (tolerance, grad_tolerance) = match base_dtype {
            BaseDtype::Bf16 => (2e-2, 5e-2),
            _ => (3e-3, 1e-2),
        };
        assert_close(
            &half_scores,
            &f32_scores,
            tolerance,
            tolerance,
            "scores vs f32",
        );
        assert!(
            half_scores
                .iter()
                .zip(&f32_scores)
                .any(|(a, b)| (a - b).abs() > 1e-6),
            "{base_dtype}: the half base changed nothing; is it really rounded?"
        );
        assert_eq!(
            half_grads.len(),
            28,
            "gradients only for the 28 adapter matrices"
        );
        let mut worst = 0.0f32;
        assert_eq!(rounded_grads.len(), 28);
        for (index, ((h, r), f)) in half_grads
            .iter()
            .zip(&rounded_grads)
            .zip(&f32_grads)
            .enumerate()
        {
            let scale = f.iter().fold(0.0f32, |m, v| m.max(v.abs()));
            assert!(scale > 0.0, "gradient #{index} is zero");
            let what = format!("{base_dtype} gradient #{index}");
            assert_close(h, r, 1e-5 * scale, 1e-4, &format!("{what} vs rounded"));
            // Gradients sum many products, some cancelling: compare the whole matrix.
            let error = relative_error(h, f);
            worst = worst.max(error);
            assert!(
                error <= grad_tolerance,
                "{what} vs f32: relative error {error}"
            );
        }
        eprintln!("{base_dtype} base: adapter gradients within {worst:.2e} (relative norm)");
    }
}

#[test]
fn only_adapters_train_on_a_half_base() {
    let model = adapted::<A>(&lora(BaseDtype::Bf16));
    let adapters = adapter_ids(&model);
    let before = params::<A, _>(&model);
    let (ids, mask) = ids::<A>();
    let loss = token_scores(&model, ids, &mask, 4, 1.0)
        .logprobs
        .sum()
        .neg();
    let grads = GradientsParams::from_grads(loss.backward(), &model);
    let model = adamw_step_moves_only(model, grads, &before, &adapters);
    assert_eq!(
        model.base_weight_dtype(),
        DType::BF16,
        "the step kept the base bf16"
    );
}

#[test]
fn merging_a_half_base_gives_an_f32_model() {
    let half = adapted::<Flex>(&lora(BaseDtype::Bf16));
    let rounded = half.clone().map(&mut Widen);
    let (ids, mask) = ids::<Flex>();
    let merged = half.merge_adapters();
    assert!(!merged.has_adapters());
    assert!(
        storage(&merged)
            .iter()
            .all(|(_, dtype, ..)| *dtype == DType::F32)
    );
    let want = rounded.merge_adapters().forward(ids.clone(), &mask);
    let got = merged.forward(ids, &mask);
    let (got, want) = (
        got.into_data().into_vec::<f32>().unwrap(),
        want.into_data().into_vec::<f32>().unwrap(),
    );
    assert_close(
        &got,
        &want,
        1e-6,
        0.0,
        "merged bf16 base vs merged rounded f32 base",
    );
}

#[test]
fn a_backend_without_half_precision_refuses_a_half_base() {
    let model = random_model::<Autodiff<NdArray>>(&config(), 3, 0.2, &Default::default()).unwrap();
    assert_eq!(
        invalid_field(apply_lora(model, &lora(BaseDtype::Bf16), 0)),
        "lora.base_dtype"
    );
    let model = random_model::<NdArray>(&config(), 3, 0.2, &Default::default()).unwrap();
    assert!(apply_lora(model, &lora(BaseDtype::F32), 0).is_ok());
    assert!(
        "bf16"
            .parse::<BaseDtype>()
            .is_ok_and(|d| d == BaseDtype::Bf16)
    );
    assert!("fp8".parse::<BaseDtype>().is_err());
}
