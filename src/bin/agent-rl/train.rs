//! `agent-rl train sft|rm|ppo|grpo --config run.toml [--resume RUN_DIR]`: trainers driven by
//! TOML run files (see `train_config.rs` and `examples/configs/`).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use agent_rl::algos::toy::{toy_model_config, toy_tokenizer};
use agent_rl::backend::probe_cuda;
use agent_rl::core::lora::{BaseDtype, LoraConfig};
use agent_rl::core::weights::{LoadOptions, load_pretrained, random_model};
use agent_rl::core::{ChatTokenizer, Qwen2ForCausalLm};
use anyhow::Context;
use burn::tensor::backend::AutodiffBackend;

use crate::train_config::{Device, ModelSection};
use crate::{train_grpo, train_rlhf, train_sft};

/// The trainers.
#[derive(Debug, clap::Subcommand)]
pub enum TrainCommand {
    /// Supervised fine-tuning (`[model]`, `[data]`, `[run]`, `[sft]`).
    #[command(mut_arg("config", |arg| arg.help(config_help("sft_toy"))))]
    #[command(mut_arg("resume", |arg| arg.help(NO_RESUME)))]
    Sft(TrainArgs),
    /// GRPO with the tool-use reward (`[model]`, `[data]`, `[run]`, `[warmup]`, `[grpo]`,
    /// `[reward]`).
    #[command(mut_arg("config", |arg| arg.help(config_help("grpo_toy"))))]
    Grpo(TrainArgs),
    /// A reward model on preference pairs (`[model]`, `[data]`, `[run]`, `[warmup]`,
    /// `[reward_model]`, `[lora]`).
    #[command(mut_arg("config", |arg| arg.help(config_help("rm_toy"))))]
    #[command(mut_arg("resume", |arg| arg.help(NO_RESUME)))]
    Rm(TrainArgs),
    /// PPO against a reward model trained in the run and/or the tool-use reward (`[model]`,
    /// `[data]`, `[run]`, `[warmup]`, `[reward_model]`, `[ppo]`, `[reward]`, `[lora]`).
    #[command(mut_arg("config", |arg| arg.help(config_help("ppo_toy"))))]
    Ppo(TrainArgs),
}

/// The help of `--config`, naming the committed example run file of the trainer.
fn config_help(example: &str) -> String {
    format!("The TOML run file (e.g. examples/configs/{example}.toml)")
}

/// The help of `--resume` on the trainers that do not resume.
const NO_RESUME: &str = "Not supported by this trainer (it restarts: start a new run from a \
                         saved model with `model.path`)";

/// `--config run.toml [--set KEY=VALUE]… [--resume RUN_DIR]`.
#[derive(Debug, clap::Args)]
pub struct TrainArgs {
    /// The TOML run file.
    #[arg(long)]
    pub config: PathBuf,
    /// Override a run-file key: a dotted path and a TOML value (`--set grpo.max_steps=3`,
    /// `--set grpo.sampling.temperature=0.7`, `--set model.path=/models/qwen`); repeatable,
    /// applied in order; unknown keys are refused.
    #[arg(long, value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// Continue the run in RUN_DIR from its last `checkpoint-<step>/`, writing into RUN_DIR;
    /// `max_steps` in the run file is the total.
    #[arg(long, value_name = "RUN_DIR")]
    pub resume: Option<PathBuf>,
    /// Start afresh in a run directory that holds an earlier run: its checkpoints, metrics and
    /// models are removed first (without it such a directory is refused).
    #[arg(long, conflicts_with = "resume")]
    pub overwrite: bool,
    /// Check the run file and print the resolved config as JSON, without training.
    #[arg(long)]
    pub print_config: bool,
    /// `train grpo`: build everything the run would (model config, tokenizer, tasks, rewards,
    /// stages, memory plan) without reading weights or training; print tasks per category,
    /// rejected entries, the reward of each task's gold answer and the plan.
    #[arg(long, conflicts_with_all = ["resume", "print_config"])]
    pub dry_run: bool,
    /// With `--dry-run`: print one JSON object.
    #[arg(long, requires = "dry_run")]
    pub json: bool,
    /// Activation checkpointing (sets `gradient_checkpointing = true` in `[sft]`/`[grpo]`).
    #[arg(long)]
    pub gradient_checkpointing: bool,
    /// Hold the frozen LoRA base in this type: f32, bf16 or f16 (sets `base_dtype` in
    /// `[lora]`); needs a `[lora]` section.
    #[arg(long, value_name = "TYPE")]
    pub base_dtype: Option<BaseDtype>,
}

/// Applies `--base-dtype` to the run file's `[lora]` section.
///
/// # Errors
/// A half-precision type without `[lora]`: full fine-tuning keeps every weight in `f32`.
pub fn set_base_dtype(
    lora: &mut Option<LoraConfig>,
    dtype: Option<BaseDtype>,
    file: &Path,
) -> anyhow::Result<()> {
    match (dtype, lora) {
        (None, _) | (Some(BaseDtype::F32), None) => Ok(()),
        (Some(dtype), Some(lora)) => {
            lora.base_dtype = dtype;
            Ok(())
        }
        (Some(dtype), None) => anyhow::bail!(
            "--base-dtype {dtype} needs LoRA: {} has no [lora] section (full fine-tuning trains \
             every weight and keeps them in f32)",
            file.display()
        ),
    }
}

/// A trainer to run on a chosen autodiff backend.
pub trait TrainJob {
    /// The `[model]` section.
    fn model(&self) -> &ModelSection;
    /// The resolved run config (defaults filled in), as saved in the run directory.
    fn resolved(&self) -> anyhow::Result<serde_json::Value>;
    /// Runs on backend `B`.
    fn run<B: AutodiffBackend>(self) -> anyhow::Result<()>;
}

/// Runs a `train` subcommand.
pub fn run(command: TrainCommand) -> anyhow::Result<()> {
    if let TrainCommand::Sft(args) | TrainCommand::Rm(args) | TrainCommand::Ppo(args) = &command
        && args.dry_run
    {
        anyhow::bail!("--dry-run: only `train grpo` has a dry run so far");
    }
    match command {
        TrainCommand::Sft(args) => {
            let print = args.print_config;
            dispatch(train_sft::SftJob::new(args)?, print)
        }
        TrainCommand::Grpo(args) => {
            let (print, dry_run, json) = (args.print_config, args.dry_run, args.json);
            if dry_run {
                return crate::train_dry_run::run(&train_grpo::GrpoJob::new(args)?, json);
            }
            dispatch(train_grpo::GrpoJob::new(args)?, print)
        }
        TrainCommand::Rm(args) => {
            let print = args.print_config;
            dispatch(train_rlhf::RmJob::new(args)?, print)
        }
        TrainCommand::Ppo(args) => {
            let print = args.print_config;
            dispatch(train_rlhf::PpoJob::new(args)?, print)
        }
    }
}

fn dispatch(job: impl TrainJob, print_config: bool) -> anyhow::Result<()> {
    if print_config {
        let text = serde_json::to_string_pretty(&job.resolved()?)?;
        writeln!(std::io::stdout().lock(), "{text}")?;
        return Ok(());
    }
    match job.model().device {
        Device::Cpu => {
            #[cfg(any(feature = "flex", feature = "ndarray"))]
            {
                job.run::<agent_rl::backend::CpuTrainBackend>()
            }
            #[cfg(not(any(feature = "flex", feature = "ndarray")))]
            Err(agent_rl::backend::cpu_unavailable().into())
        }
        Device::Cuda => {
            probe_cuda()?;
            #[cfg(feature = "cuda")]
            {
                job.run::<burn::backend::Autodiff<agent_rl::backend::CudaBackend>>()
            }
            #[cfg(not(feature = "cuda"))]
            unreachable!("probe_cuda fails without the cuda feature")
        }
    }
}

/// The model and tokenizer of a `[model]` section: the snapshot at `path`, or the tiny model.
///
/// # Errors
/// Files of the snapshot that cannot be loaded, naming them.
pub fn load_model<B: AutodiffBackend>(
    section: &ModelSection,
) -> anyhow::Result<(Qwen2ForCausalLm<B>, Arc<ChatTokenizer>)> {
    let device = B::Device::default();
    match &section.path {
        Some(dir) => load_snapshot(dir, &device),
        None => Ok((
            random_model::<B>(&toy_model_config(), section.seed, 0.05, &device)?,
            Arc::new(toy_tokenizer()?),
        )),
    }
}

fn load_snapshot<B: AutodiffBackend>(
    dir: &Path,
    device: &B::Device,
) -> anyhow::Result<(Qwen2ForCausalLm<B>, Arc<ChatTokenizer>)> {
    let tokenizer = ChatTokenizer::from_dir(dir)
        .with_context(|| format!("loading the tokenizer of {}", dir.display()))?;
    let (model, _) = load_pretrained::<B>(dir, LoadOptions::default(), device)
        .with_context(|| format!("loading {}", dir.display()))?;
    tokenizer.check_model_vocab(model.config().vocab_size)?;
    Ok((model, Arc::new(tokenizer)))
}
