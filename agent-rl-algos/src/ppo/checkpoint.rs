//! Checkpoints of a PPO run and resuming from them.
//!
//! A checkpoint directory holds what a GRPO checkpoint holds (`model/` or with LoRA `adapter/`,
//! `reference/` when kept, `optimizer.bin`, `config.json`, `trainer_state.json`, `manifest.json`,
//! written crash-safely by [`write_checkpoint_dir`]) plus the critic: `critic/` in Hugging
//! Face's `Qwen2ForSequenceClassification` layout and its AdamW state `critic_optimizer.bin`;
//! `trainer_state.json` also records the KL coefficient of the (adaptive) controller.

use std::path::Path;

use agent_rl_core::Qwen2ForSequenceClassification;
use agent_rl_core::weights::{LoadOptions, SaveOptions};
use burn::tensor::backend::AutodiffBackend;

use super::trainer::PpoTrainer;
use crate::checkpoint_dir::write_checkpoint_dir;
use crate::error::Result;
use crate::trainer_state::{TrainerState, load_optimizer, param_ids, save_optimizer};

impl<B: AutodiffBackend> PpoTrainer<B> {
    /// Writes a checkpoint to `dir` crash-safely: `dir` appears complete or not at all.
    ///
    /// # Errors
    /// [`crate::AlgoError::Checkpoint`] naming the file that could not be written; model export
    /// errors.
    pub fn save_checkpoint(&self, dir: &Path) -> Result<()> {
        write_checkpoint_dir(dir, |tmp| self.write_checkpoint_files(tmp))?;
        Ok(())
    }

    fn write_checkpoint_files(&self, dir: &Path) -> Result<()> {
        self.critic()
            .save_pretrained(&dir.join("critic"), SaveOptions::default())?;
        save_optimizer(&self.critic_optimizer, dir, "critic_optimizer")?;
        let state = TrainerState {
            critic_param_ids: param_ids(self.critic()),
            kl_coef: Some(self.kl_controller.value()),
            ..TrainerState::new(self.counters, self.config.seed, param_ids(self.model()))
        };
        self.policy.save(dir, &self.config, &state, &self.tokenizer)
    }

    /// Restores policy, critic, reference, both optimizers, the KL coefficient and the counters
    /// from a checkpoint written by [`Self::save_checkpoint`] (verified against its manifest
    /// first). The trainer's config stays in force; its seed must be the checkpoint's.
    ///
    /// # Errors
    /// [`crate::AlgoError::Checkpoint`] for an incomplete or damaged checkpoint, missing files,
    /// another seed, or optimizer state that does not match the models; model load errors.
    pub fn load_checkpoint(&mut self, dir: &Path) -> Result<()> {
        let (policy, state) = self
            .policy
            .load(dir, self.config.seed, &self.config.optimizer)?;
        let device = self.model().device();
        let (critic, _) = Qwen2ForSequenceClassification::<B>::from_pretrained(
            &dir.join("critic"),
            LoadOptions::default(),
            &device,
        )?;
        self.critic_optimizer = load_optimizer(
            &self.config.critic_optimizer(),
            &critic,
            &state.critic_param_ids,
            dir,
            "critic_optimizer",
            &device,
        )?;
        if let Some(kl_coef) = state.kl_coef {
            self.kl_controller.set_value(kl_coef);
        }
        self.policy = policy;
        self.critic = Some(critic);
        self.counters = state.counters();
        Ok(())
    }
}
