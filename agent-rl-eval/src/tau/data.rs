//! Reading the τ-bench data directory: database tables, task splits, ground-truth replays.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::{EvalError, Result};

fn read(path: &Path) -> Result<String> {
    std::fs::read_to_string(path).map_err(|source| EvalError::Io {
        path: path.to_path_buf(),
        source,
    })
}

fn parse<T: serde::de::DeserializeOwned>(path: &Path, text: &str) -> Result<T> {
    serde_json::from_str(text).map_err(|error| EvalError::Record {
        path: path.to_path_buf(),
        line: error.line(),
        reason: error.to_string(),
    })
}

/// Reads a JSON file into `T`.
///
/// # Errors
/// [`EvalError::Io`] when unreadable, [`EvalError::Record`] (with the line) when malformed.
pub fn load_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T> {
    parse(path, &read(path)?)
}

/// Reads one database table: a JSON object keyed by id, file order preserved.
///
/// # Errors
/// As [`load_json`].
pub fn load_table(path: &Path) -> Result<Map<String, Value>> {
    load_json(path)
}

/// One ground-truth action of a task: a tool name and its keyword arguments.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TauAction {
    /// Tool name (or `respond`).
    pub name: String,
    /// Keyword arguments, as given.
    pub kwargs: Value,
}

/// A τ-bench task (`tasks_<split>.json` record; its index in the file is the task id).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TauTask {
    /// The customer's user id.
    pub user_id: String,
    /// The user simulator's instruction.
    pub instruction: String,
    /// Ground-truth actions.
    pub actions: Vec<TauAction>,
    /// Strings the agent must say (case-insensitive, commas ignored in the agent's text).
    #[serde(default)]
    pub outputs: Vec<String>,
}

/// One step of a ground-truth replay file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReplayStep {
    /// Tool name.
    pub name: String,
    /// Keyword arguments.
    pub kwargs: Value,
    /// The observation, `None` for steps the reward replay skips (the terminate tool).
    pub observation: Option<String>,
}

/// One task of a ground-truth replay file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReplayTask {
    /// Index of the task in its split.
    pub task_index: usize,
    /// Hash of the database after the replay, when recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gt_data_hash: Option<String>,
    /// Reward of the ground-truth trajectory, when recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reward: Option<f32>,
    /// The steps.
    pub steps: Vec<ReplayStep>,
}

/// A ground-truth replay file (`gt_replay_<split>.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReplayFile {
    /// Hash of the untouched database.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initial_data_hash: Option<String>,
    /// One entry per task.
    pub tasks: Vec<ReplayTask>,
}

/// The folder of a domain inside the data directory; accepts either the `tau_bench` folder or
/// its parent (`AGENT_RL_DATA`).
///
/// # Errors
/// [`EvalError::Layout`] when neither `<dir>/<domain>` nor `<dir>/tau_bench/<domain>` exists.
pub fn domain_dir(data_dir: &Path, domain: &str) -> Result<PathBuf> {
    for candidate in [
        data_dir.join(domain),
        data_dir.join("tau_bench").join(domain),
    ] {
        if candidate.is_dir() {
            return Ok(candidate);
        }
    }
    Err(EvalError::Layout {
        path: data_dir.to_path_buf(),
        reason: format!("no `{domain}` or `tau_bench/{domain}` folder"),
    })
}
