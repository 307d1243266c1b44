//! Validating call arguments against a tool's JSON schema (the subset tool specs use).
//!
//! Supported keywords: `type` (a name or a list; also BFCL's `float`, `dict`, `tuple`, `any`),
//! `properties`, `required`, `additionalProperties`, `enum`, `items`, `anyOf`/`oneOf` (treated as
//! "any of"). Other keywords are ignored. A schema that uses a supported keyword wrongly is a
//! [`RewardError::InvalidSchema`], because the data, not the model, is at fault.

use serde::Serialize;
use serde_json::{Map, Value};

use crate::error::{Result, RewardError};

/// One way the arguments break the schema.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SchemaViolation {
    /// Where in the arguments (`""` for the root, `city`, `dates[0]`, `guest.name`).
    pub path: String,
    /// What is wrong.
    pub reason: String,
}

/// Validates `arguments` against the `parameters` schema of tool `tool`.
///
/// A `null` schema (a tool without parameters) accepts any object. The arguments must be an
/// object.
///
/// ```
/// use agent_rl_rewards::validate_arguments;
/// use serde_json::json;
/// let schema = json!({"type": "object", "properties": {
///     "city": {"type": "string"}, "unit": {"type": "string", "enum": ["c", "f"]}},
///     "required": ["city"]});
/// assert!(validate_arguments("weather", &schema, &json!({"city": "Paris"}))?.is_empty());
/// let violations = validate_arguments("weather", &schema, &json!({"unit": "k"}))?;
/// assert_eq!(violations.len(), 2); // city missing, unit not in enum
/// # Ok::<(), agent_rl_rewards::RewardError>(())
/// ```
///
/// # Errors
/// [`RewardError::InvalidSchema`] when the schema itself is malformed.
pub fn validate_arguments(
    tool: &str,
    schema: &Value,
    arguments: &Value,
) -> Result<Vec<SchemaViolation>> {
    let mut violations = Vec::new();
    if !arguments.is_object() {
        violations.push(SchemaViolation {
            path: String::new(),
            reason: "arguments are not an object".into(),
        });
        return Ok(violations);
    }
    if schema.is_null() {
        return Ok(violations);
    }
    Validator { tool }.check(schema, arguments, "", "", &mut violations)?;
    Ok(violations)
}

/// Checks that a tool's `parameters` schema is usable: every supported keyword, at every depth,
/// has the right shape. Broken specs thus fail even before the model calls the tool.
///
/// # Errors
/// [`RewardError::InvalidSchema`] naming the tool and the schema path.
pub fn check_schema(tool: &str, schema: &Value) -> Result<()> {
    if schema.is_null() {
        return Ok(());
    }
    Validator { tool }.walk(schema, "")
}

struct Validator<'a> {
    tool: &'a str,
}

impl Validator<'_> {
    fn invalid(&self, schema_path: &str, reason: impl Into<String>) -> RewardError {
        RewardError::InvalidSchema {
            tool: self.tool.to_owned(),
            path: schema_path.to_owned(),
            reason: reason.into(),
        }
    }

    fn check(
        &self,
        schema: &Value,
        value: &Value,
        path: &str,
        schema_path: &str,
        out: &mut Vec<SchemaViolation>,
    ) -> Result<()> {
        let schema = match schema {
            Value::Bool(true) => return Ok(()),
            Value::Bool(false) => {
                out.push(violation(path, "no value is allowed here"));
                return Ok(());
            }
            Value::Object(schema) => schema,
            other => {
                return Err(self.invalid(
                    schema_path,
                    format!("a schema must be an object, found {other}"),
                ));
            }
        };
        if let Some(types) = schema.get("type") {
            let names: Vec<&str> = match types {
                Value::String(name) => vec![name.as_str()],
                Value::Array(items) => items
                    .iter()
                    .map(|item| {
                        item.as_str().ok_or_else(|| {
                            self.invalid(schema_path, "`type` list must hold strings")
                        })
                    })
                    .collect::<Result<_>>()?,
                _ => {
                    return Err(
                        self.invalid(schema_path, "`type` must be a string or a list of strings")
                    );
                }
            };
            let mut matched = false;
            for name in &names {
                matched |= self.type_matches(name, value, schema_path)?;
            }
            if !matched {
                out.push(violation(
                    path,
                    format!(
                        "expected {}, found {}",
                        names.join(" or "),
                        json_type(value)
                    ),
                ));
                return Ok(());
            }
        }
        if let Some(options) = schema.get("enum") {
            let options = options
                .as_array()
                .ok_or_else(|| self.invalid(schema_path, "`enum` must be a list"))?;
            if !options.iter().any(|option| json_equal(option, value)) {
                out.push(violation(
                    path,
                    format!("{value} is not one of {}", Value::Array(options.clone())),
                ));
            }
        }
        for keyword in ["anyOf", "oneOf"] {
            if let Some(alternatives) = schema.get(keyword) {
                let alternatives = alternatives.as_array().ok_or_else(|| {
                    self.invalid(schema_path, format!("`{keyword}` must be a list"))
                })?;
                let mut any_valid = alternatives.is_empty();
                for (index, alternative) in alternatives.iter().enumerate() {
                    let mut trial = Vec::new();
                    self.check(
                        alternative,
                        value,
                        path,
                        &format!("{schema_path}/{keyword}/{index}"),
                        &mut trial,
                    )?;
                    any_valid |= trial.is_empty();
                }
                if !any_valid {
                    out.push(violation(
                        path,
                        format!("matches none of the `{keyword}` schemas"),
                    ));
                }
            }
        }
        match value {
            Value::Object(map) => self.check_object(schema, map, path, schema_path, out),
            Value::Array(items) => {
                match schema.get("items") {
                    Some(item_schema @ Value::Object(_)) | Some(item_schema @ Value::Bool(_)) => {
                        for (index, item) in items.iter().enumerate() {
                            self.check(
                                item_schema,
                                item,
                                &format!("{path}[{index}]"),
                                &format!("{schema_path}/items"),
                                out,
                            )?;
                        }
                    }
                    Some(Value::Array(_)) | None => {}
                    Some(_) => return Err(self.invalid(schema_path, "`items` must be a schema")),
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }

    fn check_object(
        &self,
        schema: &Map<String, Value>,
        map: &Map<String, Value>,
        path: &str,
        schema_path: &str,
        out: &mut Vec<SchemaViolation>,
    ) -> Result<()> {
        let properties = match schema.get("properties") {
            None => None,
            Some(Value::Object(properties)) => Some(properties),
            Some(_) => return Err(self.invalid(schema_path, "`properties` must be an object")),
        };
        if let Some(required) = schema.get("required") {
            let required = required
                .as_array()
                .ok_or_else(|| self.invalid(schema_path, "`required` must be a list"))?;
            for name in required {
                let name = name
                    .as_str()
                    .ok_or_else(|| self.invalid(schema_path, "`required` must hold strings"))?;
                if !map.contains_key(name) {
                    out.push(violation(&join(path, name), "missing required argument"));
                }
            }
        }
        for (key, item) in map {
            let item_path = join(path, key);
            if let Some(property) = properties.and_then(|properties| properties.get(key)) {
                self.check(
                    property,
                    item,
                    &item_path,
                    &format!("{schema_path}/properties/{key}"),
                    out,
                )?;
                continue;
            }
            match schema.get("additionalProperties") {
                None | Some(Value::Bool(true)) => {}
                Some(Value::Bool(false)) => out.push(violation(&item_path, "unexpected argument")),
                Some(extra @ Value::Object(_)) => {
                    self.check(
                        extra,
                        item,
                        &item_path,
                        &format!("{schema_path}/additionalProperties"),
                        out,
                    )?;
                }
                Some(_) => {
                    return Err(self.invalid(
                        schema_path,
                        "`additionalProperties` must be a bool or a schema",
                    ));
                }
            }
        }
        Ok(())
    }

    fn walk(&self, schema: &Value, schema_path: &str) -> Result<()> {
        let schema = match schema {
            Value::Bool(_) => return Ok(()),
            Value::Object(schema) => schema,
            other => {
                return Err(self.invalid(
                    schema_path,
                    format!("a schema must be an object, found {other}"),
                ));
            }
        };
        if let Some(types) = schema.get("type") {
            let names: Vec<&Value> = match types {
                Value::Array(items) => items.iter().collect(),
                single => vec![single],
            };
            for name in names {
                let name = name.as_str().ok_or_else(|| {
                    self.invalid(schema_path, "`type` must be a string or a list of strings")
                })?;
                self.type_matches(name, &Value::Null, schema_path)?;
            }
        }
        for keyword in ["enum", "anyOf", "oneOf"] {
            if schema.get(keyword).is_some_and(|value| !value.is_array()) {
                return Err(self.invalid(schema_path, format!("`{keyword}` must be a list")));
            }
        }
        if let Some(required) = schema.get("required") {
            let valid = required
                .as_array()
                .is_some_and(|names| names.iter().all(Value::is_string));
            if !valid {
                return Err(self.invalid(schema_path, "`required` must be a list of strings"));
            }
        }
        match schema.get("properties") {
            None => {}
            Some(Value::Object(properties)) => {
                for (key, property) in properties {
                    self.walk(property, &format!("{schema_path}/properties/{key}"))?;
                }
            }
            Some(_) => return Err(self.invalid(schema_path, "`properties` must be an object")),
        }
        for keyword in ["items", "additionalProperties"] {
            match schema.get(keyword) {
                None | Some(Value::Bool(_)) | Some(Value::Array(_)) if keyword == "items" => {}
                None | Some(Value::Bool(_)) => {}
                Some(nested @ Value::Object(_)) => {
                    self.walk(nested, &format!("{schema_path}/{keyword}"))?
                }
                Some(_) => {
                    return Err(self.invalid(schema_path, format!("`{keyword}` must be a schema")));
                }
            }
        }
        for keyword in ["anyOf", "oneOf"] {
            if let Some(Value::Array(alternatives)) = schema.get(keyword) {
                for (index, alternative) in alternatives.iter().enumerate() {
                    self.walk(alternative, &format!("{schema_path}/{keyword}/{index}"))?;
                }
            }
        }
        Ok(())
    }

    fn type_matches(&self, name: &str, value: &Value, schema_path: &str) -> Result<bool> {
        Ok(match name {
            "object" | "dict" => value.is_object(),
            "array" | "tuple" | "list" => value.is_array(),
            "string" => value.is_string(),
            "integer" => value.is_i64() || value.is_u64(),
            "number" | "float" => value.is_number(),
            "boolean" => value.is_boolean(),
            "null" => value.is_null(),
            "any" => true,
            other => return Err(self.invalid(schema_path, format!("unknown type `{other}`"))),
        })
    }
}

fn violation(path: &str, reason: impl Into<String>) -> SchemaViolation {
    SchemaViolation {
        path: path.to_owned(),
        reason: reason.into(),
    }
}

fn join(prefix: &str, name: &str) -> String {
    if prefix.is_empty() {
        name.to_owned()
    } else {
        format!("{prefix}.{name}")
    }
}

fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(number) if number.is_f64() => "number",
        Value::Number(_) => "integer",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn json_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({"type": "object", "properties": {
            "city": {"type": "string"},
            "days": {"type": "integer"},
            "scale": {"type": "float"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "filter": {"type": "dict", "properties": {"max": {"type": "number"}}, "required": ["max"],
                       "additionalProperties": false},
            "mode": {"anyOf": [{"type": "string", "enum": ["a"]}, {"type": "integer"}]}
        }, "required": ["city"]})
    }

    #[test]
    fn violation_table() {
        let cases = [
            (json!({"city": "x"}), vec![]),
            (
                json!({"city": "x", "days": 3, "scale": 2, "tags": ["a"], "mode": 4}),
                vec![],
            ),
            (json!({}), vec!["city"]),
            (json!({"city": 1}), vec!["city"]),
            (json!({"city": "x", "days": 3.5}), vec!["days"]),
            (json!({"city": "x", "tags": ["a", 2]}), vec!["tags[1]"]),
            (
                json!({"city": "x", "filter": {"min": 1}}),
                vec!["filter.max", "filter.min"],
            ),
            (
                json!({"city": "x", "mode": "b"}),
                vec![""; 0].into_iter().chain(["mode"]).collect(),
            ),
            (json!({"city": "x", "extra": 1}), vec![]),
            (json!([1]), vec![""]),
        ];
        for (arguments, paths) in cases {
            let found = validate_arguments("t", &schema(), &arguments).expect("valid schema");
            let found: Vec<&str> = found.iter().map(|v| v.path.as_str()).collect();
            assert_eq!(found, paths, "{arguments}");
        }
    }

    #[test]
    fn broken_schemas_are_errors_naming_tool_and_path() {
        let cases = [
            json!({"type": "object", "required": "city"}),
            json!({"type": "strng"}),
            json!({"type": "object", "properties": []}),
            json!({"type": "object", "properties": {"a": 5}}),
            json!({"enum": "a"}),
            json!(3),
        ];
        for schema in cases {
            let err = validate_arguments("t", &schema, &json!({"a": 1})).expect_err("broken");
            assert!(
                matches!(err, RewardError::InvalidSchema { ref tool, .. } if tool == "t"),
                "{schema}: {err}"
            );
            assert!(check_schema("t", &schema).is_err(), "{schema}");
        }
        // Broken parts the arguments never reach are still found by `check_schema`.
        let deep = json!({"type": "object", "properties": {"a": {"type": "object",
            "properties": {"b": {"type": "strng"}}}}});
        assert!(
            validate_arguments("t", &deep, &json!({}))
                .expect("not reached")
                .is_empty()
        );
        let err = check_schema("t", &deep).expect_err("deep");
        assert!(
            matches!(err, RewardError::InvalidSchema { ref path, .. } if path == "/properties/a/properties/b"),
            "{err}"
        );
        for fine in [
            json!({"type": "object", "properties": {"a": {"type": ["string", "null"]}}}),
            Value::Null,
        ] {
            check_schema("t", &fine).expect("valid");
        }
    }
}
