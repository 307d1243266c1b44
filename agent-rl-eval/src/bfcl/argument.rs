//! One argument: BFCL's per-language type preparation (Python leniency, Java/JavaScript
//! source-text conversion), type check and value check.

use serde_json::Value;

use super::category::Language;
use super::convert::{java_convert, java_expected_type};
use super::convert_js::{js_convert, js_expected_type};
use super::params::{
    Failure, check_dict, check_list, check_list_of_dicts, check_string, check_type,
};
use super::value::{PyType, py_contains};

fn python_type(name: &str) -> Option<PyType> {
    Some(match name {
        "string" | "any" => PyType::Str,
        "integer" => PyType::Int,
        "float" => PyType::Float,
        "boolean" => PyType::Bool,
        "array" | "tuple" => PyType::List,
        "dict" => PyType::Dict,
        _ => return None,
    })
}

/// Type preparation, type check and value check of one argument.
pub(super) fn check_param(
    param: &str,
    value: &Value,
    schema: &Value,
    acceptable: &[Value],
    language: Language,
) -> Result<(), Failure> {
    let declared = schema.get("type").and_then(Value::as_str).unwrap_or("");
    let item_type = schema
        .get("items")
        .and_then(|items| items.get("type"))
        .and_then(Value::as_str);
    let unsupported = || {
        Failure::new(
            "type_error:unsupported",
            format!("unsupported type {declared:?} of {param:?}"),
        )
    };
    let (value, expected, nested) = match language {
        Language::Python => {
            let expected = python_type(declared).ok_or_else(unsupported)?;
            let nested = if matches!(declared, "array" | "tuple") {
                item_type.and_then(python_type)
            } else {
                None
            };
            let value = match value {
                Value::Number(n) if declared == "float" && !n.is_f64() => n
                    .as_f64()
                    .and_then(serde_json::Number::from_f64)
                    .map_or(value.clone(), Value::Number),
                _ => value.clone(),
            };
            (value, expected, nested)
        }
        Language::Java | Language::JavaScript => {
            let java = language == Language::Java;
            let expected = if java {
                java_expected_type(declared)
            } else {
                js_expected_type(declared)
            }
            .ok_or_else(unsupported)?;
            let Value::String(text) = value else {
                let error_type = if java {
                    "type_error:java"
                } else {
                    "type_error:js"
                };
                return Err(Failure::new(
                    error_type,
                    format!("parameter {param:?} is not a string: {value}"),
                ));
            };
            let is_collection = matches!(declared, "Array" | "ArrayList" | "array");
            let nested_name = if is_collection { item_type } else { None };
            let nested = nested_name.and_then(|n| {
                if java {
                    java_expected_type(n)
                } else {
                    js_expected_type(n)
                }
            });
            let value = if java {
                java_convert(text, declared, nested_name)
            } else {
                js_convert(text, declared, nested_name)
            };
            (value, expected, nested)
        }
    };
    let is_variable = check_type(param, &value, acceptable, expected, nested)?;
    if !is_variable {
        match (&value, expected) {
            (Value::Object(map), PyType::Dict) => return check_dict(map, acceptable),
            (Value::Array(items), PyType::List) if nested == Some(PyType::Dict) => {
                return check_list_of_dicts(items, acceptable);
            }
            (Value::String(text), PyType::Str) => return check_string(param, text, acceptable),
            (Value::Array(items), PyType::List) => return check_list(param, items, acceptable),
            _ => {}
        }
    }
    if py_contains(acceptable, &value) {
        Ok(())
    } else {
        Err(Failure::new(
            "value_error:others",
            format!("invalid value for parameter {param:?}: {value}"),
        ))
    }
}
