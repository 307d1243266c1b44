//! Evaluate a local Qwen2/Qwen2.5 snapshot on BFCL's single-turn categories and print the
//! Markdown report (BFCL's own aggregates plus format accuracy, argument match, success rate).
//!
//! ```text
//! cargo run --release --example eval_bfcl -- --model ~/models/Qwen2.5-0.5B-Instruct \
//!     --data $AGENT_RL_DATA/bfcl --limit 20 --categories simple_python,multiple
//! cargo run --release --features cuda --example eval_bfcl -- --device cuda --model … --data …
//! ```
//! The data folder is BFCL's own (`BFCL_v4_*.json` and `possible_answer/`, e.g. from the
//! `bfcl-eval` package's `bfcl_eval/data/`). Answers are greedy; multi-turn categories run through
//! the multi-turn loop when the folder has `multi_turn_func_doc/`. The library calls are
//! [`BfclRunner`] over a [`BurnPolicy`].

use std::path::PathBuf;

use agent_rl::backend::{DeviceKind, PolicyJob, with_policy};
use agent_rl::core::{BurnPolicy, SamplingConfig};
use agent_rl::eval::bfcl::multi_turn::MultiTurnDocs;
use agent_rl::eval::bfcl::{BfclDataset, BfclRunConfig, BfclRunner, Category};
use agent_rl::progress::count_progress;
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

/// Runs BFCL with the loaded policy and returns the Markdown report.
struct Evaluate(Args);

impl PolicyJob for Evaluate {
    type Output = String;

    fn run<B: Backend>(self, mut policy: BurnPolicy<B>) -> anyhow::Result<String> {
        let args = self.0;
        let categories = Category::from_names(args.categories.iter().map(String::as_str))
            .map_err(|name| anyhow::anyhow!("unknown category `{name}`"))?;
        let (folder, version) = BfclDataset::detect(&args.data)?;
        let dataset = BfclDataset::load(&args.data)?;
        let docs = if folder.join("multi_turn_func_doc").is_dir() {
            Some(MultiTurnDocs::load(&folder)?)
        } else {
            None
        };
        let config = BfclRunConfig {
            sampling: SamplingConfig::greedy(args.max_new_tokens),
            limit: args.limit,
            categories,
            ..BfclRunConfig::default()
        };
        let bar = indicatif::ProgressBar::new(0);
        let mut runner =
            BfclRunner::new(&dataset, version, config).with_progress(count_progress(&bar));
        if let Some(docs) = &docs {
            runner = runner.with_multi_turn_docs(docs);
        }
        let run = runner.run(&mut policy)?;
        bar.finish_and_clear();
        Ok(run.report.to_markdown())
    }
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
    let (model, device) = (args.model.clone(), args.device);
    let report = with_policy(&model, device, Evaluate(args))?;
    print!("{report}");
    Ok(())
}
