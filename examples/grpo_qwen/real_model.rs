//! `grpo_qwen --model DIR --bfcl DIR`: GRPO on BFCL's single-turn records with a local
//! Qwen2/Qwen2.5 snapshot, evaluated before and after on a held-out split with the BFCL evaluator.
//!
//! ```text
//! cargo run --release --example grpo_qwen -- --model ~/models/Qwen2.5-0.5B-Instruct \
//!     --bfcl $AGENT_RL_DATA/bfcl --limit 100 --grpo-steps 50 --summary summary.json
//! cargo run --release --features cuda --example grpo_qwen -- --device cuda --model … --bfcl …
//! ```
//! Steps: load the snapshot (`config.json`, safetensors, tokenizer files), turn the BFCL entries
//! of `--categories` into training tasks ([`training_tasks`]: the entry's messages, its functions
//! as tools, its possible answers as the target), split off a held-out part
//! ([`split_train_held_out`], seeded), score the held-out entries with [`BfclEvaluator`] (greedy),
//! train with GRPO and `ToolUseReward::default()` (format 1, arguments 1, outcome 2, guards on)
//! on single-turn rollouts (no environment: the calls are the result), score again, print the
//! table, write `--summary` and the run directory (config, metrics, reward curve, final model).

use std::path::Path;
use std::sync::Arc;

use agent_rl::algos::pipeline::{GrpoStage, Pipeline};
use agent_rl::algos::{GrpoConfig, LrSchedule};
use agent_rl::backend::{DeviceKind, probe_cuda};
use agent_rl::core::weights::{LoadOptions, load_pretrained};
use agent_rl::core::{ChatTokenizer, SamplingConfig};
use agent_rl::eval::bfcl::{
    BfclDataset, BfclEvaluator, BfclRunConfig, Category, CheckOptions, split_train_held_out,
    training_tasks,
};
use agent_rl::rewards::ToolUseReward;
use anyhow::Context;
use burn::tensor::backend::AutodiffBackend;
use serde_json::json;

use super::Args;

/// Options that only the `--model/--bfcl` job reads.
#[derive(Debug, Clone, clap::Args)]
pub struct RealModelArgs {
    /// Device for `--model`: `cpu` (default) or `cuda` (built with `--features cuda`).
    #[arg(long, default_value = "cpu")]
    pub device: DeviceKind,
    /// BFCL categories to train and evaluate on (comma-separated; Python single-turn only).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "simple_python,multiple,parallel,parallel_multiple,live_simple"
    )]
    pub categories: Vec<String>,
    /// Entries per category at most (in file order), before the split; all when unset.
    #[arg(long)]
    pub limit: Option<usize>,
    /// Fraction of the tasks held out for evaluation, in [0, 1].
    #[arg(long, default_value_t = 0.2)]
    pub held_out_fraction: f64,
    /// Tokens generated per completion (training and evaluation).
    #[arg(long, default_value_t = 256)]
    pub max_new_tokens: usize,
    /// Completions sampled per prompt (GRPO's group size).
    #[arg(long, default_value_t = 8)]
    pub num_generations: usize,
    /// GRPO learning rate for `--model` (the tiny demo's `--grpo-lr` does not apply).
    #[arg(long, default_value_t = 1e-6)]
    pub bfcl_learning_rate: f64,
}

/// Runs the job on the device `--device` names.
///
/// # Errors
/// Missing `--model`/`--bfcl`, an unusable device, unreadable checkpoint or data, training errors.
pub fn run(args: &Args) -> anyhow::Result<()> {
    let (Some(model_dir), Some(bfcl_dir)) = (&args.model, &args.bfcl) else {
        anyhow::bail!("--model DIR and --bfcl DIR go together: pass both");
    };
    match args.real.device {
        DeviceKind::Cpu => run_on::<agent_rl::backend::CpuTrainBackend>(args, model_dir, bfcl_dir),
        DeviceKind::Cuda => {
            probe_cuda()?;
            #[cfg(feature = "cuda")]
            {
                run_on::<burn::backend::Autodiff<agent_rl::backend::CudaBackend>>(
                    args, model_dir, bfcl_dir,
                )
            }
            #[cfg(not(feature = "cuda"))]
            unreachable!("probe_cuda fails without the cuda feature")
        }
    }
}

#[allow(clippy::print_stdout)]
fn run_on<B: AutodiffBackend>(
    args: &Args,
    model_dir: &Path,
    bfcl_dir: &Path,
) -> anyhow::Result<()> {
    let options = &args.real;
    let device = B::Device::default();
    let tokenizer = Arc::new(ChatTokenizer::from_dir(model_dir)?);
    let (model, _) = load_pretrained::<B>(model_dir, LoadOptions::default(), &device)
        .with_context(|| format!("loading {}", model_dir.display()))?;
    tokenizer.check_model_vocab(model.config().vocab_size)?;
    let categories = Category::from_names(options.categories.iter().map(String::as_str))
        .map_err(|name| anyhow::anyhow!("--categories: unknown `{name}`"))?;
    let (_, version) = BfclDataset::detect(bfcl_dir)?;
    let mut dataset = BfclDataset::load_categories(bfcl_dir, &categories)?;
    if let Some(limit) = options.limit {
        for entries in dataset.categories.values_mut() {
            entries.truncate(limit);
        }
    }
    let tasks = training_tasks(&dataset, &categories, CheckOptions::default())?;
    let (train, held_out) = split_train_held_out(tasks, options.held_out_fraction, args.seed)?;
    anyhow::ensure!(
        !train.is_empty() && !held_out.is_empty(),
        "{} training and {} held-out tasks: raise --limit or change --held-out-fraction",
        train.len(),
        held_out.len()
    );
    let mut grpo = GrpoConfig {
        num_generations: options.num_generations,
        prompts_per_step: args.prompts_per_step,
        max_steps: args.grpo_steps.unwrap_or(if args.quick { 2 } else { 50 }),
        beta: args.beta,
        seed: args.seed,
        ..GrpoConfig::default()
    }
    .with_max_completion_length(options.max_new_tokens);
    grpo.optimizer.learning_rate = options.bfcl_learning_rate;
    grpo.optimizer.lr_scheduler_type = LrSchedule::Constant;
    let record = json!({
        "model": model_dir, "bfcl": bfcl_dir, "categories": categories,
        "limit": options.limit, "held_out_fraction": options.held_out_fraction,
        "train_tasks": train.len(), "held_out_tasks": held_out.len(), "seed": args.seed,
        "grpo": serde_json::to_value(&grpo)?,
        "reward": "ToolUseReward::default() (format 1, arguments 1, outcome 2, guards on)",
    });
    let evaluator = BfclEvaluator::for_tasks(
        &dataset,
        &held_out,
        version,
        BfclRunConfig {
            sampling: SamplingConfig::greedy(options.max_new_tokens),
            ..BfclRunConfig::default()
        },
    );
    println!(
        "{} training / {} held-out BFCL tasks; evaluating before training",
        train.len(),
        held_out.len()
    );
    let pipeline = Pipeline::builder(model, tokenizer)
        .add_stage(
            GrpoStage::new(grpo, train)
                .with_lora(args.lora())
                .add_reward(ToolUseReward::default()),
        )
        .with_evaluator(evaluator);
    super::run_and_report(pipeline, args, record)
}
