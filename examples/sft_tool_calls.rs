//! Supervised fine-tuning on tool-call conversations, in seconds on the CPU with no download.
//!
//! ```text
//! cargo run --release --example sft_tool_calls            # 40 steps
//! cargo run --release --example sft_tool_calls -- --quick # 10 steps, a smoke test
//! ```
//! The rows are conversations of the built-in toy tool-use family — a request, the assistant's
//! tool call, the tool's result, the assistant's answer — in the TRL `messages`/`tools` format
//! that `SftDataset::from_jsonl` also reads. A tiny Qwen2-architecture model (random weights)
//! learns them; the example prints the held-out loss before and after training, and one greedy
//! generation for a held-out request, with the tool calls parsed from it. After 40 steps the
//! tiny model has learnt the format and which tool to call; copying the argument out of the
//! request takes longer (the `grpo_qwen` demo adds GRPO for that).
//!
//! The same run from a config file: `agent-rl train sft --config examples/configs/sft_toy.toml`.

use std::sync::Arc;

use agent_rl::algos::sft::SftTrainer;
use agent_rl::algos::toy::{
    toy_model_config, toy_sft_dataset, toy_tasks, toy_tokenizer, toy_warmup_config,
};
use agent_rl::backend::CpuTrainBackend;
use agent_rl::core::weights::random_model;
use agent_rl::core::{BurnPolicy, ChatRequest, Policy, SamplingConfig};
use burn::module::AutodiffModule;
use clap::Parser;

/// Command-line options.
#[derive(Debug, Parser)]
#[command(about = "SFT of a tiny model on tool-call conversations (embedded data, no download)")]
struct Args {
    /// A smoke test: 10 steps (unless `--steps` says otherwise).
    #[arg(long)]
    quick: bool,
    /// Optimiser steps (default 40, quick 10).
    #[arg(long)]
    steps: Option<usize>,
    /// Seed of the model, the conversations and the data order.
    #[arg(long, default_value_t = 1)]
    seed: u64,
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
    let seed = args.seed;
    let steps = args.steps.unwrap_or(if args.quick { 10 } else { 40 });
    let tokenizer = Arc::new(toy_tokenizer()?);
    let model =
        random_model::<CpuTrainBackend>(&toy_model_config(), seed, 0.05, &Default::default())?;
    let train = toy_sft_dataset(&toy_tasks(320, seed));
    let held_out_tasks = toy_tasks(24, seed + 1000);
    let held_out = toy_sft_dataset(&held_out_tasks);

    // The eval loss comes from `with_eval_dataset` below, not from a split of `train`.
    let config = toy_warmup_config(steps, 8, seed);
    let mut trainer = SftTrainer::builder(model, Arc::clone(&tokenizer))
        .with_config(config)
        .with_eval_dataset(held_out.clone())
        .build()?;
    let before = trainer.evaluate(&held_out)?;
    let report = trainer.train(&train)?;
    let after = trainer.evaluate(&held_out)?;
    println!(
        "{} steps on {} conversations in {:.1}s",
        report.steps, report.num_train_examples, report.train_time_secs
    );
    println!(
        "held-out loss {:.3} -> {:.3} (token accuracy {:.1}% -> {:.1}%)",
        before.loss,
        after.loss,
        100.0 * before.mean_token_accuracy,
        100.0 * after.mean_token_accuracy
    );

    let task = &held_out_tasks[0];
    let request = ChatRequest {
        messages: task.messages.clone(),
        tools: task.tools.clone(),
    };
    let mut policy = BurnPolicy::new(trainer.into_model().valid(), tokenizer);
    let completion = policy
        .generate(&[request], &SamplingConfig::greedy(64))?
        .remove(0);
    println!("request:    {}", task.messages[0].text());
    println!("generation: {}", completion.text.trim());
    for call in &completion.parsed.tool_calls {
        println!("tool call:  {} {}", call.name, call.arguments);
    }
    Ok(())
}
