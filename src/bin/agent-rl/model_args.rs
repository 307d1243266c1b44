//! Arguments shared by the commands that load a model, and backend dispatch.

use std::path::PathBuf;

use agent_rl::backend::{DeviceKind, PolicyJob};
use anyhow::Context;

/// `--model DIR [--device cpu|cuda]`.
#[derive(Debug, clap::Args)]
pub struct ModelArgs {
    /// Hugging Face snapshot directory (config.json, safetensors, tokenizer files).
    #[arg(long)]
    pub model: PathBuf,
    /// Device: `cpu` (default) or `cuda` (binary built with `--features cuda`).
    #[arg(long, default_value = "cpu")]
    pub device: DeviceKind,
}

/// Loads `--model` on `--device` and runs `job` ([`agent_rl::backend::with_policy`]).
pub fn with_policy(args: &ModelArgs, job: impl PolicyJob<Output = ()>) -> anyhow::Result<()> {
    agent_rl::backend::with_policy(&args.model, args.device, job)
}

/// Parses `1,2,3`.
pub fn parse_ids(text: &str) -> anyhow::Result<Vec<u32>> {
    text.split(',')
        .filter(|part| !part.trim().is_empty())
        .map(|part| {
            part.trim()
                .parse::<u32>()
                .with_context(|| format!("`{part}` is not a token id"))
        })
        .collect()
}
