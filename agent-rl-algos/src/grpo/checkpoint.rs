//! Checkpoints of a GRPO run and resuming from them.
//!
//! A checkpoint directory holds:
//! - `model/`: the policy in Hugging Face layout ([`save_pretrained`]) with the tokenizer files
//!   and `generation_config.json` beside it: a model directory that transformers and
//!   `agent-rl generate|eval|serve --model` load;
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
//! The policy, reference, LoRA settings and AdamW are the trainer's `PolicyState` (crate-private,
//! held by PPO's trainer too), whose `save` and `load` write and read every file above for both
//! trainers through [`crate::trainer_state`]; PPO adds its critic beside them.
//!
//! [`save_pretrained`]: agent_rl_core::weights::save_pretrained
//! [`save_adapter`]: agent_rl_core::lora::save_adapter

use std::path::Path;

use burn::tensor::backend::AutodiffBackend;

use super::trainer::GrpoTrainer;
use crate::checkpoint_dir::write_checkpoint_dir;
use crate::error::Result;
use crate::trainer_state::{TrainerState, param_ids};

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
        let state = TrainerState::new(self.counters, self.config.seed, param_ids(self.model()));
        self.policy.save(dir, &self.config, &state, &self.tokenizer)
    }

    /// Restores model, reference model, optimizer state and counters from a checkpoint written
    /// by [`Self::save_checkpoint`]. The trainer's config stays in force; its seed must be the
    /// checkpoint's (otherwise the continuation would not be the same run).
    ///
    /// The directory is checked against its manifest first
    /// ([`verify_checkpoint_dir`](crate::checkpoint_dir::verify_checkpoint_dir)), so an
    /// interrupted write or a truncated, zeroed or otherwise altered file is refused with the
    /// file named before anything is loaded.
    ///
    /// # Errors
    /// [`AlgoError::Checkpoint`](crate::AlgoError::Checkpoint) for an incomplete or damaged checkpoint, missing or unreadable
    /// files, a different seed, or an optimizer record that does not match the model; model load
    /// errors.
    pub fn load_checkpoint(&mut self, dir: &Path) -> Result<()> {
        let (policy, state) = self
            .policy
            .load(dir, self.config.seed, &self.config.optimizer)?;
        self.policy = policy;
        self.counters = state.counters();
        Ok(())
    }
}
