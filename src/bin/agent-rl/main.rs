//! The `agent-rl` command line: generate, score, render templates, train, evaluate.
//!
//! Each subcommand lives in its own file beside this one; this file only dispatches.

mod eval;

use clap::{Parser, Subcommand};

/// Fine-tune and evaluate LLM agents for tool use.
#[derive(Debug, Parser)]
#[command(name = "agent-rl", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Evaluate a model or a results file on a benchmark.
    #[command(subcommand)]
    Eval(eval::EvalCommand),
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    match cli.command {
        Command::Eval(command) => eval::run(command),
    }
}
