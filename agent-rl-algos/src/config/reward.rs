//! [`RewardConfig`]: every setting of a reward-model training run.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::config::{OptimizerConfig, checks};
use crate::error::{AlgoError, Result};

/// Settings of reward-model training on preference pairs (the `[reward]` section of a run file).
///
/// Defaults follow TRL's `RewardConfig`: learning rate 1e-4, `max_length` 1024 (longer pairs are
/// dropped, not truncated, as TRL filters them), no reward centring.
///
/// ```
/// use agent_rl_algos::RewardConfig;
/// let config = RewardConfig { center_rewards_coefficient: Some(0.01), ..RewardConfig::default() };
/// config.validate()?;
/// # Ok::<(), agent_rl_algos::AlgoError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RewardConfig {
    /// Passes over the training pairs. Default 1. Must be ≥ 1 unless `max_steps` is set.
    pub num_train_epochs: usize,
    /// Stop after this many optimiser steps (overrides `num_train_epochs`); `None` = run the epochs.
    pub max_steps: Option<usize>,
    /// Preference pairs per micro-batch (each pair is two sequences). Default 8. Must be ≥ 1.
    pub batch_size: usize,
    /// Pairs whose chosen or rejected sequence is longer than this many tokens are dropped (TRL's
    /// filter); `None` = keep all. Default 1024. Must be ≥ 1.
    pub max_length: Option<usize>,
    /// Coefficient `c` of the centring term `c · mean((r_chosen + r_rejected)²)`, which keeps
    /// rewards near zero (Eisenstein et al., 2023, <https://huggingface.co/papers/2312.09244>,
    /// TRL recommends 0.01); `None` = off. Default `None`. Must be finite and ≥ 0.
    pub center_rewards_coefficient: Option<f32>,
    /// Fraction of the rows held out for evaluation (eval loss and accuracy). Default 0. Range
    /// [0, 1). Pairs expanded from one ranked row stay on the same side.
    pub eval_fraction: f32,
    /// Evaluate every this many steps; `None` = only at the end. Must be ≥ 1.
    pub eval_steps: Option<usize>,
    /// Optimiser and schedule. Default learning rate 1e-4 (TRL's reward default).
    pub optimizer: OptimizerConfig,
    /// Seed of shuffling, the eval split and a fresh score head. Default 42.
    pub seed: u64,
    /// Where checkpoints go (`checkpoint-<step>/` every `save_steps`, written crash-safely, and
    /// the final model in the directory itself, all in Hugging Face's
    /// `Qwen2ForSequenceClassification` layout, plus `reward_config.json`); `None` = save
    /// nothing. Default `None`.
    pub output_dir: Option<PathBuf>,
    /// Save a checkpoint every this many optimiser steps; `None` = only the final model. Must be
    /// ≥ 1.
    pub save_steps: Option<usize>,
}

impl Default for RewardConfig {
    fn default() -> Self {
        Self {
            num_train_epochs: 1,
            max_steps: None,
            batch_size: 8,
            max_length: Some(1024),
            center_rewards_coefficient: None,
            eval_fraction: 0.0,
            eval_steps: None,
            optimizer: OptimizerConfig {
                learning_rate: 1e-4,
                ..OptimizerConfig::default()
            },
            seed: 42,
            output_dir: None,
            save_steps: None,
        }
    }
}

impl RewardConfig {
    /// Checks every field's range.
    ///
    /// # Errors
    /// [`AlgoError::InvalidConfig`] naming the first invalid field and how to fix it.
    pub fn validate(&self) -> Result<()> {
        let bad = |field: &str, reason: String| Err(AlgoError::config(field, reason));
        checks::epochs_and_batch_size(
            self.num_train_epochs,
            self.max_steps,
            self.batch_size,
            "pairs",
        )?;
        checks::unset_or_positive("max_length", self.max_length, "to keep every pair")?;
        if let Some(c) = self.center_rewards_coefficient
            && !(c.is_finite() && c >= 0.0)
        {
            return bad(
                "center_rewards_coefficient",
                format!("is {c}; must be finite and >= 0 (0.01 is TRL's suggestion), or null"),
            );
        }
        checks::eval_save_and_optimizer(
            self.eval_fraction,
            self.eval_steps,
            self.save_steps,
            &self.optimizer,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_valid_and_bad_fields_are_named() {
        RewardConfig::default().validate().expect("defaults");
        let cases = [
            (
                RewardConfig {
                    batch_size: 0,
                    ..Default::default()
                },
                "batch_size",
            ),
            (
                RewardConfig {
                    max_length: Some(0),
                    ..Default::default()
                },
                "max_length",
            ),
            (
                RewardConfig {
                    center_rewards_coefficient: Some(-1.0),
                    ..Default::default()
                },
                "center_rewards_coefficient",
            ),
            (
                RewardConfig {
                    eval_fraction: 1.0,
                    ..Default::default()
                },
                "eval_fraction",
            ),
            (
                RewardConfig {
                    num_train_epochs: 0,
                    ..Default::default()
                },
                "num_train_epochs",
            ),
        ];
        for (config, field) in cases {
            let err = config.validate().expect_err(field).to_string();
            assert!(err.contains(field), "{err}");
        }
    }

    #[test]
    fn serde_round_trips_and_rejects_unknown_keys() {
        let config: RewardConfig = serde_json::from_str(
            r#"{"batch_size": 4, "center_rewards_coefficient": 0.01, "optimizer": {"learning_rate": 1e-5}}"#,
        )
        .expect("valid");
        assert_eq!(config.batch_size, 4);
        assert_eq!(config.optimizer.learning_rate, 1e-5);
        assert!(serde_json::from_str::<RewardConfig>(r#"{"batch_sise": 4}"#).is_err());
    }
}
