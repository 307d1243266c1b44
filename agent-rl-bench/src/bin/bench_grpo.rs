//! Benchmark of one GRPO step next to TRL's `GRPOTrainer`, on the same model, tokenizer and prompts.
//!
//! Workload (every size a flag): K = 8 completions for each of 8 prompts per
//! step, 64-token prompts, 64 completion tokens (eos ignored, so every completion has exactly
//! that many), `beta = 0.04` (a frozen reference model scores every completion), temperature 1,
//! AdamW, gradient checkpointing off unless `--gradient-checkpointing on` (TRL's flag of the
//! same name; a memory setting, so the JSON line states it). The model is the policy
//! benchmark's Qwen2 (hidden 256, intermediate 704, 4 layers, 4 heads, 2 KV heads) over the fixture
//! tokenizer's 384-token vocabulary.
//!
//! The program writes the model (`save_pretrained`), the tokenizer and the prompt texts to
//! `--out DIR`, runs `--steps` GRPO steps and prints one JSON line (`seconds_per_step` and
//! `peak_rss_bytes` among its keys); `benches/bench_grpo_trl.py` takes the same flags and loads
//! the same directory into TRL. `benches/run_bench_grpo.sh` runs both in one go.
//!
//! ```text
//! cargo run --release -p agent-rl-bench --bin bench_grpo -- [--out target/bench_grpo] [--steps 4] \
//!     [--prompt-length 64] [--completion-length 64] [--num-generations 8] [--prompts 8] \
//!     [--gradient-checkpointing off|on]
//! ```

use std::path::PathBuf;
use std::sync::Arc;

use agent_rl::algos::{GrpoConfig, GrpoTrainer, LrSchedule};
use agent_rl::backend::CpuTrainBackend;
use agent_rl::core::weights::{SaveOptions, random_model, save_pretrained};
use agent_rl::core::{ChatTokenizer, Message, Task};
use agent_rl::rewards::{FnReward, Reward, Sample};
use agent_rl_bench::{
    Lcg, OnOff, bench_config, median, peak_rss_bytes, plain_toy_tokenizer, positive,
};
use clap::Parser;
use serde_json::json;

/// The workload's sizes (flags; `benches/bench_grpo_trl.py` takes the same).
#[derive(Debug, Parser)]
#[command(
    about = "One GRPO step, timed, on the workload TRL's side runs (benches/run_bench_grpo.sh)"
)]
struct Workload {
    /// Where the model, tokenizer and prompt texts are written (TRL's side loads them).
    #[arg(long, default_value = "target/bench_grpo")]
    out: PathBuf,
    /// Tokens of every prompt.
    #[arg(long = "prompt-length", default_value_t = 64, value_parser = positive)]
    prompt_tokens: usize,
    /// Tokens of every completion (eos ignored).
    #[arg(long = "completion-length", default_value_t = 64, value_parser = positive)]
    completion_tokens: usize,
    /// Prompts per step.
    #[arg(long, default_value_t = 8, value_parser = positive)]
    prompts: usize,
    /// Completions per prompt (K, at least 2).
    #[arg(long, default_value_t = 8, value_parser = positive)]
    num_generations: usize,
    /// GRPO steps (at least 2: the first is warm-up and not timed).
    #[arg(long, default_value_t = 4, value_parser = positive)]
    steps: usize,
    /// Recompute each layer's activations in the backward pass.
    #[arg(long, value_enum, default_value_t = OnOff::Off)]
    gradient_checkpointing: OnOff,
}

/// Pays the share of the letter `e` in the completion: cheap, and it varies within a group.
fn share_of_e() -> impl Reward {
    FnReward::new("share_of_e", |sample: Sample<'_>| {
        let text: String = sample
            .trajectory
            .turns
            .iter()
            .map(|t| t.text.as_str())
            .collect();
        let es = text.chars().filter(|&c| c == 'e').count();
        Some(es as f32 / (text.chars().count() as f32 + 1.0))
    })
}

/// `count` texts of exactly `tokens` tokens each (checked by re-encoding).
fn prompt_texts(
    tokenizer: &ChatTokenizer,
    count: usize,
    tokens: usize,
) -> anyhow::Result<Vec<String>> {
    const WORDS: [&str; 16] = [
        "the", "tool", "call", "weather", "in", "paris", "returns", "a", "value", "of", "time",
        "add", "two", "numbers", "and", "answer",
    ];
    let mut lcg = Lcg::new(0x9e37_79b9_7f4a_7c15);
    let mut texts = Vec::new();
    while texts.len() < count {
        let mut text = String::new();
        while tokenizer.encode(&text)?.len() < tokens + 8 {
            text.push_str(WORDS[(lcg.next_state() >> 60) as usize]);
            text.push(' ');
        }
        let ids = tokenizer.encode(&text)?;
        let cut = tokenizer.decode(&ids[..tokens], false)?;
        if tokenizer.encode(&cut)?.len() == tokens {
            texts.push(cut);
        }
    }
    Ok(texts)
}

agent_rl_bench::tuned_main!(run_main);

/// The benchmark, run on a worker of the compute pool.
fn run_main() -> anyhow::Result<()> {
    let work = Workload::parse();
    let out = &work.out;
    anyhow::ensure!(
        work.steps >= 2,
        "--steps must be at least 2 (the first step is warm-up)"
    );
    anyhow::ensure!(
        work.num_generations >= 2,
        "--num-generations must be at least 2 (GRPO compares completions within a group)"
    );

    let tokenizer = plain_toy_tokenizer()?;
    let device = Default::default();
    let mut model_config = bench_config(tokenizer.vocab_size());
    model_config.max_position_embeddings = model_config
        .max_position_embeddings
        .max(work.prompt_tokens + work.completion_tokens);
    let model = random_model::<CpuTrainBackend>(&model_config, 0, 0.02, &device)?;
    let texts = prompt_texts(&tokenizer, work.prompts, work.prompt_tokens)?;
    save_pretrained(&model, out, SaveOptions::default())?;
    tokenizer.save_to_dir(out)?;
    std::fs::write(
        out.join("prompts.json"),
        serde_json::to_string_pretty(&texts)?,
    )?;

    let tasks: Vec<Task> = texts
        .iter()
        .enumerate()
        .map(|(i, text)| Task {
            id: format!("prompt-{i}"),
            messages: vec![Message::user(text.clone())],
            tools: Vec::new(),
            data: serde_json::Value::Null,
        })
        .collect();
    let mut config = GrpoConfig {
        num_generations: work.num_generations,
        prompts_per_step: work.prompts,
        max_steps: work.steps,
        beta: 0.04,
        seed: 0,
        gradient_checkpointing: work.gradient_checkpointing.is_on(),
        ..GrpoConfig::default()
    }
    .with_max_completion_length(work.completion_tokens);
    config.sampling.ignore_eos = true;
    config.sampling.temperature = 1.0;
    // One decoding shard per core (the CPU setting; see SamplingConfig::decode_shards).
    config.sampling.decode_shards = std::thread::available_parallelism().map_or(1, usize::from);
    config.optimizer.learning_rate = 1e-6;
    config.optimizer.lr_scheduler_type = LrSchedule::Constant;
    let mut trainer = GrpoTrainer::builder(model, Arc::new(tokenizer))
        .with_config(config)
        .add_reward(share_of_e())
        .build()?;
    let steps = trainer.train(&tasks)?.steps;
    anyhow::ensure!(
        steps
            .iter()
            .all(|m| (m.completions.mean_length - work.completion_tokens as f32).abs() < 1e-3),
        "completions were not forced to {} tokens",
        work.completion_tokens
    );
    let timed = &steps[1..];
    let step_s = median(timed.iter().map(|m| m.step_time_secs).collect());
    let rollout_s = median(timed.iter().map(|m| m.rollout_time_secs).collect());
    let generated = (work.prompts * work.num_generations * work.completion_tokens) as f64;
    #[allow(clippy::print_stdout)]
    {
        println!(
            "{}",
            json!({
                "impl": "agent-rl (burn)",
                "backend": std::any::type_name::<CpuTrainBackend>(),
                "prompt_length": work.prompt_tokens,
                "completion_length": work.completion_tokens,
                "num_generations": work.num_generations,
                "prompts": work.prompts,
                "gradient_checkpointing": work.gradient_checkpointing.is_on(),
                "steps_timed": timed.len(),
                "seconds_per_step": step_s,
                "step_s": step_s,
                "peak_rss_bytes": peak_rss_bytes()?,
                "generated_tokens_per_s": generated / step_s,
                "rollout_s": rollout_s,
                "rollout_tokens_per_s": generated / rollout_s,
                "kl_last": steps.last().map(|m| m.loss_metrics.kl),
            })
        );
    }
    Ok(())
}
