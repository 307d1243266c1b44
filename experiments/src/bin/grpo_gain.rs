//! GRPO against a control arm where imitation plateaus: a measurement, seed by seed.
//!
//! ```text
//! cargo run --release -p agent-rl-experiments --bin grpo_gain -- --seeds 1,2,3
//! ```
//! The demonstrations come from a teacher that calls `get_time` on a share of the weather
//! requests ([`toy_biased_sft_dataset`], `--confusion`, 0.7; `--symmetric` swaps both city tools
//! instead, [`toy_noisy_sft_dataset`]). An SFT warm-up (300 steps × 16) imitates them; from that checkpoint two arms run for the same number of optimiser steps on the same
//! number of sequences per step (64): GRPO with `ToolUseReward::default()`, and more SFT on the
//! same demonstrations (the control). All three models are scored greedily on held-out requests
//! whose phrasings and operands never occur in training ([`ToySplit::HeldOut`]). Prints, per
//! seed and model, the first calls broken down by request kind (right tool / right arguments /
//! both, [`toy_call_breakdown`]), one line per seed, the mean gain of each arm over the warm-up
//! with its standard deviation, and GRPO's margin over the control.

use std::sync::Arc;

use agent_rl::algos::toy::{
    ToyCallBreakdown, ToySplit, call_only, toy_biased_sft_dataset, toy_call_breakdown,
    toy_model_config, toy_noisy_sft_dataset, toy_split_tasks, toy_tokenizer, toy_warmup_config,
};
use agent_rl::backend::CpuTrainBackend as B;
use agent_rl::core::weights::random_model;
use clap::Parser;

use agent_rl_bench::mean_sd;
use agent_rl_experiments::{GrpoArm, grpo, score, sft};

/// Command-line options.
#[derive(Debug, Parser)]
#[command(about = "GRPO vs more SFT from a warm-up on partly wrong demonstrations")]
struct Args {
    /// Seeds of the model, data, warm-up and both arms (every one is run and reported).
    #[arg(long, value_delimiter = ',', default_value = "1,2,3")]
    seeds: Vec<u64>,
    /// Share of (weather, or with `--symmetric` all city) requests the teacher demonstrates
    /// with the wrong tool.
    #[arg(long, default_value_t = 0.7)]
    confusion: f32,
    /// The symmetric teacher (`toy_noisy_sft_dataset`: both city tools swapped) instead of the
    /// one-sided one (`toy_biased_sft_dataset`: weather requests get `get_time`).
    #[arg(long)]
    symmetric: bool,
    /// SFT warm-up steps (batch 16).
    #[arg(long, default_value_t = 300)]
    sft_steps: usize,
    /// Optimiser steps of each arm (64 sequences per step).
    #[arg(long, default_value_t = 30)]
    arm_steps: usize,
    /// GRPO learning rate.
    #[arg(long, default_value_t = 1e-3)]
    grpo_lr: f64,
    /// GRPO KL coefficient.
    #[arg(long, default_value_t = 0.04)]
    beta: f32,
    /// Held-out requests per evaluation.
    #[arg(long, default_value_t = 120)]
    held_out: usize,
}

agent_rl_bench::tuned_main!(run_main);

/// The study, run on a worker of the compute pool.
#[allow(clippy::print_stdout)]
fn run_main() -> anyhow::Result<()> {
    let args = Args::parse();
    let tokenizer = Arc::new(toy_tokenizer()?);
    let (mut grpo_gains, mut sft_gains, mut gaps) = (Vec::new(), Vec::new(), Vec::new());
    for &seed in &args.seeds {
        let started = std::time::Instant::now();
        let train = toy_split_tasks(ToySplit::Train, 4000, seed);
        let rows = if args.symmetric {
            toy_noisy_sft_dataset(&train, args.confusion, seed)
        } else {
            toy_biased_sft_dataset(&train, args.confusion, seed)
        };
        let held_out = call_only(toy_split_tasks(
            ToySplit::HeldOut,
            args.held_out,
            seed + 1000,
        ));
        let model = random_model::<B>(&toy_model_config(), seed, 0.05, &Default::default())?;
        let warm = sft(
            model,
            &tokenizer,
            toy_warmup_config(args.sft_steps, 16, seed),
            &rows,
        )?;
        let warm_score = score(&warm, &tokenizer, &held_out)?;
        let warm_breakdown = toy_call_breakdown(&warm, &tokenizer, &held_out, 64)?;
        let control = sft(
            warm.clone(),
            &tokenizer,
            toy_warmup_config(args.arm_steps, 64, seed + 100),
            &rows,
        )?;
        let control_score = score(&control, &tokenizer, &held_out)?;
        let arm = GrpoArm {
            num_generations: 8,
            prompts_per_step: 8,
            steps: args.arm_steps,
            learning_rate: args.grpo_lr,
            beta: args.beta,
            seed,
        };
        let (trained, _) = grpo(warm, &tokenizer, &call_only(train), arm)?;
        let grpo_score = score(&trained, &tokenizer, &held_out)?;
        print_breakdown(seed, "SFT", &warm_breakdown);
        for (name, model) in [("+SFT", &control), ("+GRPO", &trained)] {
            let b = toy_call_breakdown(model, &tokenizer, &held_out, 64)?;
            print_breakdown(seed, name, &b);
        }
        println!(
            "seed {seed}: held-out success after SFT {:.3}, + SFT {:.3}, + GRPO {:.3} \
             (argument match {:.3} / {:.3} / {:.3}); {:.0} s",
            warm_score.success_rate,
            control_score.success_rate,
            grpo_score.success_rate,
            warm_score.argument_match,
            control_score.argument_match,
            grpo_score.argument_match,
            started.elapsed().as_secs_f64()
        );
        grpo_gains.push(grpo_score.success_rate - warm_score.success_rate);
        sft_gains.push(control_score.success_rate - warm_score.success_rate);
        gaps.push(grpo_score.success_rate - control_score.success_rate);
    }
    let (grpo_mean, grpo_sd) = mean_sd(&grpo_gains);
    let (sft_mean, sft_sd) = mean_sd(&sft_gains);
    println!(
        "over {} seeds: GRPO gain {grpo_mean:+.3} (sd {grpo_sd:.3}), more-SFT gain {sft_mean:+.3} \
         (sd {sft_sd:.3})",
        args.seeds.len()
    );
    let (gap_mean, gap_sd) = mean_sd(&gaps);
    println!(
        "GRPO minus more SFT: {gap_mean:+.3} (sd {gap_sd:.3}, standard error {:.3}; per seed {gaps:.3?})",
        gap_sd / (gaps.len() as f32).sqrt()
    );
    Ok(())
}

#[allow(clippy::print_stdout)]
fn print_breakdown(seed: u64, name: &str, b: &ToyCallBreakdown) {
    let c = |counts: &agent_rl::algos::toy::CallCounts| {
        format!(
            "tool {:.2} args {:.2} exact {:.2}",
            counts.share(counts.right_tool),
            counts.share(counts.right_arguments),
            counts.share(counts.exact)
        )
    };
    println!(
        "  seed {seed} {name:6} weather: {} | time: {} | add: {}",
        c(&b.weather),
        c(&b.time),
        c(&b.add)
    );
}
