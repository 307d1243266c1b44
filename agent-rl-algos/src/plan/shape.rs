//! The sizes of a Qwen2 model that memory depends on, and its parameter counts.

use agent_rl_core::Qwen2Config;
use serde::{Deserialize, Serialize};

use super::request::TargetModule;

/// A Qwen2 model's dimensions, as the planner uses them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelShape {
    /// Model width `H`.
    pub hidden: usize,
    /// MLP width `I`.
    pub intermediate: usize,
    /// Decoder layers `L`.
    pub layers: usize,
    /// Query heads.
    pub heads: usize,
    /// Key/value heads.
    pub kv_heads: usize,
    /// Width of one head `d`.
    pub head_dim: usize,
    /// Vocabulary `V`.
    pub vocab: usize,
    /// Whether `lm_head` shares the embedding.
    pub tied: bool,
    /// Bias parameters of one decoder layer (Qwen2: q/k/v; Llama: none unless its config says).
    #[serde(default)]
    pub layer_biases: usize,
}

impl ModelShape {
    /// The shape of `config` (head width and key/value heads resolved as the model does).
    pub fn of(config: &Qwen2Config) -> Self {
        let heads = config.num_attention_heads.max(1);
        Self {
            hidden: config.hidden_size,
            intermediate: config.intermediate_size,
            layers: config.num_hidden_layers,
            heads,
            kv_heads: config.num_key_value_heads.unwrap_or(heads),
            head_dim: config.head_dim.unwrap_or(config.hidden_size / heads),
            vocab: config.vocab_size,
            tied: config.tie_word_embeddings,
            layer_biases: agent_rl_core::weights::names::checkpoint_tensors(&Qwen2Config {
                num_hidden_layers: 1,
                ..config.clone()
            })
            .iter()
            .filter(|tensor| tensor.key.ends_with(".bias"))
            .map(|tensor| tensor.shape.iter().product::<usize>())
            .sum(),
        }
    }

    /// `(in, out)` features of one projection of a decoder layer (PEFT's view: q/k/v/o and
    /// gate/up/down as separate `Linear`s, even where agent-rl fuses them).
    pub fn projection(&self, module: TargetModule) -> (usize, usize) {
        let (hidden, queries, keys) = (
            self.hidden,
            self.heads * self.head_dim,
            self.kv_heads * self.head_dim,
        );
        match module {
            TargetModule::Q => (hidden, queries),
            TargetModule::K | TargetModule::V => (hidden, keys),
            TargetModule::O => (queries, hidden),
            TargetModule::Gate | TargetModule::Up => (hidden, self.intermediate),
            TargetModule::Down => (self.intermediate, hidden),
        }
    }

    /// Parameters of one decoder layer: the seven projections, their biases, two norms.
    pub fn layer_parameters(&self) -> u64 {
        let weights: usize = TargetModule::ALL
            .iter()
            .map(|&module| {
                let (input, output) = self.projection(module);
                input * output
            })
            .sum();
        (weights + self.layer_biases + 2 * self.hidden) as u64
    }

    /// Every parameter: embedding, layers, final norm, and `lm_head` when untied.
    pub fn parameters(&self) -> u64 {
        let embedding = (self.vocab * self.hidden) as u64;
        let head = if self.tied { 0 } else { embedding };
        embedding + head + self.layers as u64 * self.layer_parameters() + self.hidden as u64
    }

    /// LoRA parameters for rank `r` on `modules`: `A [r, in]` plus `B [out, r]` per adapted
    /// projection per layer (PEFT's shapes).
    pub fn lora_parameters(&self, r: usize, modules: &[TargetModule]) -> u64 {
        let per_layer: usize = modules
            .iter()
            .map(|&module| {
                let (input, output) = self.projection(module);
                r * (input + output)
            })
            .sum();
        (per_layer * self.layers) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::ModelShape;
    use crate::plan::{TargetModule, preset};

    #[test]
    fn lora_counts_match_pefts_shapes() {
        let shape = ModelShape::of(&preset("qwen2.5-7b").expect("preset"));
        // q: 64 × (3584 + 3584); v: 64 × (3584 + 512); 28 layers.
        let qv = shape.lora_parameters(64, &[TargetModule::Q, TargetModule::V]);
        assert_eq!(qv, 28 * 64 * (3584 + 3584 + 3584 + 512));
        // all-linear, r = 64: PEFT 0.21's `get_peft_model` on a meta-device Qwen2.5-7B with
        // `LoraConfig(r=64, target_modules="all-linear")` counts 161,480,704 trainable.
        assert_eq!(shape.lora_parameters(64, &TargetModule::ALL), 161_480_704);
    }
}
