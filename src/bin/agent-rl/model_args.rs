//! Arguments shared by the commands that load a model, and backend dispatch.

use std::path::PathBuf;

use agent_rl::backend::{DeviceKind, PolicyJob};
use agent_rl::core::BurnPolicy;
use agent_rl::core::lora::load_adapter;
use anyhow::Context;
use burn::prelude::Backend;

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

/// `--adapter DIR`: a PEFT LoRA adapter (`adapter_config.json` + `adapter_model.safetensors`,
/// trained here or with PEFT) applied to `--model`.
#[derive(Debug, Clone, clap::Args)]
pub struct AdapterArgs {
    /// PEFT adapter directory to apply to the model.
    #[arg(long)]
    pub adapter: Option<PathBuf>,
}

/// `job` with the adapter loaded onto the policy's model first.
struct WithAdapter<J> {
    adapter: PathBuf,
    job: J,
}

impl<J: PolicyJob> PolicyJob for WithAdapter<J> {
    type Output = J::Output;

    fn run<B: Backend>(self, mut policy: BurnPolicy<B>) -> anyhow::Result<J::Output> {
        let (model, _) = load_adapter(policy.model, &self.adapter)
            .with_context(|| format!("--adapter {}", self.adapter.display()))?;
        policy.model = model;
        self.job.run(policy)
    }
}

/// [`with_policy`] with `--adapter` applied when given.
pub fn with_adapted_policy(
    args: &ModelArgs,
    adapter: &AdapterArgs,
    job: impl PolicyJob<Output = ()>,
) -> anyhow::Result<()> {
    match &adapter.adapter {
        Some(dir) => with_policy(
            args,
            WithAdapter {
                adapter: dir.clone(),
                job,
            },
        ),
        None => with_policy(args, job),
    }
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
