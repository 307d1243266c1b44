//! # agent-rl
//!
//! Fine-tune LLM agents for tool use with SFT, RLHF and GRPO on burn. This facade re-exports the
//! workspace crates; the `agent-rl` binary and the `examples/` are thin mains over them.
#![warn(missing_docs)]

pub use agent_rl_algos as algos;
pub use agent_rl_core as core;
pub use agent_rl_eval as eval;
pub use agent_rl_rewards as rewards;
