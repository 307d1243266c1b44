//! A small JSON-schema check of tool-call arguments (the subset `tools.json` uses: `type`,
//! `properties`, `required`, `enum`, `items`), for the hallucinated tool-call rate. The tools
//! themselves do not validate (see the module docs); this only classifies calls.

use agent_rl_core::{ToolCall, ToolSpec};
use serde_json::Value;

/// What is wrong with a well-formed call, judged against the offered tools without running it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallFault {
    /// No offered tool has the call's name.
    UnknownTool,
    /// The arguments fail the tool's schema (the JSON path and what was expected).
    InvalidArguments(String),
}

/// Classifies `call` against `tools`: `None` for a call to an offered tool whose arguments
/// satisfy its schema.
pub fn call_fault(tools: &[ToolSpec], call: &ToolCall) -> Option<CallFault> {
    let Some(tool) = tools.iter().find(|tool| tool.name() == call.name) else {
        return Some(CallFault::UnknownTool);
    };
    schema_violation(tool.parameters(), &call.arguments).map(CallFault::InvalidArguments)
}

/// Why arguments fail a schema: the JSON path and what was expected.
pub fn schema_violation(schema: &Value, value: &Value) -> Option<String> {
    check(schema, value, "$")
}

fn type_matches(kind: &str, value: &Value) -> bool {
    match kind {
        "string" => value.is_string(),
        "integer" => value.is_i64() || value.is_u64(),
        "number" => value.is_number(),
        "boolean" => value.is_boolean(),
        "array" => value.is_array(),
        "object" => value.is_object(),
        "null" => value.is_null(),
        _ => true,
    }
}

fn check(schema: &Value, value: &Value, path: &str) -> Option<String> {
    if let Some(kind) = schema.get("type").and_then(Value::as_str)
        && !type_matches(kind, value)
    {
        return Some(format!("{path}: expected {kind}"));
    }
    if let Some(options) = schema.get("enum").and_then(Value::as_array)
        && !options.contains(value)
    {
        return Some(format!(
            "{path}: not one of {}",
            Value::Array(options.clone())
        ));
    }
    if let Value::Object(map) = value {
        let properties = schema.get("properties").and_then(Value::as_object);
        if let Some(required) = schema.get("required").and_then(Value::as_array) {
            for name in required.iter().filter_map(Value::as_str) {
                if !map.contains_key(name) {
                    return Some(format!("{path}: missing `{name}`"));
                }
            }
        }
        if let Some(properties) = properties {
            for (key, item) in map {
                match properties.get(key) {
                    Some(sub) => {
                        if let Some(error) = check(sub, item, &format!("{path}.{key}")) {
                            return Some(error);
                        }
                    }
                    None => return Some(format!("{path}: unexpected `{key}`")),
                }
            }
        }
    }
    if let (Value::Array(items), Some(item_schema)) = (value, schema.get("items")) {
        for (index, item) in items.iter().enumerate() {
            if let Some(error) = check(item_schema, item, &format!("{path}[{index}]")) {
                return Some(error);
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::schema_violation;
    use serde_json::json;

    #[test]
    fn checks_types_required_enum_and_items() {
        let schema = json!({"type": "object", "properties": {
            "cabin": {"type": "string", "enum": ["economy", "business"]},
            "flights": {"type": "array", "items": {"type": "object",
                "properties": {"date": {"type": "string"}}, "required": ["date"]}},
            "count": {"type": "integer"}}, "required": ["cabin"]});
        assert_eq!(
            schema_violation(&schema, &json!({"cabin": "economy", "count": 2})),
            None
        );
        assert!(schema_violation(&schema, &json!({"cabin": "first"})).is_some());
        assert!(schema_violation(&schema, &json!({"count": 2})).is_some());
        assert!(schema_violation(&schema, &json!({"cabin": "economy", "count": 2.5})).is_some());
        assert!(schema_violation(&schema, &json!({"cabin": "economy", "flights": [{}]})).is_some());
        assert!(schema_violation(&schema, &json!({"cabin": "economy", "x": 1})).is_some());
    }
}
