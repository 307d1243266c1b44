//! RLHF end to end on the CPU, no download: SFT → reward model → PPO on the toy tool-use task.
//!
//! ```text
//! cargo run --release --example rlhf_toy                  # the full demo (a few minutes)
//! cargo run --release --example rlhf_toy -- --quick --summary summary.json
//! ```
//! It builds the tiny Qwen2-architecture model of [`agent_rl::algos::toy`] (random weights,
//! embedded tokenizer and chat template), warms it up with SFT on the toy tool-use family
//! (weather / time / add) as a reluctant teacher demonstrates it — declining 70% of the city
//! requests, so the warm-up model refuses them — trains a reward model from the warm-up model on
//! synthetic preference pairs ("the right call beats a wrong one", "a call beats a refusal"),
//! then runs PPO against that reward model alone — the policy never sees the rule-based
//! checker. Held-out tasks, whose requests never occur in training, are scored by that checker
//! before training, after the warm-up and after PPO (format accuracy, argument match, exact-call
//! success), and the reward model's accuracy on held-out preference pairs is reported. The same
//! run as a run file: `agent-rl train ppo --config examples/configs/ppo_toy.toml`.

use std::path::PathBuf;
use std::sync::Arc;

use agent_rl::algos::pipeline::{Pipeline, PpoStage, RewardModelStage, SftStage, ToolUseEvaluator};
use agent_rl::algos::toy::{
    ToyKind, toy_model_config, toy_preferences, toy_reluctant_sft_dataset, toy_rlhf_tasks,
    toy_tokenizer, toy_warmup_config,
};
use agent_rl::algos::{LrSchedule, OptimizerConfig, PpoConfig, RewardConfig};
use agent_rl::core::weights::random_model;
use agent_rl::core::{AgentLoopConfig, SamplingConfig};
use agent_rl::progress::StageProgress;
use anyhow::Context;
use burn::tensor::backend::AutodiffBackend;
use clap::Parser;
use serde_json::json;

/// Command-line options of the demo.
#[derive(Debug, Parser)]
#[command(about = "SFT → reward model → PPO on the toy tool-use task (embedded, no download)")]
struct Args {
    /// A reduced run for CI (fewer PPO steps and held-out tasks).
    #[arg(long)]
    quick: bool,
    /// Write `{"before": …, "after_sft": …, "after": …, "reward_model": {"accuracy": …}}` here.
    #[arg(long)]
    summary: Option<PathBuf>,
    /// Run directory (config, metrics, reward model, reward curve, final model).
    #[arg(long, default_value = "runs/rlhf_toy")]
    run_dir: PathBuf,
    /// Clear an earlier run from the run directory first (without it a used one is refused).
    #[arg(long)]
    overwrite: bool,
    /// Seed of the model, the tasks and sampling.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Share of the city (weather, time) requests the warm-up's teacher declines.
    #[arg(long, default_value_t = 0.7)]
    refusal: f32,
    /// SFT warm-up steps (batch 16).
    #[arg(long, default_value_t = 300)]
    sft_steps: usize,
    /// Reward-model steps (16 pairs each).
    #[arg(long, default_value_t = 150)]
    rm_steps: usize,
    /// PPO steps (default 30, quick 10).
    #[arg(long)]
    ppo_steps: Option<usize>,
    /// PPO learning rate.
    #[arg(long, default_value_t = 6e-4)]
    ppo_lr: f64,
    /// PPO's KL coefficient to the warm-up model.
    #[arg(long, default_value_t = 0.3)]
    kl_coef: f32,
    /// PPO's approximate-KL early stop per rollout batch (`target_kl`).
    #[arg(long, default_value_t = 0.01)]
    target_kl: f32,
    /// Rollout batches that train only the critic before the policy moves.
    #[arg(long, default_value_t = 3)]
    critic_warmup_steps: usize,
}

fn optimizer(learning_rate: f64, warmup_steps: usize) -> OptimizerConfig {
    OptimizerConfig {
        learning_rate,
        lr_scheduler_type: LrSchedule::Constant,
        warmup_steps,
        ..OptimizerConfig::default()
    }
}

#[allow(clippy::print_stdout)]
fn run<B: AutodiffBackend>(args: &Args) -> anyhow::Result<()> {
    anyhow::ensure!(
        (0.0..=1.0).contains(&args.refusal),
        "--refusal {}: must lie in [0, 1]",
        args.refusal
    );
    let held_out_count = if args.quick { 40 } else { 90 };
    let ppo_steps = args.ppo_steps.unwrap_or(if args.quick { 10 } else { 30 });
    let tokenizer = Arc::new(toy_tokenizer()?);
    let model = random_model::<B>(&toy_model_config(), args.seed, 0.05, &Default::default())?;
    let (train, held_out) = toy_rlhf_tasks(4000, held_out_count, args.seed);
    let sft = toy_warmup_config(args.sft_steps, 16, args.seed);
    let reward_model = RewardConfig {
        max_steps: Some(args.rm_steps),
        batch_size: 16,
        seed: args.seed,
        optimizer: optimizer(1e-3, 10),
        ..RewardConfig::default()
    };
    let mut ppo = PpoConfig {
        prompts_per_step: 16,
        max_steps: ppo_steps,
        num_ppo_epochs: 2,
        num_mini_batches: 2,
        max_tool_iterations: 1,
        kl_coef: args.kl_coef,
        target_kl: Some(args.target_kl),
        critic_warmup_steps: args.critic_warmup_steps.min(ppo_steps.saturating_sub(1)),
        seed: args.seed,
        ..PpoConfig::default()
    }
    .with_max_completion_length(64);
    ppo.optimizer = optimizer(args.ppo_lr, 0);
    // CPU run: decode one shard of each step's rollouts per core.
    ppo.sampling.decode_shards = std::thread::available_parallelism().map_or(1, usize::from);
    let record = json!({
        "model": toy_model_config(), "sft": sft, "reward_model": reward_model, "ppo": ppo,
        "reward": "the reward model alone", "train_tasks": train.len(),
        "warmup_refusal": args.refusal,
        "held_out_tasks": held_out.len(), "seed": args.seed,
    });
    let warmup_rows = toy_reluctant_sft_dataset(&train, &ToyKind::CITY, args.refusal, args.seed);
    let evaluator = ToolUseEvaluator::new(held_out.clone(), 64).with_loop_config(AgentLoopConfig {
        sampling: SamplingConfig::greedy(64),
        max_tool_iterations: 1,
        ..AgentLoopConfig::default()
    });
    let report = Pipeline::builder(model, tokenizer)
        .add_stage(SftStage::new(sft, warmup_rows))
        .add_stage(
            RewardModelStage::new(reward_model, toy_preferences(&train, args.seed))
                .with_eval(toy_preferences(&held_out, args.seed.wrapping_add(1000))),
        )
        .add_stage(PpoStage::new(ppo, train).with_learned_reward())
        .with_evaluator(evaluator)
        .with_run_dir(&args.run_dir)
        .with_overwrite(args.overwrite)
        .with_config_record(record)
        .with_observer(StageProgress::default())
        .build()?
        .run()?;
    println!("{}", report.scores_table());
    if let Some(accuracy) = report.reward_model_accuracy() {
        println!(
            "reward model: {:.1}% of held-out preference pairs ranked right",
            100.0 * accuracy
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

/// mimalloc with purging off (`agent_rl::host_allocator`): stable peak memory from run to run.
#[global_allocator]
static ALLOCATOR: agent_rl::host_allocator::HostAllocator = agent_rl::host_allocator::HostAllocator;

fn main() -> anyhow::Result<()> {
    agent_rl::host_allocator::tune_host_allocator();
    agent_rl::host_threads::on_compute_pool(run_main)
}

/// The example, run on a worker of the compute pool (`agent_rl::host_threads`).
fn run_main() -> anyhow::Result<()> {
    run::<agent_rl::backend::CpuTrainBackend>(&Args::parse())
}
