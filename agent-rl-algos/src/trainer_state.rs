//! The run state every RL trainer checkpoints beside its models: the counters
//! (`trainer_state.json`) and AdamW's moments (`*.bin`), re-keyed on load.
//!
//! burn keys optimizer state by parameter id, and ids are fresh after loading a model, so the
//! ids in module order are saved too and the optimizer record is re-keyed on load.

use std::collections::HashMap;
use std::path::Path;

use agent_rl_core::lora::{LoraConfig, load_adapter, save_adapter};
use agent_rl_core::weights::{LoadOptions, SaveOptions, load_pretrained, save_pretrained};
use agent_rl_core::{ChatTokenizer, Qwen2ForCausalLm};
use burn::module::{AutodiffModule, Module, ModuleVisitor, Param, ParamId};
use burn::optim::adaptor::OptimizerAdaptor;
use burn::optim::{AdamW, Optimizer};
use burn::record::{BinFileRecorder, FullPrecisionSettings, Recorder};
use burn::tensor::Tensor;
use burn::tensor::backend::{AutodiffBackend, Backend};
use serde::{Deserialize, Serialize};

use crate::config::OptimizerConfig;
use crate::error::{AlgoError, Result};
use crate::optim::init_adamw;

/// Version of the checkpoint layout written by this crate.
pub(crate) const FORMAT_VERSION: u32 = 1;

/// The counters of a run, saved as `trainer_state.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrainerState {
    /// Layout version (1).
    pub format_version: u32,
    /// Optimiser steps (GRPO) or rollout batches (PPO) done.
    pub global_step: usize,
    /// The run's seed (sampling and task order derive from it and the counters).
    pub seed: u64,
    /// Tasks drawn so far (position in the task order).
    pub tasks_drawn: u64,
    /// Tokens processed so far (`num_tokens`).
    pub num_tokens: u64,
    /// The policy's parameter ids in module order when the checkpoint was written.
    pub param_ids: Vec<u64>,
    /// PPO: the critic's parameter ids in module order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub critic_param_ids: Vec<u64>,
    /// PPO: the KL coefficient β of the (adaptive) controller.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kl_coef: Option<f32>,
    /// The id of the run directory the checkpoint was written into
    /// ([`run_identity`](crate::run_identity)); absent when it had none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
}

/// The counters of a run that its checkpoints keep.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct RunCounters {
    /// Optimiser steps (GRPO) or rollout batches (PPO) done.
    pub(crate) global_step: usize,
    /// Tasks drawn so far (the position in the task order).
    pub(crate) tasks_drawn: u64,
    /// Prompt + completion tokens processed so far (`num_tokens`).
    pub(crate) num_tokens: u64,
}

impl TrainerState {
    /// The state of a run without a critic: its counters, seed and the policy's parameter ids.
    pub(crate) fn new(counters: RunCounters, seed: u64, param_ids: Vec<u64>) -> Self {
        Self {
            format_version: FORMAT_VERSION,
            global_step: counters.global_step,
            seed,
            tasks_drawn: counters.tasks_drawn,
            num_tokens: counters.num_tokens,
            param_ids,
            critic_param_ids: Vec::new(),
            kl_coef: None,
            run_id: None,
        }
    }

    /// The counters.
    pub(crate) fn counters(&self) -> RunCounters {
        RunCounters {
            global_step: self.global_step,
            tasks_drawn: self.tasks_drawn,
            num_tokens: self.num_tokens,
        }
    }
}

struct ParamIds(Vec<u64>);

impl<B: Backend> ModuleVisitor<B> for ParamIds {
    fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<B, D>>) {
        self.0.push(param.id.val());
    }
}

/// The float parameter ids of `module` in module order.
pub(crate) fn param_ids<B: Backend, M: Module<B>>(module: &M) -> Vec<u64> {
    let mut ids = ParamIds(Vec::new());
    module.visit(&mut ids);
    ids.0
}

/// An [`AlgoError::Checkpoint`] for `path`.
pub(crate) fn checkpoint_error(path: &Path, reason: impl std::fmt::Display) -> AlgoError {
    AlgoError::Checkpoint {
        path: path.to_owned(),
        reason: reason.to_string(),
    }
}

/// Writes `value` as pretty JSON to `path`.
pub(crate) fn write_json(path: &Path, value: &impl Serialize) -> Result<()> {
    let text = serde_json::to_string_pretty(value).map_err(|e| checkpoint_error(path, e))?;
    std::fs::write(path, text).map_err(|e| checkpoint_error(path, format!("cannot write: {e}")))
}

/// Reads `dir/trainer_state.json` and checks its version and that it was written with `seed`.
///
/// # Errors
/// [`AlgoError::Checkpoint`] for a missing or malformed file, another version or another seed.
pub(crate) fn read_trainer_state(dir: &Path, seed: u64) -> Result<TrainerState> {
    let path = dir.join("trainer_state.json");
    let text = std::fs::read_to_string(&path).map_err(|e| checkpoint_error(&path, e))?;
    let state: TrainerState =
        serde_json::from_str(&text).map_err(|e| checkpoint_error(&path, e))?;
    if state.format_version != FORMAT_VERSION {
        return Err(checkpoint_error(
            &path,
            format!(
                "format_version {} is not {FORMAT_VERSION}",
                state.format_version
            ),
        ));
    }
    if state.seed != seed {
        return Err(checkpoint_error(
            &path,
            format!(
                "written with seed {}, the config has seed {seed}; set config.seed to resume",
                state.seed
            ),
        ));
    }
    Ok(state)
}

/// Writes AdamW's state to `dir/<name>.bin` (full precision).
///
/// # Errors
/// [`AlgoError::Checkpoint`] naming the file.
pub(crate) fn save_optimizer<B: AutodiffBackend, M: AutodiffModule<B>>(
    optimizer: &OptimizerAdaptor<AdamW, M, B>,
    dir: &Path,
    name: &str,
) -> Result<()> {
    let path = dir.join(name);
    BinFileRecorder::<FullPrecisionSettings>::new()
        .record(optimizer.to_record(), path.clone())
        .map_err(|e| checkpoint_error(&path.with_extension("bin"), e))
}

/// Loads AdamW's state for `model` from `dir/<name>.bin`, re-keyed from `saved_ids` (the ids in
/// module order when it was written) to `model`'s ids.
///
/// # Errors
/// [`AlgoError::Checkpoint`] for an unreadable file, a parameter count that differs from the
/// model's, or state for a parameter not in `saved_ids`.
pub(crate) fn load_optimizer<B: AutodiffBackend, M: AutodiffModule<B>>(
    config: &OptimizerConfig,
    model: &M,
    saved_ids: &[u64],
    dir: &Path,
    name: &str,
    device: &B::Device,
) -> Result<OptimizerAdaptor<AdamW, M, B>> {
    type Record<B, M> = <OptimizerAdaptor<AdamW, M, B> as Optimizer<M, B>>::Record;
    let path = dir.join(name);
    let bin_path = path.with_extension("bin");
    let record: Record<B, M> = BinFileRecorder::<FullPrecisionSettings>::new()
        .load(path, device)
        .map_err(|e| checkpoint_error(&bin_path, e))?;
    let new_ids = param_ids(model);
    if new_ids.len() != saved_ids.len() {
        return Err(checkpoint_error(
            &dir.join("trainer_state.json"),
            format!(
                "lists {} parameters for {name}, the model has {}",
                saved_ids.len(),
                new_ids.len()
            ),
        ));
    }
    let renamed: HashMap<u64, u64> = saved_ids.iter().copied().zip(new_ids).collect();
    let record: Record<B, M> = record
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
    Ok(init_adamw::<B, M>(config).load_record(record))
}

/// Writes a run's policy into checkpoint `dir`: `model/` in Hugging Face layout with
/// `tokenizer`'s files beside the weights (a model directory `generate`, `eval` and `serve`
/// load), or with `lora` only its adapters in PEFT's layout (`adapter/`); and `reference/`
/// when a reference model is kept.
///
/// # Errors
/// Model export errors.
pub(crate) fn save_policy<B: AutodiffBackend>(
    dir: &Path,
    policy: &Qwen2ForCausalLm<B>,
    lora: Option<&LoraConfig>,
    reference: Option<&Qwen2ForCausalLm<B::InnerBackend>>,
    tokenizer: &ChatTokenizer,
) -> Result<()> {
    match lora {
        Some(lora) => save_adapter(policy, lora, None, &dir.join("adapter"))?,
        None => {
            save_pretrained(policy, &dir.join("model"), SaveOptions::default())?;
            tokenizer.save_to_dir(&dir.join("model"))?;
        }
    }
    if let Some(reference) = reference {
        save_pretrained(reference, &dir.join("reference"), SaveOptions::default())?;
    }
    Ok(())
}

/// Reads the policy [`save_policy`] wrote into `dir`: with `lora` the saved adapters go onto
/// `current`'s frozen base (the model the run started from) and must have `lora`'s settings.
///
/// # Errors
/// [`AlgoError::Checkpoint`] for an adapter with other settings; model load errors.
pub(crate) fn load_policy<B: AutodiffBackend>(
    dir: &Path,
    current: &Qwen2ForCausalLm<B>,
    lora: Option<&LoraConfig>,
) -> Result<Qwen2ForCausalLm<B>> {
    let Some(lora) = lora else {
        let device = current.device();
        return Ok(load_pretrained::<B>(&dir.join("model"), LoadOptions::default(), &device)?.0);
    };
    let adapter_dir = dir.join("adapter");
    let (model, saved) = load_adapter(current.without_adapters(), &adapter_dir)?;
    if saved.resolved() != lora.resolved() {
        return Err(checkpoint_error(
            &adapter_dir,
            format!("holds an adapter with {saved:?}, the trainer has {lora:?}"),
        ));
    }
    Ok(model)
}

/// Reads the reference model [`save_policy`] wrote into `dir`.
///
/// # Errors
/// Model load errors.
pub(crate) fn load_reference<B: AutodiffBackend>(
    dir: &Path,
    device: &B::Device,
) -> Result<Qwen2ForCausalLm<B::InnerBackend>> {
    Ok(load_pretrained(&dir.join("reference"), LoadOptions::default(), device)?.0)
}
