//! The GRPO trainer: rollouts through the core [`AgentLoop`](agent_rl_core::AgentLoop), the
//! reward stack, group-relative advantages, the clipped loss, AdamW, metrics and checkpoints.

mod builder;
mod checkpoint;
mod evaluation;
mod step;
mod trainer;
mod update;

pub use crate::rollout::{RewardStack, ScoredBatch, TaskOrder};
pub use crate::trainer_state::TrainerState;
pub use builder::GrpoTrainerBuilder;
pub use evaluation::{BEST_MODEL_DIR, BestEvaluation};
pub use trainer::{GrpoReport, GrpoTrainer};
