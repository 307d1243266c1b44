//! `agent-rl eval tau`: τ-bench retail and airline.

use std::io::Write;
use std::path::PathBuf;

use agent_rl::backend::DeviceKind;
use agent_rl::core::{BurnPolicy, Policy, SamplingConfig};
use agent_rl::eval::tau::data::domain_dir;
use agent_rl::eval::tau::{
    Domain, LlmCustomers, TauDb, TauRunConfig, TauSuite, UserSimulator, load_tasks, replay_split,
    run_tau,
};
use agent_rl::progress::{count_bar, count_progress};
use anyhow::Context;
use burn::prelude::Backend;
use serde_json::json;

use crate::endpoint_args::EndpointArgs;
use crate::failure_args::FailureArgs;
use crate::model_args::{ModelArgs, with_policy};
use agent_rl::backend::PolicyJob;

/// τ-bench subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum TauCommand {
    /// Replay each task's ground-truth actions on a fresh database and write the observations
    /// and rewards (the shape of the original's `gt_replay_*.json`).
    Replay(ReplayArgs),
    /// Run a local model (or one behind `--endpoint`) as the agent on a split, with the same
    /// model (or one behind `--user-endpoint`) simulating the customer (prompt
    /// `user_simulator_prompt.txt` from the data folder); report average reward, pass^k and
    /// tool-call statistics, and the failed episodes on stderr.
    Run(RunArgs),
}

/// Arguments of `eval tau run`.
#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// τ-bench data folder (holding `retail/`, `airline/`, `user_simulator_prompt.txt`), or its
    /// parent; defaults to `$AGENT_RL_DATA`.
    #[arg(long, env = "AGENT_RL_DATA")]
    data: PathBuf,
    /// Domain: `retail` or `airline`.
    #[arg(long)]
    domain: Domain,
    /// Split: `test`, `dev` or `train`.
    #[arg(long, default_value = "test")]
    split: String,
    /// Hugging Face snapshot of the agent (also the simulated customer unless
    /// `--user-endpoint` is given).
    #[arg(long, required_unless_present = "endpoint")]
    model: Option<PathBuf>,
    /// The agent behind an endpoint instead (`--endpoint URL`; it also plays the customer
    /// unless `--user-endpoint` is given).
    #[command(flatten)]
    endpoint: EndpointArgs,
    /// Simulate the customer with the model behind this OpenAI-compatible endpoint (base URL
    /// up to `/v1`) instead of `--model`.
    #[arg(long, requires = "user_model")]
    user_endpoint: Option<String>,
    /// The `model` name to ask `--user-endpoint` for.
    #[arg(long, requires = "user_endpoint")]
    user_model: Option<String>,
    /// Device: `cpu` (default) or `cuda`.
    #[arg(long, default_value = "cpu")]
    device: DeviceKind,
    /// Task ids to run (comma-separated); default all.
    #[arg(long, value_delimiter = ',')]
    task_ids: Vec<usize>,
    /// Trials per task (pass^k for k = 1..trials).
    #[arg(long, default_value_t = 1)]
    trials: usize,
    /// Most agent turns per episode.
    #[arg(long, default_value_t = 30)]
    max_steps: usize,
    /// Episodes run together (one generation batch per step).
    #[arg(long, default_value_t = 8)]
    batch_size: usize,
    /// Tokens to generate at most per turn (agent and customer).
    #[arg(long, default_value_t = 512)]
    max_new_tokens: usize,
    /// Agent sampling temperature (0 = greedy, as the original).
    #[arg(long, default_value_t = 0.0)]
    temperature: f32,
    /// Customer sampling temperature.
    #[arg(long, default_value_t = 1.0)]
    user_temperature: f32,
    /// Where to write the report (JSON, episodes included); the Markdown table goes to stdout.
    #[arg(long)]
    report: Option<PathBuf>,
    /// What to do with episodes that fail.
    #[command(flatten)]
    failure: FailureArgs,
}

/// Arguments of `eval tau replay`.
#[derive(Debug, clap::Args)]
pub struct ReplayArgs {
    /// τ-bench data folder (holding `retail/`, `airline/`), or its parent; defaults to
    /// `$AGENT_RL_DATA`.
    #[arg(long, env = "AGENT_RL_DATA")]
    data: PathBuf,
    /// Domain: `retail` or `airline`.
    #[arg(long)]
    domain: Domain,
    /// Split: `test`, `dev` or `train` (airline has only `test`).
    #[arg(long, default_value = "test")]
    split: String,
    /// Output file (JSON).
    #[arg(long)]
    out: PathBuf,
}

/// Runs one `eval tau` subcommand.
pub fn run(command: TauCommand) -> anyhow::Result<()> {
    match command {
        TauCommand::Replay(args) => replay(&args),
        TauCommand::Run(args) => {
            if let Some(url) = args.endpoint.endpoint.clone() {
                let model = args
                    .endpoint
                    .endpoint_model
                    .clone()
                    .unwrap_or_else(|| "agent-rl".into());
                let make_user = match (&args.user_endpoint, &args.user_model) {
                    (Some(user_url), Some(user_model)) => {
                        remote_customers(&args, user_url, user_model)?
                    }
                    _ => remote_customers(&args, &url, &model)?,
                };
                return args
                    .endpoint
                    .run(&url, |policy| evaluate(&args, policy, &*make_user));
            }
            let Some(model) = args.model.clone() else {
                anyhow::bail!("give --model DIR or --endpoint URL");
            };
            let model = ModelArgs {
                model,
                device: args.device,
            };
            with_policy(&model, RunJob { args })
        }
    }
}

struct RunJob {
    args: RunArgs,
}

impl PolicyJob for RunJob {
    type Output = ();

    fn run<B: Backend>(self, mut policy: BurnPolicy<B>) -> anyhow::Result<()> {
        let args = &self.args;
        let make_user: CustomerFactory = match (&args.user_endpoint, &args.user_model) {
            (Some(url), Some(model)) => remote_customers(args, url, model)?,
            _ => {
                let customers =
                    LlmCustomers::load(&policy, &args.data, args.domain, user_sampling(args))?;
                Box::new(move |task, trial| customers.customer(task, trial))
            }
        };
        evaluate(args, &mut policy, &*make_user)
    }
}

/// The customer's sampling: `--max-new-tokens` at `--user-temperature`.
fn user_sampling(args: &RunArgs) -> SamplingConfig {
    SamplingConfig {
        max_new_tokens: args.max_new_tokens,
        temperature: args.user_temperature,
        ..SamplingConfig::default()
    }
}

/// Runs the split with `policy` as the agent, writes the report, prints the table and the
/// failed episodes.
fn evaluate(
    args: &RunArgs,
    policy: &mut dyn Policy,
    make_user: &dyn Fn(usize, usize) -> Box<dyn UserSimulator>,
) -> anyhow::Result<()> {
    let suite = TauSuite::load(&args.data, args.domain, &args.split)?;
    let config = TauRunConfig {
        task_ids: (!args.task_ids.is_empty()).then(|| args.task_ids.clone()),
        trials: args.trials,
        max_steps: args.max_steps,
        batch_size: args.batch_size,
        sampling: SamplingConfig {
            max_new_tokens: args.max_new_tokens,
            temperature: args.temperature,
            ..SamplingConfig::default()
        },
        overlong: args.failure.overlong,
        ..TauRunConfig::default()
    };
    let bar = count_bar("episodes");
    let report = run_tau(
        &suite,
        policy,
        make_user,
        &config,
        &mut count_progress(&bar),
    )?;
    bar.finish_and_clear();
    if let Some(path) = &args.report {
        std::fs::write(path, serde_json::to_string_pretty(&report)? + "\n")
            .with_context(|| format!("writing {}", path.display()))?;
    }
    write!(std::io::stdout().lock(), "{}", report.to_markdown())?;
    args.failure.settle(
        "eval tau run",
        "episodes",
        &report.failures(),
        report.episodes.len(),
    )
}

/// Makes the simulated customer of (task, trial).
type CustomerFactory = Box<dyn Fn(usize, usize) -> Box<dyn UserSimulator>>;

/// The customers played by the model `model` behind `url`.
#[cfg(feature = "serve")]
fn remote_customers(args: &RunArgs, url: &str, model: &str) -> anyhow::Result<CustomerFactory> {
    let policy = args.endpoint.client.policy("--user-endpoint", url, model)?;
    let customers = agent_rl::remote::RemoteCustomers::load(
        policy,
        &args.data,
        args.domain,
        user_sampling(args),
    )?;
    Ok(Box::new(move |task, trial| customers.customer(task, trial)))
}

/// Without the `serve` feature there is no client.
#[cfg(not(feature = "serve"))]
fn remote_customers(_: &RunArgs, _: &str, _: &str) -> anyhow::Result<CustomerFactory> {
    anyhow::bail!("--endpoint and --user-endpoint need a binary built with the `serve` feature")
}

fn replay(args: &ReplayArgs) -> anyhow::Result<()> {
    let dir = domain_dir(&args.data, args.domain.as_str())?;
    let db = TauDb::load(args.domain, &dir)?;
    let tasks = load_tasks(&dir, &args.split)?;
    let replayed = replay_split(&db, &tasks);
    let tasks: Vec<_> = replayed
        .iter()
        .map(|task| json!({"task_index": task.task_index, "reward": task.reward, "steps": task.steps}))
        .collect();
    let text = serde_json::to_string_pretty(&json!({ "tasks": tasks }))?;
    std::fs::write(&args.out, text).with_context(|| format!("writing {}", args.out.display()))?;
    let rewards: Vec<f64> = replayed
        .iter()
        .map(|task| f64::from(task.reward.unwrap_or(0.0)))
        .collect();
    let full = rewards.iter().filter(|&&reward| reward == 1.0).count();
    let mean = rewards.iter().sum::<f64>() / rewards.len().max(1) as f64;
    writeln!(
        std::io::stdout().lock(),
        "replayed {} tasks of {} {}: {full} rewarded 1.0, mean reward {mean:.4}; wrote {}",
        replayed.len(),
        args.domain.as_str(),
        args.split,
        args.out.display()
    )?;
    Ok(())
}
