//! The remap table: every Hugging Face tensor key of a Qwen2 or Llama checkpoint with its shape.
//!
//! Qwen2 has q/k/v biases and no others; Llama has none unless `attention_bias` (q/k/v/o) or
//! `mlp_bias` (gate/up/down) says so.
//!
//! This crate fuses two groups of HF tensors (see [`crate::model`]):
//! `self_attn.{q,k,v}_proj.{weight,bias}` → `self_attn.qkv_proj`, and
//! `mlp.{gate,up}_proj.weight` → `mlp.gate_up_proj`. HF stores linear weights `[out, in]`;
//! burn's `Linear` holds `[in, out]`, so every linear weight is transposed at the boundary.
//! RMS-norm `weight`, embeddings and biases keep their HF shapes.

use crate::config::Qwen2Config;

/// One HF tensor: key and shape as HF stores it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HfTensor {
    /// Full key, e.g. `model.layers.0.self_attn.q_proj.weight`.
    pub key: String,
    /// Shape in the checkpoint.
    pub shape: Vec<usize>,
}

/// Prefix of layer `index`'s keys.
pub fn layer_prefix(index: usize) -> String {
    format!("model.layers.{index}")
}

/// Every tensor a checkpoint of `config` holds, in a stable order.
pub fn checkpoint_tensors(config: &Qwen2Config) -> Vec<HfTensor> {
    let hidden = config.hidden_size;
    let q_width = config.num_attention_heads * config.head_size();
    let kv_width = config.kv_heads() * config.head_size();
    let inter = config.intermediate_size;
    let mut out = vec![HfTensor {
        key: "model.embed_tokens.weight".into(),
        shape: vec![config.vocab_size, hidden],
    }];
    for index in 0..config.num_hidden_layers {
        let p = layer_prefix(index);
        let (qkv_bias, o_bias, mlp_bias) =
            (config.qkv_bias(), config.o_bias(), config.mlp_has_bias());
        let entries: [(&str, Vec<usize>, bool); 16] = [
            ("input_layernorm.weight", vec![hidden], true),
            ("self_attn.q_proj.weight", vec![q_width, hidden], true),
            ("self_attn.q_proj.bias", vec![q_width], qkv_bias),
            ("self_attn.k_proj.weight", vec![kv_width, hidden], true),
            ("self_attn.k_proj.bias", vec![kv_width], qkv_bias),
            ("self_attn.v_proj.weight", vec![kv_width, hidden], true),
            ("self_attn.v_proj.bias", vec![kv_width], qkv_bias),
            ("self_attn.o_proj.weight", vec![hidden, q_width], true),
            ("self_attn.o_proj.bias", vec![hidden], o_bias),
            ("post_attention_layernorm.weight", vec![hidden], true),
            ("mlp.gate_proj.weight", vec![inter, hidden], true),
            ("mlp.gate_proj.bias", vec![inter], mlp_bias),
            ("mlp.up_proj.weight", vec![inter, hidden], true),
            ("mlp.up_proj.bias", vec![inter], mlp_bias),
            ("mlp.down_proj.weight", vec![hidden, inter], true),
            ("mlp.down_proj.bias", vec![hidden], mlp_bias),
        ];
        out.extend(entries.into_iter().filter(|(_, _, present)| *present).map(
            |(name, shape, _)| HfTensor {
                key: format!("{p}.{name}"),
                shape,
            },
        ));
    }
    out.push(HfTensor {
        key: "model.norm.weight".into(),
        shape: vec![hidden],
    });
    if !config.tie_word_embeddings {
        out.push(HfTensor {
            key: "lm_head.weight".into(),
            shape: vec![config.vocab_size, hidden],
        });
    }
    out
}

/// Keys a checkpoint may carry that the model does not need (ignored, reported as unused).
pub fn is_ignorable(key: &str, config: &Qwen2Config) -> bool {
    key.ends_with("rotary_emb.inv_freq") || (config.tie_word_embeddings && key == "lm_head.weight")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tiny_layout_counts_and_names() {
        let mut config = Qwen2Config::tiny();
        let tied = checkpoint_tensors(&config);
        assert_eq!(tied.len(), 1 + 12 * config.num_hidden_layers + 1);
        assert!(
            tied.iter()
                .any(|t| t.key == "model.layers.1.mlp.down_proj.weight")
        );
        config.tie_word_embeddings = false;
        let untied = checkpoint_tensors(&config);
        assert_eq!(
            untied.last().map(|t| t.key.as_str()),
            Some("lm_head.weight")
        );
        assert_eq!(
            untied
                .iter()
                .find(|t| t.key.ends_with("k_proj.weight"))
                .map(|t| t.shape.clone()),
            Some(vec![8, 16])
        );
    }

    #[test]
    fn llama_biases_follow_the_config() {
        let mut config = Qwen2Config {
            model_type: "llama".into(),
            ..Qwen2Config::tiny()
        };
        let plain = checkpoint_tensors(&config);
        assert_eq!(plain.len(), 1 + 9 * config.num_hidden_layers + 1);
        assert!(!plain.iter().any(|t| t.key.ends_with(".bias")));
        config.attention_bias = Some(true);
        config.mlp_bias = Some(true);
        let biased = checkpoint_tensors(&config);
        assert_eq!(biased.len(), 1 + 16 * config.num_hidden_layers + 1);
        assert!(
            biased
                .iter()
                .any(|t| t.key == "model.layers.0.self_attn.o_proj.bias" && t.shape == [16])
        );
    }
}
