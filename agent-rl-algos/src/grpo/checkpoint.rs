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
//! The counters and the optimizer state go through [`crate::trainer_state`], shared with PPO.

use std::path::Path;

use agent_rl_core::lora::{load_adapter, save_adapter};
use agent_rl_core::weights::{LoadOptions, SaveOptions, load_pretrained, save_pretrained};
use burn::tensor::backend::AutodiffBackend;

use super::trainer::GrpoTrainer;
use crate::checkpoint_dir::{verify_checkpoint_dir, write_checkpoint_dir};
use crate::error::Result;
use crate::trainer_state::{
    FORMAT_VERSION, TrainerState, checkpoint_error, load_optimizer, param_ids, read_trainer_state,
    save_optimizer, write_json,
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
        match &self.lora {
            Some(lora) => save_adapter(self.model(), lora, None, &dir.join("adapter"))?,
            None => save_pretrained(self.model(), &dir.join("model"), SaveOptions::default())?,
        }
        if let Some(reference) = &self.reference {
            save_pretrained(reference, &dir.join("reference"), SaveOptions::default())?;
        }
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
        let model = match &self.lora {
            // The adapters go onto this trainer's frozen base (the model the run started from).
            Some(lora) => {
                let adapter_dir = dir.join("adapter");
                let (model, saved) = load_adapter(self.model().without_adapters(), &adapter_dir)?;
                if saved.resolved() != lora.resolved() {
                    return Err(checkpoint_error(
                        &adapter_dir,
                        format!("holds an adapter with {saved:?}, the trainer has {lora:?}"),
                    ));
                }
                model
            }
            None => load_pretrained::<B>(&dir.join("model"), LoadOptions::default(), &device)?.0,
        };
        if self.reference.is_some() {
            let reference_dir = dir.join("reference");
            let (reference, _) = load_pretrained(&reference_dir, LoadOptions::default(), &device)?;
            self.reference = Some(reference);
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
