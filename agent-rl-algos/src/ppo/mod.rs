//! PPO (RLHF with a critic): the per-token reward shaping of a rollout batch, and
//! [`PpoTrainer`], which shares its rollouts, rewards, micro-batching, optimiser steps and
//! checkpoints with GRPO ([`crate::rollout`], [`crate::trainer_state`]).

mod builder;
mod checkpoint;
mod critic;
mod metrics;
mod rewards;
mod step;
mod trainer;
mod update;

pub use builder::PpoTrainerBuilder;
pub(crate) use critic::{critic_from_policy, fresh_copy};
pub use metrics::PpoMetrics;
pub use rewards::{
    TokenRewards, apply_missing_eos_penalty, kl_penalized_rewards, last_policy_token,
};
pub use trainer::{PpoReport, PpoTrainer};
