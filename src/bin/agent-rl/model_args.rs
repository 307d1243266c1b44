//! Arguments shared by the commands that load a model, and backend dispatch.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use agent_rl::backend::{DeviceKind, probe_cuda};
use agent_rl::core::weights::{LoadOptions, load_pretrained};
use agent_rl::core::{BurnPolicy, ChatTokenizer};
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

/// Something to run with a loaded policy on a chosen backend.
pub trait WithPolicy {
    /// Runs with the policy.
    fn run<B: Backend>(self, policy: BurnPolicy<B>) -> anyhow::Result<()>;
}

fn load<B: Backend>(dir: &Path, device: &B::Device) -> anyhow::Result<BurnPolicy<B>> {
    let tokenizer = ChatTokenizer::from_dir(dir)?;
    let (model, _) = load_pretrained::<B>(dir, LoadOptions::default(), device)
        .with_context(|| format!("loading {}", dir.display()))?;
    Ok(BurnPolicy::new(model, Arc::new(tokenizer)))
}

/// Loads the model on the requested device and runs `job`.
pub fn with_policy(args: &ModelArgs, job: impl WithPolicy) -> anyhow::Result<()> {
    match args.device {
        DeviceKind::Cpu => job.run(load::<agent_rl::backend::CpuBackend>(
            &args.model,
            &Default::default(),
        )?),
        DeviceKind::Cuda => {
            probe_cuda()?;
            #[cfg(feature = "cuda")]
            {
                job.run(load::<agent_rl::backend::CudaBackend>(
                    &args.model,
                    &Default::default(),
                )?)
            }
            #[cfg(not(feature = "cuda"))]
            unreachable!("probe_cuda fails without the cuda feature")
        }
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
