//! Tiny seeded models and the fixture tokenizer shared by the tests of agent-rl's crates.
//!
//! A `publish = false` crate, a dev-dependency only: the fixtures it reads live in
//! agent-rl-core's `tests/fixtures/` and are not part of any published package. Applications
//! and examples use the embedded demo assets of `agent_rl_algos::toy` instead.
#![warn(missing_docs)]

pub mod malformed;

use std::path::PathBuf;

use burn::prelude::*;

use agent_rl_core::weights::random_model;
use agent_rl_core::{ChatTokenizer, CoreError, Qwen2Config, Qwen2ForCausalLm};

/// The directory of the committed tiny fixtures (tokenizer with a tool-aware chat template,
/// tiny checkpoints).
pub fn fixture_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../agent-rl-core/tests/fixtures/qwen2_tiny/tied_f32")
}

/// The fixture tokenizer: byte-level BPE (384 ids, `<|im_end|>` = eos) and a ChatML template
/// with tools.
///
/// # Errors
/// Only if the fixture files are missing from the crate directory.
pub fn tiny_tokenizer() -> Result<ChatTokenizer, CoreError> {
    ChatTokenizer::from_dir(&fixture_dir())
}

/// [`Qwen2Config::tiny`] with the fixture tokenizer's vocabulary (384).
pub fn tiny_config() -> Qwen2Config {
    Qwen2Config {
        vocab_size: 384,
        ..Qwen2Config::tiny()
    }
}

/// A tiny random Qwen2 (hidden 16, 2 layers, 4 heads, 2 KV heads, vocab 384) seeded by `seed`.
///
/// # Panics
/// Never: the tiny config is valid (checked by the crate's tests).
pub fn tiny_qwen2<B: Backend>(seed: u64, device: &B::Device) -> Qwen2ForCausalLm<B> {
    random_model(&tiny_config(), seed, 0.3, device).expect("the tiny config is valid")
}
