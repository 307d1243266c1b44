//! The whole model through the fused CPU kernels (`Autodiff<Flex>`) against the same model in
//! plain tensor ops (`Autodiff<NdArray>`, where no kernel applies): the same per-token scores
//! and the same gradient for every parameter, through shared prompts, padding and a tied head.

use agent_rl_core::generation::token_scores;
use agent_rl_core::weights::random_model;
use agent_rl_core::{Qwen2Config, Qwen2ForCausalLm};
use burn::backend::{Autodiff, Flex, NdArray};
use burn::module::{Module, ModuleVisitor, Param};
use burn::prelude::*;
use burn::tensor::TensorData;
use burn::tensor::backend::AutodiffBackend;

/// Every parameter's gradient, flattened, in visiting order.
struct GradientsOf<'a, A: AutodiffBackend> {
    grads: &'a A::Gradients,
    found: Vec<Vec<f32>>,
}

impl<A: AutodiffBackend> ModuleVisitor<A> for GradientsOf<'_, A> {
    fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<A, D>>) {
        let grad = param
            .grad(self.grads)
            .map(|g| g.into_data().convert::<f32>().into_vec::<f32>().unwrap())
            .unwrap_or_default();
        self.found.push(grad);
    }
}

/// Scores of a batch with left-padded prompts (rows 0, 1 and 3 share theirs) and a right-padded
/// completion, and the gradient of a weighted sum of log-probabilities and entropies.
fn scores_and_gradients<A: AutodiffBackend>() -> (Vec<f32>, Vec<Vec<f32>>) {
    let config = Qwen2Config {
        vocab_size: 384,
        hidden_size: 64,
        intermediate_size: 96,
        num_hidden_layers: 2,
        num_attention_heads: 4,
        num_key_value_heads: Some(2),
        tie_word_embeddings: true,
        ..Qwen2Config::tiny()
    };
    let model: Qwen2ForCausalLm<A> = random_model(&config, 5, 0.2, &Default::default()).unwrap();
    let rows: [[i64; 9]; 4] = [
        [0, 0, 11, 12, 13, 21, 22, 23, 40],
        [0, 0, 11, 12, 13, 24, 25, 0, 0],
        [14, 15, 16, 17, 18, 26, 27, 28, 41],
        [0, 0, 11, 12, 13, 29, 30, 31, 42],
    ];
    let mask: Vec<Vec<bool>> = rows
        .iter()
        .enumerate()
        .map(|(r, ids)| {
            (0..ids.len())
                .map(|c| !((c < 2 && r != 2) || (r == 1 && c >= 7)))
                .collect()
        })
        .collect();
    let device = Default::default();
    let ids = Tensor::<A, 2, Int>::from_data(
        TensorData::new(rows.concat(), [rows.len(), rows[0].len()]),
        &device,
    );
    let scores = token_scores(&model, ids, &mask, 4, 0.8);
    let valid: Vec<f32> = mask
        .iter()
        .flat_map(|row| row[5..].iter().map(|&m| f32::from(u8::from(m))))
        .collect();
    let weight = |offset: f32| {
        let values: Vec<f32> = valid
            .iter()
            .enumerate()
            .map(|(i, v)| v * ((i as f32 * 0.37 + offset).sin()))
            .collect();
        Tensor::<A, 2>::from_data(TensorData::new(values, [4, 4]), &device)
    };
    let valid = Tensor::<A, 2>::from_data(TensorData::new(valid.clone(), [4, 4]), &device);
    let joined = Tensor::cat(
        vec![
            scores.logprobs.clone() * valid.clone(),
            scores.entropies.clone() * valid,
        ],
        1,
    );
    let loss = (scores.logprobs * weight(0.3)).sum() + (scores.entropies * weight(1.1)).sum();
    let grads = loss.backward();
    let mut visitor = GradientsOf::<A> {
        grads: &grads,
        found: Vec::new(),
    };
    model.visit(&mut visitor);
    let values = joined
        .into_data()
        .convert::<f32>()
        .into_vec::<f32>()
        .unwrap();
    (values, visitor.found)
}

fn assert_close(actual: &[f32], expected: &[f32], what: &str) {
    assert_eq!(actual.len(), expected.len(), "{what}: sizes");
    let scale = expected.iter().fold(1e-3f32, |m, v| m.max(v.abs()));
    for (i, (a, e)) in actual.iter().zip(expected).enumerate() {
        assert!(
            (a - e).abs() <= 1e-4 * scale,
            "{what}[{i}]: fused {a} vs plain {e} (scale {scale})"
        );
    }
}

#[test]
fn fused_kernels_give_the_plain_model_scores_and_gradients() {
    let (fused_scores, fused_grads) = scores_and_gradients::<Autodiff<Flex>>();
    let (plain_scores, plain_grads) = scores_and_gradients::<Autodiff<NdArray>>();
    assert_close(&fused_scores, &plain_scores, "scores");
    assert_eq!(fused_grads.len(), plain_grads.len());
    assert!(
        plain_grads.iter().all(|g| !g.is_empty()),
        "every parameter has a gradient"
    );
    for (i, (fused, plain)) in fused_grads.iter().zip(&plain_grads).enumerate() {
        assert_close(fused, plain, &format!("gradient of parameter {i}"));
    }
}
