//! One LoRA GRPO step on a model with Qwen2.5-0.5B's shapes, for the GPU check.
//!
//! The model: hidden 896, intermediate 4864, 14 heads, 2 KV heads, 24 layers (`--layers`), tied
//! embedding over the demo tokenizer's vocabulary (random weights; Qwen's 151,936-token
//! vocabulary would sample ids the demo tokenizer cannot decode). LoRA r = 16 on every
//! projection, the frozen base in bf16 (`--base-dtype`), 4 prompts of 128 tokens × K = 8
//! completions of exactly 128 tokens, β = 0.04 (the reference is the base with the adapters
//! off). The first step is a warm-up (CUDA compiles its kernels then); the last one is reported:
//! seconds per step, its rollout share, and tokens (prompt + completion) per second. Peak GPU
//! memory is sampled from outside by `scripts/gpu_check.sh` (`nvidia-smi`).
//!
//! ```text
//! cargo run --release -p agent-rl-bench --bin bench_lora_step -- [--device cpu|cuda] [--steps 2] [--layers 24]
//!     [--base-dtype bf16|f16|f32]
//! ```

use std::sync::Arc;

use agent_rl::algos::{GrpoConfig, GrpoTrainer, LrSchedule};
use agent_rl::backend::{DeviceKind, probe_cuda};
use agent_rl::core::lora::{BaseDtype, LoraConfig};
use agent_rl::core::weights::random_model;
use agent_rl::core::{ChatTokenizer, Message, Task};
use agent_rl::rewards::{FnReward, Sample};
use agent_rl_bench::{plain_toy_tokenizer, positive, qwen05_layers_config};
use anyhow::Context;
use burn::tensor::backend::AutodiffBackend;
use clap::Parser;
use serde_json::json;

const PROMPTS: usize = 4;
const GROUP: usize = 8;
const PROMPT_TOKENS: usize = 128;
const COMPLETION_TOKENS: usize = 128;

/// The command line.
#[derive(Debug, Parser)]
#[command(about = "One LoRA GRPO step on a model with Qwen2.5-0.5B's shapes")]
struct Args {
    /// `cpu`, or `cuda` (built with `--features cuda`).
    #[arg(long, default_value = "cpu")]
    device: DeviceKind,
    /// GRPO steps (at least 2: the first is warm-up; the last is reported).
    #[arg(long, default_value_t = 2)]
    steps: usize,
    /// Decoder layers.
    #[arg(long, default_value_t = 24, value_parser = positive)]
    layers: usize,
    /// Storage dtype of the frozen base: `bf16`, `f16` or `f32`.
    #[arg(long, default_value = "bf16")]
    base_dtype: BaseDtype,
}

fn parse_args() -> anyhow::Result<Args> {
    let parsed = Args::parse();
    anyhow::ensure!(
        parsed.steps >= 2,
        "--steps must be at least 2 (the first is warm-up)"
    );
    Ok(parsed)
}

/// A prompt text of `PROMPT_TOKENS` tokens (the first that many of a longer text).
fn prompt_text(tokenizer: &ChatTokenizer, salt: usize) -> anyhow::Result<String> {
    const WORDS: [&str; 6] = ["call", "the", "weather", "tool", "for", "paris"];
    let words: Vec<&str> = (0..PROMPT_TOKENS * 2)
        .map(|i| WORDS[(i * 7 + salt * 3) % WORDS.len()])
        .collect();
    let ids = tokenizer.encode(&words.join(" "))?;
    let cut = ids.get(..PROMPT_TOKENS).context("prompt text too short")?;
    Ok(tokenizer.decode(cut, false)?)
}

fn run<B: AutodiffBackend>(args: &Args, device: &B::Device) -> anyhow::Result<serde_json::Value> {
    let tokenizer = plain_toy_tokenizer()?;
    let config = qwen05_layers_config(args.layers, tokenizer.vocab_size());
    let tasks: Vec<Task> = (0..PROMPTS)
        .map(|index| {
            Ok(Task {
                id: format!("prompt-{index}"),
                messages: vec![Message::user(prompt_text(&tokenizer, index)?)],
                tools: Vec::new(),
                data: serde_json::Value::Null,
            })
        })
        .collect::<anyhow::Result<_>>()?;
    let model = random_model::<B>(&config, 0, 0.02, device)?;
    let mut grpo = GrpoConfig {
        num_generations: GROUP,
        prompts_per_step: PROMPTS,
        max_steps: args.steps,
        beta: 0.04,
        seed: 0,
        ..GrpoConfig::default()
    }
    .with_max_completion_length(COMPLETION_TOKENS);
    grpo.sampling.ignore_eos = true;
    grpo.optimizer.lr_scheduler_type = LrSchedule::Constant;
    // Rewards that differ within a group, so every completion enters the loss.
    let reward = FnReward::new("length_of_text", |sample: Sample<'_>| {
        let text: usize = sample.trajectory.turns.iter().map(|t| t.text.len()).sum();
        Some((text % 7) as f32)
    });
    let lora = LoraConfig {
        r: 16,
        alpha: 32.0,
        base_dtype: args.base_dtype,
        ..LoraConfig::default()
    };
    let mut trainer = GrpoTrainer::builder(model, Arc::new(tokenizer))
        .with_config(grpo)
        .with_lora(lora)
        .add_reward(reward)
        .build()?;
    let report = trainer.train(&tasks)?;
    let last = report.steps.last().context("no step was run")?;
    let tokens = (PROMPTS * GROUP * (PROMPT_TOKENS + COMPLETION_TOKENS)) as f64;
    Ok(json!({
        "device": format!("{:?}", args.device),
        "layers": args.layers,
        "base_dtype": args.base_dtype.to_string(),
        "lora_r": 16,
        "sequences": PROMPTS * GROUP,
        "step_s": last.step_time_secs,
        "rollout_s": last.rollout_time_secs,
        "tokens_per_s": tokens / last.step_time_secs,
        "first_step_s": report.steps.first().map(|step| step.step_time_secs),
    }))
}

agent_rl_bench::tuned_main!(run_main);

/// The benchmark, run on a worker of the compute pool.
fn run_main() -> anyhow::Result<()> {
    let args = parse_args()?;
    let report = match args.device {
        DeviceKind::Cpu => run::<agent_rl::backend::CpuTrainBackend>(&args, &Default::default())?,
        DeviceKind::Cuda => {
            probe_cuda()?;
            #[cfg(feature = "cuda")]
            {
                run::<burn::backend::Autodiff<agent_rl::backend::CudaBackend>>(
                    &args,
                    &Default::default(),
                )?
            }
            #[cfg(not(feature = "cuda"))]
            unreachable!("probe_cuda fails without the cuda feature")
        }
    };
    #[allow(clippy::print_stdout)]
    {
        println!("{report}");
    }
    Ok(())
}
