//! `load_pretrained`: a Hugging Face Qwen2 snapshot directory → [`Qwen2ForCausalLm`].

use std::collections::BTreeSet;
use std::path::Path;

use burn::prelude::*;

use super::build::{TensorSource, build_model};
use super::names::is_ignorable;
use super::reader::CheckpointReader;
use crate::config::Qwen2Config;
use crate::error::CoreError;
use crate::model::Qwen2ForCausalLm;

/// Options of [`load_pretrained`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LoadOptions {
    /// Accept tensors the model does not use instead of failing (they are listed in the report).
    pub allow_unexpected: bool,
}

/// What a load did with the checkpoint's tensors.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LoadReport {
    /// Keys read into the model.
    pub applied: Vec<String>,
    /// Keys present in the checkpoint but not used (ignorable ones, or all with
    /// `allow_unexpected`).
    pub unused: Vec<String>,
}

/// Reads tensors from a [`CheckpointReader`], remembering which keys it read.
pub(crate) struct ReaderSource<'a> {
    reader: &'a CheckpointReader,
    applied: BTreeSet<String>,
}

impl<'a> ReaderSource<'a> {
    /// A source over `reader` that has read nothing yet.
    pub(crate) fn new(reader: &'a CheckpointReader) -> Self {
        Self {
            reader,
            applied: BTreeSet::new(),
        }
    }

    /// The [`LoadReport`] of what was read, failing on unread keys that `is_ignorable` does not
    /// excuse unless `options` allow them.
    pub(crate) fn finish(
        self,
        options: LoadOptions,
        is_ignorable: impl Fn(&str) -> bool,
    ) -> Result<LoadReport, CoreError> {
        let applied = self.applied;
        let unused: Vec<String> = self
            .reader
            .keys()
            .filter(|key| !applied.contains(*key))
            .map(str::to_owned)
            .collect();
        let unexpected: Vec<String> = unused
            .iter()
            .filter(|key| !is_ignorable(key))
            .cloned()
            .collect();
        if !unexpected.is_empty() && !options.allow_unexpected {
            return Err(CoreError::UnexpectedTensors {
                file: self.reader.origin.clone(),
                keys: unexpected,
            });
        }
        Ok(LoadReport {
            applied: applied.into_iter().collect(),
            unused,
        })
    }
}

impl TensorSource for ReaderSource<'_> {
    fn take(&mut self, key: &str, shape: &[usize]) -> Result<Vec<f32>, CoreError> {
        let data = self.reader.read_f32(key, shape)?;
        self.applied.insert(key.to_owned());
        Ok(data)
    }
}

/// Loads `dir/config.json` and the safetensors weights (single or sharded; f32, bf16 or f16)
/// onto `device`.
///
/// Every tensor's shape is checked; a missing tensor, a shape mismatch, an unexpected tensor
/// (unless allowed), a NaN or infinite weight, a shard outside `dir`, a missing or corrupt file
/// each give an error naming the file and key.
///
/// # Errors
/// See [`CoreError`]: `Io`, `Json`, `UnsupportedConfig`, `Safetensors`, `MissingTensor`,
/// `ShapeMismatch`, `UnsupportedDtype`, `NonFiniteTensor`, `ShardOutsideDirectory`,
/// `UnexpectedTensors`.
pub fn load_pretrained<B: Backend>(
    dir: &Path,
    options: LoadOptions,
    device: &B::Device,
) -> Result<(Qwen2ForCausalLm<B>, LoadReport), CoreError> {
    let config = Qwen2Config::from_file(&dir.join("config.json"))?;
    let reader = CheckpointReader::open(dir)?;
    let mut source = ReaderSource::new(&reader);
    let model = build_model(&config, &mut source, device)?;
    let report = source.finish(options, |key| is_ignorable(key, &config))?;
    Ok((model, report))
}
