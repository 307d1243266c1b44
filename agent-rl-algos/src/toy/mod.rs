//! The embedded demo's task family: what `cargo run --example grpo_qwen` and
//! `agent-rl train grpo --config examples/configs/grpo_toy.toml` train on, and what the learning
//! tests prove learning with — a public, supported way to try the library with no download, not
//! a test helper. It holds the demo's model shape ([`toy_model_config`]), tokenizer
//! ([`toy_tokenizer`], embedded) and chat template, and a synthetic tool-use family: three tools
//! (`get_weather`, `get_time`, `add`), requests whose arguments must be extracted from the text,
//! an environment that executes the calls, and a checkable final answer (the tool's result).
//!
//! Episodes go: user request → assistant tool call → tool result → assistant answer. The target
//! of each task names the expected call and the expected answer, so the standard
//! [`ToolUseReward`](agent_rl_rewards::ToolUseReward) scores format, arguments and outcome.
//!
//! ```
//! use agent_rl_algos::toy::{ToyEnvironment, toy_tasks};
//! use agent_rl_core::{Action, Environment, ToolCall};
//! use serde_json::json;
//!
//! let tasks = toy_tasks(3, 7);
//! let mut env = ToyEnvironment::default();
//! env.reset(&tasks[0])?;
//! let out = env.step(&Action::ToolCall(ToolCall::new("add", json!({"a": 2, "b": 3}))))?;
//! assert_eq!(out.observation.text(), "5");
//! # Ok::<(), agent_rl_core::CoreError>(())
//! ```

mod breakdown;
mod environment;
mod malformed;
mod model;
mod pair_kinds;
mod preferences;
mod split;
mod tasks;
mod teacher;
mod template;
mod tiers;
mod warmup;

pub use breakdown::{CallCounts, ToyCallBreakdown, toy_call_breakdown};
pub use environment::{ToyEnvironment, execute_toy_call, toy_environments, toy_salt};
pub use malformed::{MALFORMED_KINDS, malformed_call_text};
pub use model::toy_model_config;
pub use pair_kinds::{ToyPairKind, toy_pair_outcomes};
pub use preferences::{
    ToyRequestSplit, is_held_out_request, toy_argument_values, toy_expected_call, toy_preferences,
    toy_request, toy_request_split, toy_rlhf_tasks,
};
pub use split::ToySplit;
pub use tasks::{
    ToyKind, call_only, demonstration, toy_call_tasks, toy_sft_dataset, toy_split_tasks, toy_tasks,
    toy_tools,
};
pub use teacher::{toy_biased_sft_dataset, toy_noisy_sft_dataset, toy_reluctant_sft_dataset};
pub use template::{TOY_CHAT_TEMPLATE, toy_tokenizer, with_toy_template};
pub use tiers::{ToyTier, toy_tier_tasks};
pub use warmup::toy_warmup_config;
