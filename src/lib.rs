//! # agent-rl
//!
//! Fine-tune LLM agents for tool use with SFT, RLHF and GRPO on burn. This facade re-exports the
//! workspace crates and picks the backends; the `agent-rl` binary and the `examples/` are thin
//! mains over it.
//!
//! ```
//! use agent_rl::backend::CpuBackend;
//! use agent_rl::core::generation::{SamplingConfig, generate_ids};
//! use agent_rl::core::weights::random_model;
//! use agent_rl::core::Qwen2Config;
//!
//! let model = random_model::<CpuBackend>(&Qwen2Config::tiny(), 0, 0.3, &Default::default())?;
//! let out = generate_ids(&model, &[vec![1, 2, 3]], &SamplingConfig::greedy(4), &[])?;
//! assert_eq!(out[0].token_ids.len(), 4);
//! # Ok::<(), agent_rl::core::CoreError>(())
//! ```
#![warn(missing_docs)]
// docs.rs (nightly, `--cfg docsrs`) marks each feature-gated item with its feature.
#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod backend;
pub mod host_allocator;
pub mod host_threads;
pub mod progress;
#[cfg(feature = "serve")]
pub mod remote;
#[cfg(feature = "serve")]
pub mod serve;

pub use agent_rl_algos as algos;
pub use agent_rl_core as core;
pub use agent_rl_eval as eval;
pub use agent_rl_rewards as rewards;

/// The README's Rust examples, compiled as doctests so that they stay true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

/// The book's Rust examples (`docs/src`), compiled as doctests so that they stay true.
#[cfg(doctest)]
pub mod book_doctests {
    /// Concepts: the pipeline and the policy.
    #[doc = include_str!("../docs/src/concepts.md")]
    pub struct Concepts;
    /// GRPO from code.
    #[doc = include_str!("../docs/src/grpo.md")]
    pub struct Grpo;
    /// Serving and remote rollouts.
    #[doc = include_str!("../docs/src/serving.md")]
    pub struct Serving;
    /// Scaling: LoRA.
    #[doc = include_str!("../docs/src/scaling.md")]
    pub struct Scaling;
}
