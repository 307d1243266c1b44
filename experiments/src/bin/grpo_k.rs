//! GRPO's group size K measured: K ∈ {2, 4, 8, 16} at the same number of completions per step.
//!
//! ```text
//! cargo run --release -p agent-rl-experiments --bin grpo_k -- --seeds 1,2,3 --steps 30 --out k.json
//! ```
//! Per seed, an SFT warm-up on the toy tool task's training requests ([`toy_sft_dataset`], or
//! the partly wrong teacher of [`toy_noisy_sft_dataset`] with `--confusion`); from that one
//! checkpoint, one GRPO arm per K with `ToolUseReward::default()`, each drawing
//! `completions-per-step / K` prompts per step (64 / K by default, so every arm generates as
//! many completions) for the same number of steps. Every arm is scored greedily on held-out
//! requests whose phrasings and operands never occur in training ([`ToySplit::HeldOut`]).
//! Prints one line per seed and K (held-out success and format accuracy, mean reward of the
//! first and last 5 steps, the GRPO arm's wall time), then a Markdown table over seeds; `--out`
//! writes every run's full reward curve as JSON.

use std::path::PathBuf;
use std::sync::Arc;

use agent_rl::algos::GrpoReport;
use agent_rl::algos::toy::{
    ToySplit, call_only, toy_model_config, toy_noisy_sft_dataset, toy_sft_dataset, toy_split_tasks,
    toy_tokenizer, toy_warmup_config,
};
use agent_rl::backend::CpuTrainBackend as B;
use agent_rl::core::weights::random_model;
use anyhow::{Context, bail};
use clap::Parser;
use serde_json::{Value, json};

use agent_rl_bench::mean_sd;
use agent_rl_experiments::{GrpoArm, grpo, score, sft};

/// Steps averaged at each end of a reward curve.
const CURVE_ENDS: usize = 5;

/// Command-line options.
#[derive(Debug, Parser)]
#[command(about = "GRPO group size K at a fixed number of completions per step")]
struct Args {
    /// Seeds of the model, data, warm-up and every arm (every one is run and reported).
    #[arg(long, value_delimiter = ',', default_value = "1,2,3")]
    seeds: Vec<u64>,
    /// Group sizes K to compare; each must divide `--completions-per-step`.
    #[arg(long, value_delimiter = ',', default_value = "2,4,8,16")]
    ks: Vec<usize>,
    /// Completions generated per GRPO step (prompts per step × K).
    #[arg(long, default_value_t = 64)]
    completions_per_step: usize,
    /// GRPO optimiser steps of each arm.
    #[arg(long, default_value_t = 30)]
    steps: usize,
    /// SFT warm-up steps (batch 16).
    #[arg(long, default_value_t = 100)]
    sft_steps: usize,
    /// Share of city requests the warm-up's teacher demonstrates with the wrong tool (0: the
    /// correct demonstrations).
    #[arg(long, default_value_t = 0.0)]
    confusion: f32,
    /// GRPO learning rate.
    #[arg(long, default_value_t = 1e-3)]
    grpo_lr: f64,
    /// GRPO KL coefficient.
    #[arg(long, default_value_t = 0.04)]
    beta: f32,
    /// Held-out requests per evaluation.
    #[arg(long, default_value_t = 120)]
    held_out: usize,
    /// Where to write every run's scores and full reward curve (JSON).
    #[arg(long)]
    out: Option<PathBuf>,
}

impl Args {
    /// Rejects settings the benchmark cannot run, naming the flag.
    fn validate(&self) -> anyhow::Result<()> {
        if self.seeds.is_empty() {
            bail!("--seeds: give at least one seed");
        }
        if self.ks.is_empty() {
            bail!("--ks: give at least one group size");
        }
        for &k in &self.ks {
            if k < 2 || !self.completions_per_step.is_multiple_of(k) {
                bail!(
                    "--ks: K = {k} must be at least 2 and divide --completions-per-step ({})",
                    self.completions_per_step
                );
            }
        }
        if self.steps == 0 {
            bail!("--steps: must be at least 1");
        }
        if !(0.0..=1.0).contains(&self.confusion) {
            bail!("--confusion: {} is not a share in [0, 1]", self.confusion);
        }
        Ok(())
    }
}

/// One GRPO arm's results for one seed.
struct Run {
    k: usize,
    seed: u64,
    success_rate: f32,
    format_accuracy: f32,
    argument_match: f32,
    rewards: Vec<f32>,
    wall_secs: f64,
}

impl Run {
    fn new(
        k: usize,
        seed: u64,
        scores: &agent_rl::algos::ToolUseScores,
        report: &GrpoReport,
    ) -> Self {
        Self {
            k,
            seed,
            success_rate: scores.success_rate,
            format_accuracy: scores.format_accuracy,
            argument_match: scores.argument_match,
            rewards: report.steps.iter().map(|m| m.reward).collect(),
            wall_secs: report.elapsed_secs,
        }
    }

    /// Mean reward of the first and of the last [`CURVE_ENDS`] steps.
    fn reward_ends(&self) -> (f32, f32) {
        let n = CURVE_ENDS.min(self.rewards.len()).max(1);
        let mean = |values: &[f32]| values.iter().sum::<f32>() / values.len().max(1) as f32;
        let last = self.rewards.len().saturating_sub(n);
        (
            mean(&self.rewards[..n.min(self.rewards.len())]),
            mean(&self.rewards[last..]),
        )
    }

    fn secs_per_step(&self) -> f64 {
        self.wall_secs / self.rewards.len().max(1) as f64
    }

    fn to_json(&self, prompts_per_step: usize) -> Value {
        json!({
            "k": self.k, "prompts_per_step": prompts_per_step, "seed": self.seed,
            "success_rate": self.success_rate, "format_accuracy": self.format_accuracy,
            "argument_match": self.argument_match, "wall_secs": self.wall_secs,
            "secs_per_step": self.secs_per_step(), "reward_curve": self.rewards,
        })
    }
}

agent_rl_bench::tuned_main!(run_main);

/// The study, run on a worker of the compute pool.
#[allow(clippy::print_stdout)]
fn run_main() -> anyhow::Result<()> {
    let args = Args::parse();
    args.validate()?;
    let tokenizer = Arc::new(toy_tokenizer()?);
    let (mut runs, mut warm_ups) = (Vec::new(), Vec::new());
    for &seed in &args.seeds {
        let train = toy_split_tasks(ToySplit::Train, 4000, seed);
        let rows = if args.confusion > 0.0 {
            toy_noisy_sft_dataset(&train, args.confusion, seed)
        } else {
            toy_sft_dataset(&train)
        };
        let held_out = call_only(toy_split_tasks(
            ToySplit::HeldOut,
            args.held_out,
            seed + 1000,
        ));
        let train = call_only(train);
        let model = random_model::<B>(&toy_model_config(), seed, 0.05, &Default::default())?;
        let warm = sft(
            model,
            &tokenizer,
            toy_warmup_config(args.sft_steps, 16, seed),
            &rows,
        )?;
        let warm_score = score(&warm, &tokenizer, &held_out)?;
        println!(
            "seed {seed}: after SFT held-out success {:.3}, format {:.3}",
            warm_score.success_rate, warm_score.format_accuracy
        );
        warm_ups.push(json!({
            "seed": seed, "success_rate": warm_score.success_rate,
            "format_accuracy": warm_score.format_accuracy,
            "argument_match": warm_score.argument_match,
        }));
        for &k in &args.ks {
            let arm = GrpoArm {
                num_generations: k,
                prompts_per_step: args.completions_per_step / k,
                steps: args.steps,
                learning_rate: args.grpo_lr,
                beta: args.beta,
                seed,
            };
            let (trained, report) = grpo(warm.clone(), &tokenizer, &train, arm)?;
            let run = Run::new(k, seed, &score(&trained, &tokenizer, &held_out)?, &report);
            let (first, last) = run.reward_ends();
            println!(
                "seed {seed}, K {k:>2} ({:>2} prompts): held-out success {:.3}, format {:.3}; \
                 reward first-{CURVE_ENDS} {first:.3} → last-{CURVE_ENDS} {last:.3}; \
                 {:.1} s ({:.2} s/step)",
                arm.prompts_per_step,
                run.success_rate,
                run.format_accuracy,
                run.wall_secs,
                run.secs_per_step()
            );
            runs.push(run);
        }
    }
    print_table(&args, &runs, &warm_ups);
    if let Some(path) = &args.out {
        let record = json!({
            "command": std::env::args().collect::<Vec<_>>().join(" "),
            "completions_per_step": args.completions_per_step, "steps": args.steps,
            "sft_steps": args.sft_steps, "confusion": args.confusion, "grpo_lr": args.grpo_lr,
            "beta": args.beta, "held_out": args.held_out,
            "warm_up": warm_ups,
            "runs": runs
                .iter()
                .map(|run| run.to_json(args.completions_per_step / run.k))
                .collect::<Vec<_>>(),
        });
        std::fs::write(path, serde_json::to_string_pretty(&record)?)
            .with_context(|| format!("--out: writing {}", path.display()))?;
        println!("wrote {}", path.display());
    }
    Ok(())
}

/// The Markdown table over seeds, one row per K.
#[allow(clippy::print_stdout)]
fn print_table(args: &Args, runs: &[Run], warm_ups: &[Value]) {
    let warm: Vec<f32> = warm_ups
        .iter()
        .filter_map(|w| w["success_rate"].as_f64().map(|v| v as f32))
        .collect();
    let (warm_mean, warm_sd) = mean_sd(&warm);
    println!(
        "\nover {} seeds, {} GRPO steps each; held-out success after the SFT warm-up \
         {warm_mean:.3} ± {warm_sd:.3}\n",
        args.seeds.len(),
        args.steps
    );
    println!(
        "| K | prompts × K | held-out success (mean ± sd) | format accuracy | \
         reward first-{CURVE_ENDS} → last-{CURVE_ENDS} | s / step |"
    );
    println!("|---:|---:|---:|---:|---:|---:|");
    for &k in &args.ks {
        let arm: Vec<&Run> = runs.iter().filter(|run| run.k == k).collect();
        let of = |f: fn(&Run) -> f32| mean_sd(&arm.iter().map(|run| f(run)).collect::<Vec<_>>());
        let (success, success_sd) = of(|run| run.success_rate);
        let (format, format_sd) = of(|run| run.format_accuracy);
        let (first, _) = of(|run| run.reward_ends().0);
        let (last, _) = of(|run| run.reward_ends().1);
        let (secs, _) = of(|run| run.secs_per_step() as f32);
        println!(
            "| {k} | {} × {k} | {success:.3} ± {success_sd:.3} | {format:.3} ± {format_sd:.3} | \
             {first:.3} → {last:.3} | {secs:.2} |",
            args.completions_per_step / k
        );
    }
}
