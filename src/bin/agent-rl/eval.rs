//! `agent-rl eval …`: benchmark subcommands, one file each.

use clap::Subcommand;

/// Benchmarks.
#[derive(Debug, Subcommand)]
pub enum EvalCommand {
    /// Berkeley Function Calling Leaderboard: score a result file or run a model.
    Bfcl(crate::eval_bfcl::BfclArgs),
    /// τ-bench retail and airline: replay the ground truth.
    #[command(subcommand)]
    Tau(crate::eval_tau::TauCommand),
    /// SWE-bench Verified: run the code-agent scaffold, grade predictions locally.
    #[command(subcommand)]
    Swe(crate::eval_swe::SweCommand),
}

/// Runs one `eval` subcommand.
pub fn run(command: EvalCommand) -> anyhow::Result<()> {
    match command {
        EvalCommand::Bfcl(args) => crate::eval_bfcl::run(args),
        EvalCommand::Tau(command) => crate::eval_tau::run(command),
        EvalCommand::Swe(command) => crate::eval_swe::run(command),
    }
}
