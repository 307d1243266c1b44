//! Activation checkpointing gives the loss and every parameter gradient of the plain training
//! forward: on the fused CPU kernels (`Autodiff<Flex>`) and on plain tensor ops
//! (`Autodiff<NdArray>`), with a tied and an untied head, and with a frozen embedding.

use agent_rl_core::generation::{token_scores, token_scores_checkpointed};
use agent_rl_core::model::backward_through;
use agent_rl_core::weights::random_model;
use agent_rl_core::{Qwen2Config, Qwen2ForCausalLm};
use burn::backend::{Autodiff, Flex, NdArray};
use burn::module::{Module, ModuleVisitor, Param};
use burn::prelude::*;
use burn::tensor::TensorData;
use burn::tensor::backend::AutodiffBackend;

/// Every parameter's gradient (`None` when it has none), in visiting order.
struct GradientsOf<'a, A: AutodiffBackend> {
    grads: &'a A::Gradients,
    found: Vec<Option<Vec<f32>>>,
}

impl<A: AutodiffBackend> ModuleVisitor<A> for GradientsOf<'_, A> {
    fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<A, D>>) {
        let grad = param
            .grad(self.grads)
            .map(|g| g.into_data().convert::<f32>().into_vec::<f32>().unwrap());
        self.found.push(grad);
    }
}

/// The loss (a weighted sum of log-probabilities and entropies of a left- and right-padded
/// batch) and every parameter's gradient, with or without checkpointing.
fn loss_and_gradients<A: AutodiffBackend>(
    tied: bool,
    freeze_embedding: bool,
    checkpointing: bool,
) -> (f32, Vec<Option<Vec<f32>>>) {
    let config = Qwen2Config {
        vocab_size: 384,
        hidden_size: 64,
        intermediate_size: 96,
        num_hidden_layers: 3,
        num_attention_heads: 4,
        num_key_value_heads: Some(2),
        tie_word_embeddings: tied,
        ..Qwen2Config::tiny()
    };
    let mut model: Qwen2ForCausalLm<A> =
        random_model(&config, 9, 0.2, &Default::default()).unwrap();
    if freeze_embedding {
        model.embed_tokens = model.embed_tokens.no_grad();
    }
    let rows: [[i64; 8]; 3] = [
        [0, 0, 11, 12, 21, 22, 23, 40],
        [14, 15, 16, 17, 18, 26, 0, 0],
        [0, 31, 32, 33, 34, 35, 36, 37],
    ];
    let mask: Vec<Vec<bool>> = rows
        .iter()
        .map(|ids| ids.iter().map(|&id| id != 0).collect())
        .collect();
    let device = Default::default();
    let ids = Tensor::<A, 2, Int>::from_data(TensorData::new(rows.concat(), [3, 8]), &device);
    let (scores, layers) = if checkpointing {
        let (scores, layers) = token_scores_checkpointed(&model, ids, &mask, 4, 0.9);
        (scores, Some(layers))
    } else {
        (token_scores(&model, ids, &mask, 4, 0.9), None)
    };
    let weight = |offset: f32| {
        let values: Vec<f32> = (0..12)
            .map(|i| (i as f32 * 0.41 + offset).sin() * f32::from(u8::from(mask[i / 4][4 + i % 4])))
            .collect();
        Tensor::<A, 2>::from_data(TensorData::new(values, [3, 4]), &device)
    };
    let loss = (scores.logprobs * weight(0.2)).sum() + (scores.entropies * weight(1.3)).sum();
    let value = loss
        .clone()
        .into_data()
        .convert::<f32>()
        .into_vec::<f32>()
        .unwrap()[0];
    let grads = backward_through(loss, layers, &model);
    let mut visitor = GradientsOf::<A> {
        grads: &grads,
        found: Vec::new(),
    };
    model.visit(&mut visitor);
    (value, visitor.found)
}

/// Asserts equal losses and gradients within `rtol` of each gradient tensor's largest entry.
fn assert_same<A: AutodiffBackend>(tied: bool, freeze_embedding: bool, rtol: f32) {
    let (plain_loss, plain) = loss_and_gradients::<A>(tied, freeze_embedding, false);
    let (loss, checkpointed) = loss_and_gradients::<A>(tied, freeze_embedding, true);
    assert!(
        (loss - plain_loss).abs() <= rtol * plain_loss.abs().max(1e-3),
        "loss: checkpointed {loss} vs plain {plain_loss}"
    );
    assert_eq!(plain.len(), checkpointed.len());
    let frozen = usize::from(freeze_embedding);
    assert_eq!(
        plain.iter().filter(|g| g.is_none()).count(),
        frozen,
        "only a frozen embedding lacks a gradient"
    );
    for (i, (expected, actual)) in plain.iter().zip(&checkpointed).enumerate() {
        let (Some(expected), Some(actual)) = (expected, actual) else {
            assert_eq!(
                expected.is_some(),
                actual.is_some(),
                "parameter {i}: presence"
            );
            continue;
        };
        assert_eq!(expected.len(), actual.len(), "parameter {i}: sizes");
        let scale = expected.iter().fold(1e-6f32, |m, v| m.max(v.abs()));
        for (j, (e, a)) in expected.iter().zip(actual).enumerate() {
            assert!(
                (e - a).abs() <= rtol * scale,
                "parameter {i}[{j}]: checkpointed {a} vs plain {e} (scale {scale})"
            );
        }
    }
}

#[test]
fn checkpointing_keeps_the_gradients_on_the_fused_kernels() {
    assert_same::<Autodiff<Flex>>(true, false, 1e-5);
    assert_same::<Autodiff<Flex>>(false, false, 1e-5);
    assert_same::<Autodiff<Flex>>(false, true, 1e-5);
}

#[test]
fn checkpointing_keeps_the_gradients_on_plain_tensor_ops() {
    assert_same::<Autodiff<NdArray>>(true, false, 1e-5);
    assert_same::<Autodiff<NdArray>>(true, true, 1e-5);
}
