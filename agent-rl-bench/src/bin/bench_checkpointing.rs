//! Peak memory and time of one training step (forward + backward) with and without activation
//! checkpointing, on a random model with Qwen2.5-0.5B's layer shapes (hidden 896, intermediate
//! 4864, 14 heads, 2 KV heads) but fewer layers and a small vocabulary, on the CPU (Flex).
//!
//! Each configuration runs in a child process of its own, so that its peak resident set
//! (`VmHWM` in `/proc/self/status`, Linux) is its own. Output: a table and one JSON line.
//!
//! ```text
//! cargo run --release -p agent-rl-bench --bin bench_checkpointing -- [--layers 6] [--batch 4] [--seq 256]
//!     [--vocab 2048] [--repeats 2]
//! ```

use std::process::Command;
use std::time::Instant;

use agent_rl::core::generation::{token_scores, token_scores_checkpointed};
use agent_rl::core::model::backward_through;
use agent_rl::core::weights::random_model;
use agent_rl_bench::{peak_rss_bytes, positive, qwen05_layers_config, rss_bytes};
use anyhow::{Context, bail};
use burn::backend::{Autodiff, Flex};
use burn::optim::GradientsParams;
use burn::prelude::*;
use clap::Parser;
use serde_json::{Value, json};

type B = Autodiff<Flex>;

/// The command line: the shape of the run, and the mode when this is a child process.
#[derive(Debug, Clone, Parser)]
#[command(
    about = "Peak memory and time of a training step with and without activation checkpointing"
)]
struct Args {
    /// Decoder layers (Qwen2.5-0.5B's layer shapes).
    #[arg(long, default_value_t = 6, value_parser = positive)]
    layers: usize,
    /// Sequences per step.
    #[arg(long, default_value_t = 4, value_parser = positive)]
    batch: usize,
    /// Tokens per sequence (at least 4; the second half is scored).
    #[arg(long, default_value_t = 256, value_parser = positive)]
    seq: usize,
    /// Vocabulary size of the random model.
    #[arg(long, default_value_t = 2048, value_parser = positive)]
    vocab: usize,
    /// Steps per configuration (the fastest is reported).
    #[arg(long, default_value_t = 2, value_parser = positive)]
    repeats: usize,
    /// Run one configuration in this process (`plain` or `checkpointed`; set by the parent).
    #[arg(long, hide = true)]
    child: Option<String>,
}

fn parse_args() -> anyhow::Result<Args> {
    let args = Args::parse();
    if args.seq < 4 {
        bail!("--seq must be >= 4");
    }
    Ok(args)
}

/// Mebibytes of `bytes`.
fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

/// One configuration, in this process: the model, then `repeats` forward + backward steps.
fn run_child(args: &Args, checkpointing: bool) -> anyhow::Result<Value> {
    let device = Default::default();
    let model = random_model::<B>(
        &qwen05_layers_config(args.layers, args.vocab),
        3,
        0.02,
        &device,
    )?;
    let rows: Vec<i64> = (0..args.batch * args.seq)
        .map(|i| ((i * 7919 + 13) % args.vocab) as i64)
        .collect();
    let mask = vec![vec![true; args.seq]; args.batch];
    let completion = args.seq / 2;
    let model_mib = mib(rss_bytes()?);
    let mut secs = Vec::new();
    for _ in 0..args.repeats {
        let started = Instant::now();
        let ids = Tensor::<B, 2, Int>::from_data(
            TensorData::new(rows.clone(), [args.batch, args.seq]),
            &device,
        );
        let (scores, layers) = if checkpointing {
            let (scores, layers) = token_scores_checkpointed(&model, ids, &mask, completion, 1.0);
            (scores, Some(layers))
        } else {
            (token_scores(&model, ids, &mask, completion, 1.0), None)
        };
        let loss = scores.logprobs.mean().neg();
        let grads = backward_through(loss, layers, &model);
        let grads = GradientsParams::from_grads(grads, &model);
        drop(grads);
        secs.push(started.elapsed().as_secs_f64());
    }
    secs.sort_by(f64::total_cmp);
    Ok(json!({
        "gradient_checkpointing": checkpointing,
        "peak_rss_mib": mib(peak_rss_bytes()?),
        "rss_after_model_mib": model_mib,
        "step_secs_min": secs[0],
    }))
}

// A benchmark's report is its output.
#[allow(clippy::print_stdout)]
fn main() -> anyhow::Result<()> {
    let args = parse_args()?;
    if let Some(mode) = &args.child {
        let result = run_child(&args, mode == "checkpointed")?;
        println!("{result}");
        return Ok(());
    }
    let exe = std::env::current_exe()?;
    let mut results = Vec::new();
    for mode in ["plain", "checkpointed"] {
        let output = Command::new(&exe)
            .args(std::env::args().skip(1))
            .args(["--child", mode])
            .output()
            .with_context(|| format!("running {}", exe.display()))?;
        if !output.status.success() {
            bail!(
                "{mode} run failed: {}",
                String::from_utf8_lossy(&output.stderr)
            );
        }
        let line = String::from_utf8(output.stdout)?;
        results.push(serde_json::from_str::<Value>(line.trim())?);
    }
    println!(
        "layers {} (hidden 896, intermediate 4864, 14/2 heads), vocab {}, batch {} x {} tokens",
        args.layers, args.vocab, args.batch, args.seq
    );
    println!(
        "{:<14} {:>14} {:>18} {:>12}",
        "checkpointing", "peak RSS MiB", "after model MiB", "step s"
    );
    for r in &results {
        println!(
            "{:<14} {:>14.0} {:>18.0} {:>12.2}",
            r["gradient_checkpointing"],
            r["peak_rss_mib"].as_f64().unwrap_or(f64::NAN),
            r["rss_after_model_mib"].as_f64().unwrap_or(f64::NAN),
            r["step_secs_min"].as_f64().unwrap_or(f64::NAN)
        );
    }
    let summary = json!({
        "layers": args.layers, "batch": args.batch, "seq": args.seq, "vocab": args.vocab,
        "runs": results,
    });
    println!("{summary}");
    Ok(())
}
