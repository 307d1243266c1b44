//! Benchmark of the policy on the CPU (or CUDA): generation throughput and one training step.
//!
//! Same configuration as `benches/bench_reference.py` (transformers); `benches/run_bench.sh`
//! runs both in one go and prints them side by side. Output: one JSON line.
//!
//! ```text
//! cargo run --release -p agent-rl-bench --bin bench_policy -- [--device cpu|cuda] [--repeats 3] [--prompt-length 16] \
//!     [--sequences 64] [--new-tokens 64] [--no-train]
//! ```
//! `--prompt-length` sets the generation prompts' length (`--sequences` distinct prompts ×
//! `--new-tokens` new tokens; the model's position window grows to fit). Besides the whole
//! generation it times a prefill alone (one new token) and reports the decode cost per step,
//! `(generate_s - prefill_s) / (new_tokens - 1)`: the cost of one token for every sequence with
//! the cache at about the prompt's length. `--no-train` skips the training step.

use std::time::Instant;

use agent_rl::algos::{OptimizerConfig, adamw_config, clip_grad_norm};
use agent_rl::backend::{DeviceKind, probe_cuda};
use agent_rl::core::Qwen2ForCausalLm;
use agent_rl::core::generation::{SamplingConfig, generate_ids, token_scores};
use agent_rl::core::weights::random_model;
use agent_rl_bench::{Lcg, bench_config, median, peak_rss_bytes, positive};
use burn::module::AutodiffModule;
use burn::optim::{GradientsParams, Optimizer};
use burn::prelude::*;
use burn::tensor::backend::AutodiffBackend;
use clap::Parser;
use serde_json::json;

fn ids(seed: u64, batch: usize, len: usize) -> Vec<Vec<u32>> {
    let mut lcg = Lcg::new(seed.wrapping_mul(6364136223846793005).wrapping_add(1));
    (0..batch)
        .map(|_| (0..len).map(|_| lcg.below(1000) as u32).collect())
        .collect()
}

fn run<B: AutodiffBackend>(
    device: &B::Device,
    repeats: usize,
    shape: Shape,
) -> anyhow::Result<serde_json::Value> {
    let Shape {
        prompt_length,
        sequences,
        new_tokens,
        train,
    } = shape;
    let base = bench_config(1024);
    let config = agent_rl::core::Qwen2Config {
        max_position_embeddings: base.max_position_embeddings.max(prompt_length + new_tokens),
        ..base
    };
    let model: Qwen2ForCausalLm<B> = random_model(&config, 0, 0.02, device)?;
    let inference = model.valid();
    let prompts = ids(1, sequences, prompt_length);
    let sampling = SamplingConfig {
        ignore_eos: true,
        ..SamplingConfig::greedy(new_tokens)
    };
    let prefill_only = SamplingConfig {
        max_new_tokens: 1,
        ..sampling.clone()
    };
    generate_ids(
        &inference,
        &prompts[..4.min(sequences)],
        &SamplingConfig {
            max_new_tokens: 4,
            ..sampling.clone()
        },
        &[],
    )?;
    let (mut gen_times, mut prefill_times) = (Vec::new(), Vec::new());
    for _ in 0..repeats {
        let start = Instant::now();
        generate_ids(&inference, &prompts, &prefill_only, &[])?;
        prefill_times.push(start.elapsed().as_secs_f64());
        let start = Instant::now();
        let out = generate_ids(&inference, &prompts, &sampling, &[])?;
        anyhow::ensure!(out.iter().all(|g| g.token_ids.len() == new_tokens));
        gen_times.push(start.elapsed().as_secs_f64());
    }
    let generation = median(gen_times);
    let prefill = median(prefill_times);
    let generated = (sequences * new_tokens) as f64;
    let mut report = json!({
        "impl": "agent-rl (burn)",
        "backend": std::any::type_name::<B::InnerBackend>(),
        "prompt_length": prompt_length,
        "sequences": sequences,
        "new_tokens": new_tokens,
        "generate_s": generation,
        "generate_tokens_per_s": generated / generation,
        "prefill_s": prefill,
        "prefill_tokens_per_s": (sequences * prompt_length) as f64 / prefill,
        "decode_ms_per_step": 1e3 * (generation - prefill) / (new_tokens.max(2) - 1) as f64,
    });
    if !train {
        report["peak_rss_bytes"] = json!(peak_rss_bytes()?);
        return Ok(report);
    }
    let batch = ids(2, 64, 128);
    let flat: Vec<i64> = batch.iter().flatten().map(|&i| i64::from(i)).collect();
    let mask = vec![vec![true; 128]; 64];
    let optimizer_config = OptimizerConfig {
        learning_rate: 1e-5,
        ..OptimizerConfig::default()
    };
    let mut optimizer = adamw_config(&optimizer_config).init::<B, Qwen2ForCausalLm<B>>();
    let mut model = model;
    let mut train_times = Vec::new();
    for step in 0..=repeats {
        let start = Instant::now();
        let input =
            Tensor::<B, 2, Int>::from_data(TensorData::new(flat.clone(), [64, 128]), device);
        // token_scores (with entropies), as the GRPO policy forward computes them: measured faster
        // here than token_logprobs on the autodiff backend (4.5 s vs 5.3 s), cause not yet known.
        let loss = token_scores(&model, input, &mask, 127, 1.0)
            .logprobs
            .mean()
            .neg();
        let grads = loss.backward();
        let grads = GradientsParams::from_grads(grads, &model);
        let (grads, _) = clip_grad_norm(&model, grads, 1.0);
        model = optimizer.step(1e-5, model, grads);
        let _ = model
            .embed_tokens
            .weight
            .val()
            .slice([0..1, 0..1])
            .into_data();
        if step > 0 {
            train_times.push(start.elapsed().as_secs_f64());
        }
    }
    let train = median(train_times);
    report["train_step_s"] = json!(train);
    report["train_tokens_per_s"] = json!(64.0 * 128.0 / train);
    report["peak_rss_bytes"] = json!(peak_rss_bytes()?);
    Ok(report)
}

/// The generation workload (flags).
#[derive(Debug, Clone, Copy)]
struct Shape {
    prompt_length: usize,
    sequences: usize,
    new_tokens: usize,
    train: bool,
}

/// The command line.
#[derive(Debug, Parser)]
#[command(about = "Generation throughput and one training step of the bench model")]
struct Args {
    /// `cpu`, or `cuda` (built with `--features cuda`).
    #[arg(long, default_value = "cpu")]
    device: DeviceKind,
    /// Timed repeats of each measurement (the median is reported).
    #[arg(long, default_value_t = 3)]
    repeats: usize,
    /// Tokens of every generation prompt.
    #[arg(long, default_value_t = 16, value_parser = positive)]
    prompt_length: usize,
    /// Distinct prompts generated in one batch.
    #[arg(long, default_value_t = 64, value_parser = positive)]
    sequences: usize,
    /// Tokens generated per prompt (at least 2).
    #[arg(long, default_value_t = 64, value_parser = positive)]
    new_tokens: usize,
    /// Skip the training step.
    #[arg(long)]
    no_train: bool,
}

agent_rl_bench::tuned_main!(run_main);

/// The benchmark, run on a worker of the compute pool.
fn run_main() -> anyhow::Result<()> {
    let args = Args::parse();
    anyhow::ensure!(args.new_tokens >= 2, "--new-tokens must be at least 2");
    let (device, repeats) = (args.device, args.repeats);
    let shape = Shape {
        prompt_length: args.prompt_length,
        sequences: args.sequences,
        new_tokens: args.new_tokens,
        train: !args.no_train,
    };
    let report = match device {
        DeviceKind::Cpu => {
            run::<agent_rl::backend::CpuTrainBackend>(&Default::default(), repeats, shape)?
        }
        DeviceKind::Cuda => {
            probe_cuda()?;
            #[cfg(feature = "cuda")]
            {
                run::<burn::backend::Autodiff<agent_rl::backend::CudaBackend>>(
                    &Default::default(),
                    repeats,
                    shape,
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
