//! The GRPO trainer: rollouts through the core [`AgentLoop`](agent_rl_core::AgentLoop), the
//! reward stack, group-relative advantages, the clipped loss, AdamW, metrics and checkpoints.

mod batch;
mod builder;
mod checkpoint;
mod reward_stack;
mod step;
mod task_order;
mod trainer;
mod update;

pub use builder::GrpoTrainerBuilder;
pub use checkpoint::TrainerState;
pub use reward_stack::{RewardStack, ScoredBatch};
pub use task_order::TaskOrder;
pub use trainer::{GrpoReport, GrpoTrainer};
