//! Adapters on disk in PEFT's layout: `adapter_config.json` + `adapter_model.safetensors`, keys
//! `base_model.model.model.layers.{i}.{self_attn|mlp}.{proj}.lora_{A|B}.weight`, `A` `[r, in]`,
//! `B` `[out, r]`. PEFT, vLLM and this crate read each other's files.

use std::collections::BTreeSet;
use std::path::Path;

use burn::module::Module;
use burn::prelude::*;
use safetensors::tensor::{Dtype, TensorView};
use serde::Deserialize;
use serde_json::{Value, json};

use super::adapter::LoraAdapter;
use super::apply::{adapter_of, set_adapters};
use super::config::{LoraConfig, LoraInit, LoraTarget};
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

/// The fields of a PEFT `adapter_config.json` this crate reads (unknown keys are ignored; the
/// ones that would change the meaning of the weights are checked).
#[derive(Debug, Deserialize)]
struct PeftConfigFile {
    #[serde(default)]
    peft_type: Option<String>,
    r: usize,
    lora_alpha: f64,
    #[serde(default)]
    lora_dropout: f64,
    target_modules: Value,
    #[serde(default)]
    use_rslora: bool,
    #[serde(default)]
    use_dora: bool,
    #[serde(default)]
    bias: Option<String>,
    #[serde(default)]
    fan_in_fan_out: bool,
    #[serde(default)]
    modules_to_save: Option<Value>,
    #[serde(default)]
    layers_to_transform: Option<Value>,
    #[serde(default)]
    rank_pattern: Option<Value>,
    #[serde(default)]
    alpha_pattern: Option<Value>,
    #[serde(default)]
    init_lora_weights: Option<Value>,
    #[serde(default)]
    lora_bias: bool,
    #[serde(default)]
    exclude_modules: Option<Value>,
    #[serde(default)]
    layer_replication: Option<Value>,
    #[serde(default)]
    target_parameters: Option<Value>,
    #[serde(default)]
    trainable_token_indices: Option<Value>,
}

/// A non-empty JSON container or a non-null scalar.
fn is_set(value: Option<&Value>) -> bool {
    match value {
        None | Some(Value::Null) => false,
        Some(Value::Object(map)) => !map.is_empty(),
        Some(Value::Array(items)) => !items.is_empty(),
        Some(_) => true,
    }
}

fn unsupported(path: &Path, field: &str, reason: impl Into<String>) -> CoreError {
    CoreError::InvalidArgument {
        field: format!("{}: {field}", path.display()),
        reason: reason.into(),
    }
}

impl PeftConfigFile {
    fn into_config(self, path: &Path) -> Result<LoraConfig, CoreError> {
        if self.peft_type.as_deref().is_some_and(|t| t != "LORA") {
            return Err(unsupported(
                path,
                "peft_type",
                "only LORA adapters load here",
            ));
        }
        let refuse = |field: &str, what: &str| Err(unsupported(path, field, what.to_owned()));
        if self.use_dora {
            return refuse("use_dora", "DoRA adapters are not supported");
        }
        if self.bias.as_deref().is_some_and(|b| b != "none") {
            return refuse("bias", "trained biases are not supported; only `none`");
        }
        if self.lora_bias {
            return refuse("lora_bias", "LoRA biases are not supported");
        }
        if self.fan_in_fan_out {
            return refuse(
                "fan_in_fan_out",
                "must be false for Qwen2's nn.Linear layers",
            );
        }
        for (field, value) in [
            ("modules_to_save", &self.modules_to_save),
            ("layers_to_transform", &self.layers_to_transform),
            ("rank_pattern", &self.rank_pattern),
            ("alpha_pattern", &self.alpha_pattern),
            ("exclude_modules", &self.exclude_modules),
            ("layer_replication", &self.layer_replication),
            ("target_parameters", &self.target_parameters),
            ("trainable_token_indices", &self.trainable_token_indices),
        ] {
            if is_set(value.as_ref()) {
                return refuse(
                    field,
                    "is set; only uniform adapters on every layer load here",
                );
            }
        }
        let target_modules = match self.target_modules {
            Value::String(name) => vec![name],
            Value::Array(items) => items
                .into_iter()
                .map(|item| match item {
                    Value::String(name) => Ok(name),
                    other => Err(unsupported(
                        path,
                        "target_modules",
                        format!("entry {other} is not a module name"),
                    )),
                })
                .collect::<Result<_, _>>()?,
            other => {
                return Err(unsupported(
                    path,
                    "target_modules",
                    format!("{other} is neither a name nor a list of names"),
                ));
            }
        };
        let init = match self.init_lora_weights {
            Some(Value::String(name)) if name == "gaussian" => LoraInit::Gaussian,
            _ => LoraInit::Kaiming,
        };
        let config = LoraConfig {
            r: self.r,
            alpha: self.lora_alpha,
            dropout: self.lora_dropout,
            target_modules,
            use_rslora: self.use_rslora,
            init,
        };
        config.validate()?;
        Ok(config)
    }
}

/// `config` as a PEFT `adapter_config.json` value (target modules spelled out, as PEFT writes
/// them after resolving `all-linear`).
pub fn peft_config_json(config: &LoraConfig, base_model: Option<&str>) -> Value {
    let targets: Vec<&str> = config
        .targets()
        .unwrap_or_default()
        .into_iter()
        .map(LoraTarget::name)
        .collect();
    let init = match config.init {
        LoraInit::Kaiming => json!(true),
        LoraInit::Gaussian => json!("gaussian"),
    };
    json!({
        "peft_type": "LORA",
        "task_type": "CAUSAL_LM",
        "base_model_name_or_path": base_model,
        "r": config.r,
        "lora_alpha": config.alpha,
        "lora_dropout": config.dropout,
        "target_modules": targets,
        "use_rslora": config.use_rslora,
        "init_lora_weights": init,
        "bias": "none",
        "fan_in_fan_out": false,
        "use_dora": false,
        "modules_to_save": null,
        "layers_to_transform": null,
        "rank_pattern": {},
        "alpha_pattern": {},
        "inference_mode": true,
    })
}

/// Writes `bytes` to `path` through a temporary file in the same directory and a rename.
fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), CoreError> {
    let io = |source| CoreError::Io {
        path: path.to_owned(),
        source,
    };
    let partial = path.with_extension("partial");
    std::fs::write(&partial, bytes).map_err(io)?;
    std::fs::rename(&partial, path).map_err(io)
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

/// Reads and checks `dir/adapter_config.json`.
///
/// # Errors
/// [`CoreError::Io`] / [`CoreError::Json`] for a missing or malformed file;
/// [`CoreError::InvalidArgument`] naming the file and field for settings this crate cannot
/// apply (DoRA, biases, per-layer patterns, unknown target modules, rank 0, …).
pub fn read_adapter_config(dir: &Path) -> Result<LoraConfig, CoreError> {
    let path = dir.join(ADAPTER_CONFIG_FILE);
    let text = std::fs::read_to_string(&path).map_err(|source| CoreError::Io {
        path: path.clone(),
        source,
    })?;
    let file: PeftConfigFile = serde_json::from_str(&text).map_err(|source| CoreError::Json {
        path: path.clone(),
        source,
    })?;
    file.into_config(&path)
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
