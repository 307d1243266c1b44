//! LoRA on the model: frozen base (gradients and AdamW state only for adapters), fused Flex
//! kernels against plain tensor ops, adapters off = the base model, bad settings refused.

use std::collections::BTreeSet;

use agent_rl_core::generation::token_scores;
use agent_rl_core::lora::{
    LoraAdapter, LoraConfig, LoraInit, apply_lora, load_adapter, read_adapter_config,
};
use agent_rl_core::weights::random_model;
use agent_rl_core::{CoreError, Qwen2Config, Qwen2ForCausalLm};
use burn::backend::{Autodiff, Flex, NdArray};
use burn::module::{Module, ModuleVisitor, Param, ParamId};
use burn::optim::{AdamWConfig, GradientsParams, Optimizer};
use burn::prelude::*;
use burn::tensor::backend::AutodiffBackend;

use crate::common::{assert_close, fixture};
use crate::lora_golden::lora_fixture;

/// Float parameter ids in visiting order, with their values.
struct Params<B: Backend>(Vec<(ParamId, Vec<f32>)>, std::marker::PhantomData<B>);

impl<B: Backend> ModuleVisitor<B> for Params<B> {
    fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<B, D>>) {
        let data = param
            .val()
            .into_data()
            .convert::<f32>()
            .into_vec::<f32>()
            .unwrap();
        self.0.push((param.id, data));
    }
}

pub fn params<B: Backend, M: Module<B>>(module: &M) -> Vec<(ParamId, Vec<f32>)> {
    let mut visitor = Params::<B>(Vec::new(), std::marker::PhantomData);
    module.visit(&mut visitor);
    visitor.0
}

/// The ids of every adapter matrix of `model`.
pub fn adapter_ids<B: Backend>(model: &Qwen2ForCausalLm<B>) -> BTreeSet<ParamId> {
    let mut ids = BTreeSet::new();
    for layer in &model.layers {
        if let Some(lora) = &layer.self_attn.lora {
            ids.extend(params::<B, _>(lora).into_iter().map(|(id, _)| id));
        }
        if let Some(lora) = &layer.mlp.lora {
            ids.extend(params::<B, _>(lora).into_iter().map(|(id, _)| id));
        }
    }
    ids
}

pub fn config() -> Qwen2Config {
    Qwen2Config {
        vocab_size: 256,
        hidden_size: 32,
        intermediate_size: 48,
        num_hidden_layers: 2,
        num_attention_heads: 4,
        num_key_value_heads: Some(2),
        tie_word_embeddings: true,
        ..Qwen2Config::tiny()
    }
}

/// A model with adapters whose `B` is non-zero: fresh adapters, then `B` from `A`'s seed stream.
pub fn adapted<B: Backend>(lora: &LoraConfig) -> Qwen2ForCausalLm<B> {
    let model = random_model::<B>(&config(), 3, 0.2, &Default::default()).unwrap();
    let mut model = apply_lora(model, lora, 1).unwrap();
    let gaussian = LoraConfig {
        init: LoraInit::Gaussian,
        ..lora.clone()
    };
    for (index, layer) in model.layers.iter_mut().enumerate() {
        let attn = layer.self_attn.lora.as_mut().unwrap();
        let mlp = layer.mlp.lora.as_mut().unwrap();
        let slots = [
            &mut attn.q_proj,
            &mut attn.k_proj,
            &mut attn.v_proj,
            &mut attn.o_proj,
            &mut mlp.gate_proj,
            &mut mlp.up_proj,
            &mut mlp.down_proj,
        ];
        for (slot_index, slot) in slots.into_iter().enumerate() {
            let Some(adapter) = slot.as_mut() else {
                continue;
            };
            let [rank, outputs] = adapter.lora_b.dims();
            // A gaussian `A` of a [out] → [r] adapter, transposed, is a seeded [r, out] matrix.
            let seed = 100 + (index * 7 + slot_index) as u64;
            let source =
                LoraAdapter::<B>::init(&gaussian, outputs, rank, seed, &Default::default());
            adapter.lora_b = Param::from_tensor(source.lora_a.val().transpose().detach());
        }
    }
    model
}

pub fn ids<B: Backend>() -> (Tensor<B, 2, Int>, Vec<Vec<bool>>) {
    let rows: [[i64; 7]; 2] = [[0, 0, 11, 12, 13, 21, 22], [14, 15, 16, 17, 18, 26, 27]];
    let mask = vec![
        vec![false, false, true, true, true, true, true],
        vec![true; 7],
    ];
    let ids = Tensor::from_data(TensorData::new(rows.concat(), [2, 7]), &Default::default());
    (ids, mask)
}

/// Scores and every adapter gradient (visit order), after one backward pass.
pub fn scores_and_adapter_grads<A: AutodiffBackend>(
    lora: &LoraConfig,
) -> (Vec<f32>, Vec<Vec<f32>>) {
    scores_and_grads(&adapted::<A>(lora))
}

/// Scores and every parameter gradient of `model` (visit order), after one backward pass.
pub fn scores_and_grads<A: AutodiffBackend>(
    model: &Qwen2ForCausalLm<A>,
) -> (Vec<f32>, Vec<Vec<f32>>) {
    let (ids, mask) = ids::<A>();
    let scores = token_scores(model, ids, &mask, 4, 1.0);
    let values = scores
        .logprobs
        .clone()
        .into_data()
        .convert::<f32>()
        .into_vec()
        .unwrap();
    let grads = scores.logprobs.sum().backward();
    struct Grads<'a, A: AutodiffBackend>(&'a A::Gradients, Vec<Vec<f32>>);
    impl<A: AutodiffBackend> ModuleVisitor<A> for Grads<'_, A> {
        fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<A, D>>) {
            if let Some(grad) = param.grad(self.0) {
                self.1
                    .push(grad.into_data().convert::<f32>().into_vec().unwrap());
            }
        }
    }
    let mut visitor = Grads::<A>(&grads, Vec::new());
    model.visit(&mut visitor);
    (values, visitor.1)
}

#[test]
fn fused_flex_and_plain_ndarray_agree() {
    let lora = LoraConfig {
        r: 4,
        alpha: 8.0,
        ..LoraConfig::default()
    };
    let (flex_scores, flex_grads) = scores_and_adapter_grads::<Autodiff<Flex>>(&lora);
    let (plain_scores, plain_grads) = scores_and_adapter_grads::<Autodiff<NdArray>>(&lora);
    assert_close(&flex_scores, &plain_scores, 1e-4, 1e-4, "scores");
    // Only the adapters have gradients: 2 layers × 7 projections × (A, B).
    assert_eq!(flex_grads.len(), 28);
    assert_eq!(plain_grads.len(), 28);
    for (i, (f, p)) in flex_grads.iter().zip(&plain_grads).enumerate() {
        let scale = p.iter().fold(0.0f32, |m, v| m.max(v.abs()));
        assert!(scale > 0.0, "gradient #{i} is zero");
        assert_close(f, p, 1e-4 * scale, 1e-3, &format!("gradient #{i}"));
    }
}

#[test]
fn only_adapters_train() {
    type A = Autodiff<Flex>;
    let lora = LoraConfig {
        r: 2,
        target_modules: vec!["q_proj".into(), "v_proj".into(), "down_proj".into()],
        ..LoraConfig::default()
    };
    let model = adapted::<A>(&lora);
    let adapters = adapter_ids(&model);
    assert_eq!(adapters.len(), 2 * 3 * 2);
    assert_eq!(
        params::<A, _>(&model)
            .iter()
            .filter(|(id, _)| adapters.contains(id))
            .count(),
        adapters.len()
    );
    let before = params::<A, _>(&model);
    let (ids, mask) = ids::<A>();
    let loss = token_scores(&model, ids, &mask, 4, 1.0)
        .logprobs
        .sum()
        .neg();
    let grads = GradientsParams::from_grads(loss.backward(), &model);
    let with_grads: BTreeSet<ParamId> = before
        .iter()
        .map(|(id, _)| *id)
        .filter(|id| grads.get::<Flex, 2>(*id).is_some() || grads.get::<Flex, 1>(*id).is_some())
        .collect();
    assert_eq!(with_grads, adapters, "gradients exactly for the adapters");
    adamw_step_moves_only(model, grads, &before, &adapters);
}

/// One AdamW step of `model`; checks that AdamW keeps state exactly for `adapters`, that they
/// moved from `before` and that every other parameter did not.
pub fn adamw_step_moves_only<A: AutodiffBackend>(
    model: Qwen2ForCausalLm<A>,
    grads: GradientsParams,
    before: &[(ParamId, Vec<f32>)],
    adapters: &BTreeSet<ParamId>,
) -> Qwen2ForCausalLm<A> {
    let mut optimizer = AdamWConfig::new().init::<A, Qwen2ForCausalLm<A>>();
    let model = optimizer.step(1e-2, model, grads);
    let state: BTreeSet<ParamId> = optimizer.to_record().keys().copied().collect();
    assert_eq!(&state, adapters, "AdamW state exactly for the adapters");
    for ((id, old), (_, new)) in before.iter().zip(params::<A, _>(&model)) {
        if adapters.contains(id) {
            assert_ne!(old, &new, "adapter {id} did not move");
        } else {
            assert_eq!(old, &new, "frozen parameter {id} moved");
        }
    }
    model
}

#[test]
fn fresh_adapters_and_adapters_off_give_the_base_model() {
    let base = random_model::<Flex>(&config(), 3, 0.2, &Default::default()).unwrap();
    let (ids, mask) = ids::<Flex>();
    let want = base
        .forward(ids.clone(), &mask)
        .into_data()
        .into_vec::<f32>()
        .unwrap();
    let fresh = apply_lora(base, &LoraConfig::default(), 0).unwrap();
    let got = fresh
        .forward(ids.clone(), &mask)
        .into_data()
        .into_vec::<f32>()
        .unwrap();
    assert_close(&got, &want, 1e-6, 0.0, "fresh adapters (B = 0)");
    let trained = adapted::<Flex>(&LoraConfig::default());
    let with = trained
        .forward(ids.clone(), &mask)
        .into_data()
        .into_vec::<f32>()
        .unwrap();
    assert!(with.iter().zip(&want).any(|(a, b)| (a - b).abs() > 1e-3));
    let off = trained.without_adapters();
    assert!(!off.has_adapters() && trained.has_adapters());
    let got = off
        .forward(ids, &mask)
        .into_data()
        .into_vec::<f32>()
        .unwrap();
    assert_close(&got, &want, 1e-6, 0.0, "adapters off");
}

pub fn invalid_field(result: Result<impl std::fmt::Debug, CoreError>) -> String {
    match result {
        Err(CoreError::InvalidArgument { field, .. }) => field,
        other => panic!("expected an invalid-argument error, got {other:?}"),
    }
}

#[test]
fn bad_settings_and_mismatched_adapters_are_refused() {
    let model = || random_model::<Flex>(&config(), 3, 0.2, &Default::default()).unwrap();
    let bad = LoraConfig {
        r: 0,
        ..LoraConfig::default()
    };
    assert_eq!(invalid_field(apply_lora(model(), &bad, 0)), "lora.r");
    let twice = apply_lora(model(), &LoraConfig::default(), 0).unwrap();
    assert_eq!(
        invalid_field(apply_lora(twice, &LoraConfig::default(), 0)),
        "model"
    );

    // The fixture adapter was trained for a wider model: the first key that does not fit is named.
    match load_adapter(model(), &lora_fixture("adapter")) {
        Err(CoreError::ShapeMismatch {
            key,
            expected,
            found,
            ..
        }) => {
            assert!(key.starts_with("base_model.model.model.layers.0."), "{key}");
            assert_ne!(expected, found);
        }
        other => panic!("expected a shape mismatch, got {:?}", other.map(|_| ())),
    }

    // adapter_config.json settings that cannot be applied name their field.
    let original = std::fs::read_to_string(lora_fixture("adapter/adapter_config.json")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    for (from, to, field) in [
        ("\"use_dora\": false", "\"use_dora\": true", "use_dora"),
        ("\"r\": 4", "\"r\": 0", "lora.r"),
        ("\"lora_alpha\": 8", "\"lora_alpha\": -1", "lora.alpha"),
        ("\"q_proj\"", "\"lm_head\"", "lora.target_modules"),
        (
            "\"rank_pattern\": {}",
            "\"rank_pattern\": {\"q_proj\": 8}",
            "rank_pattern",
        ),
    ] {
        assert!(original.contains(from), "{from}");
        std::fs::write(
            dir.path().join("adapter_config.json"),
            original.replace(from, to),
        )
        .unwrap();
        let found = invalid_field(read_adapter_config(dir.path()));
        assert!(found.ends_with(field), "{found} should name {field}");
    }
    // The fixture base itself accepts it.
    let (base, _) = agent_rl_core::weights::load_pretrained::<Flex>(
        &fixture("untied_f32"),
        Default::default(),
        &Default::default(),
    )
    .unwrap();
    assert!(load_adapter(base, &lora_fixture("adapter")).is_ok());
}
