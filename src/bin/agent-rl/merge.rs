//! `agent-rl merge`: fold a PEFT LoRA adapter into its base model and write a full Hugging Face
//! checkpoint ([`merge_adapter_checkpoint`]).

use std::io::Write;
use std::path::PathBuf;

use agent_rl::core::lora::merge_adapter_checkpoint;
use agent_rl::core::weights::{SaveOptions, StorageDtype};
use anyhow::Context;

/// Storage dtype of the merged checkpoint.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum Dtype {
    F32,
    Bf16,
    F16,
}

/// `--model DIR --adapter DIR --out DIR [--dtype f32|bf16|f16]`.
#[derive(Debug, clap::Args)]
pub struct MergeArgs {
    /// Base model: a Hugging Face snapshot directory.
    #[arg(long)]
    model: PathBuf,
    /// PEFT adapter directory (`adapter_config.json` + `adapter_model.safetensors`).
    #[arg(long)]
    adapter: PathBuf,
    /// Output directory for the merged snapshot (weights, config, tokenizer files).
    #[arg(long)]
    out: PathBuf,
    /// Storage dtype of the merged weights.
    #[arg(long, value_enum, default_value = "f32")]
    dtype: Dtype,
}

/// The backend merging runs on: the CPU one (merging is one pass over the weights), or CUDA in
/// a build without a CPU backend.
#[cfg(any(feature = "flex", feature = "ndarray"))]
type MergeBackend = agent_rl::backend::CpuBackend;
#[cfg(not(any(feature = "flex", feature = "ndarray")))]
type MergeBackend = agent_rl::backend::CudaBackend;

/// Runs `merge`.
pub fn run(args: MergeArgs) -> anyhow::Result<()> {
    #[cfg(not(any(feature = "flex", feature = "ndarray")))]
    agent_rl::backend::probe_cuda()?;
    let dtype = match args.dtype {
        Dtype::F32 => StorageDtype::F32,
        Dtype::Bf16 => StorageDtype::Bf16,
        Dtype::F16 => StorageDtype::F16,
    };
    let options = SaveOptions {
        dtype,
        ..SaveOptions::default()
    };
    let config = merge_adapter_checkpoint::<MergeBackend>(
        &args.model,
        &args.adapter,
        &args.out,
        options,
        &Default::default(),
    )
    .with_context(|| {
        format!(
            "merging {} into {}",
            args.adapter.display(),
            args.model.display()
        )
    })?;
    writeln!(
        std::io::stdout().lock(),
        "merged LoRA adapter (r {}, alpha {}, {}) into {}",
        config.r,
        config.alpha,
        config.target_modules.join(", "),
        args.out.display()
    )?;
    Ok(())
}
