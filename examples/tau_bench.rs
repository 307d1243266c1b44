//! A local Qwen2/Qwen2.5 snapshot as a τ-bench agent, with the same model simulating the customer
//! (τ-bench's LLM user simulator); prints average reward, pass^k and tool-call statistics.
//!
//! ```text
//! cargo run --release --example tau_bench -- --model ~/models/Qwen2.5-7B-Instruct \
//!     --data $AGENT_RL_DATA/tau_bench --domain retail --task-ids 0,1,2 --trials 2
//! cargo run --release --features cuda --example tau_bench -- --device cuda --model … --data …
//! ```
//! The data folder holds `retail/` and `airline/` (database, tasks, `wiki.md`) and the user
//! simulator's prompt `user_simulator_prompt.txt`, as laid out by `agent-rl eval tau`. The agent
//! answers greedily; the customer samples (temperature 1, a seed per task and trial). The library
//! calls are [`TauSuite::load`], [`LlmCustomers`] and [`run_tau`].

use std::path::PathBuf;

use agent_rl::backend::{DeviceKind, PolicyJob, with_policy};
use agent_rl::core::{BurnPolicy, SamplingConfig};
use agent_rl::eval::tau::{Domain, LlmCustomers, TauRunConfig, TauSuite, run_tau};
use agent_rl::progress::count_progress;
use burn::prelude::Backend;
use clap::Parser;

/// Command-line options.
#[derive(Debug, Parser)]
#[command(about = "A local Qwen2 snapshot as agent and simulated customer on τ-bench")]
struct Args {
    /// Hugging Face snapshot directory of the agent (also the simulated customer).
    #[arg(long)]
    model: PathBuf,
    /// τ-bench data folder (holding `retail/`, `airline/`, `user_simulator_prompt.txt`).
    #[arg(long)]
    data: PathBuf,
    /// Domain: `retail` or `airline`.
    #[arg(long, default_value = "retail")]
    domain: Domain,
    /// Split: `test`, `dev` or `train`.
    #[arg(long, default_value = "test")]
    split: String,
    /// Task ids to run (comma-separated); default all.
    #[arg(long, value_delimiter = ',')]
    task_ids: Vec<usize>,
    /// Trials per task (pass^k for k = 1..trials).
    #[arg(long, default_value_t = 1)]
    trials: usize,
    /// Most agent turns per episode.
    #[arg(long, default_value_t = 30)]
    max_steps: usize,
    /// Tokens generated at most per turn (agent and customer).
    #[arg(long, default_value_t = 512)]
    max_new_tokens: usize,
    /// Device: `cpu` (default) or `cuda` (built with `--features cuda`).
    #[arg(long, default_value = "cpu")]
    device: DeviceKind,
}

/// Runs τ-bench with the loaded policy as agent and customer; returns the Markdown report.
struct Evaluate(Args);

impl PolicyJob for Evaluate {
    type Output = String;

    fn run<B: Backend>(self, mut agent: BurnPolicy<B>) -> anyhow::Result<String> {
        let args = self.0;
        let suite = TauSuite::load(&args.data, args.domain, &args.split)?;
        let customers = LlmCustomers::load(
            &agent,
            &args.data,
            args.domain,
            SamplingConfig {
                max_new_tokens: args.max_new_tokens,
                temperature: 1.0,
                ..SamplingConfig::default()
            },
        )?;
        let make_user = |task: usize, trial: usize| customers.customer(task, trial);
        let config = TauRunConfig {
            task_ids: (!args.task_ids.is_empty()).then(|| args.task_ids.clone()),
            trials: args.trials,
            max_steps: args.max_steps,
            sampling: SamplingConfig::greedy(args.max_new_tokens),
            ..TauRunConfig::default()
        };
        let bar = indicatif::ProgressBar::new(0);
        let report = run_tau(
            &suite,
            &mut agent,
            &make_user,
            &config,
            &mut count_progress(&bar),
        )?;
        bar.finish_and_clear();
        Ok(report.to_markdown())
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
