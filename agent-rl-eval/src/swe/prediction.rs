//! Predictions in the official harness format: one object per instance with exactly
//! `instance_id`, `model_name_or_path` and `model_patch`, as JSONL (one per line), a JSON list,
//! or a JSON object keyed by instance id.

use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::{EvalError, Result};

/// One prediction: the patch a model produced for one instance.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Prediction {
    /// The instance id (`owner__name-PRnumber`).
    pub instance_id: String,
    /// The model's name; the official harness names its log folder and report after it.
    pub model_name_or_path: String,
    /// A unified diff against the instance's base commit; empty = no patch.
    pub model_patch: String,
}

/// Writes predictions as JSONL (one object per line, keys in the official order), atomically.
///
/// # Errors
/// [`EvalError::Io`] naming the file.
pub fn write_predictions(path: &Path, predictions: &[Prediction]) -> Result<()> {
    super::instance::write_jsonl(path, predictions)
}

/// Reads predictions in any of the official layouts (JSONL; `.json` list or id-keyed object).
/// A `null` `model_patch` reads as empty; a missing `model_name_or_path` as empty.
///
/// # Errors
/// [`EvalError::Io`]; [`EvalError::Record`] naming the line (or record index) and field when a
/// record lacks `instance_id`, has a non-string field, or an unknown field.
pub fn read_predictions(path: &Path) -> Result<Vec<Prediction>> {
    let text = std::fs::read_to_string(path).map_err(|source| EvalError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let is_json = path.extension().is_some_and(|ext| ext == "json");
    if !is_json {
        return super::instance::read_jsonl(path, |line, value| parse(path, line, value, None));
    }
    let value: Value = serde_json::from_str(&text).map_err(|error| EvalError::Record {
        path: path.to_path_buf(),
        line: 1,
        reason: format!("not JSON: {error}"),
    })?;
    match value {
        Value::Array(items) => items
            .into_iter()
            .enumerate()
            .map(|(index, item)| parse(path, index + 1, item, None))
            .collect(),
        Value::Object(map) => map
            .into_iter()
            .enumerate()
            .map(|(index, (id, item))| parse(path, index + 1, item, Some(id)))
            .collect(),
        _ => Err(EvalError::Record {
            path: path.to_path_buf(),
            line: 1,
            reason: "a .json predictions file must hold a list or an object keyed by id".into(),
        }),
    }
}

fn parse(path: &Path, line: usize, value: Value, key: Option<String>) -> Result<Prediction> {
    let bad = |reason: String| EvalError::Record {
        path: path.to_path_buf(),
        line,
        reason,
    };
    let Value::Object(map) = value else {
        return Err(bad("a prediction must be a JSON object".into()));
    };
    if let Some(field) = map.keys().find(|key| {
        !matches!(
            key.as_str(),
            "instance_id" | "model_name_or_path" | "model_patch"
        )
    }) {
        return Err(bad(format!(
            "unknown field `{field}` (the official format has \
             `instance_id`, `model_name_or_path`, `model_patch`)"
        )));
    }
    let text = |field: &str| -> Result<Option<String>> {
        match map.get(field) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(text)) => Ok(Some(text.clone())),
            Some(_) => Err(bad(format!("field `{field}` is not a string"))),
        }
    };
    let instance_id = match (text("instance_id")?, key) {
        (Some(id), _) | (None, Some(id)) => id,
        (None, None) => return Err(bad("missing field `instance_id`".into())),
    };
    Ok(Prediction {
        instance_id,
        model_name_or_path: text("model_name_or_path")?.unwrap_or_default(),
        model_patch: text("model_patch")?.unwrap_or_default(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_jsonl_with_the_official_keys() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("preds.jsonl");
        let prediction = Prediction {
            instance_id: "o__r-1".into(),
            model_name_or_path: "m".into(),
            model_patch: "diff --git a/x b/x\n".into(),
        };
        write_predictions(&path, std::slice::from_ref(&prediction)).expect("write");
        let text = std::fs::read_to_string(&path).expect("read");
        let keys: Vec<String> = serde_json::from_str::<serde_json::Map<String, Value>>(
            text.lines().next().expect("one line"),
        )
        .expect("object")
        .keys()
        .cloned()
        .collect();
        assert_eq!(keys, ["instance_id", "model_name_or_path", "model_patch"]);
        assert_eq!(read_predictions(&path).expect("read"), vec![prediction]);
    }

    #[test]
    fn reads_json_lists_and_keyed_objects() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("preds.json");
        std::fs::write(
            &path,
            r#"{"a": {"model_name_or_path": "m", "model_patch": null}}"#,
        )
        .expect("write");
        let predictions = read_predictions(&path).expect("keyed");
        assert_eq!(predictions[0].instance_id, "a");
        assert_eq!(predictions[0].model_patch, "");
        std::fs::write(&path, r#"[{"instance_id": "b", "patch": "x"}]"#).expect("write");
        let error = read_predictions(&path)
            .expect_err("unknown field")
            .to_string();
        assert!(
            error.contains(":1:") && error.contains("`patch`"),
            "{error}"
        );
    }
}
