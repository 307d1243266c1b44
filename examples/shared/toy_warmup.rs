//! The SFT warm-up the toy-task measurement examples share (`grpo_gain`, `grpo_k`,
//! `rm_pair_kinds`): its configuration and a run of it.

use std::sync::Arc;

use agent_rl::algos::sft::{SftDataset, SftTrainer};
use agent_rl::algos::{LrSchedule, OptimizerConfig, SftConfig};
use agent_rl::backend::CpuTrainBackend as B;
use agent_rl::core::{ChatTokenizer, Qwen2ForCausalLm};

/// SFT for `steps` optimiser steps of `batch_size` rows (lr 1e-2 constant after 5 warm-up
/// steps, no eval split).
pub fn sft_config(steps: usize, batch_size: usize, seed: u64) -> SftConfig {
    SftConfig {
        max_steps: Some(steps),
        batch_size,
        eval_fraction: 0.0,
        seed,
        optimizer: OptimizerConfig {
            learning_rate: 1e-2,
            lr_scheduler_type: LrSchedule::Constant,
            warmup_steps: 5,
            ..OptimizerConfig::default()
        },
        ..SftConfig::default()
    }
}

/// Trains `model` on `rows` with `config` and returns it.
///
/// # Errors
/// From building or running the SFT trainer.
pub fn sft(
    model: Qwen2ForCausalLm<B>,
    tokenizer: &Arc<ChatTokenizer>,
    config: SftConfig,
    rows: &SftDataset,
) -> anyhow::Result<Qwen2ForCausalLm<B>> {
    let mut trainer = SftTrainer::builder(model, Arc::clone(tokenizer))
        .with_config(config)
        .build()?;
    trainer.train(rows)?;
    Ok(trainer.into_model())
}
