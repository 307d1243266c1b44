//! The bridge to the official SWE-bench harness (`python -m swebench.harness.run_evaluation`),
//! for machines with Docker: builds its command line, checks that what it needs is present, runs
//! it, and reads its run summary.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde::{Deserialize, Serialize};

use crate::{EvalError, Result};

/// Options of one official harness run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HarnessRun {
    /// Python interpreter with the `swebench` package installed. Default `python3`.
    pub python: PathBuf,
    /// Dataset name (`SWE-bench/SWE-bench_Verified`) or a local `.json`/`.jsonl`/`.parquet` file.
    pub dataset_name: String,
    /// Dataset split. Default `test`.
    pub split: String,
    /// The predictions file (official format).
    pub predictions_path: PathBuf,
    /// Names the log folder `logs/run_evaluation/<run_id>`.
    pub run_id: String,
    /// Parallel containers. Default 4.
    pub max_workers: usize,
    /// Seconds per instance for the test script. Default 1800.
    pub timeout_secs: u64,
    /// Only these instances (all predicted ones when empty).
    pub instance_ids: Vec<String>,
    /// Where the run summary is written. Default `.`.
    pub report_dir: PathBuf,
}

impl HarnessRun {
    /// A run of `predictions_path` on SWE-bench Verified with the harness's defaults.
    pub fn new(predictions_path: impl Into<PathBuf>, run_id: impl Into<String>) -> Self {
        Self {
            python: PathBuf::from("python3"),
            dataset_name: "SWE-bench/SWE-bench_Verified".into(),
            split: "test".into(),
            predictions_path: predictions_path.into(),
            run_id: run_id.into(),
            max_workers: 4,
            timeout_secs: 1800,
            instance_ids: Vec::new(),
            report_dir: PathBuf::from("."),
        }
    }

    /// The arguments after the interpreter (`-m swebench.harness.run_evaluation …`).
    pub fn args(&self) -> Vec<String> {
        let mut args: Vec<String> = vec![
            "-m".into(),
            "swebench.harness.run_evaluation".into(),
            "--dataset_name".into(),
            self.dataset_name.clone(),
            "--split".into(),
            self.split.clone(),
            "--predictions_path".into(),
            self.predictions_path.display().to_string(),
            "--run_id".into(),
            self.run_id.clone(),
            "--max_workers".into(),
            self.max_workers.to_string(),
            "--timeout".into(),
            self.timeout_secs.to_string(),
            "--report_dir".into(),
            self.report_dir.display().to_string(),
        ];
        if !self.instance_ids.is_empty() {
            args.push("--instance_ids".into());
            args.extend(self.instance_ids.iter().cloned());
        }
        args
    }

    /// The full command line as one shell-readable string (for logs and documentation).
    pub fn command_line(&self) -> String {
        std::iter::once(self.python.display().to_string())
            .chain(self.args())
            .map(|arg| {
                if arg
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./:=".contains(c))
                {
                    arg
                } else {
                    format!("'{}'", arg.replace('\'', r"'\''"))
                }
            })
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// The summary file the harness writes: `<report_dir>/<model, '/' → '__'>.<run_id>.json`.
    pub fn summary_path(&self, model_name_or_path: &str) -> PathBuf {
        self.report_dir.join(format!(
            "{}.{}.json",
            model_name_or_path.replace('/', "__"),
            self.run_id
        ))
    }

    /// Checks that Docker answers and that `python` imports `swebench`.
    ///
    /// # Errors
    /// [`EvalError::MissingTool`] naming what is missing and how to get it.
    pub fn check_prerequisites(&self) -> Result<()> {
        let docker = Command::new("docker").arg("info").output();
        if !docker.is_ok_and(|out| out.status.success()) {
            return Err(EvalError::MissingTool {
                tool: "docker".into(),
                reason: "the official harness runs each instance in a Docker container; \
                         install Docker and make `docker info` succeed, or grade locally \
                         with `agent-rl eval swe grade`"
                    .into(),
            });
        }
        let import = Command::new(&self.python)
            .args(["-c", "import swebench.harness.run_evaluation"])
            .output();
        if !import.is_ok_and(|out| out.status.success()) {
            return Err(EvalError::MissingTool {
                tool: format!("{} -m swebench", self.python.display()),
                reason: "the Python package `swebench` is not importable; \
                         `pip install swebench` (4.x reads the 12-field schema)"
                    .into(),
            });
        }
        Ok(())
    }

    /// Runs the harness (output to `log`) and reads its summary for `model_name_or_path`.
    ///
    /// # Errors
    /// [`EvalError::MissingTool`] when prerequisites are missing; [`EvalError::Command`] when
    /// the harness exits non-zero; [`EvalError::Io`]/[`EvalError::Record`] for the summary.
    pub fn run(&self, model_name_or_path: &str, log: &Path) -> Result<HarnessSummary> {
        self.check_prerequisites()?;
        let io = |source| EvalError::Io {
            path: log.to_path_buf(),
            source,
        };
        let file = std::fs::File::create(log).map_err(io)?;
        let status = Command::new(&self.python)
            .args(self.args())
            .stdout(file.try_clone().map_err(io)?)
            .stderr(file)
            .status()
            .map_err(io)?;
        if !status.success() {
            return Err(EvalError::Command {
                command: self.command_line(),
                reason: format!("exited with {status}; see {}", log.display()),
            });
        }
        read_summary(&self.summary_path(model_name_or_path))
    }
}

/// The counts and ids of the harness's run summary that the library uses.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HarnessSummary {
    /// Instances in the dataset.
    pub total_instances: usize,
    /// Instances with a prediction.
    pub submitted_instances: usize,
    /// Instances resolved.
    pub resolved_instances: usize,
    /// Ids resolved.
    #[serde(default)]
    pub resolved_ids: Vec<String>,
    /// Ids with an empty patch.
    #[serde(default)]
    pub empty_patch_ids: Vec<String>,
    /// Ids whose evaluation errored.
    #[serde(default)]
    pub error_ids: Vec<String>,
}

/// Reads a harness run summary.
///
/// # Errors
/// [`EvalError::Io`] or [`EvalError::Record`] naming the file and the field.
pub fn read_summary(path: &Path) -> Result<HarnessSummary> {
    let text = std::fs::read_to_string(path).map_err(|source| EvalError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    serde_json::from_str(&text).map_err(|error| EvalError::Record {
        path: path.to_path_buf(),
        line: error.line(),
        reason: error.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_the_official_command_line() {
        let mut run = HarnessRun::new("preds.jsonl", "r1");
        run.instance_ids = vec!["a__b-1".into(), "c__d-2".into()];
        assert_eq!(
            run.command_line(),
            "python3 -m swebench.harness.run_evaluation --dataset_name \
             SWE-bench/SWE-bench_Verified --split test --predictions_path preds.jsonl \
             --run_id r1 --max_workers 4 --timeout 1800 --report_dir . \
             --instance_ids a__b-1 c__d-2"
        );
        assert_eq!(run.summary_path("org/m"), Path::new("./org__m.r1.json"));
    }
}
