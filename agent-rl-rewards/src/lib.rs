//! # agent-rl-rewards
//!
//! Composable tool-use rewards for agent RL that cannot be farmed.
//!
//! A leaky reward teaches a policy to farm points instead of finishing the task; the classic case
//! is paying for every well-formed call, which breeds many well-formed, useless calls. Here
//! process rewards are paid per episode and saturate, identical calls earn nothing twice, extra
//! calls are penalised, and the standard recipe ([`ToolUseReward`]) ranks every failed episode
//! strictly below every successful one. Property tests in `tests/` check these guarantees.
//!
//! Place in the workspace: depends on `agent-rl-core` only (it scores core's [`Trajectory`](agent_rl_core::Trajectory));
//! `agent-rl-algos` trainers consume [`Reward`]s; `agent-rl-eval`'s BFCL checker reuses the
//! [`matching`] engine so training and evaluation share one semantics.
//!
//! ## Example: score a trajectory with the standard recipe
//!
//! ```
//! use agent_rl_core::{AssistantTurn, FinishReason, HermesToolCallParser, ToolCallParser, ToolSpec, Trajectory};
//! use agent_rl_rewards::matching::ExpectedCall;
//! use agent_rl_rewards::{Reward, Sample, Target, ToolUseReward};
//! use serde_json::json;
//!
//! let weather = ToolSpec::new("get_weather", "Current weather", json!({
//!     "type": "object",
//!     "properties": {"city": {"type": "string"}, "unit": {"type": "string", "enum": ["c", "f"]}},
//!     "required": ["city"],
//! }));
//! let text = "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>";
//! let trajectory = Trajectory {
//!     task_id: "weather-1".into(),
//!     tools: vec![weather],
//!     turns: vec![AssistantTurn {
//!         text: text.into(),
//!         parsed: HermesToolCallParser::default().parse(text),
//!         finish_reason: FinishReason::Stop,
//!         num_tokens: 24,
//!         observations: vec![],
//!     }],
//!     max_new_tokens: 256,
//!     ..Trajectory::default()
//! };
//! let target = Target::new().add_expected_call(
//!     ExpectedCall::new("get_weather")
//!         .with_argument("city", [json!("Paris")])
//!         .with_optional_argument("unit", [json!("c")]),
//! );
//!
//! let value = ToolUseReward::default().score(Sample::new(&trajectory, &target))?;
//! // format 1 + arguments 1 + outcome 2 (the calls are the outcome here), no penalty.
//! assert_eq!(value.score, Some(4.0));
//! assert_eq!(value.component("outcome"), Some(Some(1.0)));
//! # Ok::<(), agent_rl_rewards::RewardError>(())
//! ```
//!
//! ## What is here
//!
//! | type | does | example |
//! |---|---|---|
//! | [`Reward`], [`RewardExt`] | scores a batch of [`Sample`]s → [`RewardValue`] (`Option<f32>` + components) | [`Reward`] docs |
//! | [`Target`] | expected calls ([`ExpectedCall`](matching::ExpectedCall)), [`ExpectedAnswer`], [`OutcomeVerifier`] | [`Target`] docs |
//! | [`ToolCallFormat`] | calls parse, name offered tools, satisfy their schemas | |
//! | [`ArgumentMatch`] | calls match the target (BFCL semantics, partial credit) | |
//! | [`Outcome`] | the answer / verifier / exact calls are right | |
//! | [`Guards`] | capped penalties: extra, duplicate, hallucinated, invalid calls; empty answer; truncation; over-length | [`overlong_penalty`] |
//! | [`WeightedSum`], [`NormalizedSum`], [`Weighted`], [`Clipped`] | combinators | [`WeightedSum`] docs |
//! | [`ToolUseReward`] | the standard recipe: format 1, arguments 1, outcome 2, guards on | above |
//! | [`LearnedReward`] | wraps a [`SequenceScorer`] (a reward model) | [`LearnedReward`] docs |
//! | [`matching`] | the call-matching engine shared with the BFCL evaluator | [`matching::match_calls`] |
//! | [`mean_score`], [`component_means`] | means that leave `None` out | |
//! | [`gold_trajectory`], [`gold_calls`] | the episode a perfect policy produces, to check a data path | |
//!
//! No cargo features.
#![warn(missing_docs)]
#![cfg_attr(test, allow(clippy::unwrap_used))]

mod answer;
mod argument_match;
mod audit;
pub mod combinators;
pub mod error;
mod fn_reward;
mod format;
mod gold;
pub mod guards;
mod learned;
pub mod matching;
mod outcome;
mod reward;
mod schema;
mod stats;
mod target;
mod tool_use;
mod verifier;

pub use answer::{AnswerComparison, ExpectedAnswer};
pub use argument_match::ArgumentMatch;
pub use audit::CallAudit;
pub use combinators::{Clipped, NormalizedSum, Weighted, WeightedSum};
pub use error::{Result, RewardError};
pub use fn_reward::FnReward;
pub use format::ToolCallFormat;
pub use gold::{gold_calls, gold_trajectory, reference_calls, schema_example};
pub use guards::{GuardConfig, GuardPenalties, Guards, OverlongConfig, overlong_penalty};
pub use learned::{LearnedReward, SequenceScorer};
pub use outcome::Outcome;
pub use reward::{Component, Reward, RewardExt, RewardValue, Sample};
pub use schema::{SchemaViolation, check_schema, validate_arguments};
pub use stats::{ComponentMean, component_means, mean_score};
pub use target::Target;
pub use tool_use::{ToolUseConfig, ToolUseReward};
pub use verifier::{EnvironmentRewardVerifier, FnVerifier, OutcomeVerifier};
