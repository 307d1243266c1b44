//! [`MetricsLog`]: one stage's per-step metrics as `<stage>_metrics.jsonl` and `.csv` (TRL's
//! metric names), appended as steps arrive, cut back to the resumed step when a run resumes.
//! The CSV's columns are every metric any step logged: a step that brings a new one (an
//! evaluation's `eval_loss`) rewrites the CSV from the JSONL under the wider header.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde_json::{Map, Value};

use super::run_dir::io_error;
use crate::error::{AlgoError, Result};
use crate::metrics::StepMetrics;

#[derive(Debug)]
struct Files {
    jsonl: File,
    csv: File,
    csv_path: PathBuf,
    columns: Option<Vec<String>>,
    /// The first write error: reported by [`MetricsLog::check`], never swallowed.
    failed: Option<AlgoError>,
}

/// A stage's metrics files. Cheap to clone: clones append to the same files.
#[derive(Debug, Clone)]
pub struct MetricsLog {
    files: Arc<Mutex<Files>>,
    jsonl_path: PathBuf,
}

fn paths(dir: &Path, stage: &str) -> (PathBuf, PathBuf) {
    (
        dir.join(format!("{stage}_metrics.jsonl")),
        dir.join(format!("{stage}_metrics.csv")),
    )
}

fn append(path: &Path) -> Result<File> {
    OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(|source| io_error(path, source))
}

/// The `step` of a JSONL metrics line, when it has one.
fn jsonl_step(line: &str) -> Option<u64> {
    let step = serde_json::from_str::<serde_json::Value>(line)
        .ok()?
        .get("step")?
        .as_f64()?;
    (step >= 0.0).then_some(step as u64)
}

impl MetricsLog {
    /// Starts the metrics of `stage` in `dir`, replacing files of an earlier run.
    ///
    /// # Errors
    /// [`AlgoError::RunDirectory`] naming the file that cannot be created.
    pub fn create(dir: &Path, stage: &str) -> Result<Self> {
        let (jsonl_path, csv_path) = paths(dir, stage);
        let create = |path: &Path| File::create(path).map_err(|source| io_error(path, source));
        Ok(Self {
            files: Arc::new(Mutex::new(Files {
                jsonl: create(&jsonl_path)?,
                csv: create(&csv_path)?,
                csv_path,
                columns: None,
                failed: None,
            })),
            jsonl_path,
        })
    }

    /// Continues the metrics of `stage` after a resume from `step`: rows of later steps (logged
    /// after the checkpoint, before the interruption) are cut off, so that the files hold each
    /// step once; new rows are appended under the CSV's existing header.
    ///
    /// # Errors
    /// [`AlgoError::RunDirectory`] naming the file that cannot be read or rewritten.
    pub fn resume(dir: &Path, stage: &str, step: usize) -> Result<Self> {
        let (jsonl_path, csv_path) = paths(dir, stage);
        let read = |path: &Path| match std::fs::read_to_string(path) {
            Ok(text) => Ok(text),
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(String::new()),
            Err(source) => Err(io_error(path, source)),
        };
        let keep = |found: Option<u64>| found.is_some_and(|s| s <= step as u64);
        let jsonl: String = read(&jsonl_path)?
            .lines()
            .filter(|line| keep(jsonl_step(line)))
            .map(|line| format!("{line}\n"))
            .collect();
        let csv_text = read(&csv_path)?;
        let mut lines = csv_text.lines();
        let header = lines.next().filter(|h| !h.is_empty()).map(str::to_owned);
        let columns: Option<Vec<String>> = header
            .as_ref()
            .map(|h| h.split(',').map(str::to_owned).collect());
        let step_column = columns
            .as_ref()
            .and_then(|cols| cols.iter().position(|c| c == "step"));
        let mut csv = header.map(|h| format!("{h}\n")).unwrap_or_default();
        for line in lines {
            let step_value = step_column
                .and_then(|i| line.split(',').nth(i))
                .and_then(|v| v.parse::<f64>().ok())
                .map(|v| v as u64);
            if keep(step_value) {
                csv.push_str(line);
                csv.push('\n');
            }
        }
        let rewrite = |path: &Path, text: &str| {
            agent_rl_core::atomic::write_atomic(path, text.as_bytes())
                .map_err(|e| io_error(path, e))
        };
        rewrite(&jsonl_path, &jsonl)?;
        rewrite(&csv_path, &csv)?;
        Ok(Self {
            files: Arc::new(Mutex::new(Files {
                jsonl: append(&jsonl_path)?,
                csv: append(&csv_path)?,
                csv_path,
                columns,
                failed: None,
            })),
            jsonl_path,
        })
    }

    /// Appends one step to both files. A write error is kept and returned by [`Self::check`]
    /// (observers cannot fail; the pipeline checks after every stage).
    pub fn record(&self, metrics: &StepMetrics) {
        let Ok(mut files) = self.files.lock() else {
            return;
        };
        if files.failed.is_some() {
            return;
        }
        let Value::Object(row) = metrics.to_json() else {
            return;
        };
        let jsonl = format!("{}\n", Value::Object(row.clone()));
        if let Err(source) = files.jsonl.write_all(jsonl.as_bytes()) {
            files.failed = Some(io_error(&self.jsonl_path, source));
            return;
        }
        let written = match files.columns.as_mut() {
            None => {
                let columns: Vec<String> = row.keys().cloned().collect();
                let text = format!("{}\n{}\n", columns.join(","), csv_row(&columns, &row));
                files.columns = Some(columns);
                files.csv.write_all(text.as_bytes())
            }
            Some(columns) => {
                let before = columns.len();
                columns.extend(
                    row.keys()
                        .filter(|key| !columns.contains(key))
                        .cloned()
                        .collect::<Vec<_>>(),
                );
                if columns.len() == before {
                    let text = format!("{}\n", csv_row(columns, &row));
                    files.csv.write_all(text.as_bytes())
                } else {
                    let columns = columns.clone();
                    self.rewrite_csv(&mut files, &columns)
                }
            }
        };
        if let Err(source) = written {
            let path = files.csv_path.clone();
            files.failed = Some(io_error(&path, source));
        }
    }

    /// Rewrites the CSV from the JSONL (every step so far) under `columns`, and reopens it.
    fn rewrite_csv(&self, files: &mut Files, columns: &[String]) -> std::io::Result<()> {
        files.jsonl.flush()?;
        let mut text = format!("{}\n", columns.join(","));
        for line in std::fs::read_to_string(&self.jsonl_path)?.lines() {
            if let Ok(Value::Object(row)) = serde_json::from_str::<Value>(line) {
                text.push_str(&csv_row(columns, &row));
                text.push('\n');
            }
        }
        agent_rl_core::atomic::write_atomic(&files.csv_path, text.as_bytes())?;
        files.csv = OpenOptions::new().append(true).open(&files.csv_path)?;
        Ok(())
    }

    /// The first write error since the log was opened, if any.
    ///
    /// # Errors
    /// [`AlgoError::RunDirectory`] naming the metrics file that could not be written.
    pub fn check(&self) -> Result<()> {
        let Ok(mut files) = self.files.lock() else {
            return Ok(());
        };
        match files.failed.take() {
            Some(err) => Err(err),
            None => Ok(()),
        }
    }

    /// Every `reward` logged in the JSONL file, in step order (the whole run, resumed or not).
    ///
    /// # Errors
    /// [`AlgoError::RunDirectory`] when the file cannot be read.
    pub fn rewards(&self) -> Result<Vec<f32>> {
        let text = std::fs::read_to_string(&self.jsonl_path)
            .map_err(|source| io_error(&self.jsonl_path, source))?;
        Ok(text
            .lines()
            .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
            .filter_map(|value| value.get("reward")?.as_f64())
            .map(|r| r as f32)
            .collect())
    }
}

/// One CSV line: `row`'s values under `columns` (numbers as in the JSONL, empty when absent).
fn csv_row(columns: &[String], row: &Map<String, Value>) -> String {
    columns
        .iter()
        .map(|column| match row.get(column) {
            None | Some(Value::Null) => String::new(),
            Some(value) => value.to_string(),
        })
        .collect::<Vec<_>>()
        .join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(step: usize, reward: f32) -> StepMetrics {
        StepMetrics {
            step,
            reward,
            ..StepMetrics::default()
        }
    }

    #[test]
    fn resume_cuts_back_to_the_checkpoint_step() -> Result<()> {
        let dir = tempfile::tempdir().map_err(|e| io_error(Path::new("tmp"), e))?;
        let log = MetricsLog::create(dir.path(), "grpo")?;
        for s in 1..=5 {
            log.record(&step(s, s as f32));
        }
        log.check()?;
        // Interrupted after step 5, resumed from the checkpoint of step 3.
        let log = MetricsLog::resume(dir.path(), "grpo", 3)?;
        for s in 4..=6 {
            log.record(&step(s, 10.0 * s as f32));
        }
        assert_eq!(log.rewards()?, vec![1.0, 2.0, 3.0, 40.0, 50.0, 60.0]);
        let csv = std::fs::read_to_string(dir.path().join("grpo_metrics.csv"))
            .map_err(|e| io_error(Path::new("csv"), e))?;
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines.len(), 7, "header + 6 steps, each once:\n{csv}");
        assert!(lines[0].starts_with("step,"));
        assert_eq!(lines.iter().filter(|l| l.starts_with("step")).count(), 1);
        Ok(())
    }

    /// A step that brings a new metric (an evaluation's `eval_loss`) widens the CSV: every
    /// JSONL key is a column, earlier rows are kept with the cell empty; counts are integers.
    #[test]
    fn the_csv_holds_every_jsonl_key() -> Result<()> {
        let dir = tempfile::tempdir().map_err(|e| io_error(Path::new("tmp"), e))?;
        let log = MetricsLog::create(dir.path(), "sft")?;
        log.record(&step(1, 0.9));
        log.record(&StepMetrics {
            eval_loss: Some(0.5),
            ..step(2, 0.25)
        });
        log.record(&step(3, 0.75));
        log.check()?;
        let read = |name: &str| {
            std::fs::read_to_string(dir.path().join(name)).map_err(|e| io_error(Path::new(name), e))
        };
        let csv = read("sft_metrics.csv")?;
        let jsonl = read("sft_metrics.jsonl")?;
        let header: Vec<&str> = csv.lines().next().unwrap_or_default().split(',').collect();
        let rows: Vec<Map<String, Value>> = jsonl
            .lines()
            .filter_map(|line| serde_json::from_str(line).ok())
            .collect();
        assert_eq!(rows.len(), 3);
        for row in &rows {
            for key in row.keys() {
                assert!(
                    header.contains(&key.as_str()),
                    "{key} missing from {header:?}"
                );
            }
        }
        let eval_column = header.iter().position(|c| *c == "eval_loss");
        let cells: Vec<Option<String>> = csv
            .lines()
            .skip(1)
            .map(|line| {
                eval_column
                    .and_then(|i| line.split(',').nth(i))
                    .map(str::to_owned)
            })
            .collect();
        assert_eq!(
            cells,
            [Some(String::new()), Some("0.5".into()), Some(String::new())]
        );
        assert!(jsonl.starts_with("{\"step\":1,"), "{jsonl}");
        assert!(jsonl.contains("\"reward\":0.9,"), "{jsonl}");
        assert!(
            csv.lines().nth(1).unwrap_or_default().starts_with("1,"),
            "{csv}"
        );
        Ok(())
    }
}
