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
//! burn keys optimizer state by parameter id, and ids are fresh after loading a model, so the
//! ids in module order are saved too and the optimizer record is re-keyed on load.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use agent_rl_core::Qwen2ForCausalLm;
use agent_rl_core::lora::{load_adapter, save_adapter};
use agent_rl_core::weights::{LoadOptions, SaveOptions, load_pretrained, save_pretrained};
use burn::module::{Module, ModuleVisitor, Param, ParamId};
use burn::optim::Optimizer;
use burn::record::{BinFileRecorder, FullPrecisionSettings, Recorder};
use burn::tensor::Tensor;
use burn::tensor::backend::{AutodiffBackend, Backend};
use serde::{Deserialize, Serialize};

use super::trainer::{GrpoTrainer, Optim};
use crate::checkpoint_dir::{verify_checkpoint_dir, write_checkpoint_dir};
use crate::error::{AlgoError, Result};
use crate::optim::init_adamw;

/// Version of the checkpoint layout written by this crate.
const FORMAT_VERSION: u32 = 1;

/// The counters of a run, saved as `trainer_state.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrainerState {
    /// Layout version (1).
    pub format_version: u32,
    /// Optimiser steps done.
    pub global_step: usize,
    /// The run's seed (sampling and task order derive from it and the counters).
    pub seed: u64,
    /// Tasks drawn so far (position in the task order).
    pub tasks_drawn: u64,
    /// Tokens processed so far (`num_tokens`).
    pub num_tokens: u64,
    /// The policy's parameter ids in module order when the checkpoint was written.
    pub param_ids: Vec<u64>,
}

struct ParamIds(Vec<u64>);

impl<B: Backend> ModuleVisitor<B> for ParamIds {
    fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<B, D>>) {
        self.0.push(param.id.val());
    }
}

fn param_ids<B: Backend>(model: &Qwen2ForCausalLm<B>) -> Vec<u64> {
    let mut ids = ParamIds(Vec::new());
    model.visit(&mut ids);
    ids.0
}

fn checkpoint_error(path: &Path, reason: impl std::fmt::Display) -> AlgoError {
    AlgoError::Checkpoint {
        path: path.to_owned(),
        reason: reason.to_string(),
    }
}

fn write_json(path: &Path, value: &impl Serialize) -> Result<()> {
    let text = serde_json::to_string_pretty(value).map_err(|e| checkpoint_error(path, e))?;
    std::fs::write(path, text).map_err(|e| checkpoint_error(path, e))
}

impl<B: AutodiffBackend> GrpoTrainer<B> {
    /// Writes a checkpoint to `dir` crash-safely (see the module docs for the layout and
    /// [`write_checkpoint_dir`] for how): `dir` appears complete or not at all, replacing an
    /// existing `dir`.
    ///
    /// # Errors
    /// [`AlgoError::Checkpoint`] naming the file that could not be written (a full disk
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
        let optimizer_path = dir.join("optimizer");
        BinFileRecorder::<FullPrecisionSettings>::new()
            .record(self.optimizer.to_record(), optimizer_path.clone())
            .map_err(|e| checkpoint_error(&optimizer_path.with_extension("bin"), e))?;
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
    /// [`AlgoError::Checkpoint`] for an incomplete or damaged checkpoint, missing or unreadable
    /// files, a different seed, or an optimizer record that does not match the model; model load
    /// errors.
    pub fn load_checkpoint(&mut self, dir: &Path) -> Result<()> {
        verify_checkpoint_dir(dir)?;
        let state_path = dir.join("trainer_state.json");
        let text =
            std::fs::read_to_string(&state_path).map_err(|e| checkpoint_error(&state_path, e))?;
        let state: TrainerState =
            serde_json::from_str(&text).map_err(|e| checkpoint_error(&state_path, e))?;
        if state.format_version != FORMAT_VERSION {
            return Err(checkpoint_error(
                &state_path,
                format!(
                    "format_version {} is not {FORMAT_VERSION}",
                    state.format_version
                ),
            ));
        }
        if state.seed != self.config.seed {
            return Err(checkpoint_error(
                &state_path,
                format!(
                    "written with seed {}, the config has seed {}; set config.seed to resume",
                    state.seed, self.config.seed
                ),
            ));
        }
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
        let optimizer_path: PathBuf = dir.join("optimizer");
        let bin_path = optimizer_path.with_extension("bin");
        type Record<B> = <Optim<B> as Optimizer<Qwen2ForCausalLm<B>, B>>::Record;
        let record: Record<B> = BinFileRecorder::<FullPrecisionSettings>::new()
            .load(optimizer_path, &device)
            .map_err(|e| checkpoint_error(&bin_path, e))?;
        let new_ids = param_ids(&model);
        if new_ids.len() != state.param_ids.len() {
            return Err(checkpoint_error(
                &state_path,
                format!(
                    "lists {} parameters, the model has {}",
                    state.param_ids.len(),
                    new_ids.len()
                ),
            ));
        }
        let renamed: HashMap<u64, u64> = state.param_ids.iter().copied().zip(new_ids).collect();
        let record: Record<B> = record
            .into_iter()
            .map(|(id, entry)| {
                renamed
                    .get(&id.val())
                    .map(|&new| (ParamId::from(new), entry))
                    .ok_or_else(|| {
                        checkpoint_error(&bin_path, format!("state for unknown parameter {id}"))
                    })
            })
            .collect::<Result<_>>()?;
        self.optimizer =
            init_adamw::<B, Qwen2ForCausalLm<B>>(&self.config.optimizer).load_record(record);
        self.model = Some(model);
        self.global_step = state.global_step;
        self.tasks_drawn = state.tasks_drawn;
        self.num_tokens = state.num_tokens;
        Ok(())
    }
}
