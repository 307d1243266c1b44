//! LoRA against PEFT (`tests/fixtures/lora_tiny/make_lora_fixture.py`): logits with a PEFT
//! adapter, adapter gradients of a fixed loss, merged weights, and an adapter written here that
//! the script loads in PEFT.

use std::path::PathBuf;

use agent_rl_core::Qwen2ForCausalLm;
use agent_rl_core::lora::{
    LoraConfig, LoraTarget, apply_lora, load_adapter, peft_key, save_adapter,
};
use agent_rl_core::weights::{
    CheckpointReader, LoadOptions, SaveOptions, load_pretrained, save_pretrained,
};
use burn::backend::{Autodiff, Flex, NdArray};
use burn::module::Param;
use burn::prelude::*;
use burn::tensor::activation::log_softmax;
use burn::tensor::backend::AutodiffBackend;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use safetensors::SafeTensors;
use safetensors::tensor::{Dtype, TensorView};

use crate::common::{assert_close, fixture};

/// `tests/fixtures/lora_tiny/<name>`.
pub fn lora_fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/lora_tiny")
        .join(name)
}

/// A tensor of a safetensors file as (shape, f32 data).
fn tensor_of(path: &std::path::Path, key: &str) -> (Vec<usize>, Vec<f32>) {
    let bytes = std::fs::read(path).unwrap();
    let file = SafeTensors::deserialize(&bytes).unwrap();
    let view = file
        .tensor(key)
        .unwrap_or_else(|_| panic!("{key} in {path:?}"));
    let data = view
        .data()
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect();
    (view.shape().to_vec(), data)
}

fn golden(key: &str) -> (Vec<usize>, Vec<f32>) {
    tensor_of(&lora_fixture("expected.safetensors"), key)
}

fn id_rows(key: &str) -> Vec<Vec<u32>> {
    let (shape, data) = golden(key);
    data.chunks(shape[1])
        .map(|row| row.iter().map(|&v| v as u32).collect())
        .collect()
}

fn base<Bk: Backend>() -> Qwen2ForCausalLm<Bk> {
    load_pretrained::<Bk>(
        &fixture("untied_f32"),
        LoadOptions::default(),
        &Default::default(),
    )
    .unwrap()
    .0
}

fn values<Bk: Backend, const D: usize>(tensor: Tensor<Bk, D>) -> Vec<f32> {
    tensor
        .into_data()
        .convert::<f32>()
        .into_vec::<f32>()
        .unwrap()
}

fn check_logits<Bk: Backend>(adapter: &str, key: &str) {
    let (model, _) = load_adapter(base::<Bk>(), &lora_fixture(adapter)).unwrap();
    let logits = values(model.forward_ids(&id_rows("input_ids"), None));
    let (_, want) = golden(key);
    assert_close(&logits, &want, 1e-4, 1e-4, &format!("{adapter} logits"));
}

#[test]
fn peft_adapter_logits_on_flex_and_ndarray() {
    check_logits::<Flex>("adapter", "logits");
    check_logits::<Flex>("rslora", "rslora_logits");
    check_logits::<NdArray>("adapter", "logits");
    check_logits::<NdArray>("rslora", "rslora_logits");
}

fn check_gradients<A: AutodiffBackend>() {
    let (model, config) = load_adapter(base::<A>(), &lora_fixture("adapter")).unwrap();
    let device = Default::default();
    let logits = model.forward_ids(&id_rows("input_ids"), None);
    let targets: Vec<i64> = id_rows("targets")
        .concat()
        .iter()
        .map(|&t| i64::from(t))
        .collect();
    let targets = Tensor::<A, 2, Int>::from_data(TensorData::new(targets, [2, 8]), &device);
    let loss = log_softmax(logits, 2)
        .gather(2, targets.unsqueeze_dim(2))
        .sum();
    let grads = loss.backward();
    let mut checked = 0;
    for (index, layer) in model.layers.iter().enumerate() {
        for target in config.targets().unwrap() {
            let attn = layer.self_attn.lora.as_ref().unwrap();
            let mlp = layer.mlp.lora.as_ref().unwrap();
            let adapter = match target {
                LoraTarget::QProj => &attn.q_proj,
                LoraTarget::KProj => &attn.k_proj,
                LoraTarget::VProj => &attn.v_proj,
                LoraTarget::OProj => &attn.o_proj,
                LoraTarget::GateProj => &mlp.gate_proj,
                LoraTarget::UpProj => &mlp.up_proj,
                LoraTarget::DownProj => &mlp.down_proj,
            }
            .as_ref()
            .unwrap();
            for (matrix, param) in [("A", &adapter.lora_a), ("B", &adapter.lora_b)] {
                let key = peft_key(index, target, matrix);
                let grad = param.grad(&grads).expect("adapters get gradients");
                let got = values(grad.transpose());
                let (_, want) = golden(&format!("grad.{key}"));
                let scale = want.iter().fold(0.0f32, |m, v| m.max(v.abs()));
                assert_close(&got, &want, 1e-4 * scale, 1e-4, &key);
                checked += 1;
            }
        }
    }
    assert_eq!(checked, 2 * 7 * 2);
}

#[test]
fn adapter_gradients_match_peft() {
    check_gradients::<Autodiff<Flex>>();
    check_gradients::<Autodiff<NdArray>>();
}

#[test]
fn merged_weights_match_merge_and_unload() {
    let (model, _) = load_adapter(base::<Flex>(), &lora_fixture("adapter")).unwrap();
    let merged = model.clone().merge_adapters();
    assert!(!merged.has_adapters() && model.has_adapters());
    let dir = tempfile::tempdir().unwrap();
    save_pretrained(&merged, dir.path(), SaveOptions::default()).unwrap();
    let reader = CheckpointReader::open(dir.path()).unwrap();
    // Saving the model with its adapters writes the same merged checkpoint.
    let unmerged_dir = tempfile::tempdir().unwrap();
    save_pretrained(&model, unmerged_dir.path(), SaveOptions::default()).unwrap();
    let unmerged = CheckpointReader::open(unmerged_dir.path()).unwrap();
    for key in reader.keys() {
        let shape = reader.shape(key).unwrap();
        let a = reader.read_f32(key, &shape).unwrap();
        assert_eq!(a, unmerged.read_f32(key, &shape).unwrap(), "{key}");
    }
    let mut checked = 0;
    for key in reader.keys() {
        if !LoraTarget::ALL
            .iter()
            .any(|t| key.ends_with(&format!("{}.weight", t.module_path())))
        {
            continue;
        }
        let (shape, want) = golden(&format!("merged.{key}"));
        let got = reader.read_f32(key, &shape).unwrap();
        assert_close(&got, &want, 1e-6, 0.0, key);
        checked += 1;
    }
    assert_eq!(checked, 2 * 7);
    // The merged model computes what the adapter model computed.
    let logits = values(merged.forward_ids(&id_rows("input_ids"), None));
    assert_close(&logits, &golden("logits").1, 1e-4, 1e-4, "merged logits");
}

/// The adapter this crate writes for the PEFT check: fresh adapters (seed 5) on the fixture base,
/// every `B` then set to seeded values so that the adapter changes the logits.
fn rust_adapter() -> (Qwen2ForCausalLm<Flex>, LoraConfig) {
    let config = LoraConfig {
        r: 4,
        alpha: 6.0,
        target_modules: vec!["all-linear".into()],
        ..LoraConfig::default()
    };
    let mut model = apply_lora(base::<Flex>(), &config, 5).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(9);
    let mut fill = |param: &mut Param<Tensor<Flex, 2>>| {
        let shape = param.dims();
        let data: Vec<f32> = (0..shape[0] * shape[1])
            .map(|_| rng.random_range(-0.3f32..0.3))
            .collect();
        *param = Param::from_tensor(Tensor::from_data(
            TensorData::new(data, shape),
            &Default::default(),
        ));
    };
    for layer in &mut model.layers {
        let attn = layer.self_attn.lora.as_mut().unwrap();
        let mlp = layer.mlp.lora.as_mut().unwrap();
        for adapter in [
            &mut attn.q_proj,
            &mut attn.k_proj,
            &mut attn.v_proj,
            &mut attn.o_proj,
            &mut mlp.gate_proj,
            &mut mlp.up_proj,
            &mut mlp.down_proj,
        ] {
            fill(&mut adapter.as_mut().unwrap().lora_b);
        }
    }
    (model, config)
}

/// Writes the adapter and its logits for the script's PEFT check when
/// `AGENT_RL_WRITE_FIXTURES=1`; always checks the committed files are what the code writes now,
/// so the script's check stays about the current code.
#[test]
fn rust_adapter_matches_committed() {
    let (model, config) = rust_adapter();
    let logits = model.forward_ids(&id_rows("input_ids"), None);
    let shape = logits.dims().to_vec();
    let logits = values(logits);
    let scratch = tempfile::tempdir().unwrap();
    let write = std::env::var("AGENT_RL_WRITE_FIXTURES").is_ok_and(|v| v == "1");
    let dir = if write {
        lora_fixture("rust_adapter")
    } else {
        scratch.path().to_owned()
    };
    save_adapter(&model, &config, Some("qwen2_tiny/untied_f32"), &dir).unwrap();
    if write {
        let bytes: Vec<u8> = logits.iter().flat_map(|v| v.to_le_bytes()).collect();
        let view = TensorView::new(Dtype::F32, shape.clone(), &bytes).unwrap();
        safetensors::serialize_to_file(
            [("logits", view)],
            None,
            &dir.join("rust_logits.safetensors"),
        )
        .unwrap();
    }
    let committed = lora_fixture("rust_adapter");
    let (_, want) = tensor_of(&committed.join("rust_logits.safetensors"), "logits");
    assert_close(&logits, &want, 1e-5, 1e-5, "logits with the Rust adapter");
    let written = CheckpointReader::open_file(&dir.join("adapter_model.safetensors")).unwrap();
    let committed_weights =
        CheckpointReader::open_file(&committed.join("adapter_model.safetensors")).unwrap();
    assert_eq!(
        written.keys().collect::<Vec<_>>(),
        committed_weights.keys().collect::<Vec<_>>()
    );
    for key in written.keys() {
        let shape = written.shape(key).unwrap();
        let got = written.read_f32(key, &shape).unwrap();
        let want = committed_weights.read_f32(key, &shape).unwrap();
        assert_close(&got, &want, 1e-7, 0.0, key);
    }
    // And it loads back here to the same logits.
    let (reloaded, reloaded_config) = load_adapter(base::<Flex>(), &dir).unwrap();
    assert_eq!(reloaded_config.r, 4);
    assert_eq!(reloaded_config.alpha, 6.0);
    let again = values(reloaded.forward_ids(&id_rows("input_ids"), None));
    assert_close(&again, &logits, 1e-5, 1e-5, "reloaded logits");
}
