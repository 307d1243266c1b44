//! `agent-rl eval …`: benchmark subcommands, one file each.

use clap::Subcommand;

/// Benchmarks.
#[derive(Debug, Subcommand)]
pub enum EvalCommand {}

/// Runs one `eval` subcommand.
pub fn run(command: EvalCommand) -> anyhow::Result<()> {
    match command {}
}
