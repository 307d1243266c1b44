//! Load a Hugging Face Qwen2 snapshot and save it back through agent-rl (optionally to another
//! dtype or shard size), tokenizer files included. `scripts/check_hf_roundtrip.py` runs it to
//! check that what agent-rl saves loads unchanged in transformers.
//!
//! ```text
//! cargo run --release --example convert_checkpoint -- IN_DIR OUT_DIR [f32|bf16|f16] [MAX_SHARD_BYTES]
//! cargo run --example convert_checkpoint -- agent-rl-core/tests/fixtures/qwen2_tiny/tied_f32 target/tiny_bf16 bf16
//! ```

use std::path::PathBuf;

use agent_rl::backend::CpuBackend;
use agent_rl::core::weights::{
    LoadOptions, SaveOptions, StorageDtype, load_pretrained, save_pretrained,
};
use anyhow::Context;
use clap::Parser;

/// Storage dtype of the saved weights.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum Dtype {
    F32,
    Bf16,
    F16,
}

/// Command-line arguments.
#[derive(Debug, Parser)]
#[command(about = "Load a Hugging Face Qwen2 snapshot and save it back (dtype, shard size)")]
struct Args {
    /// Snapshot directory to read (config.json, safetensors, tokenizer files).
    input: PathBuf,
    /// Directory to write.
    output: PathBuf,
    /// Storage dtype of the written weights.
    #[arg(value_enum, default_value = "f32")]
    dtype: Dtype,
    /// Largest shard in bytes (bigger checkpoints are split, with an index file).
    max_shard_bytes: Option<usize>,
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let dtype = match args.dtype {
        Dtype::F32 => StorageDtype::F32,
        Dtype::Bf16 => StorageDtype::Bf16,
        Dtype::F16 => StorageDtype::F16,
    };
    let max_shard_bytes = args
        .max_shard_bytes
        .unwrap_or(SaveOptions::default().max_shard_bytes);
    let (model, _) =
        load_pretrained::<CpuBackend>(&args.input, LoadOptions::default(), &Default::default())
            .with_context(|| format!("loading {}", args.input.display()))?;
    save_pretrained(
        &model,
        &args.output,
        SaveOptions {
            dtype,
            max_shard_bytes,
        },
    )
    .with_context(|| format!("saving {}", args.output.display()))?;
    for name in [
        "tokenizer.json",
        "tokenizer_config.json",
        "chat_template.jinja",
        "generation_config.json",
    ] {
        if args.input.join(name).exists() {
            std::fs::copy(args.input.join(name), args.output.join(name))
                .with_context(|| format!("copying {name}"))?;
        }
    }
    Ok(())
}
