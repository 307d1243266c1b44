//! The model shapes the benchmarks run.

use agent_rl::core::Qwen2Config;

/// The benchmarked Qwen2 (hidden 256, intermediate 704, 4 layers, 4 heads, 2 KV heads, tied
/// embeddings, 1,024 positions) over `vocab_size` ids; `benches/bench_reference.py` builds the
/// same model.
pub fn bench_config(vocab_size: usize) -> Qwen2Config {
    Qwen2Config {
        vocab_size,
        hidden_size: 256,
        intermediate_size: 704,
        num_hidden_layers: 4,
        num_attention_heads: 4,
        num_key_value_heads: Some(2),
        max_position_embeddings: 1024,
        tie_word_embeddings: true,
        ..Qwen2Config::tiny()
    }
}

/// Qwen2.5-0.5B's layer shapes (hidden 896, intermediate 4864, 14 heads, 2 KV heads, tied
/// embeddings, 4,096 positions) with `layers` layers over `vocab_size` ids: the size of a real
/// small checkpoint without its 151,936-token vocabulary.
pub fn qwen05_layers_config(layers: usize, vocab_size: usize) -> Qwen2Config {
    Qwen2Config {
        vocab_size,
        hidden_size: 896,
        intermediate_size: 4864,
        num_hidden_layers: layers,
        num_attention_heads: 14,
        num_key_value_heads: Some(2),
        max_position_embeddings: 4096,
        tie_word_embeddings: true,
        ..Qwen2Config::tiny()
    }
}
