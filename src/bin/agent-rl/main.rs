//! The `agent-rl` command line: generate, score, merge adapters, render templates, train,
//! evaluate, plan memory.
//!
//! Each subcommand lives in its own file beside this one; this file only dispatches.

mod chat_template;
mod conversation_args;
mod endpoint_args;
mod eval;
mod eval_bfcl;
mod eval_swe;
mod eval_tau;
mod failure_args;
mod generate;
mod logprobs;
mod merge;
mod model_args;
mod plan;
mod rm_score;
mod run_overrides;
#[cfg(feature = "serve")]
mod serve;
mod train;
mod train_config;
mod train_dry_run;
mod train_grpo;
mod train_rlhf;
mod train_sft;

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
    /// Generate a completion (text, tool calls, logprobs) with a local model.
    Generate(generate::GenerateArgs),
    /// Per-position log-probabilities of a token sequence.
    Logprobs(logprobs::LogprobsArgs),
    /// Merge a PEFT LoRA adapter into its base model and write a full checkpoint.
    Merge(merge::MergeArgs),
    /// Render a conversation with the model's chat template.
    #[command(mut_arg("messages", |arg| arg.required(true)))]
    ChatTemplate(chat_template::ChatTemplateArgs),
    /// Train from a TOML run file (`train sft|rm|ppo|grpo --config run.toml`).
    #[command(subcommand)]
    Train(train::TrainCommand),
    /// Evaluate a model or a results file on a benchmark.
    #[command(subcommand)]
    Eval(eval::EvalCommand),
    /// Estimate a training run's device memory, per component, and whether it fits.
    Plan(plan::PlanArgs),
    /// Score a conversation with a reward model (the head at its last token).
    #[command(mut_arg("messages", |arg| arg.required(true)))]
    RmScore(rm_score::RmScoreArgs),
    /// Serve a model with an OpenAI-compatible HTTP API.
    #[cfg(feature = "serve")]
    Serve(serve::ServeArgs),
}

/// mimalloc with purging off (`agent_rl::host_allocator`): stable peak memory from run to run.
#[global_allocator]
static ALLOCATOR: agent_rl::host_allocator::HostAllocator = agent_rl::host_allocator::HostAllocator;

fn main() -> anyhow::Result<()> {
    agent_rl::host_allocator::tune_host_allocator();
    let cli = Cli::parse();
    #[cfg(feature = "serve")]
    if let Command::Serve(args) = cli.command {
        // The server keeps its own threads; the pool's workers stay free for its engine.
        return serve::run(args);
    }
    let result = agent_rl::host_threads::on_compute_pool(|| run(cli.command));
    // Output piped into a reader that stopped (`| head`) is not an error of the command.
    match result {
        Err(error) if is_broken_pipe(&error) => Ok(()),
        other => other,
    }
}

/// True when `error` comes from writing to a closed pipe.
fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// Runs one command; `main` calls it on a worker of the compute pool
/// (`agent_rl::host_threads`).
fn run(command: Command) -> anyhow::Result<()> {
    match command {
        Command::Generate(args) => generate::run(args),
        Command::Logprobs(args) => logprobs::run(args),
        Command::Merge(args) => merge::run(args),
        Command::ChatTemplate(args) => chat_template::run(args),
        Command::Train(command) => train::run(command),
        Command::Eval(command) => eval::run(command),
        Command::Plan(args) => plan::run(args),
        Command::RmScore(args) => rm_score::run(args),
        #[cfg(feature = "serve")]
        Command::Serve(args) => serve::run(args),
    }
}
