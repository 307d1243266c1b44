//! Adapters on disk in PEFT's layout: `adapter_config.json` + `adapter_model.safetensors`, keys
//! `base_model.model.model.layers.{i}.{self_attn|mlp}.{proj}.lora_{A|B}.weight`, `A` `[r, in]`,
//! `B` `[out, r]`. PEFT, vLLM and this crate read each other's files.

use std::collections::BTreeSet;
use std::path::Path;

use burn::module::Module;
use burn::prelude::*;
use safetensors::tensor::{Dtype, TensorView};

use super::adapter::LoraAdapter;
use super::apply::{adapter_of, set_adapters};
use super::config::{LoraConfig, LoraTarget};
use super::peft_config::{peft_config_json, read_adapter_config};
use crate::error::CoreError;
use crate::model::Qwen2ForCausalLm;
use crate::weights::CheckpointReader;
use crate::weights::names::layer_prefix;

/// File name of the adapter config.
pub const ADAPTER_CONFIG_FILE: &str = "adapter_config.json";
/// File name of the adapter weights.
pub const ADAPTER_WEIGHTS_FILE: &str = "adapter_model.safetensors";

/// PEFT's key of `layer`'s `target` matrix `matrix` (`"A"` or `"B"`).
pub fn peft_key(layer: usize, target: LoraTarget, matrix: &str) -> String {
    format!(
        "base_model.model.{}.{}.lora_{matrix}.weight",
        layer_prefix(layer),
        target.module_path()
    )
}

/// Writes `bytes` to `path` atomically ([`crate::atomic::write_atomic`]), naming the file in
/// the error.
fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), CoreError> {
    crate::atomic::write_atomic(path, bytes).map_err(|source| CoreError::Write {
        path: path.to_owned(),
        source,
    })
}

fn host<B: Backend>(tensor: Tensor<B, 2>) -> Vec<f32> {
    tensor
        .into_data()
        .convert::<f32>()
        .into_vec::<f32>()
        .unwrap_or_default()
}

/// Writes `model`'s adapters to `dir` (created if needed) in PEFT's layout, with `config` as
/// `adapter_config.json`. Each file is written atomically.
///
/// # Errors
/// [`CoreError::InvalidArgument`] (field `model`) when the model has no adapters;
/// [`CoreError::Io`] / [`CoreError::Safetensors`] when writing fails.
pub fn save_adapter<B: Backend>(
    model: &Qwen2ForCausalLm<B>,
    config: &LoraConfig,
    base_model: Option<&str>,
    dir: &Path,
) -> Result<(), CoreError> {
    if !model.has_adapters() {
        return Err(CoreError::InvalidArgument {
            field: "model".into(),
            reason: "has no LoRA adapters to save".into(),
        });
    }
    std::fs::create_dir_all(dir).map_err(|source| CoreError::Io {
        path: dir.to_owned(),
        source,
    })?;
    let mut tensors: Vec<(String, Vec<usize>, Vec<u8>)> = Vec::new();
    for (index, layer) in model.layers.iter().enumerate() {
        for target in LoraTarget::ALL {
            let Some(adapter) = adapter_of(layer, target) else {
                continue;
            };
            // burn holds A as [in, r] and B as [r, out]; PEFT the transposes.
            for (matrix, param) in [("A", &adapter.lora_a), ("B", &adapter.lora_b)] {
                let value = param.val().transpose();
                let shape = value.dims().to_vec();
                let bytes = host(value).iter().flat_map(|v| v.to_le_bytes()).collect();
                tensors.push((peft_key(index, target, matrix), shape, bytes));
            }
        }
    }
    let weights_path = dir.join(ADAPTER_WEIGHTS_FILE);
    let safetensors_error = |err: safetensors::SafeTensorError| CoreError::Safetensors {
        file: weights_path.clone(),
        reason: err.to_string(),
    };
    let views = tensors
        .iter()
        .map(|(key, shape, bytes)| {
            TensorView::new(Dtype::F32, shape.clone(), bytes).map(|view| (key.clone(), view))
        })
        .collect::<Result<Vec<_>, _>>()
        .map_err(safetensors_error)?;
    let metadata = Some(std::collections::HashMap::from([(
        "format".to_owned(),
        "pt".to_owned(),
    )]));
    let bytes = safetensors::serialize(views, metadata).map_err(safetensors_error)?;
    write_atomically(&weights_path, &bytes)?;
    let config_path = dir.join(ADAPTER_CONFIG_FILE);
    let text =
        serde_json::to_string_pretty(&peft_config_json(config, base_model)).map_err(|source| {
            CoreError::Json {
                path: config_path.clone(),
                source,
            }
        })?;
    write_atomically(&config_path, text.as_bytes())
}

/// `model` (its base weights, frozen) with the PEFT adapter in `dir` installed, and the
/// adapter's config. Any adapters `model` had are replaced.
///
/// # Errors
/// As [`read_adapter_config`]; [`CoreError::MissingTensor`] / [`CoreError::ShapeMismatch`]
/// naming the key when the weights do not fit the model (an adapter trained for another base);
/// [`CoreError::UnexpectedTensors`] for keys that are not adapters of this model.
pub fn load_adapter<B: Backend>(
    model: Qwen2ForCausalLm<B>,
    dir: &Path,
) -> Result<(Qwen2ForCausalLm<B>, LoraConfig), CoreError> {
    let config = read_adapter_config(dir)?;
    let targets = config.targets()?;
    let reader = CheckpointReader::open_file(&dir.join(ADAPTER_WEIGHTS_FILE))?;
    let device = model.device();
    let model_config = model.config.clone();
    let mut expected = BTreeSet::new();
    let mut adapters = Vec::new();
    for index in 0..model_config.num_hidden_layers {
        let mut layer = Vec::new();
        for &target in &targets {
            let (inputs, outputs) = target.features(&model_config);
            let mut read = |matrix: &str, shape: [usize; 2]| -> Result<Tensor<B, 2>, CoreError> {
                let key = peft_key(index, target, matrix);
                let data = reader.read_f32(&key, &shape)?;
                expected.insert(key);
                Ok(Tensor::<B, 2>::from_data(TensorData::new(data, shape), &device).transpose())
            };
            let a = read("A", [config.r, inputs])?;
            let b = read("B", [outputs, config.r])?;
            layer.push((target, LoraAdapter::from_tensors(a, b, &config)));
        }
        adapters.push(layer);
    }
    let unused: Vec<String> = reader
        .keys()
        .filter(|key| !expected.contains(*key))
        .map(str::to_owned)
        .collect();
    if !unused.is_empty() {
        return Err(CoreError::UnexpectedTensors {
            file: reader.origin.clone(),
            keys: unused,
        });
    }
    let mut model = model.without_adapters().no_grad();
    for (layer, mut built) in model.layers.iter_mut().zip(adapters) {
        set_adapters(layer, |target| {
            let at = built.iter().position(|(t, _)| *t == target)?;
            Some(built.swap_remove(at).1)
        });
    }
    Ok((model, config))
}
