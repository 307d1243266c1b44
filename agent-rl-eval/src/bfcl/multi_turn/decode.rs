//! A multi-turn result (`result`: turns → steps → calls) into call strings, as bfcl-eval's
//! evaluation decodes it: a step is raw model text (decoded like the prompting handlers and
//! rendered as `name(k=repr(v), …)`), already decoded call strings (`["cd(folder='a')"]`, the
//! decoded form bfcl-eval writes), or function-calling output (`[{"name": {args} | "json"}]`,
//! rendered as `name(k=repr(v),…)`). A step that fails to decode or decodes to nothing is dropped,
//! as upstream.

use serde_json::Value;

use super::checker::TurnSteps;
use super::value::PyValue;
use crate::bfcl::category::Language;
use crate::bfcl::decode::decode_text;
use crate::bfcl::params::Failure;

/// Decodes an entry's result into call strings per turn and step.
///
/// # Errors
/// `multi_turn:inference_error` when the result is not a list, `multi_turn:force_terminated`
/// when it has not one item per ground-truth turn.
pub fn decode_result(result: &Value, turns: usize) -> Result<TurnSteps, Failure> {
    let Value::Array(items) = result else {
        return Err(Failure::new(
            "multi_turn:inference_error",
            "Error during inference phase. Model did not output a list of model responses.",
        ));
    };
    if items.len() != turns {
        return Err(force_terminated(items.len(), turns));
    }
    Ok(items
        .iter()
        .map(|turn| match turn {
            Value::Array(steps) => steps
                .iter()
                .filter_map(decode_step)
                .filter(|calls| !(calls.is_empty() || (calls.len() == 1 && calls[0].is_empty())))
                .collect(),
            _ => Vec::new(),
        })
        .collect())
}

/// The official verdict on a result with `result_turns` turns where the ground truth has
/// `truth_turns`: the model was force-quit at the step limit.
pub(super) fn force_terminated(result_turns: usize, truth_turns: usize) -> Failure {
    Failure::new(
        "multi_turn:force_terminated",
        format!(
            "Model was force-terminated during inference phase. The length of the model result \
             turns ({result_turns}) does not match the length of the ground truth turns \
             ({truth_turns})."
        ),
    )
}

/// One step's call strings, or `None` when it does not decode.
pub fn decode_step(step: &Value) -> Option<Vec<String>> {
    match step {
        Value::String(text) => {
            let decoded = decode_text(text, Language::Python).ok()?;
            let calls = decoded.as_array()?;
            calls
                .iter()
                .map(|call| {
                    let (name, arguments) = call.as_object()?.iter().next()?;
                    let arguments = arguments.as_object()?;
                    let rendered: Vec<String> = arguments
                        .iter()
                        .map(|(key, value)| format!("{key}={}", nested_value(value)))
                        .collect();
                    Some(format!("{name}({})", rendered.join(", ")))
                })
                .collect()
        }
        Value::Array(items) if items.iter().all(Value::is_string) => Some(
            items
                .iter()
                .filter_map(|item| item.as_str().map(str::to_owned))
                .collect(),
        ),
        Value::Array(items) => items.iter().map(function_call_strings).sum_flatten(),
        Value::Object(_) => function_call_strings(step),
        _ => None,
    }
}

trait SumFlatten {
    fn sum_flatten(self) -> Option<Vec<String>>;
}

impl<I: Iterator<Item = Option<Vec<String>>>> SumFlatten for I {
    fn sum_flatten(self) -> Option<Vec<String>> {
        let mut out = Vec::new();
        for part in self {
            out.extend(part?);
        }
        Some(out)
    }
}

/// `convert_to_function_call` of one `{name: arguments}` object.
fn function_call_strings(call: &Value) -> Option<Vec<String>> {
    call.as_object()?
        .iter()
        .map(|(name, arguments)| {
            let parsed;
            let arguments = match arguments {
                Value::String(text) => {
                    parsed = serde_json::from_str::<Value>(text).ok()?;
                    &parsed
                }
                other => other,
            };
            let rendered: Vec<String> = arguments
                .as_object()?
                .iter()
                .map(|(key, value)| format!("{key}={}", PyValue::from_json(value).repr()))
                .collect();
            Some(format!("{name}({})", rendered.join(",")))
        })
        .collect()
}

/// `parse_nested_value`: a dict of dicts is a nested call, another dict `{'k': v}`, else `repr`.
fn nested_value(value: &Value) -> String {
    match value {
        Value::Object(map) if !map.is_empty() && map.values().all(Value::is_object) => {
            let (name, arguments) = map.iter().next().map_or(("", value), |(k, v)| (k, v));
            let rendered: Vec<String> = arguments
                .as_object()
                .into_iter()
                .flatten()
                .map(|(key, value)| format!("{key}={}", nested_value(value)))
                .collect();
            format!("{name}({})", rendered.join(", "))
        }
        Value::Object(map) => {
            let rendered: Vec<String> = map
                .iter()
                .map(|(key, value)| format!("'{key}': {}", nested_value(value)))
                .collect();
            format!("{{{}}}", rendered.join(", "))
        }
        other => PyValue::from_json(other).repr(),
    }
}
