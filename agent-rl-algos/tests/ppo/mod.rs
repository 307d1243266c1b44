//! PPO trainer: smoke test, multi-turn rollouts, checkpoint/resume, learning proof.

mod learning;
mod smoke;
