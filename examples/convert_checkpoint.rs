//! Load a Hugging Face Qwen2 snapshot and save it back through agent-rl (optionally to another
//! dtype or shard size), tokenizer files included. Used by `scripts/check_hf_roundtrip.py` to
//! check that what agent-rl saves loads unchanged in transformers.
//!
//! ```text
//! cargo run --release --example convert_checkpoint -- IN_DIR OUT_DIR [f32|bf16|f16] [MAX_SHARD_BYTES]
//! ```

use std::path::PathBuf;

use agent_rl::backend::CpuBackend;
use agent_rl::core::weights::{
    LoadOptions, SaveOptions, StorageDtype, load_pretrained, save_pretrained,
};
use anyhow::Context;

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let input = PathBuf::from(
        args.first()
            .context("usage: convert_checkpoint IN OUT [dtype] [max_shard_bytes]")?,
    );
    let output = PathBuf::from(args.get(1).context("missing OUT_DIR")?);
    let dtype = match args.get(2).map(String::as_str).unwrap_or("f32") {
        "f32" => StorageDtype::F32,
        "bf16" => StorageDtype::Bf16,
        "f16" => StorageDtype::F16,
        other => anyhow::bail!("dtype `{other}`: expected f32, bf16 or f16"),
    };
    let max_shard_bytes = args
        .get(3)
        .map_or(Ok(SaveOptions::default().max_shard_bytes), |s| s.parse())?;
    let (model, _) =
        load_pretrained::<CpuBackend>(&input, LoadOptions::default(), &Default::default())?;
    save_pretrained(
        &model,
        &output,
        SaveOptions {
            dtype,
            max_shard_bytes,
        },
    )?;
    for name in [
        "tokenizer.json",
        "tokenizer_config.json",
        "chat_template.jinja",
        "generation_config.json",
    ] {
        if input.join(name).exists() {
            std::fs::copy(input.join(name), output.join(name))
                .with_context(|| format!("copying {name}"))?;
        }
    }
    Ok(())
}
