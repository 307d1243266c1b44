//! GRPO trainer: learning proof, smoke test, multi-turn rollouts, checkpoint/resume.

mod common;
mod crash_safety;
mod curriculum;
mod learning;
mod multi_turn;
mod resume;
mod smoke;
mod tool_learning;
