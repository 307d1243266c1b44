//! BFCL's AST checker for single-turn entries: dispatch on the category, the single-call check,
//! the multiple and unordered parallel checks, and the (ir)relevance rules.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::argument::check_param;
use super::category::{Category, Language, Scoring};
use super::data::BfclEntry;
use super::decode::{DecodedCall, as_calls, is_empty_output};
use super::params::Failure;
use super::value::is_omission_marker;

/// Options of the checker.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CheckOptions {
    /// The model's API replaced `.` by `_` in function names (BFCL's `underscore_to_dot` model
    /// flag): expected names are compared with their dots replaced. Default `false`.
    pub underscore_to_dot: bool,
}

/// Checks the decoded output of one entry (`decoded` is the decoder's result: the call list, or
/// the reason decoding failed).
///
/// # Errors
/// The official error type of the first failure found. Multi-turn entries fail as
/// `multi_turn:unsupported` (they are not scored by this checker).
pub fn check_entry(
    entry: &BfclEntry,
    decoded: &Result<Value, String>,
    options: CheckOptions,
) -> Result<(), Failure> {
    let has_call = decoded.as_ref().is_ok_and(|value| !is_empty_output(value));
    match entry.category.scoring() {
        Scoring::Irrelevance if has_call => Err(Failure::new(
            "irrelevance_error:decoder_success",
            "the model called a function where none is relevant",
        )),
        Scoring::Relevance if !has_call => Err(Failure::new(
            "relevance_error:decoder_failed",
            "the model made no call where one is relevant",
        )),
        Scoring::Irrelevance | Scoring::Relevance => Ok(()),
        Scoring::MultiTurn => Err(Failure::new(
            "multi_turn:unsupported",
            "multi-turn categories are not supported yet",
        )),
        Scoring::Simple | Scoring::Multiple | Scoring::Parallel => {
            let decoded = decoded.as_ref().map_err(|reason| {
                Failure::new(
                    "ast_decoder:decoder_failed",
                    format!("failed to decode: {reason}"),
                )
            })?;
            let calls = as_calls(decoded).ok_or_else(|| {
                Failure::new(
                    "ast_decoder:decoder_wrong_output_format",
                    "not a list of calls",
                )
            })?;
            check_calls(entry, &calls, options)
        }
    }
}

/// The AST check of already decoded calls.
///
/// # Errors
/// As [`check_entry`].
pub fn check_calls(
    entry: &BfclEntry,
    calls: &[DecodedCall<'_>],
    options: CheckOptions,
) -> Result<(), Failure> {
    let language = entry.category.language();
    let ground_truth = &entry.ground_truth;
    let wrong_count = |prefix: &str| {
        Failure::new(
            &format!("{prefix}:wrong_count"),
            "wrong number of functions",
        )
    };
    match entry.category.scoring() {
        Scoring::Parallel => {
            if calls.len() != ground_truth.len() {
                return Err(wrong_count("parallel_function_checker_no_order"));
            }
            let mut matched = vec![false; calls.len()];
            for (index, expected) in ground_truth.iter().enumerate() {
                let doc = find_doc(&entry.functions, expected);
                let found = (0..calls.len()).find(|&candidate| {
                    !matched[candidate]
                        && check_call(doc, calls[candidate], expected, language, options).is_ok()
                });
                match found {
                    Some(candidate) => matched[candidate] = true,
                    None => {
                        return Err(Failure::new(
                            "parallel_function_checker_no_order:cannot_find_match",
                            format!("no model call matches expected call {index}"),
                        ));
                    }
                }
            }
            Ok(())
        }
        Scoring::Multiple => {
            if calls.len() != ground_truth.len() {
                return Err(wrong_count("multiple_function_checker"));
            }
            let (Some(expected), Some(&call)) = (ground_truth.first(), calls.first()) else {
                return Ok(());
            };
            check_call(
                find_doc(&entry.functions, expected),
                call,
                expected,
                language,
                options,
            )
        }
        _ => {
            if calls.len() != 1 {
                return Err(wrong_count("simple_function_checker"));
            }
            let expected = ground_truth.first().unwrap_or(&Value::Null);
            check_call(
                entry.functions.first(),
                calls[0],
                expected,
                language,
                options,
            )
        }
    }
}

fn expected_name(expected: &Value) -> Option<&str> {
    expected
        .as_object()
        .and_then(|map| map.keys().next())
        .map(String::as_str)
}

fn find_doc<'a>(functions: &'a [Value], expected: &Value) -> Option<&'a Value> {
    let name = expected_name(expected)?;
    functions
        .iter()
        .find(|doc| doc.get("name").and_then(Value::as_str) == Some(name))
}

/// The function name the model must produce for a doc name.
pub fn model_function_name(doc_name: &str, options: CheckOptions) -> String {
    if options.underscore_to_dot {
        doc_name.replace('.', "_")
    } else {
        doc_name.to_owned()
    }
}

/// BFCL's single-call check (`simple_function_checker`) of one model call against one expected
/// call `{name: {param: [acceptable…]}}` and its function doc.
///
/// # Errors
/// The first failure, with the official error type.
pub fn check_call(
    doc: Option<&Value>,
    (name, arguments): DecodedCall<'_>,
    expected: &Value,
    language: Language,
    options: CheckOptions,
) -> Result<(), Failure> {
    let doc = doc.ok_or_else(|| {
        Failure::new(
            "simple_function_checker:wrong_func_name",
            "expected function has no doc",
        )
    })?;
    let empty = Map::new();
    let expected_params = expected
        .as_object()
        .and_then(|m| m.values().next())
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let parameters = doc.get("parameters");
    let properties = parameters
        .and_then(|p| p.get("properties"))
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let required = parameters
        .and_then(|p| p.get("required"))
        .and_then(Value::as_array);
    let doc_name = model_function_name(
        doc.get("name").and_then(Value::as_str).unwrap_or(""),
        options,
    );
    if name != doc_name {
        return Err(Failure::new(
            "simple_function_checker:wrong_func_name",
            format!("function name {doc_name:?} not found in model output"),
        ));
    }
    for param in required.into_iter().flatten().filter_map(Value::as_str) {
        if !arguments.contains_key(param) {
            return Err(Failure::new(
                "simple_function_checker:missing_required",
                format!("missing required parameter {param:?}"),
            ));
        }
    }
    for (param, value) in arguments {
        let (Some(schema), Some(acceptable)) = (properties.get(param), expected_params.get(param))
        else {
            return Err(Failure::new(
                "simple_function_checker:unexpected_param",
                format!("unexpected parameter {param:?}"),
            ));
        };
        let acceptable = match acceptable {
            Value::Array(items) => items.as_slice(),
            single => std::slice::from_ref(single),
        };
        check_param(param, value, schema, acceptable, language)?;
    }
    for (param, acceptable) in expected_params {
        let optional = acceptable
            .as_array()
            .is_some_and(|items| items.iter().any(is_omission_marker));
        if !arguments.contains_key(param) && !optional {
            return Err(Failure::new(
                "simple_function_checker:missing_optional",
                format!("parameter {param:?} not provided and not optional"),
            ));
        }
    }
    Ok(())
}

/// True when the category's entries are scored by this checker (everything but multi-turn).
pub fn is_supported(category: Category) -> bool {
    category.scoring() != Scoring::MultiTurn
}
