//! The SFT settings every toy warm-up uses: the demos, the learning tests and the measurement
//! examples train the toy model the same way before RL.

use crate::{LrSchedule, OptimizerConfig, SftConfig};

/// SFT for `steps` optimiser steps of `batch_size` rows, learning rate 1e-2 held constant after
/// 5 warm-up steps, no eval split, the data order drawn with `seed`: the warm-up the toy
/// model of [`toy_model_config`](super::toy_model_config) reaches its RL starting point with
/// (`grpo_qwen`, `rlhf_toy`, the GRPO and RLHF learning tests).
///
/// ```
/// use agent_rl_algos::toy::toy_warmup_config;
/// let config = toy_warmup_config(300, 16, 1);
/// assert_eq!((config.max_steps, config.batch_size, config.seed), (Some(300), 16, 1));
/// assert_eq!(config.optimizer.learning_rate, 1e-2);
/// ```
pub fn toy_warmup_config(steps: usize, batch_size: usize, seed: u64) -> SftConfig {
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
