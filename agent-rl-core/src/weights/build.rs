//! Assembles a [`Qwen2ForCausalLm`] from HF-keyed host tensors, fusing and transposing.

use burn::module::Param;
use burn::nn::{Embedding, Linear};
use burn::prelude::*;

use super::names::{checkpoint_tensors, layer_prefix};
use crate::config::Qwen2Config;
use crate::error::CoreError;
use crate::model::{Attention, DecoderLayer, Mlp, Qwen2ForCausalLm, RmsNorm};

/// Supplies HF tensors by key as row-major f32 data of the given HF shape.
pub trait TensorSource {
    /// The data of `key`, whose HF shape must be `shape`.
    ///
    /// # Errors
    /// Missing tensor, shape mismatch, unreadable data — each naming the key.
    fn take(&mut self, key: &str, shape: &[usize]) -> Result<Vec<f32>, CoreError>;
}

/// Transposes a row-major `[rows, cols]` matrix.
pub(crate) fn transpose(data: &[f32], rows: usize, cols: usize) -> Vec<f32> {
    let mut out = vec![0.0; data.len()];
    for r in 0..rows {
        for c in 0..cols {
            out[c * rows + r] = data[r * cols + c];
        }
    }
    out
}

struct Builder<'a, B: Backend> {
    source: &'a mut dyn TensorSource,
    config: &'a Qwen2Config,
    device: &'a B::Device,
}

impl<B: Backend> Builder<'_, B> {
    fn take(&mut self, key: &str) -> Result<(Vec<f32>, Vec<usize>), CoreError> {
        let shape = checkpoint_tensors(self.config)
            .into_iter()
            .find(|t| t.key == key)
            .map(|t| t.shape)
            .ok_or_else(|| CoreError::InvalidArgument {
                field: key.into(),
                reason: "not a tensor of this model".into(),
            })?;
        Ok((self.source.take(key, &shape)?, shape))
    }

    fn vector(&mut self, key: &str) -> Result<Tensor<B, 1>, CoreError> {
        let (data, shape) = self.take(key)?;
        Ok(Tensor::from_data(TensorData::new(data, shape), self.device))
    }

    /// Joins HF `[out_i, in]` weights (and optional biases) into one burn `Linear` `[in, Σout]`.
    fn linear(
        &mut self,
        weights: &[String],
        biases: Option<&[String]>,
    ) -> Result<Linear<B>, CoreError> {
        let mut rows_total = 0;
        let mut cols = 0;
        let mut stacked = Vec::new();
        for key in weights {
            let (data, shape) = self.take(key)?;
            rows_total += shape[0];
            cols = shape[1];
            stacked.extend(data);
        }
        let weight = transpose(&stacked, rows_total, cols);
        let weight = Tensor::from_data(TensorData::new(weight, [cols, rows_total]), self.device);
        let bias = match biases {
            Some(keys) => {
                let mut data = Vec::with_capacity(rows_total);
                for key in keys {
                    data.extend(self.take(key)?.0);
                }
                Some(Param::from_tensor(Tensor::from_data(
                    TensorData::new(data, [rows_total]),
                    self.device,
                )))
            }
            None => None,
        };
        Ok(Linear {
            weight: Param::from_tensor(weight),
            bias,
        })
    }

    fn layer(&mut self, index: usize) -> Result<DecoderLayer<B>, CoreError> {
        let p = layer_prefix(index);
        let keys = |names: &[&str]| names.iter().map(|n| format!("{p}.{n}")).collect::<Vec<_>>();
        let eps = self.config.rms_norm_eps;
        let input_layernorm =
            RmsNorm::new(self.vector(&format!("{p}.input_layernorm.weight"))?, eps);
        let (qkv_bias, o_bias, mlp_bias) = (
            self.config.qkv_bias(),
            self.config.o_bias(),
            self.config.mlp_has_bias(),
        );
        let bias_keys = |present: bool, names: &[&str]| present.then(|| keys(names));
        let qkv_proj = self.linear(
            &keys(&[
                "self_attn.q_proj.weight",
                "self_attn.k_proj.weight",
                "self_attn.v_proj.weight",
            ]),
            bias_keys(
                qkv_bias,
                &[
                    "self_attn.q_proj.bias",
                    "self_attn.k_proj.bias",
                    "self_attn.v_proj.bias",
                ],
            )
            .as_deref(),
        )?;
        let o_proj = self.linear(
            &keys(&["self_attn.o_proj.weight"]),
            bias_keys(o_bias, &["self_attn.o_proj.bias"]).as_deref(),
        )?;
        let post_attention_layernorm = RmsNorm::new(
            self.vector(&format!("{p}.post_attention_layernorm.weight"))?,
            eps,
        );
        let gate_up_proj = self.linear(
            &keys(&["mlp.gate_proj.weight", "mlp.up_proj.weight"]),
            bias_keys(mlp_bias, &["mlp.gate_proj.bias", "mlp.up_proj.bias"]).as_deref(),
        )?;
        let down_proj = self.linear(
            &keys(&["mlp.down_proj.weight"]),
            bias_keys(mlp_bias, &["mlp.down_proj.bias"]).as_deref(),
        )?;
        Ok(DecoderLayer {
            input_layernorm,
            self_attn: Attention {
                qkv_proj,
                o_proj,
                num_heads: self.config.num_attention_heads,
                num_kv_heads: self.config.kv_heads(),
                head_dim: self.config.head_size(),
                lora: None,
            },
            post_attention_layernorm,
            mlp: Mlp {
                gate_up_proj,
                down_proj,
                intermediate_size: self.config.intermediate_size,
                lora: None,
            },
        })
    }
}

/// Builds the model of `config` from `source` on `device`.
///
/// # Errors
/// Invalid config, or whatever `source` reports (missing tensor, shape mismatch, bad data).
pub fn build_model<B: Backend>(
    config: &Qwen2Config,
    source: &mut dyn TensorSource,
    device: &B::Device,
) -> Result<Qwen2ForCausalLm<B>, CoreError> {
    config.validate()?;
    let mut builder = Builder::<B> {
        source,
        config,
        device,
    };
    let (embed, shape) = builder.take("model.embed_tokens.weight")?;
    let embed_tokens = Embedding {
        weight: Param::from_tensor(Tensor::from_data(TensorData::new(embed, shape), device)),
    };
    let layers = (0..config.num_hidden_layers)
        .map(|index| builder.layer(index))
        .collect::<Result<Vec<_>, _>>()?;
    let norm = RmsNorm::new(builder.vector("model.norm.weight")?, config.rms_norm_eps);
    let lm_head = if config.tie_word_embeddings {
        None
    } else {
        let (data, shape) = builder.take("lm_head.weight")?;
        let transposed = transpose(&data, shape[0], shape[1]);
        Some(Param::from_tensor(Tensor::from_data(
            TensorData::new(transposed, [shape[1], shape[0]]),
            device,
        )))
    };
    Ok(Qwen2ForCausalLm {
        embed_tokens,
        layers,
        norm,
        lm_head,
        config: config.clone(),
    })
}
