//! GRPO trainer: learning proof, smoke test, multi-turn rollouts, checkpoint/resume.

mod checkpointing;
mod common;
pub(crate) use common::{chars_per_token, parameters, prompts};
mod crash_safety;
mod curriculum;
mod evaluation;
mod gain;
mod learning;
mod lora;
mod multi_turn;
mod resume;
mod smoke;
mod tool_learning;
