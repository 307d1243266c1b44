//! [`RunDirectory`]: what a training run leaves behind, as an append-only record that survives
//! interruption and resume — the resolved config, per-stage metrics, held-out scores
//! (`summary.json`, merged on resume), the reward curve of the whole run, GRPO / PPO
//! checkpoints, the reward model of a reward-model stage and the final model with its tokenizer
//! in Hugging Face layout.

use std::path::{Path, PathBuf};

use agent_rl_core::atomic::write_atomic;
use agent_rl_core::weights::{SaveOptions, save_pretrained};
use agent_rl_core::{ChatTokenizer, Qwen2ForCausalLm, Qwen2ForSequenceClassification};
use burn::tensor::backend::Backend;
use serde_json::{Map, Value};

use super::metrics_log::MetricsLog;
use super::reward_curve::reward_svg;
use crate::checkpoint_dir::{
    CompleteCheckpoint, latest_complete_checkpoint, verify_checkpoint_dir, write_checkpoint_dir,
};
use crate::error::{AlgoError, Result};

/// The summary file: held-out scores per evaluation point and run facts.
pub const SUMMARY_FILE: &str = "summary.json";

/// The folder where the SFT stage's model is kept for a resume.
pub const SFT_MODEL_DIR: &str = "sft_model";

/// Writes `model` and `tokenizer` to `dir` in Hugging Face layout, whole or not at all
/// (replacing an earlier copy).
///
/// # Errors
/// Files that cannot be written, naming them.
pub fn save_model_dir<B: Backend>(
    dir: &Path,
    model: &Qwen2ForCausalLm<B>,
    tokenizer: &ChatTokenizer,
) -> Result<()> {
    write_checkpoint_dir(dir, |tmp| {
        save_pretrained(model, tmp, SaveOptions::default())?;
        tokenizer.save_to_dir(tmp)?;
        Ok(())
    })?;
    Ok(())
}

/// A run directory being written.
#[derive(Debug, Clone)]
pub struct RunDirectory {
    dir: PathBuf,
}

/// [`AlgoError::RunDirectory`] for `path`.
pub(super) fn io_error(path: &Path, source: std::io::Error) -> AlgoError {
    AlgoError::RunDirectory {
        path: path.to_owned(),
        source,
    }
}

impl RunDirectory {
    /// Creates (or reuses) `dir`.
    ///
    /// # Errors
    /// [`AlgoError::RunDirectory`] when the directory cannot be created.
    pub fn create(dir: impl Into<PathBuf>) -> Result<Self> {
        let dir = dir.into();
        std::fs::create_dir_all(&dir).map_err(|source| io_error(&dir, source))?;
        Ok(Self { dir })
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.dir
    }

    /// Writes `value` as pretty JSON to `dir/name`, atomically.
    ///
    /// # Errors
    /// [`AlgoError::RunDirectory`] naming the file.
    pub fn write_json(&self, name: &str, value: &Value) -> Result<()> {
        let path = self.dir.join(name);
        let text = serde_json::to_string_pretty(value).map_err(|err| {
            io_error(
                &path,
                std::io::Error::new(std::io::ErrorKind::InvalidData, err),
            )
        })?;
        write_atomic(&path, text.as_bytes()).map_err(|source| io_error(&path, source))
    }

    /// The entries of `summary.json` (empty when there is none yet).
    ///
    /// # Errors
    /// [`AlgoError::RunDirectory`] when the file exists but cannot be read or is not a JSON
    /// object (a damaged record is reported, not overwritten).
    pub fn summary(&self) -> Result<Map<String, Value>> {
        let path = self.dir.join(SUMMARY_FILE);
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(Map::new()),
            Err(source) => return Err(io_error(&path, source)),
        };
        match serde_json::from_str::<Value>(&text) {
            Ok(Value::Object(map)) => Ok(map),
            _ => Err(io_error(
                &path,
                std::io::Error::new(std::io::ErrorKind::InvalidData, "not a JSON object"),
            )),
        }
    }

    /// Merges `entries` into `summary.json` (keys already there and not in `entries` are kept)
    /// and writes it atomically; returns the merged summary.
    ///
    /// # Errors
    /// As [`Self::summary`] and [`Self::write_json`].
    pub fn merge_summary(&self, entries: Map<String, Value>) -> Result<Map<String, Value>> {
        let mut summary = self.summary()?;
        summary.extend(entries);
        self.write_json(SUMMARY_FILE, &Value::Object(summary.clone()))?;
        Ok(summary)
    }

    /// A fresh metrics log for `stage` (`<stage>_metrics.jsonl` / `.csv`).
    ///
    /// # Errors
    /// As [`MetricsLog::create`].
    pub fn metrics(&self, stage: &str) -> Result<MetricsLog> {
        MetricsLog::create(&self.dir, stage)
    }

    /// The metrics log of `stage`, cut back to `step` and continued (see [`MetricsLog::resume`]).
    ///
    /// # Errors
    /// As [`MetricsLog::resume`].
    pub fn resumed_metrics(&self, stage: &str, step: usize) -> Result<MetricsLog> {
        MetricsLog::resume(&self.dir, stage, step)
    }

    /// Draws `reward_curve.svg` from every reward in `log` (the whole run, resumed or not).
    ///
    /// # Errors
    /// [`AlgoError::RunDirectory`] when the metrics cannot be read or the file written.
    pub fn write_reward_curve(&self, log: &MetricsLog) -> Result<()> {
        let path = self.dir.join("reward_curve.svg");
        let svg = reward_svg(&log.rewards()?);
        write_atomic(&path, svg.as_bytes()).map_err(|source| io_error(&path, source))
    }

    /// Saves `model` and `tokenizer` in Hugging Face layout to `final_model/`, crash-safely as
    /// checkpoints are ([`write_checkpoint_dir`]: written beside, synced, given a
    /// `manifest.json`, renamed into place), so a kill mid-save leaves the previous
    /// `final_model/` (or none), never a torn one.
    ///
    /// # Errors
    /// Files that cannot be written, naming them.
    pub fn save_final_model<B: Backend>(
        &self,
        model: &Qwen2ForCausalLm<B>,
        tokenizer: &ChatTokenizer,
    ) -> Result<PathBuf> {
        let model_dir = self.dir.join("final_model");
        save_model_dir(&model_dir, model, tokenizer)?;
        Ok(model_dir)
    }

    /// Keeps the model the SFT stage trained (with its tokenizer) in `sft_model/`, crash-safely,
    /// so that a run interrupted in a later stage before its first checkpoint resumes after SFT.
    ///
    /// # Errors
    /// Files that cannot be written, naming them.
    pub fn keep_sft_model<B: Backend>(
        &self,
        model: &Qwen2ForCausalLm<B>,
        tokenizer: &ChatTokenizer,
    ) -> Result<()> {
        save_model_dir(&self.dir.join(SFT_MODEL_DIR), model, tokenizer)
    }

    /// `sft_model/` when it is complete (its manifest checks out), else `None`.
    pub fn kept_sft_model(&self) -> Option<PathBuf> {
        let dir = self.dir.join(SFT_MODEL_DIR);
        verify_checkpoint_dir(&dir).ok().map(|_| dir)
    }

    /// Where a reward-model stage's model is kept: `reward_model/`.
    pub fn reward_model_dir(&self) -> PathBuf {
        self.dir.join("reward_model")
    }

    /// Writes the trained reward model with its tokenizer to [`Self::reward_model_dir`]
    /// (Hugging Face's `Qwen2ForSequenceClassification` layout), replacing it atomically.
    ///
    /// # Errors
    /// The directory or a file cannot be written.
    pub fn save_reward_model<B: Backend>(
        &self,
        model: &Qwen2ForSequenceClassification<B>,
        tokenizer: &ChatTokenizer,
    ) -> Result<PathBuf> {
        let dir = self.reward_model_dir();
        write_checkpoint_dir(&dir, |tmp| {
            model.save_pretrained(tmp, SaveOptions::default())?;
            tokenizer.save_to_dir(tmp)?;
            Ok(())
        })?;
        Ok(dir)
    }

    /// The newest complete `checkpoint-<step>/` (manifest verified), with the newer ones that
    /// were skipped and why; `None` when there is no checkpoint directory.
    ///
    /// # Errors
    /// As [`latest_complete_checkpoint`]: the directory cannot be read, or checkpoint
    /// directories exist but none is complete (every reason listed).
    pub fn latest_checkpoint(&self) -> Result<Option<CompleteCheckpoint>> {
        latest_complete_checkpoint(&self.dir)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn summary_is_merged_not_replaced() -> Result<()> {
        let tmp = tempfile::tempdir().map_err(|e| io_error(Path::new("tmp"), e))?;
        let run = RunDirectory::create(tmp.path())?;
        let first = json!({"before": 0.1, "after_sft": 0.4});
        let second = json!({"after": 0.5});
        run.merge_summary(first.as_object().cloned().unwrap_or_default())?;
        let merged = run.merge_summary(second.as_object().cloned().unwrap_or_default())?;
        let keys: Vec<&str> = merged.keys().map(String::as_str).collect();
        assert_eq!(keys, ["before", "after_sft", "after"]);
        assert_eq!(run.summary()?, merged);
        Ok(())
    }

    #[test]
    fn damaged_summary_is_an_error() -> Result<()> {
        let tmp = tempfile::tempdir().map_err(|e| io_error(Path::new("tmp"), e))?;
        let run = RunDirectory::create(tmp.path())?;
        std::fs::write(tmp.path().join(SUMMARY_FILE), "[1,")
            .map_err(|e| io_error(tmp.path(), e))?;
        let err = run
            .summary()
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(err.contains("summary.json"), "{err}");
        Ok(())
    }
}
