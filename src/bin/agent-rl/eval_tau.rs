//! `agent-rl eval tau`: τ-bench retail and airline.

use std::path::PathBuf;

use agent_rl::eval::tau::data::domain_dir;
use agent_rl::eval::tau::{Domain, TauDb, load_tasks, replay_split};
use anyhow::Context;
use serde_json::json;

/// τ-bench subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum TauCommand {
    /// Replay each task's ground-truth actions on a fresh database and write the observations
    /// and rewards (the shape of the original's `gt_replay_*.json`).
    Replay(ReplayArgs),
}

/// Arguments of `eval tau replay`.
#[derive(Debug, clap::Args)]
pub struct ReplayArgs {
    /// τ-bench data folder (holding `retail/`, `airline/`), or its parent.
    #[arg(long)]
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
    }
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
    Ok(())
}
