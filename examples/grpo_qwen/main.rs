//! The main job: GRPO teaching a tiny Qwen2 to use tools, end to end, on the CPU, no download.
//!
//! ```text
//! cargo run --release --example grpo_qwen            # the full demo (a few minutes)
//! cargo run --release --example grpo_qwen -- --quick --summary summary.json
//! ```
//! It builds a tiny Qwen2-architecture model (random weights) with the byte-level test tokenizer
//! and a compact tool-aware chat template, generates the synthetic tool-use family of
//! [`agent_rl::algos::toy`] (weather / time / add tools, arguments to extract from the request, a
//! checkable final answer), runs a short SFT warm-up, then GRPO with the standard reward recipe
//! (`ToolUseReward::default()`: format 1, arguments 1, outcome 2, guards on) in the multi-turn toy
//! environment, and reports tool-call format accuracy, argument match rate and end-to-end success
//! on held-out tasks before training, after the warm-up and after GRPO. The run directory gets
//! the resolved config, metrics (JSONL + CSV), a reward-curve SVG and the final model in Hugging
//! Face layout.

mod pipeline;
mod real_model;

use std::path::PathBuf;

use agent_rl::algos::pipeline::PipelineBuilder;
use agent_rl::progress::StageProgress;
use anyhow::Context;
use burn::tensor::backend::AutodiffBackend;
use clap::Parser;

/// Command-line options of the demo.
#[derive(Debug, Parser)]
#[command(about = "GRPO teaches a tiny Qwen2 tool use (embedded demo, no download)")]
pub struct Args {
    /// A reduced run for CI (fewer steps and held-out tasks).
    #[arg(long)]
    pub quick: bool,
    /// Write `{"before": …, "after_sft": …, "after": …}` (fractions in [0, 1]) here.
    #[arg(long)]
    pub summary: Option<PathBuf>,
    /// Run directory (config, metrics, reward curve, final model).
    #[arg(long, default_value = "runs/grpo_qwen")]
    pub run_dir: PathBuf,
    /// Clear an earlier run from the run directory first (without it a used one is refused).
    #[arg(long)]
    pub overwrite: bool,
    /// Seed of the model, the tasks and sampling.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// SFT warm-up steps (default: 300).
    #[arg(long)]
    pub sft_steps: Option<usize>,
    /// GRPO steps (default: 80, quick 40).
    #[arg(long)]
    pub grpo_steps: Option<usize>,
    /// Share of weather requests the SFT teacher demonstrates with the wrong tool (`get_time`;
    /// see `agent_rl::algos::toy::toy_biased_sft_dataset`). Above one half, imitation alone
    /// answers weather requests with the wrong tool and GRPO's reward is what corrects it; 0 gives
    /// a teacher that is always right.
    #[arg(long, default_value_t = 0.7)]
    pub teacher_confusion: f32,
    /// GRPO learning rate.
    #[arg(long, default_value_t = 1e-3)]
    pub grpo_lr: f64,
    /// GRPO KL coefficient (0 = no reference model). The KL term to the warm-up model keeps this
    /// tiny model's GRPO stage from drifting (see `agent-rl-algos/tests/grpo/tool_learning.rs`).
    #[arg(long, default_value_t = 0.04)]
    pub beta: f32,
    /// Prompts per GRPO step (each sampled `num_generations` = 8 times).
    #[arg(long, default_value_t = 8)]
    pub prompts_per_step: usize,
    /// A local Qwen2/Qwen2.5 snapshot to train on BFCL instead of the tiny demo (with `--bfcl`).
    #[arg(long)]
    pub model: Option<PathBuf>,
    /// BFCL data directory for GRPO on BFCL records (with `--model`).
    #[arg(long)]
    pub bfcl: Option<PathBuf>,
    /// Train LoRA adapters of this rank (alpha = 2 × rank, every projection) on the frozen
    /// model in the GRPO stage instead of every weight.
    #[arg(long)]
    pub lora_r: Option<usize>,
    /// Options of the `--model/--bfcl` job.
    #[command(flatten)]
    pub real: real_model::RealModelArgs,
}

impl Args {
    /// The GRPO stage's LoRA settings (`--lora-r`).
    pub fn lora(&self) -> Option<agent_rl::core::lora::LoraConfig> {
        self.lora_r.map(|r| agent_rl::core::lora::LoraConfig {
            r,
            alpha: 2.0 * r as f64,
            ..Default::default()
        })
    }
}

/// mimalloc with purging off (`agent_rl::host_allocator`): stable peak memory from run to run.
#[global_allocator]
static ALLOCATOR: agent_rl::host_allocator::HostAllocator = agent_rl::host_allocator::HostAllocator;

fn main() -> anyhow::Result<()> {
    agent_rl::host_allocator::tune_host_allocator();
    agent_rl::host_threads::on_compute_pool(run_main)
}

/// The example, run on a worker of the compute pool (`agent_rl::host_threads`).
#[allow(clippy::print_stdout)]
fn run_main() -> anyhow::Result<()> {
    let args = Args::parse();
    if args.model.is_some() || args.bfcl.is_some() {
        return real_model::run(&args);
    }
    pipeline::run::<agent_rl::backend::CpuTrainBackend>(&args)
}

/// Runs `pipeline` into `--run-dir` with progress bars, prints the held-out table and writes
/// the `--summary` file: the end both jobs of the demo share.
///
/// # Errors
/// Pipeline errors; a summary file that cannot be written.
#[allow(clippy::print_stdout)]
pub fn run_and_report<B: AutodiffBackend>(
    pipeline: PipelineBuilder<B>,
    args: &Args,
    record: serde_json::Value,
) -> anyhow::Result<()> {
    let report = pipeline
        .with_run_dir(&args.run_dir)
        .with_overwrite(args.overwrite)
        .with_config_record(record)
        .with_observer(StageProgress::default())
        .build()?
        .run()?;
    println!("{}", report.scores_table());
    if let (Some(sft), Some(grpo)) = (report.score("after_sft"), report.score("after")) {
        println!(
            "SFT -> GRPO: held-out success {:.3} -> {:.3} ({:+.3})",
            sft.success_rate,
            grpo.success_rate,
            grpo.success_rate - sft.success_rate
        );
    }
    if let Some(path) = &args.summary {
        std::fs::write(path, serde_json::to_string_pretty(&report.summary_json())?)
            .with_context(|| format!("writing {}", path.display()))?;
        println!("summary written to {}", path.display());
    }
    println!("run directory: {}", args.run_dir.display());
    Ok(())
}
