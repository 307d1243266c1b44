//! A GRPO arm of a study (`grpo_gain`, `grpo_k`) and the greedy scoring of its models on
//! held-out requests.

use std::sync::Arc;

use agent_rl::algos::{
    AlgoError, GrpoConfig, GrpoReport, GrpoTrainer, LrSchedule, ToolUseScores, evaluate_tool_use,
};
use agent_rl::backend::CpuTrainBackend as B;
use agent_rl::core::{
    AgentLoopConfig, ChatTokenizer, HermesToolCallParser, Qwen2ForCausalLm, SamplingConfig, Task,
};
use agent_rl::rewards::ToolUseReward;
use burn::module::AutodiffModule;

/// Tokens each completion may take, in GRPO and in the greedy evaluation.
const MAX_COMPLETION_TOKENS: usize = 64;

/// One GRPO arm's shape: group size, prompts per step, steps and the optimiser's knobs.
#[derive(Debug, Clone, Copy)]
pub struct GrpoArm {
    /// Completions per prompt (K).
    pub num_generations: usize,
    /// Prompts drawn per step.
    pub prompts_per_step: usize,
    /// Optimiser steps.
    pub steps: usize,
    /// Constant learning rate.
    pub learning_rate: f64,
    /// KL coefficient.
    pub beta: f32,
    /// Seed of the task draws and sampling.
    pub seed: u64,
}

/// Runs `arm` from `model` on `tasks` with `ToolUseReward::default()` (single turn, completions
/// of at most 64 tokens, one decode shard per core); returns the model and the run's report.
///
/// # Errors
/// From building or running the GRPO trainer.
pub fn grpo(
    model: Qwen2ForCausalLm<B>,
    tokenizer: &Arc<ChatTokenizer>,
    tasks: &[Task],
    arm: GrpoArm,
) -> Result<(Qwen2ForCausalLm<B>, GrpoReport), AlgoError> {
    let mut config = GrpoConfig {
        num_generations: arm.num_generations,
        prompts_per_step: arm.prompts_per_step,
        max_steps: arm.steps,
        beta: arm.beta,
        seed: arm.seed,
        ..GrpoConfig::default()
    }
    .with_max_completion_length(MAX_COMPLETION_TOKENS);
    config.optimizer.learning_rate = arm.learning_rate;
    config.optimizer.lr_scheduler_type = LrSchedule::Constant;
    config.sampling.decode_shards = std::thread::available_parallelism().map_or(1, usize::from);
    let mut trainer = GrpoTrainer::builder(model, Arc::clone(tokenizer))
        .with_config(config)
        .add_reward(ToolUseReward::default())
        .build()?;
    let report = trainer.train(tasks)?;
    Ok((trainer.into_model(), report))
}

/// Greedy single-turn scores of `model` on `tasks`.
///
/// # Errors
/// Rollout failures and broken targets.
pub fn score(
    model: &Qwen2ForCausalLm<B>,
    tokenizer: &ChatTokenizer,
    tasks: &[Task],
) -> Result<ToolUseScores, AlgoError> {
    let config = AgentLoopConfig {
        sampling: SamplingConfig::greedy(MAX_COMPLETION_TOKENS),
        max_tool_iterations: 1,
        ..AgentLoopConfig::default()
    };
    let parser = HermesToolCallParser::default();
    evaluate_tool_use(&model.valid(), tokenizer, &parser, tasks, None, config)
}
