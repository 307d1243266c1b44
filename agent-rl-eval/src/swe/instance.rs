//! SWE-bench instances: the upstream 12-field records (`verified_mini50.jsonl`) and the
//! metadata-only list of all Verified instances (`verified_instances.jsonl`).

use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::{EvalError, Result};

/// One complete SWE-bench instance, as in the upstream dataset (test lists decoded).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweInstance {
    /// `owner/name` of the repository.
    pub repo: String,
    /// `owner__name-PRnumber`.
    pub instance_id: String,
    /// Commit the agent starts from.
    pub base_commit: String,
    /// The reference fix (unified diff of non-test files).
    pub patch: String,
    /// The diff that adds or changes the grading tests.
    pub test_patch: String,
    /// Issue title and body.
    pub problem_statement: String,
    /// Issue comments before the fix (may be empty).
    #[serde(default)]
    pub hints_text: String,
    /// Repository version key that selects the environment.
    pub version: String,
    /// Tests that must go from failing to passing.
    pub fail_to_pass: Vec<String>,
    /// Tests that must keep passing.
    pub pass_to_pass: Vec<String>,
    /// Commit the environment is built from.
    #[serde(default)]
    pub environment_setup_commit: String,
}

/// One row of `verified_instances.jsonl`: identifiers and metadata, no patches or tests.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InstanceMetadata {
    /// `owner__name-PRnumber`.
    pub instance_id: String,
    /// `owner/name`.
    pub repo: String,
    /// Commit the agent starts from.
    pub base_commit: String,
    /// Repository version key.
    pub version: String,
    /// Annotated difficulty bucket (e.g. `"<15 min fix"`).
    #[serde(default)]
    pub difficulty: String,
    /// Short issue title.
    #[serde(default)]
    pub title: String,
    /// Name of the official evaluation image.
    #[serde(default)]
    pub eval_image: String,
    /// True when the instance is also in `verified_mini50.jsonl`.
    #[serde(default)]
    pub in_mini50: bool,
}

/// Reads complete instances (upstream schema) from a JSONL file.
///
/// # Errors
/// [`EvalError::Io`] when the file cannot be read; [`EvalError::Record`] naming the line and
/// the field when a record is not a JSON object, lacks a field, or has a `FAIL_TO_PASS` /
/// `PASS_TO_PASS` that is not a JSON-encoded list of strings.
pub fn load_instances(path: &Path) -> Result<Vec<SweInstance>> {
    read_jsonl(path, |line, value| parse_instance(path, line, value))
}

/// Reads the metadata list (`verified_instances.jsonl`).
///
/// # Errors
/// As [`load_instances`].
pub fn load_instance_metadata(path: &Path) -> Result<Vec<InstanceMetadata>> {
    read_jsonl(path, |line, value| {
        serde_json::from_value(value).map_err(|error| record(path, line, error.to_string()))
    })
}

/// The instances of `instances` whose ids are in `ids`, in the order of `ids`.
///
/// # Errors
/// [`EvalError::InvalidConfig`] (field `instances`) naming an id that is not in the data.
pub fn select_instances(instances: &[SweInstance], ids: &[String]) -> Result<Vec<SweInstance>> {
    ids.iter()
        .map(|id| {
            instances
                .iter()
                .find(|instance| &instance.instance_id == id)
                .cloned()
                .ok_or_else(|| EvalError::InvalidConfig {
                    field: "instances".into(),
                    reason: format!("unknown instance id `{id}`"),
                })
        })
        .collect()
}

fn record(path: &Path, line: usize, reason: String) -> EvalError {
    EvalError::Record {
        path: path.to_path_buf(),
        line,
        reason,
    }
}

/// Parses every non-blank line of a JSONL file with `parse(line_number, value)`.
pub(crate) fn read_jsonl<T>(
    path: &Path,
    mut parse: impl FnMut(usize, Value) -> Result<T>,
) -> Result<Vec<T>> {
    let text = std::fs::read_to_string(path).map_err(|source| EvalError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let mut out = Vec::new();
    for (index, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let value: Value = serde_json::from_str(line)
            .map_err(|error| record(path, index + 1, format!("not JSON: {error}")))?;
        out.push(parse(index + 1, value)?);
    }
    Ok(out)
}

/// Writes `items` as JSONL (one object per line, fields in declaration order), atomically.
pub(crate) fn write_jsonl<T: Serialize>(path: &Path, items: &[T]) -> Result<()> {
    let mut text = String::new();
    for (index, item) in items.iter().enumerate() {
        let line = serde_json::to_string(item)
            .map_err(|error| record(path, index + 1, error.to_string()))?;
        text.push_str(&line);
        text.push('\n');
    }
    agent_rl_core::atomic::write_atomic(path, text.as_bytes()).map_err(|source| EvalError::Io {
        path: path.to_path_buf(),
        source,
    })
}

fn parse_instance(path: &Path, line: usize, value: Value) -> Result<SweInstance> {
    let Value::Object(map) = value else {
        return Err(record(path, line, "not a JSON object".into()));
    };
    let text = |field: &str, required: bool| -> Result<String> {
        match map.get(field) {
            Some(Value::String(text)) => Ok(text.clone()),
            None | Some(Value::Null) if !required => Ok(String::new()),
            None => Err(record(path, line, format!("missing field `{field}`"))),
            Some(_) => Err(record(
                path,
                line,
                format!("field `{field}` is not a string"),
            )),
        }
    };
    let tests = |field: &str| -> Result<Vec<String>> {
        match map.get(field) {
            Some(Value::String(encoded)) => serde_json::from_str(encoded).map_err(|error| {
                record(
                    path,
                    line,
                    format!("field `{field}` is not a JSON-encoded list of strings: {error}"),
                )
            }),
            Some(Value::Array(_)) => serde_json::from_value(map[field].clone())
                .map_err(|error| record(path, line, format!("field `{field}`: {error}"))),
            None => Err(record(path, line, format!("missing field `{field}`"))),
            Some(_) => Err(record(path, line, format!("field `{field}` is not a list"))),
        }
    };
    Ok(SweInstance {
        repo: text("repo", true)?,
        instance_id: text("instance_id", true)?,
        base_commit: text("base_commit", true)?,
        patch: text("patch", false)?,
        test_patch: text("test_patch", true)?,
        problem_statement: text("problem_statement", true)?,
        hints_text: text("hints_text", false)?,
        version: text("version", true)?,
        fail_to_pass: tests("FAIL_TO_PASS")?,
        pass_to_pass: tests("PASS_TO_PASS")?,
        environment_setup_commit: text("environment_setup_commit", false)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(text: &str) -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("instances.jsonl");
        std::fs::write(&path, text).expect("write");
        (dir, path)
    }

    fn line(f2p: &str) -> String {
        serde_json::json!({
            "repo": "o/r", "instance_id": "o__r-1", "base_commit": "abc", "patch": "",
            "test_patch": "diff", "problem_statement": "bug", "version": "1.0",
            "FAIL_TO_PASS": f2p, "PASS_TO_PASS": "[]"
        })
        .to_string()
    }

    #[test]
    fn decodes_the_test_lists() {
        let (_dir, path) = write(&format!("{}\n\n", line(r#"["t::a", "t::b"]"#)));
        let instances = load_instances(&path).expect("loads");
        assert_eq!(instances[0].fail_to_pass, vec!["t::a", "t::b"]);
        assert!(instances[0].pass_to_pass.is_empty());
    }

    #[test]
    fn errors_name_line_and_field() {
        let (_dir, path) = write(&format!("{}\n{}\n", line("[]"), line("not json")));
        let error = load_instances(&path).expect_err("bad list").to_string();
        assert!(
            error.contains(":2:") && error.contains("FAIL_TO_PASS"),
            "{error}"
        );
        let (_dir, path) = write("{\"repo\": \"o/r\"}\n");
        let error = load_instances(&path).expect_err("missing").to_string();
        assert!(
            error.contains(":1:") && error.contains("instance_id"),
            "{error}"
        );
    }

    #[test]
    fn unknown_ids_are_named() {
        let (_dir, path) = write(&line("[]"));
        let instances = load_instances(&path).expect("loads");
        let error = select_instances(&instances, &["x".into()]).expect_err("unknown");
        assert!(error.to_string().contains("`x`"));
    }
}
