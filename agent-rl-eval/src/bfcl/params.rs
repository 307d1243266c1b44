//! Checking one argument value against its acceptable values: BFCL's type checker and its
//! string, list, dict and list-of-dicts value checks, with the official error types.

use serde_json::{Map, Value};

use super::value::{
    PyType, is_omission_marker, py_contains, py_eq, standardize, standardize_value,
};

/// Why an entry failed: the official error-type string and a human-readable message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// The official error type, e.g. `simple_function_checker:missing_required`.
    pub error_type: String,
    /// What was wrong, for humans.
    pub message: String,
}

impl Failure {
    /// A failure of the given type.
    pub fn new(error_type: &str, message: impl Into<String>) -> Self {
        Self {
            error_type: error_type.to_owned(),
            message: message.into(),
        }
    }
}

/// Python's `len()` view of an acceptable value used as a sequence: lists are lists, a string is
/// its characters; other values are not sequences.
fn as_sequence(value: &Value) -> Option<Vec<Value>> {
    match value {
        Value::Array(items) => Some(items.clone()),
        Value::String(text) => Some(text.chars().map(|c| Value::String(c.to_string())).collect()),
        _ => None,
    }
}

/// Python's `"" in value` for the acceptable values of a dict key.
fn allows_omission(acceptable: &Value) -> bool {
    match acceptable {
        Value::Array(items) => items.iter().any(is_omission_marker),
        Value::String(_) => true,
        Value::Object(map) => map.contains_key(""),
        _ => false,
    }
}

/// BFCL's type check. Returns whether the ground truth is a *variable reference* (its type
/// differs from the declared one), in which case the value is compared without special handling.
///
/// # Errors
/// `type_error:simple` or `type_error:nested`.
pub fn check_type(
    param: &str,
    value: &Value,
    acceptable: &[Value],
    expected: PyType,
    nested: Option<PyType>,
) -> Result<bool, Failure> {
    let answer_type = acceptable
        .iter()
        .find(|a| !is_omission_marker(a))
        .map(PyType::of);
    let is_variable = answer_type.is_some_and(|answer| answer != expected);
    let actual = PyType::of(value);
    let mut nested_failed = false;
    if actual == expected {
        let Some(nested) = nested else {
            return Ok(is_variable);
        };
        let items = value.as_array().map_or(&[][..], Vec::as_slice);
        for candidate in acceptable {
            let passes = match candidate {
                Value::Array(candidate) => items
                    .iter()
                    .all(|item| check_type(param, item, candidate, nested, None).is_ok()),
                _ => true,
            };
            if passes {
                return Ok(is_variable);
            }
        }
        nested_failed = true;
    }
    if answer_type == Some(actual) {
        if nested_failed {
            return Err(Failure::new(
                "type_error:nested",
                format!("nested type check failed for parameter {param:?}: {value}"),
            ));
        }
        return Ok(true);
    }
    Err(Failure::new(
        "type_error:simple",
        format!(
            "incorrect type for parameter {param:?}: expected {}, got {}",
            expected.name(),
            actual.name()
        ),
    ))
}

/// BFCL's string check: standardised equality with one acceptable string.
///
/// # Errors
/// `value_error:string`.
pub fn check_string(param: &str, value: &str, acceptable: &[Value]) -> Result<(), Failure> {
    let standardized = standardize(value);
    let found = acceptable
        .iter()
        .filter_map(Value::as_str)
        .any(|candidate| standardize(candidate) == standardized);
    if found {
        Ok(())
    } else {
        Err(Failure::new(
            "value_error:string",
            format!("invalid value for parameter {param:?}: {value:?}"),
        ))
    }
}

/// BFCL's list check: string elements standardised, then exact list equality with one acceptable.
///
/// # Errors
/// `value_error:list/tuple`.
pub fn check_list(param: &str, value: &[Value], acceptable: &[Value]) -> Result<(), Failure> {
    let model = Value::Array(value.iter().map(standardize_value).collect());
    let found = acceptable.iter().filter_map(as_sequence).any(|candidate| {
        py_eq(
            &model,
            &Value::Array(candidate.iter().map(standardize_value).collect()),
        )
    });
    if found {
        Ok(())
    } else {
        Err(Failure::new(
            "value_error:list/tuple",
            format!(
                "invalid value for parameter {param:?}: {}",
                Value::Array(value.to_vec())
            ),
        ))
    }
}

/// BFCL's dict check against a list of acceptable dicts (`""` entries skipped).
///
/// # Errors
/// `value_error:dict_key`, `value_error:dict_value` or `dict_checker:unclear` (the last
/// acceptable dict's failure).
pub fn check_dict(model: &Map<String, Value>, acceptable: &[Value]) -> Result<(), Failure> {
    let mut failure = Failure::new("dict_checker:unclear", "no acceptable dict");
    for candidate in acceptable.iter().filter(|c| !is_omission_marker(c)) {
        failure = Failure::new("dict_checker:unclear", "acceptable value is not a dict");
        let Some(candidate) = candidate.as_object() else {
            continue;
        };
        let mut ok = true;
        for (key, value) in model {
            let Some(allowed) = candidate.get(key) else {
                failure = Failure::new(
                    "value_error:dict_key",
                    format!("unexpected dict key {key:?}"),
                );
                ok = false;
                break;
            };
            let allowed: Vec<Value> = match allowed {
                Value::Array(items) => items.iter().map(standardize_value).collect(),
                other => as_sequence(other)
                    .unwrap_or_default()
                    .iter()
                    .map(standardize_value)
                    .collect(),
            };
            if !py_contains(&allowed, &standardize_value(value)) {
                failure = Failure::new(
                    "value_error:dict_value",
                    format!("invalid value for dict key {key:?}: {value}"),
                );
                ok = false;
                break;
            }
        }
        if let Some(key) = candidate
            .iter()
            .find(|(key, allowed)| !model.contains_key(*key) && !allows_omission(allowed))
            .map(|(key, _)| key)
        {
            failure = Failure::new("value_error:dict_key", format!("missing dict key {key:?}"));
            ok = false;
        }
        if ok {
            return Ok(());
        }
    }
    Err(failure)
}

/// BFCL's list-of-dicts check: same length and element-wise dict checks against one acceptable
/// list (order matters).
///
/// # Errors
/// `value_error:list_dict_count`, the dict check's errors, or `list_dict_checker:unclear`.
pub fn check_list_of_dicts(model: &[Value], acceptable: &[Value]) -> Result<(), Failure> {
    let mut failure = Failure::new("list_dict_checker:unclear", "no acceptable list");
    for candidate in acceptable {
        let length = match candidate {
            Value::Array(items) => items.len(),
            Value::String(text) => text.chars().count(),
            Value::Object(map) => map.len(),
            _ => continue,
        };
        if model.len() != length {
            failure = Failure::new(
                "value_error:list_dict_count",
                "wrong number of dicts in the list",
            );
            continue;
        }
        let mut ok = true;
        for (index, item) in model.iter().enumerate() {
            let expected = candidate
                .as_array()
                .and_then(|items| items.get(index))
                .cloned();
            let result = match (item.as_object(), expected) {
                (Some(item), Some(expected)) => check_dict(item, &[expected]),
                _ => Err(Failure::new(
                    "value_error:dict_value",
                    "list element is not a dict",
                )),
            };
            if let Err(error) = result {
                failure = error;
                ok = false;
                break;
            }
        }
        if ok {
            return Ok(());
        }
    }
    Err(failure)
}
