//! GRPO against a control arm where imitation plateaus: a measurement, seed by seed.
//!
//! ```text
//! cargo run --release --example grpo_gain -- --seeds 1,2,3
//! ```
//! The demonstrations come from a teacher that calls the wrong city tool on a share of the
//! weather and time requests ([`toy_noisy_sft_dataset`], `--confusion`). An SFT warm-up imitates
//! them; from that checkpoint two arms run for the same number of optimiser steps on the same
//! number of sequences per step (64): GRPO with `ToolUseReward::default()`, and more SFT on the
//! same demonstrations (the control). All three models are scored greedily on held-out requests
//! whose phrasings and operands never occur in training ([`ToySplit::HeldOut`]). Prints one line
//! per seed and the mean gain of each arm over the warm-up with its standard deviation.

use std::sync::Arc;

use agent_rl::algos::sft::{SftDataset, SftTrainer};
use agent_rl::algos::toy::{
    ToySplit, call_only, toy_model_config, toy_noisy_sft_dataset, toy_split_tasks, toy_tokenizer,
};
use agent_rl::algos::{
    GrpoConfig, GrpoTrainer, LrSchedule, OptimizerConfig, SftConfig, ToolUseScores,
    evaluate_tool_use,
};
use agent_rl::backend::CpuTrainBackend as B;
use agent_rl::core::weights::random_model;
use agent_rl::core::{
    AgentLoopConfig, ChatTokenizer, HermesToolCallParser, Qwen2ForCausalLm, SamplingConfig, Task,
};
use agent_rl::rewards::ToolUseReward;
use burn::module::AutodiffModule;
use clap::Parser;

/// Command-line options.
#[derive(Debug, Parser)]
#[command(about = "GRPO vs more SFT from a warm-up on partly wrong demonstrations")]
struct Args {
    /// Seeds of the model, data, warm-up and both arms (every one is run and reported).
    #[arg(long, value_delimiter = ',', default_value = "1,2,3")]
    seeds: Vec<u64>,
    /// Share of city requests the teacher demonstrates with the wrong tool.
    #[arg(long, default_value_t = 0.6)]
    confusion: f32,
    /// SFT warm-up steps (batch 16).
    #[arg(long, default_value_t = 100)]
    sft_steps: usize,
    /// Optimiser steps of each arm (64 sequences per step).
    #[arg(long, default_value_t = 30)]
    arm_steps: usize,
    /// GRPO learning rate.
    #[arg(long, default_value_t = 2e-3)]
    grpo_lr: f64,
    /// GRPO KL coefficient.
    #[arg(long, default_value_t = 0.04)]
    beta: f32,
    /// Held-out requests per evaluation.
    #[arg(long, default_value_t = 120)]
    held_out: usize,
}

fn sft_config(steps: usize, batch_size: usize, seed: u64) -> SftConfig {
    SftConfig {
        max_steps: Some(steps),
        batch_size,
        eval_fraction: 0.0,
        seed,
        optimizer: OptimizerConfig {
            learning_rate: 1e-2,
            lr_scheduler_type: LrSchedule::Constant,
            warmup_steps: 5,
            ..OptimizerConfig::default()
        },
        ..SftConfig::default()
    }
}

fn sft(
    model: Qwen2ForCausalLm<B>,
    tokenizer: &Arc<ChatTokenizer>,
    config: SftConfig,
    rows: &SftDataset,
) -> anyhow::Result<Qwen2ForCausalLm<B>> {
    let mut trainer = SftTrainer::builder(model, Arc::clone(tokenizer))
        .with_config(config)
        .build()?;
    trainer.train(rows)?;
    Ok(trainer.into_model())
}

fn grpo(
    model: Qwen2ForCausalLm<B>,
    tokenizer: &Arc<ChatTokenizer>,
    tasks: &[Task],
    seed: u64,
    args: &Args,
) -> anyhow::Result<Qwen2ForCausalLm<B>> {
    let mut config = GrpoConfig {
        num_generations: 8,
        prompts_per_step: 8,
        max_steps: args.arm_steps,
        beta: args.beta,
        seed,
        ..GrpoConfig::default()
    }
    .with_max_completion_length(64);
    config.optimizer.learning_rate = args.grpo_lr;
    config.optimizer.lr_scheduler_type = LrSchedule::Constant;
    config.sampling.decode_shards = std::thread::available_parallelism().map_or(1, usize::from);
    let mut trainer = GrpoTrainer::builder(model, Arc::clone(tokenizer))
        .with_config(config)
        .add_reward(ToolUseReward::default())
        .build()?;
    trainer.train(tasks)?;
    Ok(trainer.into_model())
}

fn score(
    model: &Qwen2ForCausalLm<B>,
    tokenizer: &ChatTokenizer,
    tasks: &[Task],
) -> anyhow::Result<ToolUseScores> {
    let config = AgentLoopConfig {
        sampling: SamplingConfig::greedy(64),
        max_tool_iterations: 1,
        ..AgentLoopConfig::default()
    };
    let parser = HermesToolCallParser::default();
    Ok(evaluate_tool_use(
        &model.valid(),
        tokenizer,
        &parser,
        tasks,
        None,
        config,
    )?)
}

fn mean_sd(values: &[f32]) -> (f32, f32) {
    let n = values.len().max(1) as f32;
    let mean = values.iter().sum::<f32>() / n;
    let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f32>() / (n - 1.0).max(1.0);
    (mean, var.sqrt())
}

#[allow(clippy::print_stdout)]
fn main() -> anyhow::Result<()> {
    agent_rl::host_allocator::tune_host_allocator();
    let args = Args::parse();
    let tokenizer = Arc::new(toy_tokenizer()?);
    let (mut grpo_gains, mut sft_gains) = (Vec::new(), Vec::new());
    for &seed in &args.seeds {
        let started = std::time::Instant::now();
        let train = toy_split_tasks(ToySplit::Train, 4000, seed);
        let rows = toy_noisy_sft_dataset(&train, args.confusion, seed);
        let held_out = call_only(toy_split_tasks(
            ToySplit::HeldOut,
            args.held_out,
            seed + 1000,
        ));
        let model = random_model::<B>(&toy_model_config(), seed, 0.05, &Default::default())?;
        let warm = sft(
            model,
            &tokenizer,
            sft_config(args.sft_steps, 16, seed),
            &rows,
        )?;
        let warm_score = score(&warm, &tokenizer, &held_out)?;
        let control = sft(
            warm.clone(),
            &tokenizer,
            sft_config(args.arm_steps, 64, seed + 100),
            &rows,
        )?;
        let control_score = score(&control, &tokenizer, &held_out)?;
        let trained = grpo(warm, &tokenizer, &call_only(train), seed, &args)?;
        let grpo_score = score(&trained, &tokenizer, &held_out)?;
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
    }
    let (grpo_mean, grpo_sd) = mean_sd(&grpo_gains);
    let (sft_mean, sft_sd) = mean_sd(&sft_gains);
    println!(
        "over {} seeds: GRPO gain {grpo_mean:+.3} (sd {grpo_sd:.3}), more-SFT gain {sft_mean:+.3} \
         (sd {sft_sd:.3})",
        args.seeds.len()
    );
    Ok(())
}
