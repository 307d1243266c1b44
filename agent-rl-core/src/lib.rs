//! # agent-rl-core
//!
//! The policy layer of agent-rl: the Qwen2/Qwen2.5 model in burn, Hugging Face checkpoints,
//! tokenizer and chat templates, tool-call parsing, generation and log-probabilities, and the
//! shared conversation, environment and trajectory types every other crate speaks.
#![warn(missing_docs)]

pub mod burn_policy;
pub mod chat;
pub mod config;
pub mod conversation;
pub mod environment;
pub mod error;
pub mod generation;
pub mod model;
pub mod policy;
pub mod tool_calls;
pub mod trajectory;
pub mod weights;
#[cfg(any(test, feature = "test-utils"))]
pub mod test_utils;

pub use burn_policy::BurnPolicy;
pub use chat::{ChatTemplate, ChatTokenizer};
pub use config::Qwen2Config;
pub use model::Qwen2ForCausalLm;
pub use conversation::{Message, Role, ToolCall, ToolSpec};
pub use environment::{Action, Environment, EnvironmentFactory, StepOutcome, Task};
pub use error::{CoreError, Result};
pub use generation::{FinishReason, SamplingConfig};
pub use policy::{ChatRequest, Completion, Policy};
pub use tool_calls::{HermesToolCallParser, MalformedToolCall, ParsedOutput, ToolCallParser};
pub use trajectory::{AssistantTurn, Trajectory};
