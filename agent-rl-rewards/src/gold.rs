//! Gold answers: the episode a perfect policy would produce for a target, so that a data path
//! can be checked end to end (every task's gold answer must earn the reward's maximum).

use agent_rl_core::{
    AssistantTurn, FinishReason, ParsedOutput, Task, ToolCall, ToolSpec, Trajectory,
};
use serde_json::{Map, Value};

use crate::matching::{ExpectedCall, ValuePattern};
use crate::schema::validate_arguments;
use crate::target::Target;

/// One call per expected call, each argument set to its first acceptable value (arguments whose
/// only alternative is "omit" are left out).
pub fn reference_calls(expected: &[ExpectedCall]) -> Vec<ToolCall> {
    expected
        .iter()
        .map(|call| {
            let mut arguments = Map::new();
            for argument in &call.arguments {
                if let Some(value) = first_value(&argument.acceptable) {
                    arguments.insert(argument.name.clone(), value);
                }
            }
            ToolCall::new(call.name.clone(), Value::Object(arguments))
        })
        .collect()
}

fn first_value(acceptable: &[ValuePattern]) -> Option<Value> {
    acceptable
        .iter()
        .find(|pattern| !pattern.is_omission_marker())
        .map(pattern_value)
}

fn pattern_value(pattern: &ValuePattern) -> Value {
    match pattern {
        ValuePattern::Literal(value) => value.clone(),
        ValuePattern::Object(fields) => Value::Object(
            fields
                .iter()
                .filter_map(|field| {
                    first_value(&field.acceptable).map(|value| (field.name.clone(), value))
                })
                .collect(),
        ),
        ValuePattern::List(items) => Value::Array(items.iter().map(pattern_value).collect()),
    }
}

/// One call per expected call with, for each argument, the first acceptable value that the
/// offered tool's schema accepts for it (`enum`, `type`); when none does, the argument is left
/// out if it may be omitted, else its first acceptable value is used.
fn schema_valid_calls(expected: &[ExpectedCall], tools: &[ToolSpec]) -> Vec<ToolCall> {
    let reference = reference_calls(expected);
    expected
        .iter()
        .zip(reference)
        .map(|(call, fallback)| {
            let Some(tool) = tools.iter().find(|tool| tool.name() == call.name) else {
                return fallback;
            };
            let properties = tool.parameters().get("properties");
            let accepts = |name: &str, value: &Value| {
                let Some(property) = properties.and_then(|p| p.get(name)) else {
                    return true;
                };
                let schema = serde_json::json!({"type": "object", "properties": {name: property}});
                let arguments = serde_json::json!({name: value});
                validate_arguments(&call.name, &schema, &arguments)
                    .is_ok_and(|violations| violations.is_empty())
            };
            let mut arguments = Map::new();
            for argument in &call.arguments {
                let values: Vec<Value> = argument
                    .acceptable
                    .iter()
                    .filter(|pattern| !pattern.is_omission_marker())
                    .map(pattern_value)
                    .collect();
                let chosen = values
                    .iter()
                    .find(|value| accepts(&argument.name, value))
                    .or_else(|| values.first().filter(|_| !argument.is_optional()));
                if let Some(value) = chosen {
                    arguments.insert(argument.name.clone(), value.clone());
                }
            }
            ToolCall::new(call.name.clone(), Value::Object(arguments))
        })
        .collect()
}

/// The calls of a gold answer to `target` with `tools` offered: for each expected call, each
/// argument's first acceptable value that the tool's schema accepts (see [`reference_calls`]
/// for the plain first values); for a target that [expects some call](Target::expects_any_call), one call to
/// the first offered tool with its required arguments filled from their schemas
/// ([`schema_example`]). `None` when the target judges no call, or expects some call and no tool
/// is offered.
pub fn gold_calls(target: &Target, tools: &[ToolSpec]) -> Option<Vec<ToolCall>> {
    match &target.expected_calls {
        Some(expected) => Some(schema_valid_calls(expected, tools)),
        None if target.expects_any_call => {
            let tool = tools.first()?;
            Some(vec![ToolCall::new(
                tool.name(),
                schema_example(tool.parameters()),
            )])
        }
        None => None,
    }
}

/// A value that satisfies a JSON schema's `type`, `enum` and (for objects) `required`: the first
/// enum value, else `"example"`, `1`, `1.0`, `true`, `[]`, or an object of its required
/// properties.
pub fn schema_example(schema: &Value) -> Value {
    if let Some(first) = schema
        .get("enum")
        .and_then(Value::as_array)
        .and_then(|values| values.first())
    {
        return first.clone();
    }
    let kind = match schema.get("type") {
        Some(Value::Array(kinds)) => kinds.first().and_then(Value::as_str),
        Some(Value::String(kind)) => Some(kind.as_str()),
        _ => None,
    };
    match kind {
        Some("integer") => Value::from(1),
        Some("number") => Value::from(1.0),
        Some("boolean") => Value::Bool(true),
        Some("array") => Value::Array(Vec::new()),
        Some("null") => Value::Null,
        Some("object") => {
            let properties = schema.get("properties").and_then(Value::as_object);
            let required = schema.get("required").and_then(Value::as_array);
            Value::Object(
                required
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                    .map(|name| {
                        let example = properties
                            .and_then(|p| p.get(name))
                            .map_or(Value::from("example"), schema_example);
                        (name.to_owned(), example)
                    })
                    .collect(),
            )
        }
        _ => Value::from("example"),
    }
}

/// The single-turn episode of a gold answer to `task`: one assistant turn making the
/// [`gold_calls`] of `target` (no call when the target expects none or judges no call), ending
/// normally, with no token budget (`max_new_tokens = 0`, so no over-length penalty).
pub fn gold_trajectory(task: &Task, target: &Target) -> Trajectory {
    let calls = gold_calls(target, &task.tools).unwrap_or_default();
    Trajectory {
        task_id: task.id.clone(),
        tools: task.tools.clone(),
        prompt: task.messages.clone(),
        turns: vec![AssistantTurn {
            text: String::new(),
            parsed: ParsedOutput {
                content: String::new(),
                tool_calls: calls,
                malformed: Vec::new(),
            },
            finish_reason: FinishReason::Stop,
            num_tokens: 1,
            observations: Vec::new(),
        }],
        // No budget: a gold answer is never over-long.
        max_new_tokens: 0,
        environment_reward: None,
    }
}
