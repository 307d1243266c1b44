//! [`SftConfig`]: every setting of a supervised fine-tuning run.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::config::{OptimizerConfig, checks};
use crate::error::{AlgoError, Result};

/// Settings of supervised fine-tuning on tool-call demonstrations.
///
/// Data are TRL-style JSONL rows (`messages` with optional `tools`, or `prompt`/`completion`),
/// rendered with the model's chat template. Defaults follow TRL's `SFTConfig` except
/// `assistant_only_loss`, on by default here (agents should imitate the assistant, not the user or
/// the tool results).
///
/// ```
/// use agent_rl_algos::SftConfig;
/// let config = SftConfig { packing: true, eval_fraction: 0.1, ..SftConfig::default() };
/// config.validate()?;
/// # Ok::<(), agent_rl_algos::AlgoError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SftConfig {
    /// Passes over the training split. Default 3. Must be ≥ 1 unless `max_steps` is set.
    pub num_train_epochs: usize,
    /// Stop after this many optimiser steps (overrides `num_train_epochs`); `None` = run the epochs.
    pub max_steps: Option<usize>,
    /// Sequences per micro-batch. Default 8. Must be ≥ 1.
    pub batch_size: usize,
    /// Truncate (or pack to) this many tokens per sequence. Default 1024. Must be ≥ 2.
    pub max_length: usize,
    /// Conversation rows: compute the loss on assistant tokens only (found in the rendered token
    /// sequence). Default true.
    pub assistant_only_loss: bool,
    /// Prompt/completion rows: compute the loss on completion tokens only. Default true (TRL's
    /// behaviour for such rows).
    pub completion_only_loss: bool,
    /// Concatenate several examples into each `max_length` sequence. Default false.
    pub packing: bool,
    /// Fraction of the rows held out for the eval loss. Default 0 (no eval). Range [0, 1).
    pub eval_fraction: f32,
    /// Compute the eval loss every this many steps; `None` = only at the end. Must be ≥ 1.
    pub eval_steps: Option<usize>,
    /// Optimiser and schedule. Default learning rate 2e-5 (TRL's SFT default).
    pub optimizer: OptimizerConfig,
    /// Seed of shuffling and the eval split. Default 42.
    pub seed: u64,
    /// Where checkpoints go (Hugging Face layout: `checkpoint-<step>/` every `save_steps`, the
    /// final model in the directory itself, the resolved config as `sft_config.json`); `None` =
    /// save nothing. Default `None`.
    pub output_dir: Option<PathBuf>,
    /// Save a checkpoint every this many optimiser steps; `None` = only the final model. Must be
    /// ≥ 1.
    pub save_steps: Option<usize>,
    /// Activation checkpointing: keep only each decoder layer's input during the training
    /// forward and re-run the layer in the backward pass (less memory, one more forward of the
    /// layers per step; same gradients). Default false.
    pub gradient_checkpointing: bool,
}

impl Default for SftConfig {
    fn default() -> Self {
        Self {
            num_train_epochs: 3,
            max_steps: None,
            batch_size: 8,
            max_length: 1024,
            assistant_only_loss: true,
            completion_only_loss: true,
            packing: false,
            eval_fraction: 0.0,
            eval_steps: None,
            optimizer: OptimizerConfig {
                learning_rate: 2e-5,
                ..OptimizerConfig::default()
            },
            seed: 42,
            output_dir: None,
            save_steps: None,
            gradient_checkpointing: false,
        }
    }
}

/// The largest SFT micro-batch ([`SftConfig::batch_size`]): its padded rows and activations are
/// held at once.
pub const MAX_SFT_BATCH_SIZE: usize = 1 << 16;

impl SftConfig {
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
            "sequences",
        )?;
        if self.max_length < 2 {
            return bad(
                "max_length",
                format!(
                    "is {}; must be >= 2 (a next-token loss needs 2 tokens)",
                    self.max_length
                ),
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
