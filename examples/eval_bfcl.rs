//! Evaluate a local Qwen2/Qwen2.5 snapshot on BFCL's single-turn categories and print the
//! Markdown report (BFCL's own aggregates plus format accuracy, argument match, success rate).
//!
//! ```text
//! cargo run --release --example eval_bfcl -- --model ~/models/Qwen2.5-0.5B-Instruct \
//!     --data $AGENT_RL_DATA/bfcl --limit 20 --categories simple_python,multiple
//! cargo run --release --features cuda --example eval_bfcl -- --device cuda --model … --data …
//! ```
//! The data folder is BFCL's own (`BFCL_v4_*.json` and `possible_answer/`, e.g. from the
//! `bfcl-eval` package's `bfcl_eval/data/`). Answers are greedy; multi-turn categories are listed
//! as not supported. The library calls are [`BfclRunner`] over a [`BurnPolicy`].

use std::path::PathBuf;
use std::sync::Arc;

use agent_rl::backend::{DeviceKind, probe_cuda};
use agent_rl::core::weights::{LoadOptions, load_pretrained};
use agent_rl::core::{BurnPolicy, ChatTokenizer, SamplingConfig};
use agent_rl::eval::bfcl::{BfclDataset, BfclRunConfig, BfclRunner, Category};
use anyhow::Context;
use burn::prelude::Backend;
use clap::Parser;

/// Command-line options.
#[derive(Debug, Parser)]
#[command(about = "Evaluate a local Qwen2 snapshot on BFCL")]
struct Args {
    /// Hugging Face snapshot directory (config.json, safetensors, tokenizer files).
    #[arg(long)]
    model: PathBuf,
    /// BFCL data folder (`BFCL_v4_*.json` + `possible_answer/`, or a folder holding `v4/`).
    #[arg(long)]
    data: PathBuf,
    /// At most this many entries per category (in file order).
    #[arg(long)]
    limit: Option<usize>,
    /// Categories to run (comma-separated v4 names); default all.
    #[arg(long, value_delimiter = ',')]
    categories: Vec<String>,
    /// Tokens generated at most per answer.
    #[arg(long, default_value_t = 512)]
    max_new_tokens: usize,
    /// Device: `cpu` (default) or `cuda` (built with `--features cuda`).
    #[arg(long, default_value = "cpu")]
    device: DeviceKind,
}

fn evaluate<B: Backend>(args: &Args) -> anyhow::Result<String> {
    let device = B::Device::default();
    let tokenizer = Arc::new(ChatTokenizer::from_dir(&args.model)?);
    let (model, _) = load_pretrained::<B>(&args.model, LoadOptions::default(), &device)
        .with_context(|| format!("loading {}", args.model.display()))?;
    let categories = args
        .categories
        .iter()
        .map(|name| Category::from_name(name).with_context(|| format!("unknown category `{name}`")))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let (_, version) = BfclDataset::detect(&args.data)?;
    let dataset = BfclDataset::load(&args.data)?;
    let config = BfclRunConfig {
        sampling: SamplingConfig::greedy(args.max_new_tokens),
        limit: args.limit,
        categories,
        ..BfclRunConfig::default()
    };
    let bar = indicatif::ProgressBar::new(0);
    let run = BfclRunner::new(&dataset, version, config)
        .with_progress(|done, total| {
            bar.set_length(total as u64);
            bar.set_position(done as u64);
        })
        .run(&mut BurnPolicy::new(model, tokenizer))?;
    bar.finish_and_clear();
    Ok(run.report.to_markdown())
}

#[allow(clippy::print_stdout)]
fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let report = match args.device {
        DeviceKind::Cpu => evaluate::<agent_rl::backend::CpuBackend>(&args)?,
        DeviceKind::Cuda => {
            probe_cuda()?;
            #[cfg(feature = "cuda")]
            {
                evaluate::<agent_rl::backend::CudaBackend>(&args)?
            }
            #[cfg(not(feature = "cuda"))]
            unreachable!("probe_cuda fails without the cuda feature")
        }
    };
    print!("{report}");
    Ok(())
}
