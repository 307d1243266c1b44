//! The tiny model the toy demos train: small enough to learn the toy family in minutes on a CPU.

use agent_rl_core::Qwen2Config;

/// The toy demos' model: a Qwen2 with 2 layers, hidden 64, 4 query / 2 key-value heads and the
/// fixture tokenizer's 384 ids (`grpo_qwen`, `sft_tool_calls`, `agent-rl train` with
/// `tiny = true`).
///
/// ```
/// let config = agent_rl_algos::toy::toy_model_config();
/// assert_eq!((config.vocab_size, config.hidden_size, config.num_hidden_layers), (384, 64, 2));
/// ```
pub fn toy_model_config() -> Qwen2Config {
    Qwen2Config {
        vocab_size: 384,
        hidden_size: 64,
        intermediate_size: 192,
        num_hidden_layers: 2,
        num_attention_heads: 4,
        num_key_value_heads: Some(2),
        max_position_embeddings: 1024,
        ..Qwen2Config::tiny()
    }
}
