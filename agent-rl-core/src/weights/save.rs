//! `save_pretrained`: [`Qwen2ForCausalLm`] → a Hugging Face snapshot (config + safetensors),
//! `Qwen2ForCausalLM` or `LlamaForCausalLM` as the config's `model_type` says.

use std::collections::BTreeMap;
use std::path::Path;

use burn::prelude::*;
use safetensors::SafeTensorError;
use safetensors::tensor::{Dtype, TensorView};
use serde_json::{Value, json};

use super::build::transpose;
use super::names::{HfTensor, checkpoint_tensors, layer_prefix};
use super::reader::StorageDtype;
use crate::config::Qwen2Config;
use crate::error::CoreError;
use crate::model::Qwen2ForCausalLm;

/// Options of [`save_pretrained`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SaveOptions {
    /// Storage dtype of the tensors. Default f32.
    pub dtype: StorageDtype,
    /// Shard above this many bytes (HF's `max_shard_size`). Default 5 GB.
    pub max_shard_bytes: usize,
}

impl Default for SaveOptions {
    fn default() -> Self {
        Self {
            dtype: StorageDtype::F32,
            max_shard_bytes: 5_000_000_000,
        }
    }
}

fn host<B: Backend, const D: usize>(tensor: Tensor<B, D>) -> Vec<f32> {
    tensor
        .into_data()
        .convert::<f32>()
        .into_vec::<f32>()
        .unwrap_or_default()
}

/// HF `[out, in]` row blocks of a burn `[in, Σout]` weight.
fn split_linear(weight: Vec<f32>, inputs: usize, outputs: &[usize]) -> Vec<Vec<f32>> {
    let total: usize = outputs.iter().sum();
    let rows = transpose(&weight, inputs, total);
    let mut out = Vec::new();
    let mut start = 0;
    for &count in outputs {
        out.push(rows[start * inputs..(start + count) * inputs].to_vec());
        start += count;
    }
    out
}

/// Every HF tensor of `model` as `(key, data)`, data row-major in HF's shape.
fn export<B: Backend>(model: &Qwen2ForCausalLm<B>) -> BTreeMap<String, Vec<f32>> {
    let config = model.config();
    let hidden = config.hidden_size;
    let q = config.num_attention_heads * config.head_size();
    let kv = config.kv_heads() * config.head_size();
    let inter = config.intermediate_size;
    let mut out = BTreeMap::new();
    out.insert(
        "model.embed_tokens.weight".to_owned(),
        host(model.embed_tokens.weight.val()),
    );
    for (index, layer) in model.layers.iter().enumerate() {
        let p = layer_prefix(index);
        let attn = &layer.self_attn;
        let qkv = split_linear(host(attn.qkv_proj.weight.val()), hidden, &[q, kv, kv]);
        let qkv_bias = attn.qkv_proj.bias.as_ref().map(|b| host(b.val()));
        for (name, (weight, range)) in ["q_proj", "k_proj", "v_proj"]
            .iter()
            .zip(qkv.into_iter().zip([0..q, q..q + kv, q + kv..q + 2 * kv]))
        {
            out.insert(format!("{p}.self_attn.{name}.weight"), weight);
            if let Some(bias) = &qkv_bias {
                out.insert(
                    format!("{p}.self_attn.{name}.bias"),
                    bias.get(range).unwrap_or_default().to_vec(),
                );
            }
        }
        let o = split_linear(host(attn.o_proj.weight.val()), q, &[hidden]);
        out.extend(
            o.into_iter()
                .map(|w| (format!("{p}.self_attn.o_proj.weight"), w)),
        );
        let mlp = &layer.mlp;
        let gate_up = split_linear(host(mlp.gate_up_proj.weight.val()), hidden, &[inter, inter]);
        for (name, weight) in ["gate_proj", "up_proj"].iter().zip(gate_up) {
            out.insert(format!("{p}.mlp.{name}.weight"), weight);
        }
        let down = split_linear(host(mlp.down_proj.weight.val()), inter, &[hidden]);
        out.extend(
            down.into_iter()
                .map(|w| (format!("{p}.mlp.down_proj.weight"), w)),
        );
        // Llama's optional biases: each fused bias split like its weight.
        for (linear, names, widths) in [
            (&attn.o_proj, &["self_attn.o_proj"][..], &[hidden][..]),
            (
                &mlp.gate_up_proj,
                &["mlp.gate_proj", "mlp.up_proj"],
                &[inter, inter],
            ),
            (&mlp.down_proj, &["mlp.down_proj"], &[hidden]),
        ] {
            let Some(bias) = linear.bias.as_ref().map(|b| host(b.val())) else {
                continue;
            };
            let mut start = 0;
            for (name, &width) in names.iter().zip(widths) {
                let part = bias.get(start..start + width).unwrap_or_default();
                out.insert(format!("{p}.{name}.bias"), part.to_vec());
                start += width;
            }
        }
        out.insert(
            format!("{p}.input_layernorm.weight"),
            host(layer.input_layernorm.weight.val()),
        );
        out.insert(
            format!("{p}.post_attention_layernorm.weight"),
            host(layer.post_attention_layernorm.weight.val()),
        );
    }
    out.insert(
        "model.norm.weight".to_owned(),
        host(model.norm.weight.val()),
    );
    if let Some(head) = &model.lm_head {
        out.insert(
            "lm_head.weight".to_owned(),
            transpose(&host(head.val()), hidden, config.vocab_size),
        );
    }
    out
}

fn encode(data: &[f32], dtype: StorageDtype) -> Vec<u8> {
    match dtype {
        StorageDtype::F32 => data.iter().flat_map(|v| v.to_le_bytes()).collect(),
        StorageDtype::Bf16 => data
            .iter()
            .flat_map(|v| half::bf16::from_f32(*v).to_le_bytes())
            .collect(),
        StorageDtype::F16 => data
            .iter()
            .flat_map(|v| half::f16::from_f32(*v).to_le_bytes())
            .collect(),
    }
}

fn write_json(path: &Path, value: &Value) -> Result<(), CoreError> {
    let text = serde_json::to_string_pretty(value).map_err(|source| CoreError::Json {
        path: path.to_owned(),
        source,
    })?;
    crate::atomic::write_atomic(path, text.as_bytes()).map_err(|source| CoreError::Write {
        path: path.to_owned(),
        source,
    })
}

/// Every HF tensor of `model` (adapters merged in when it has any), keyed as in
/// [`checkpoint_tensors`].
pub(crate) fn export_tensors<B: Backend>(
    model: &Qwen2ForCausalLm<B>,
) -> BTreeMap<String, Vec<f32>> {
    // A model with LoRA adapters is saved as what it computes: the adapters merged.
    if model.has_adapters() {
        export(&model.clone().merge_adapters())
    } else {
        export(model)
    }
}

/// `config.json` of `config` for the HF class `architecture`, nulls dropped.
pub(crate) fn config_json(
    config: &Qwen2Config,
    architecture: &str,
    options: SaveOptions,
    dir: &Path,
) -> Result<serde_json::Map<String, Value>, CoreError> {
    let value = serde_json::to_value(config).map_err(|source| CoreError::Json {
        path: dir.join("config.json"),
        source,
    })?;
    let mut map = match value {
        Value::Object(map) => map,
        _ => serde_json::Map::new(),
    };
    map.retain(|_, value| !value.is_null());
    map.insert("architectures".into(), json!([architecture]));
    map.insert("torch_dtype".into(), json!(options.dtype.torch_name()));
    Ok(map)
}

/// Writes `dir/config.json` and the tensors of `layout` (data from `tensors`, HF shapes) as
/// `model.safetensors` or HF-named shards plus an index, each file replaced atomically.
pub(crate) fn write_snapshot(
    dir: &Path,
    config: &serde_json::Map<String, Value>,
    layout: &[HfTensor],
    tensors: &BTreeMap<String, Vec<f32>>,
    options: SaveOptions,
) -> Result<(), CoreError> {
    std::fs::create_dir_all(dir).map_err(|source| CoreError::Io {
        path: dir.to_owned(),
        source,
    })?;
    write_json(&dir.join("config.json"), &Value::Object(config.clone()))?;
    let mut shards: Vec<Vec<usize>> = vec![Vec::new()];
    let mut shard_bytes = 0usize;
    for (index, tensor) in layout.iter().enumerate() {
        let bytes = tensor.shape.iter().product::<usize>() * options.dtype.size();
        if shard_bytes > 0 && shard_bytes + bytes > options.max_shard_bytes {
            shards.push(Vec::new());
            shard_bytes = 0;
        }
        shard_bytes += bytes;
        if let Some(last) = shards.last_mut() {
            last.push(index);
        }
    }
    let dtype = match options.dtype {
        StorageDtype::F32 => Dtype::F32,
        StorageDtype::Bf16 => Dtype::BF16,
        StorageDtype::F16 => Dtype::F16,
    };
    let count = shards.len();
    let mut weight_map = serde_json::Map::new();
    let mut total_size = 0usize;
    for (number, members) in shards.iter().enumerate() {
        let name = if count == 1 {
            "model.safetensors".to_owned()
        } else {
            format!("model-{:05}-of-{count:05}.safetensors", number + 1)
        };
        let encoded: Vec<(String, Vec<usize>, Vec<u8>)> = members
            .iter()
            .map(|&i| {
                let t = &layout[i];
                let data = tensors.get(&t.key).map(Vec::as_slice).unwrap_or_default();
                (t.key.clone(), t.shape.clone(), encode(data, options.dtype))
            })
            .collect();
        let path = dir.join(&name);
        let views = encoded
            .iter()
            .map(|(key, shape, bytes)| {
                total_size += bytes.len();
                weight_map.insert(key.clone(), json!(name));
                TensorView::new(dtype, shape.clone(), bytes).map(|view| (key.clone(), view))
            })
            .collect::<Result<Vec<_>, _>>()
            .map_err(|err| CoreError::Safetensors {
                file: path.clone(),
                reason: err.to_string(),
            })?;
        let metadata = Some(std::collections::HashMap::from([(
            "format".to_owned(),
            "pt".to_owned(),
        )]));
        // An I/O failure (a full disk) is a write error, not a malformed tensor.
        crate::atomic::replace_with(&path, |temporary| {
            safetensors::serialize_to_file(views, metadata, temporary).map_err(|err| match err {
                SafeTensorError::IoError(source) => source,
                other => std::io::Error::new(std::io::ErrorKind::InvalidData, other.to_string()),
            })
        })
        .map_err(|source| match source.kind() {
            std::io::ErrorKind::InvalidData => CoreError::Safetensors {
                file: path.clone(),
                reason: source.to_string(),
            },
            _ => CoreError::Write {
                path: path.clone(),
                source,
            },
        })?;
    }
    if count > 1 {
        write_json(
            &dir.join("model.safetensors.index.json"),
            &json!({"metadata": {"total_size": total_size}, "weight_map": weight_map}),
        )?;
    }
    Ok(())
}

/// Writes `dir/config.json` and `dir/model.safetensors` (or HF-named shards plus
/// `model.safetensors.index.json` above `max_shard_bytes`) with HF key names, so the model loads
/// unchanged in transformers and vLLM. Each file is replaced atomically (a crash leaves the old
/// file or the new one). A model with LoRA adapters is written merged
/// ([`Qwen2ForCausalLm::merge_adapters`]); save the adapters alone with
/// [`crate::lora::save_adapter`].
///
/// # Errors
/// [`CoreError::Write`] naming the file when writing fails (a full disk included).
pub fn save_pretrained<B: Backend>(
    model: &Qwen2ForCausalLm<B>,
    dir: &Path,
    options: SaveOptions,
) -> Result<(), CoreError> {
    let architecture = model.config().architecture("ForCausalLM");
    let config = config_json(model.config(), &architecture, options, dir)?;
    let layout = checkpoint_tensors(model.config());
    write_snapshot(dir, &config, &layout, &export_tensors(model), options)
}
