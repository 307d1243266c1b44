//! [`Qwen2Config`]: the model hyper-parameters, read from a Hugging Face `config.json` of a Qwen2
//! or a Llama checkpoint.

use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::CoreError;

/// Qwen2 / Qwen2.5 and Llama hyper-parameters with Hugging Face's field names.
///
/// The two architectures share one decoder (RMSNorm, SwiGLU, rotate-half RoPE, grouped-query
/// attention); they differ in which projections carry a bias (see [`Qwen2Config::qkv_bias`]) and
/// in Llama's RoPE scaling (see [`RopeScaling`]).
///
/// Unknown keys of `config.json` are tolerated (HF files carry many); settings this
/// implementation does not support are rejected by [`Qwen2Config::validate`] with the field named.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Qwen2Config {
    /// Vocabulary size (rows of the embedding and of `lm_head`).
    pub vocab_size: usize,
    /// Model width.
    pub hidden_size: usize,
    /// Width of the SiLU-gated MLP.
    pub intermediate_size: usize,
    /// Number of decoder layers.
    pub num_hidden_layers: usize,
    /// Number of query heads.
    pub num_attention_heads: usize,
    /// Number of key/value heads (grouped-query attention); defaults to `num_attention_heads`.
    #[serde(default)]
    pub num_key_value_heads: Option<usize>,
    /// Per-head width; defaults to `hidden_size / num_attention_heads`.
    #[serde(default)]
    pub head_dim: Option<usize>,
    /// Activation of the MLP; only `silu` is supported.
    #[serde(default = "default_act")]
    pub hidden_act: String,
    /// Longest position the model was trained for.
    #[serde(default = "default_max_pos")]
    pub max_position_embeddings: usize,
    /// Epsilon of the RMS norms.
    #[serde(default = "default_eps")]
    pub rms_norm_eps: f64,
    /// RoPE base frequency (transformers 4 layout; transformers 5 writes `rope_parameters`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rope_theta: Option<f64>,
    /// RoPE scaling; absent / `null`, type `default` or (Llama 3) type `llama3`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rope_scaling: Option<Value>,
    /// transformers 5's RoPE block (`{"rope_theta": …, "rope_type": "default"}`); types
    /// `default` and `llama3`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rope_parameters: Option<Value>,
    /// Whether `lm_head` shares the embedding matrix.
    #[serde(default)]
    pub tie_word_embeddings: bool,
    /// Sliding-window attention switch; must be off.
    #[serde(default)]
    pub use_sliding_window: bool,
    /// Sliding window size (ignored while `use_sliding_window` is false).
    #[serde(default)]
    pub sliding_window: Option<usize>,
    /// Attention dropout; must be 0 (training runs without dropout, as TRL's defaults do).
    #[serde(default)]
    pub attention_dropout: f64,
    /// Beginning-of-sequence token id.
    #[serde(default)]
    pub bos_token_id: Option<u32>,
    /// End-of-sequence token id(s) (a number or a list in HF files).
    #[serde(default)]
    pub eos_token_id: Option<Value>,
    /// Storage dtype of the checkpoint (`float32`, `bfloat16`, …); informative only.
    #[serde(default, alias = "dtype")]
    pub torch_dtype: Option<String>,
    /// Model type: `qwen2` or `llama`.
    #[serde(default = "default_model_type")]
    pub model_type: String,
    /// Llama: whether q/k/v/o carry a bias (default false). Qwen2 ignores it: its q/k/v always
    /// have one and `o_proj` never.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attention_bias: Option<bool>,
    /// Llama: whether gate/up/down carry a bias (default false); Qwen2 has none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mlp_bias: Option<bool>,
}

/// How RoPE frequencies are derived from the base frequency, from `rope_scaling` or
/// `rope_parameters`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RopeScaling {
    /// `inv_freq[i] = theta^(-2i / head_dim)`.
    Default,
    /// Llama 3.1's frequency-band scaling (transformers' `_compute_llama3_parameters`): long
    /// wavelengths divided by `factor`, short ones kept, a smooth blend between.
    Llama3 {
        /// Divisor of the low frequencies.
        factor: f32,
        /// Wavelengths above `original_max_position_embeddings / low_freq_factor` are scaled.
        low_freq_factor: f32,
        /// Wavelengths below `original_max_position_embeddings / high_freq_factor` are kept.
        high_freq_factor: f32,
        /// Context length of pre-training.
        original_max_position_embeddings: f32,
    },
}

impl RopeScaling {
    /// The inverse frequencies of `head_dim / 2` rotary pairs, computed in f32 as transformers
    /// does.
    pub fn inv_freq(&self, theta: f64, head_dim: usize) -> Vec<f32> {
        let base: Vec<f32> = (0..head_dim / 2)
            .map(|i| 1.0 / (theta as f32).powf((2 * i) as f32 / head_dim as f32))
            .collect();
        let Self::Llama3 {
            factor,
            low_freq_factor,
            high_freq_factor,
            original_max_position_embeddings: old_context,
        } = *self
        else {
            return base;
        };
        let low_freq_wavelen = old_context / low_freq_factor;
        let high_freq_wavelen = old_context / high_freq_factor;
        base.into_iter()
            .map(|freq| {
                let wavelen = (1.0 / freq) * std::f32::consts::TAU;
                let scaled = if wavelen > low_freq_wavelen {
                    freq / factor
                } else {
                    freq
                };
                if wavelen < high_freq_wavelen || wavelen > low_freq_wavelen {
                    return scaled;
                }
                let smooth = (old_context / wavelen - low_freq_factor)
                    / (high_freq_factor - low_freq_factor);
                (1.0 - smooth) * scaled / factor + smooth * scaled
            })
            .collect()
    }
}

fn default_act() -> String {
    "silu".into()
}
fn default_max_pos() -> usize {
    32768
}
fn default_eps() -> f64 {
    1e-6
}
fn default_model_type() -> String {
    "qwen2".into()
}

impl Qwen2Config {
    /// A tiny configuration for tests: hidden 16, 2 layers, 4 heads, 2 KV heads, vocab 256.
    pub fn tiny() -> Self {
        Self {
            vocab_size: 256,
            hidden_size: 16,
            intermediate_size: 32,
            num_hidden_layers: 2,
            num_attention_heads: 4,
            num_key_value_heads: Some(2),
            head_dim: None,
            hidden_act: default_act(),
            max_position_embeddings: 512,
            rms_norm_eps: 1e-6,
            rope_theta: Some(10000.0),
            rope_scaling: None,
            rope_parameters: None,
            tie_word_embeddings: true,
            use_sliding_window: false,
            sliding_window: None,
            attention_dropout: 0.0,
            bos_token_id: None,
            eos_token_id: None,
            torch_dtype: Some("float32".into()),
            model_type: default_model_type(),
            attention_bias: None,
            mlp_bias: None,
        }
    }

    /// Whether this is a Llama checkpoint (`model_type = "llama"`).
    pub fn is_llama(&self) -> bool {
        self.model_type == "llama"
    }

    /// Whether q/k/v carry a bias: always for Qwen2, `attention_bias` for Llama.
    pub fn qkv_bias(&self) -> bool {
        !self.is_llama() || self.attention_bias.unwrap_or(false)
    }

    /// Whether `o_proj` carries a bias: never for Qwen2, `attention_bias` for Llama.
    pub fn o_bias(&self) -> bool {
        self.is_llama() && self.attention_bias.unwrap_or(false)
    }

    /// Whether gate/up/down carry a bias: never for Qwen2, `mlp_bias` for Llama.
    pub fn mlp_has_bias(&self) -> bool {
        self.is_llama() && self.mlp_bias.unwrap_or(false)
    }

    /// The Hugging Face class name of the causal LM (`Qwen2ForCausalLM`, `LlamaForCausalLM`)
    /// or, with `head = "ForSequenceClassification"`, of another head.
    pub fn architecture(&self, head: &str) -> String {
        let family = if self.is_llama() { "Llama" } else { "Qwen2" };
        format!("{family}{head}")
    }

    /// The RoPE scaling of `rope_parameters` (or, without it, `rope_scaling`).
    ///
    /// # Errors
    /// [`CoreError::UnsupportedConfig`] naming the field for an unsupported type or a missing
    /// or invalid `llama3` parameter.
    pub fn rope_scaling_kind(&self) -> Result<RopeScaling, CoreError> {
        let mut kind = RopeScaling::Default;
        for (field, block) in [
            ("rope_scaling", &self.rope_scaling),
            ("rope_parameters", &self.rope_parameters),
        ] {
            let Some(block) = block.as_ref().filter(|b| !b.is_null()) else {
                continue;
            };
            kind = rope_block(field, block)?;
        }
        Ok(kind)
    }

    /// Reads and validates `config.json`.
    ///
    /// # Errors
    /// [`CoreError::Io`], [`CoreError::Json`], or [`CoreError::UnsupportedConfig`] naming the field.
    pub fn from_file(path: &Path) -> Result<Self, CoreError> {
        let text = std::fs::read_to_string(path).map_err(|source| CoreError::Io {
            path: path.to_owned(),
            source,
        })?;
        let config: Self = serde_json::from_str(&text).map_err(|source| CoreError::Json {
            path: path.to_owned(),
            source,
        })?;
        config.validate()?;
        Ok(config)
    }

    /// RoPE base frequency: `rope_parameters.rope_theta`, else `rope_theta`, else 10000.
    pub fn rope_base(&self) -> f64 {
        self.rope_parameters
            .as_ref()
            .and_then(|p| p.get("rope_theta"))
            .and_then(Value::as_f64)
            .or(self.rope_theta)
            .unwrap_or(10000.0)
    }

    /// Number of key/value heads.
    pub fn kv_heads(&self) -> usize {
        self.num_key_value_heads.unwrap_or(self.num_attention_heads)
    }

    /// Width of one attention head.
    pub fn head_size(&self) -> usize {
        self.head_dim
            .unwrap_or(self.hidden_size / self.num_attention_heads.max(1))
    }

    /// The eos ids the config lists (a single id or a list).
    pub fn eos_ids(&self) -> Vec<u32> {
        match &self.eos_token_id {
            Some(Value::Number(n)) => n.as_u64().map(|id| id as u32).into_iter().collect(),
            Some(Value::Array(ids)) => ids
                .iter()
                .filter_map(Value::as_u64)
                .map(|id| id as u32)
                .collect(),
            _ => Vec::new(),
        }
    }

    /// Rejects settings this implementation does not support.
    ///
    /// # Errors
    /// [`CoreError::UnsupportedConfig`] naming the HF field and what is supported.
    pub fn validate(&self) -> Result<(), CoreError> {
        let bad = |field: &str, reason: String| {
            Err(CoreError::UnsupportedConfig {
                field: field.into(),
                reason,
            })
        };
        if !matches!(self.model_type.as_str(), "qwen2" | "llama") {
            return bad(
                "model_type",
                format!(
                    "`{}` is not supported; expected `qwen2` or `llama`",
                    self.model_type
                ),
            );
        }
        if self.hidden_act != "silu" {
            return bad(
                "hidden_act",
                format!("`{}` is not supported; only `silu`", self.hidden_act),
            );
        }
        self.rope_scaling_kind()?;
        if self.use_sliding_window {
            return bad(
                "use_sliding_window",
                "sliding-window attention is not supported".into(),
            );
        }
        if self.attention_dropout != 0.0 {
            return bad(
                "attention_dropout",
                format!("{} is not supported; only 0", self.attention_dropout),
            );
        }
        for (field, value) in [
            ("vocab_size", self.vocab_size),
            ("hidden_size", self.hidden_size),
            ("intermediate_size", self.intermediate_size),
            ("num_hidden_layers", self.num_hidden_layers),
            ("num_attention_heads", self.num_attention_heads),
            ("num_key_value_heads", self.kv_heads()),
            ("head_dim", self.head_size()),
            ("max_position_embeddings", self.max_position_embeddings),
        ] {
            if value == 0 {
                return bad(field, "must be positive".into());
            }
        }
        // Far above any released Qwen2 (72B: vocab 152064, hidden 8192, 80 layers, 64 heads),
        // low enough that no product of two of them overflows.
        for (field, value, limit) in [
            ("vocab_size", self.vocab_size, 1 << 24),
            ("hidden_size", self.hidden_size, 1 << 20),
            ("intermediate_size", self.intermediate_size, 1 << 20),
            ("num_hidden_layers", self.num_hidden_layers, 1 << 12),
            ("num_attention_heads", self.num_attention_heads, 1 << 12),
            ("num_key_value_heads", self.kv_heads(), 1 << 12),
            ("head_dim", self.head_size(), 1 << 16),
            (
                "max_position_embeddings",
                self.max_position_embeddings,
                1 << 30,
            ),
        ] {
            if value > limit {
                return bad(field, format!("is {value}; at most {limit} is supported"));
            }
        }
        if !(self.rms_norm_eps.is_finite() && self.rms_norm_eps > 0.0) {
            return bad(
                "rms_norm_eps",
                format!(
                    "is {}; must be a finite value > 0 (Qwen2 uses 1e-6)",
                    self.rms_norm_eps
                ),
            );
        }
        let theta = self.rope_base();
        if !(theta.is_finite() && theta > 0.0) {
            return bad(
                "rope_theta",
                format!("is {theta}; must be a finite value > 0"),
            );
        }
        if !self.num_attention_heads.is_multiple_of(self.kv_heads()) {
            return bad(
                "num_key_value_heads",
                format!(
                    "{} does not divide num_attention_heads {}",
                    self.kv_heads(),
                    self.num_attention_heads
                ),
            );
        }
        if self.head_dim.is_none() && !self.hidden_size.is_multiple_of(self.num_attention_heads) {
            return bad(
                "hidden_size",
                "must be divisible by num_attention_heads".into(),
            );
        }
        if !self.head_size().is_multiple_of(2) {
            return bad("head_dim", "must be even for rotary embeddings".into());
        }
        Ok(())
    }
}

/// The scaling one RoPE block describes (`rope_type`, or the older `type`).
fn rope_block(field: &str, block: &Value) -> Result<RopeScaling, CoreError> {
    let bad = |reason: String| CoreError::UnsupportedConfig {
        field: field.into(),
        reason,
    };
    let kind = block
        .get("rope_type")
        .or_else(|| block.get("type"))
        .and_then(Value::as_str)
        .unwrap_or(if field == "rope_parameters" {
            "default"
        } else {
            "?"
        });
    match kind {
        "default" => Ok(RopeScaling::Default),
        "llama3" => {
            let number = |name: &str| {
                block
                    .get(name)
                    .and_then(Value::as_f64)
                    .filter(|v| v.is_finite() && *v > 0.0)
                    .map(|v| v as f32)
                    .ok_or_else(|| bad(format!("`llama3` needs a positive number `{name}`")))
            };
            let (low_freq_factor, high_freq_factor) =
                (number("low_freq_factor")?, number("high_freq_factor")?);
            if high_freq_factor <= low_freq_factor {
                return Err(bad(format!(
                    "`llama3` needs high_freq_factor ({high_freq_factor}) above low_freq_factor \
                     ({low_freq_factor})"
                )));
            }
            let scaling = RopeScaling::Llama3 {
                factor: number("factor")?,
                low_freq_factor,
                high_freq_factor,
                original_max_position_embeddings: number("original_max_position_embeddings")?,
            };
            Ok(scaling)
        }
        other => Err(bad(format!(
            "type `{other}` is not supported; only plain RoPE (`default`) and `llama3`"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn with(patch: Value) -> Result<(), CoreError> {
        let mut base = serde_json::to_value(Qwen2Config::tiny()).expect("serialise");
        for (key, value) in patch.as_object().expect("object") {
            base[key] = value.clone();
        }
        serde_json::from_value::<Qwen2Config>(base)
            .expect("parse")
            .validate()
    }

    #[test]
    fn unsupported_settings_name_their_field() {
        for (patch, field) in [
            (json!({"hidden_act": "gelu"}), "hidden_act"),
            (
                json!({"rope_scaling": {"type": "yarn", "factor": 4.0}}),
                "rope_scaling",
            ),
            (
                json!({"rope_parameters": {"rope_type": "linear", "rope_theta": 1e6}}),
                "rope_parameters",
            ),
            (json!({"use_sliding_window": true}), "use_sliding_window"),
            (json!({"num_key_value_heads": 3}), "num_key_value_heads"),
            (json!({"model_type": "mistral"}), "model_type"),
            (
                json!({"rope_scaling": {"rope_type": "llama3", "factor": 8.0}}),
                "rope_scaling",
            ),
            (
                json!({"rope_parameters": {"rope_type": "llama3", "factor": 8.0,
                    "low_freq_factor": 4.0, "high_freq_factor": 1.0,
                    "original_max_position_embeddings": 8192}}),
                "rope_parameters",
            ),
            (json!({"rms_norm_eps": -1.0}), "rms_norm_eps"),
            (json!({"rms_norm_eps": 0.0}), "rms_norm_eps"),
            (json!({"rope_theta": -5.0}), "rope_theta"),
        ] {
            let err = with(patch).expect_err("unsupported");
            assert!(err.to_string().contains(&format!("`{field}`")), "{err}");
        }
        with(json!({"rope_scaling": null, "sliding_window": 4096})).expect("supported");
        with(json!({"rope_parameters": {"rope_type": "default", "rope_theta": 1e6}}))
            .expect("supported");
        with(
            json!({"model_type": "llama", "rope_scaling": {"rope_type": "llama3",
            "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
            "original_max_position_embeddings": 8192}}),
        )
        .expect("supported");
    }

    #[test]
    fn biases_follow_the_architecture() {
        let qwen = Qwen2Config::tiny();
        assert!(qwen.qkv_bias() && !qwen.o_bias() && !qwen.mlp_has_bias());
        let mut llama = Qwen2Config {
            model_type: "llama".into(),
            ..Qwen2Config::tiny()
        };
        assert!(!llama.qkv_bias() && !llama.o_bias() && !llama.mlp_has_bias());
        llama.attention_bias = Some(true);
        llama.mlp_bias = Some(true);
        assert!(llama.qkv_bias() && llama.o_bias() && llama.mlp_has_bias());
        assert_eq!(llama.architecture("ForCausalLM"), "LlamaForCausalLM");
        assert_eq!(qwen.architecture("ForCausalLM"), "Qwen2ForCausalLM");
    }

    #[test]
    fn llama3_scaling_keeps_high_scales_low_and_blends_between() {
        let scaling = RopeScaling::Llama3 {
            factor: 8.0,
            low_freq_factor: 1.0,
            high_freq_factor: 4.0,
            original_max_position_embeddings: 64.0,
        };
        let base = RopeScaling::Default.inv_freq(10000.0, 8);
        let scaled = scaling.inv_freq(10000.0, 8);
        // Wavelengths 2π·[1, 10, 100, 1000]: below 16 kept, above 64 divided by 8, between blended.
        assert_eq!(scaled[0], base[0]);
        assert!(scaled[1] < base[1] && scaled[1] > base[1] / 8.0);
        assert_eq!(scaled[2], base[2] / 8.0);
        assert_eq!(scaled[3], base[3] / 8.0);
    }

    #[test]
    fn eos_ids_accept_number_or_list() {
        let mut config = Qwen2Config::tiny();
        config.eos_token_id = Some(json!([1, 2]));
        assert_eq!(config.eos_ids(), [1, 2]);
        config.eos_token_id = Some(json!(7));
        assert_eq!(config.eos_ids(), [7]);
    }
}
