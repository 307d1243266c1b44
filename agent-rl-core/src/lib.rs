//! # agent-rl-core
//!
//! The policy layer of agent-rl: the Qwen2/Qwen2.5 model in burn, Hugging Face checkpoints,
//! tokenizer and chat templates, tool-call parsing, generation and log-probabilities, and the
//! shared conversation, environment and trajectory types every other crate speaks. It knows
//! nothing of rewards, trainers or benchmarks (those crates build on it).
//!
//! ```
//! use agent_rl_core::generation::{SamplingConfig, generate_ids, token_scores};
//! use agent_rl_core::tool_calls::{HermesToolCallParser, ToolCallParser};
//! use agent_rl_core::weights::random_model;
//! use agent_rl_core::Qwen2Config;
//! use burn::backend::Flex;
//! use burn::prelude::*;
//!
//! // A tiny seeded Qwen2 (load a real one with `weights::load_pretrained`).
//! let model = random_model::<Flex>(&Qwen2Config::tiny(), 7, 0.3, &Default::default())?;
//! // Batched generation with a KV cache; prompts of different lengths are left-padded.
//! let out = generate_ids(&model, &[vec![1, 2, 3], vec![4, 5]], &SamplingConfig::greedy(4), &[])?;
//! assert!(out.iter().all(|g| g.token_ids.len() == 4 && g.logprobs.len() == 4));
//! // Teacher-forced log-probabilities of the first continuation (differentiable on autodiff).
//! let row: Vec<i64> = [1, 2, 3].iter().chain(&out[0].token_ids).map(|&t| i64::from(t)).collect();
//! let ids = Tensor::<Flex, 2, Int>::from_data(TensorData::new(row, [1, 7]), &Default::default());
//! let scores = token_scores(&model, ids, &[vec![true; 7]], 4, 1.0);
//! assert_eq!(scores.logprobs.dims(), [1, 4]);
//! // Model output is data: malformed tool calls are reported, never errors.
//! let parsed = HermesToolCallParser::default().parse("<tool_call>{\"name\": \"f\"</tool_call>");
//! assert_eq!(parsed.malformed.len(), 1);
//! # Ok::<(), agent_rl_core::CoreError>(())
//! ```
//!
//! | need | type / function |
//! |---|---|
//! | hyper-parameters from `config.json` | [`Qwen2Config`] |
//! | the model | [`Qwen2ForCausalLm`] (`forward`, `forward_hidden`, `logits`, KV cache) |
//! | reward / value model (HF `Qwen2ForSequenceClassification`) | [`Qwen2ForSequenceClassification`] (`token_scores`, `forward`, `from_policy`) |
//! | checkpoints | [`weights::load_pretrained`], [`weights::save_pretrained`] |
//! | tokenizer + chat template | [`ChatTokenizer`], [`ChatTemplate`] |
//! | tool calls in model output | [`HermesToolCallParser`] behind [`ToolCallParser`] |
//! | sampling | [`generation::generate_ids`], [`SamplingConfig`] |
//! | scores for losses | [`generation::token_scores`] |
//! | a chat policy | [`BurnPolicy`] implementing [`Policy`] |
//! | environments | [`Environment`], [`EnvironmentFactory`], [`Task`], [`Action`] |
//!
//! Features (none on by default; they only add): `flex` — fused, row-parallel CPU kernels with
//! hand-written backward passes for RMSNorm, the SiLU gate, softmax, RoPE, token scores, matrix
//! products and the KV cache, used when the backend is burn's `Flex` or `Autodiff<Flex>`; every
//! other backend runs plain tensor ops with the same results. The crate never picks a burn
//! backend; the facade (`agent-rl`, whose default `flex` feature turns this one on) and tests
//! do.
#![warn(missing_docs)]
// docs.rs (nightly, `--cfg docsrs`) marks each feature-gated item with its feature.
#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod agent_loop;
pub mod atomic;
pub mod burn_policy;
pub mod chat;
pub mod config;
pub mod conversation;
pub mod environment;
pub mod error;
mod fused;
pub mod generation;
pub mod lora;
pub mod model;
pub mod policy;
pub mod tool_calls;
pub mod trajectory;
pub mod weights;

pub use agent_loop::{AgentLoop, AgentLoopConfig, Episode};
pub use burn_policy::BurnPolicy;
pub use chat::{
    ChatTemplate, ChatTokenizer, DEFAULT_TEMPLATE_FUEL, DEFAULT_TEMPLATE_OUTPUT_BYTES,
    TEMPLATE_TOTAL_LIMIT_FACTOR,
};
pub use config::{Qwen2Config, RopeScaling};
pub use conversation::{Message, Role, ToolCall, ToolSpec};
pub use environment::{Action, Environment, EnvironmentFactory, StepOutcome, Task, step_each};
pub use error::{CoreError, Result};
pub use generation::{FinishReason, SamplingConfig};
pub use model::{Qwen2ForCausalLm, Qwen2ForSequenceClassification};
pub use policy::{ChatRequest, Completion, ContextFit, Policy};
pub use tool_calls::{HermesToolCallParser, MalformedToolCall, ParsedOutput, ToolCallParser};
pub use trajectory::{AssistantTurn, Trajectory};
