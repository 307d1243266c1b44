//! The machinery GRPO and PPO share around a rollout batch: which tasks a step draws
//! ([`TaskOrder`]), the sampler seed of a step, scoring episodes with the weighted reward
//! functions ([`RewardStack`]), laying episodes out as token rows for teacher-forced scoring,
//! splitting a batch into micro-batches, where a step's episodes come from ([`RolloutSource`]),
//! and the outer training loop with its observers and
//! checkpoints ([`TrainReport`]).

mod episode_stats;
mod micro;
mod reward_stack;
pub(crate) mod rows;
mod source;
mod task_order;
mod train_loop;

pub(crate) use episode_stats::{EpisodeStats, task_successes};
pub(crate) use micro::plan_micro_batches;
pub use reward_stack::{RewardStack, ScoredBatch};
pub use source::{LocalRollouts, RolloutRequest, RolloutSetup, RolloutSource};
pub use task_order::TaskOrder;
pub(crate) use task_order::draw_tasks;
pub use train_loop::TrainReport;
pub(crate) use train_loop::{Checkpointing, LoopedTrainer, train_loop};

use agent_rl_core::{AgentLoopConfig, SamplingConfig};

/// The agent-loop settings of the generation step at `step`: the run's sampling settings with
/// the sampler seeded from `(seed, step)` ([`step_seed`]), so a resumed run samples exactly what
/// the uninterrupted one would have.
pub(crate) fn loop_config(
    sampling: &SamplingConfig,
    seed: u64,
    step: usize,
    max_tool_iterations: usize,
    max_prompt_length: Option<usize>,
    max_tool_calls_per_turn: Option<usize>,
) -> AgentLoopConfig {
    AgentLoopConfig {
        sampling: SamplingConfig {
            seed: step_seed(seed, step),
            ..sampling.clone()
        },
        max_tool_iterations,
        max_prompt_length,
        max_tool_calls_per_turn,
    }
}

/// Mixes the run seed and the step counter into the sampler seed of a generation step.
pub(crate) fn step_seed(seed: u64, step: usize) -> u64 {
    let mut z = seed.wrapping_add((step as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}
