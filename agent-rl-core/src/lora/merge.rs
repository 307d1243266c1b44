//! [`merge_adapter_checkpoint`]: a Hugging Face snapshot plus a PEFT adapter → one merged
//! snapshot (what `agent-rl merge` runs).

use std::path::Path;

use burn::prelude::*;

use super::config::LoraConfig;
use super::peft::load_adapter;
use crate::error::CoreError;
use crate::weights::{LoadOptions, SaveOptions, load_pretrained, save_pretrained};

/// The files besides the weights that make a snapshot usable (tokenizer, chat template,
/// generation defaults); copied when present.
const SNAPSHOT_FILES: [&str; 7] = [
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "chat_template.jinja",
    "generation_config.json",
    "vocab.json",
    "merges.txt",
];

/// Loads the snapshot in `model_dir`, applies the PEFT adapter in `adapter_dir`, folds it into
/// the weights ([`crate::Qwen2ForCausalLm::merge_adapters`]) and writes a full snapshot to
/// `out_dir` ([`save_pretrained`] with `options`, plus the tokenizer and template files of
/// `model_dir`), loadable by transformers and vLLM without PEFT. Returns the adapter's config.
///
/// # Errors
/// Load errors of the snapshot or the adapter (an adapter for another base names the key that
/// does not fit); [`CoreError::InvalidArgument`] (field `out`) when `out_dir` is `model_dir`;
/// write errors naming the file.
pub fn merge_adapter_checkpoint<B: Backend>(
    model_dir: &Path,
    adapter_dir: &Path,
    out_dir: &Path,
    options: SaveOptions,
    device: &B::Device,
) -> Result<LoraConfig, CoreError> {
    let same = |a: &Path, b: &Path| match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    };
    if same(model_dir, out_dir) {
        return Err(CoreError::InvalidArgument {
            field: "out".into(),
            reason: format!(
                "is the base model's directory {}; write the merged model elsewhere",
                model_dir.display()
            ),
        });
    }
    let (model, _) = load_pretrained::<B>(model_dir, LoadOptions::default(), device)?;
    let (model, config) = load_adapter(model, adapter_dir)?;
    save_pretrained(&model.merge_adapters(), out_dir, options)?;
    for name in SNAPSHOT_FILES {
        let from = model_dir.join(name);
        if from.is_file() {
            let to = out_dir.join(name);
            std::fs::copy(&from, &to).map_err(|source| CoreError::Io { path: to, source })?;
        }
    }
    Ok(config)
}
