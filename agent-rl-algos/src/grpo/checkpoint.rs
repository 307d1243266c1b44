//! Checkpoints of a GRPO run and resuming from them.
//!
//! A checkpoint directory holds:
//! - `model/`: the policy in Hugging Face layout ([`save_pretrained`]), loadable by transformers;
//!   with LoRA instead `adapter/`: the adapters in PEFT's layout ([`save_adapter`]; the frozen
//!   base is the model the run started from, and there is no `reference/`);
//! - `reference/`: the reference model, when one is kept (`beta > 0`; it may have been synced);
//! - `optimizer.bin`: AdamW's moments through burn's [`BinFileRecorder`] (full precision);
//! - `trainer_state.json`: [`TrainerState`] (step, seed, task position, parameter order);
//! - `config.json`: the resolved [`GrpoConfig`](crate::GrpoConfig);
//! - `manifest.json`: size and SHA-256 of each file, written last
//!   ([`checkpoint_dir`](crate::checkpoint_dir): the directory is written beside its final name
//!   and renamed into place, so a kill or full disk never leaves a half-written checkpoint).
//!
//! The models, counters and the optimizer state go through [`crate::trainer_state`], shared
//! with PPO.
//!
//! [`save_pretrained`]: agent_rl_core::weights::save_pretrained
//! [`save_adapter`]: agent_rl_core::lora::save_adapter

use std::path::Path;

use burn::tensor::backend::AutodiffBackend;

use super::trainer::GrpoTrainer;
use crate::checkpoint_dir::{verify_checkpoint_dir, write_checkpoint_dir};
use crate::error::Result;
use crate::trainer_state::{
    FORMAT_VERSION, TrainerState, load_optimizer, load_policy, load_reference, param_ids,
    read_trainer_state, save_optimizer, save_policy, write_json,
};

impl<B: AutodiffBackend> GrpoTrainer<B> {
    /// Writes a checkpoint to `dir` crash-safely (see the module docs for the layout and
    /// [`write_checkpoint_dir`] for how): `dir` appears complete or not at all, replacing an
    /// existing `dir`.
    ///
    /// # Errors
    /// [`AlgoError::Checkpoint`](crate::AlgoError::Checkpoint) naming the file that could not be written (a full disk
    /// included; the previous checkpoints stay usable); model export errors.
    pub fn save_checkpoint(&self, dir: &Path) -> Result<()> {
        write_checkpoint_dir(dir, |tmp| self.write_checkpoint_files(tmp))?;
        Ok(())
    }

    fn write_checkpoint_files(&self, dir: &Path) -> Result<()> {
        save_policy(
            dir,
            self.model(),
            self.lora.as_ref(),
            self.reference.as_ref(),
        )?;
        save_optimizer(&self.optimizer, dir, "optimizer")?;
        write_json(&dir.join("config.json"), &self.config)?;
        write_json(
            &dir.join("trainer_state.json"),
            &TrainerState {
                format_version: FORMAT_VERSION,
                global_step: self.global_step,
                seed: self.config.seed,
                tasks_drawn: self.tasks_drawn,
                num_tokens: self.num_tokens,
                param_ids: param_ids(self.model()),
                critic_param_ids: Vec::new(),
                kl_coef: None,
            },
        )
    }

    /// Restores model, reference model, optimizer state and counters from a checkpoint written
    /// by [`Self::save_checkpoint`]. The trainer's config stays in force; its seed must be the
    /// checkpoint's (otherwise the continuation would not be the same run).
    ///
    /// The directory is checked against its manifest first ([`verify_checkpoint_dir`]), so an
    /// interrupted write or a truncated, zeroed or otherwise altered file is refused with the
    /// file named before anything is loaded.
    ///
    /// # Errors
    /// [`AlgoError::Checkpoint`](crate::AlgoError::Checkpoint) for an incomplete or damaged checkpoint, missing or unreadable
    /// files, a different seed, or an optimizer record that does not match the model; model load
    /// errors.
    pub fn load_checkpoint(&mut self, dir: &Path) -> Result<()> {
        verify_checkpoint_dir(dir)?;
        let state = read_trainer_state(dir, self.config.seed)?;
        let device = self.model().device();
        let model = load_policy(dir, self.model(), self.lora.as_ref())?;
        if self.reference.is_some() {
            self.reference = Some(load_reference::<B>(dir, &device)?);
        }
        self.optimizer = load_optimizer(
            &self.config.optimizer,
            &model,
            &state.param_ids,
            dir,
            "optimizer",
            &device,
        )?;
        self.model = Some(model);
        self.global_step = state.global_step;
        self.tasks_drawn = state.tasks_drawn;
        self.num_tokens = state.num_tokens;
        Ok(())
    }
}
