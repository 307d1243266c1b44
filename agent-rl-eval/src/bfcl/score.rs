//! Scoring model outputs: one [`Verdict`] per entry, from raw text or already decoded calls, and
//! scoring of a whole result file (`{"id": …, "result": …}` per line).

use std::collections::HashMap;
use std::path::Path;

use agent_rl_core::ToolCall;
use agent_rl_rewards::matching::{ExpectedCall, MatchOptions, match_calls};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::category::{Category, Language, Scoring};
use super::checker::{CheckOptions, check_entry, model_function_name};
use super::convert::java_convert;
use super::convert_js::js_convert;
use super::data::{BfclDataset, BfclEntry, read_jsonl};
use super::decode::{as_calls, decode_text};
use super::multi_turn::{MultiTurnVerdict, check_multi_turn, decode_result, ground_truth_turns};
use crate::error::{EvalError, Result};

/// The verdict on one entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    /// Entry id.
    pub id: String,
    /// Its category.
    pub category: Category,
    /// True when the official checker would accept the output.
    pub valid: bool,
    /// The official error type when invalid.
    pub error_type: Option<String>,
    /// A human-readable reason when invalid.
    pub error: Option<String>,
    /// The output decoded into BFCL's call-list format (tool-call format accuracy).
    pub well_formed: bool,
    /// For AST categories: the fraction of argument checks passed, from the rewards crate's
    /// matching engine with partial credit (the argument-match reward used in training).
    pub argument_score: Option<f64>,
    /// False when the entry is not scored: a multi-turn entry needing a backend (or behaviour)
    /// not ported yet (the reason is in `error`), or multi-turn output from the runner, which
    /// does not run multi-turn inference yet.
    pub supported: bool,
}

/// One line of a result file: the entry id and the model's result, either its raw text or the
/// decoded list `[{"function_name": {"argument": value}}]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResultLine {
    /// Entry id (its prefix gives the category).
    pub id: String,
    /// Raw model text, or decoded calls.
    pub result: Value,
}

/// Scores one output (`output` is raw text as a JSON string, or decoded calls).
pub fn score_output(entry: &BfclEntry, output: &Value, options: CheckOptions) -> Verdict {
    if entry.category.scoring() == Scoring::MultiTurn {
        return score_multi_turn(entry, output);
    }
    let decoded = match output {
        Value::String(text) => decode_text(text, entry.category.language()),
        other => Ok(parse_string_arguments(other)),
    };
    score_decoded(entry, decoded, options)
}

/// Scores a multi-turn result (turns → steps → calls) with the multi-turn checker; an entry that
/// needs a backend not ported yet is `supported: false` with the reason in `error`.
fn score_multi_turn(entry: &BfclEntry, output: &Value) -> Verdict {
    let mut verdict = Verdict {
        id: entry.id.clone(),
        category: entry.category,
        valid: false,
        error_type: None,
        error: None,
        well_formed: false,
        argument_score: None,
        supported: true,
    };
    let unsupported = |mut verdict: Verdict, reason: String| {
        verdict.supported = false;
        verdict.error_type = Some("multi_turn:unsupported".into());
        verdict.error = Some(reason);
        verdict
    };
    let Some(setup) = &entry.multi_turn else {
        return unsupported(verdict, "the entry has no multi-turn fields".into());
    };
    let truth = match ground_truth_turns(&entry.ground_truth) {
        Ok(truth) => truth,
        Err(reason) => return unsupported(verdict, reason),
    };
    let steps = match decode_result(output, truth.len()) {
        Ok(steps) => steps,
        Err(failure) => {
            verdict.error_type = Some(failure.error_type);
            verdict.error = Some(failure.message);
            return verdict;
        }
    };
    verdict.well_formed = true;
    match check_multi_turn(&entry.id, setup, &truth, &steps) {
        MultiTurnVerdict::Valid => verdict.valid = true,
        MultiTurnVerdict::Invalid(failure) => {
            verdict.error_type = Some(failure.error_type);
            verdict.error = Some(failure.message);
        }
        MultiTurnVerdict::Unsupported(reason) => return unsupported(verdict, reason),
    }
    verdict
}

/// BFCL's own function-calling result files keep each call's arguments as a JSON string
/// (`[{"fn": "{\"a\": 1}"}]`); such strings are parsed, as BFCL's decoders do.
fn parse_string_arguments(decoded: &Value) -> Value {
    let Value::Array(calls) = decoded else {
        return decoded.clone();
    };
    let parse = |call: &Value| -> Value {
        let Value::Object(map) = call else {
            return call.clone();
        };
        let parsed = map.iter().map(|(name, arguments)| {
            let arguments = match arguments {
                Value::String(text) => match serde_json::from_str::<Value>(text) {
                    Ok(object @ Value::Object(_)) => object,
                    _ => arguments.clone(),
                },
                other => other.clone(),
            };
            (name.clone(), arguments)
        });
        Value::Object(parsed.collect())
    };
    Value::Array(calls.iter().map(parse).collect())
}

/// Scores the decoder's result for one entry: the decoded calls, or why decoding failed.
pub fn score_decoded(
    entry: &BfclEntry,
    decoded: std::result::Result<Value, String>,
    options: CheckOptions,
) -> Verdict {
    let result = check_entry(entry, &decoded, options);
    let calls = decoded.as_ref().ok().and_then(as_calls);
    let argument_score = entry.category.has_answers().then(|| match &calls {
        Some(calls) if entry.category.scoring() != Scoring::MultiTurn => {
            argument_score(entry, calls, options)
        }
        _ => 0.0,
    });
    let (error_type, error) = match result {
        Ok(()) => (None, None),
        Err(failure) => (Some(failure.error_type), Some(failure.message)),
    };
    Verdict {
        id: entry.id.clone(),
        category: entry.category,
        valid: error_type.is_none(),
        error_type,
        error,
        well_formed: calls.is_some(),
        argument_score,
        supported: entry.category.scoring() != Scoring::MultiTurn,
    }
}

/// Partial-credit argument match of the decoded calls against the ground truth, with the rewards
/// engine (Java/JavaScript source text converted with the declared types first).
fn argument_score(
    entry: &BfclEntry,
    calls: &[(&str, &Map<String, Value>)],
    options: CheckOptions,
) -> f64 {
    let language = entry.category.language();
    let expected: Vec<ExpectedCall> = entry
        .ground_truth
        .iter()
        .filter_map(|call| ExpectedCall::from_bfcl(call).ok())
        .map(|mut call| {
            call.name = model_function_name(&call.name, options);
            call
        })
        .collect();
    let actual: Vec<ToolCall> = calls
        .iter()
        .map(|(name, arguments)| {
            let arguments = match language {
                Language::Python => (*arguments).clone(),
                _ => convert_arguments(entry, name, arguments, options),
            };
            ToolCall::new(*name, Value::Object(arguments))
        })
        .collect();
    match_calls(
        &actual,
        &expected,
        &MatchOptions::bfcl().with_partial_credit(true),
    )
    .score()
}

fn convert_arguments(
    entry: &BfclEntry,
    name: &str,
    arguments: &Map<String, Value>,
    options: CheckOptions,
) -> Map<String, Value> {
    let doc = entry.functions.iter().find(|doc| {
        doc.get("name")
            .and_then(Value::as_str)
            .map(|n| model_function_name(n, options))
            .as_deref()
            == Some(name)
    });
    arguments
        .iter()
        .map(|(param, value)| {
            let schema =
                doc.and_then(|doc| doc.pointer(&format!("/parameters/properties/{param}")));
            let declared = schema
                .and_then(|s| s.get("type"))
                .and_then(Value::as_str)
                .unwrap_or("any");
            let items = schema
                .and_then(|s| s.pointer("/items/type"))
                .and_then(Value::as_str);
            let converted = match (value, entry.category.language()) {
                (Value::String(text), Language::Java) => java_convert(text, declared, items),
                (Value::String(text), Language::JavaScript) => js_convert(text, declared, items),
                _ => value.clone(),
            };
            (param.clone(), converted)
        })
        .collect()
}

/// Reads a result file (JSON Lines of [`ResultLine`]), with each record's line number.
///
/// # Errors
/// Unreadable file, a line that is not a `{"id", "result"}` object, an id already answered on
/// an earlier line (it would be counted twice), or a file without any record — each
/// [`EvalError::Record`] naming the file and line.
pub fn read_results(path: &Path) -> Result<Vec<(usize, ResultLine)>> {
    let records: Vec<(usize, ResultLine)> = read_jsonl(path)?;
    if records.is_empty() {
        return Err(EvalError::Record {
            path: path.to_path_buf(),
            line: 1,
            reason: "the result file holds no results (expected JSON Lines `{\"id\", \"result\"}`)"
                .into(),
        });
    }
    let mut first_line: HashMap<&str, usize> = HashMap::new();
    for (line, record) in &records {
        if let Some(first) = first_line.insert(record.id.as_str(), *line) {
            return Err(EvalError::Record {
                path: path.to_path_buf(),
                line: *line,
                reason: format!(
                    "duplicate id {:?} (first on line {first}); each entry must be answered once",
                    record.id
                ),
            });
        }
    }
    Ok(records)
}

/// Scores every line of a result file against the dataset.
///
/// # Errors
/// Those of [`read_results`], and a line whose id names no entry of the dataset.
pub fn score_results_file(
    dataset: &BfclDataset,
    path: &Path,
    options: CheckOptions,
) -> Result<Vec<Verdict>> {
    let index = dataset.index();
    read_results(path)?
        .into_iter()
        .map(|(line, record)| {
            let entry = index
                .get(record.id.as_str())
                .ok_or_else(|| EvalError::Record {
                    path: path.to_path_buf(),
                    line,
                    reason: match Category::from_id(&record.id) {
                        Some(category) => format!(
                            "no entry {:?} in the data of category {category}",
                            record.id
                        ),
                        None => format!("id {:?} names no BFCL category", record.id),
                    },
                })?;
            Ok(score_output(entry, &record.result, options))
        })
        .collect()
}
