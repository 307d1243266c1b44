//! Named model shapes: the Qwen2.5 family and SmolLM2-135M (Llama), with the values of each
//! model's own `config.json`.

use agent_rl_core::Qwen2Config;

/// The preset names [`preset`] knows, smallest first.
pub const PRESETS: [&str; 7] = [
    "smollm2-135m",
    "qwen2.5-0.5b",
    "qwen2.5-1.5b",
    "qwen2.5-3b",
    "qwen2.5-7b",
    "qwen2.5-14b",
    "qwen2.5-32b",
];

/// The shape of a Qwen2.5 model or of SmolLM2-135M by name (`qwen2.5-7b`, case-insensitive; `-instruct` allowed):
/// hidden size, MLP width, layers, query and key/value heads, vocabulary and tied embeddings as
/// in the Hugging Face `config.json` of `Qwen/Qwen2.5-<size>` (the instruct models share them).
/// `None` for an unknown name (see [`PRESETS`]).
///
/// ```
/// let config = agent_rl_algos::plan::preset("Qwen2.5-7B-Instruct").expect("known");
/// assert_eq!((config.hidden_size, config.num_hidden_layers), (3584, 28));
/// ```
pub fn preset(name: &str) -> Option<Qwen2Config> {
    let lower = name.to_ascii_lowercase();
    let key = lower.strip_suffix("-instruct").unwrap_or(&lower);
    if key == "smollm2-135m" {
        // HuggingFaceTB/SmolLM2-135M: a Llama without biases.
        return Some(Qwen2Config {
            vocab_size: 49_152,
            hidden_size: 576,
            intermediate_size: 1536,
            num_hidden_layers: 30,
            num_attention_heads: 9,
            num_key_value_heads: Some(3),
            head_dim: Some(64),
            max_position_embeddings: 8192,
            rms_norm_eps: 1e-5,
            rope_theta: Some(100_000.0),
            tie_word_embeddings: true,
            torch_dtype: Some("bfloat16".into()),
            model_type: "llama".into(),
            ..Qwen2Config::tiny()
        });
    }
    // (hidden, intermediate, layers, heads, kv heads, vocab, tied)
    let (hidden, intermediate, layers, heads, kv_heads, vocab, tied) = match key {
        "qwen2.5-0.5b" => (896, 4864, 24, 14, 2, 151_936, true),
        "qwen2.5-1.5b" => (1536, 8960, 28, 12, 2, 151_936, true),
        "qwen2.5-3b" => (2048, 11008, 36, 16, 2, 151_936, true),
        "qwen2.5-7b" => (3584, 18944, 28, 28, 4, 152_064, false),
        "qwen2.5-14b" => (5120, 13824, 48, 40, 8, 152_064, false),
        "qwen2.5-32b" => (5120, 27648, 64, 40, 8, 152_064, false),
        _ => return None,
    };
    Some(Qwen2Config {
        vocab_size: vocab,
        hidden_size: hidden,
        intermediate_size: intermediate,
        num_hidden_layers: layers,
        num_attention_heads: heads,
        num_key_value_heads: Some(kv_heads),
        head_dim: None,
        max_position_embeddings: 32768,
        rope_theta: Some(1_000_000.0),
        tie_word_embeddings: tied,
        torch_dtype: Some("bfloat16".into()),
        ..Qwen2Config::tiny()
    })
}

#[cfg(test)]
mod tests {
    use super::{PRESETS, preset};
    use crate::plan::ModelShape;

    /// Parameter counts as the model cards state them (total, rounded to 0.01 B).
    #[test]
    fn presets_have_the_published_parameter_counts() {
        let expected = [0.13, 0.49, 1.54, 3.09, 7.62, 14.77, 32.76];
        for (name, billions) in PRESETS.iter().zip(expected) {
            let config = preset(name).expect("preset");
            config.validate().expect("valid");
            let count = ModelShape::of(&config).parameters() as f64 / 1e9;
            assert!((count - billions).abs() < 0.006, "{name}: {count:.3} B");
        }
        assert!(preset("qwen2.5-70b").is_none());
        // SmolLM2-135M's own count (no biases): 134,515,008.
        let smol = ModelShape::of(&preset("SmolLM2-135M-Instruct").expect("preset"));
        assert_eq!(smol.parameters(), 134_515_008);
        assert_eq!(preset("Qwen2.5-0.5B-Instruct"), preset("qwen2.5-0.5b"));
    }
}
