//! PEFT's `adapter_config.json`: reading it into a [`LoraConfig`] (refusing settings whose
//! weights this crate cannot apply) and writing one.

use std::path::Path;

use serde::Deserialize;
use serde_json::{Value, json};

use super::config::{LoraConfig, LoraInit, LoraTarget};
use super::peft::ADAPTER_CONFIG_FILE;
use crate::error::CoreError;

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
            base_dtype: super::BaseDtype::F32,
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
