//! Python value semantics over JSON values: exact types, `==`, and BFCL's string standardisation.
//!
//! Decoded model outputs and possible answers are [`serde_json::Value`]s. JSON keeps the int/float
//! distinction (`5` vs `5.0`), which the checker's exact type test needs. Python tuples are
//! represented as lists.

use serde_json::Value;

/// The Python type of a value, as `type(value)` would report it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PyType {
    /// `None`.
    NoneType,
    /// `bool`.
    Bool,
    /// `int`.
    Int,
    /// `float`.
    Float,
    /// `str`.
    Str,
    /// `list` (tuples included).
    List,
    /// `dict`.
    Dict,
}

impl PyType {
    /// The type of `value`.
    pub fn of(value: &Value) -> PyType {
        match value {
            Value::Null => PyType::NoneType,
            Value::Bool(_) => PyType::Bool,
            Value::Number(number) if number.is_f64() => PyType::Float,
            Value::Number(_) => PyType::Int,
            Value::String(_) => PyType::Str,
            Value::Array(_) => PyType::List,
            Value::Object(_) => PyType::Dict,
        }
    }

    /// Python's name of the type.
    pub fn name(self) -> &'static str {
        match self {
            PyType::NoneType => "NoneType",
            PyType::Bool => "bool",
            PyType::Int => "int",
            PyType::Float => "float",
            PyType::Str => "str",
            PyType::List => "list",
            PyType::Dict => "dict",
        }
    }
}

/// The numeric value of a bool/int/float (Python treats `True` as `1`).
fn as_number(value: &Value) -> Option<f64> {
    match value {
        Value::Bool(flag) => Some(f64::from(u8::from(*flag))),
        Value::Number(number) => number.as_f64(),
        _ => None,
    }
}

/// Python's `==`: numbers (bools included) compare by value, `1 == 1.0 == True`; lists
/// element-wise; dicts key by key regardless of order.
pub fn py_eq(left: &Value, right: &Value) -> bool {
    match (left, right) {
        (Value::Null, Value::Null) => true,
        (Value::String(a), Value::String(b)) => a == b,
        (Value::Array(a), Value::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| py_eq(x, y))
        }
        (Value::Object(a), Value::Object(b)) => {
            a.len() == b.len()
                && a.iter()
                    .all(|(key, x)| b.get(key).is_some_and(|y| py_eq(x, y)))
        }
        (Value::Number(a), Value::Number(b)) => match (a.as_i64(), b.as_i64()) {
            (Some(x), Some(y)) => x == y,
            _ => a.as_f64() == b.as_f64(),
        },
        _ => match (as_number(left), as_number(right)) {
            (Some(x), Some(y)) => x == y,
            _ => false,
        },
    }
}

/// Python's `value in candidates`.
pub fn py_contains(candidates: &[Value], value: &Value) -> bool {
    candidates.iter().any(|candidate| py_eq(candidate, value))
}

/// BFCL's string standardisation: drop spaces and `,./-_*^`, lowercase, `'` → `"`.
///
/// The character set and lowercasing are those of the rewards engine's
/// [`StringNormalization::bfcl`](agent_rl_rewards::matching::StringNormalization::bfcl); BFCL
/// additionally turns single quotes into double quotes.
pub fn standardize(text: &str) -> String {
    agent_rl_rewards::matching::StringNormalization::bfcl()
        .apply(text)
        .replace('\'', "\"")
}

/// Standardises a value when it is a string, else returns it unchanged.
pub fn standardize_value(value: &Value) -> Value {
    match value {
        Value::String(text) => Value::String(standardize(text)),
        other => other.clone(),
    }
}

/// True when `value` is the `""` marker of an omittable parameter.
pub fn is_omission_marker(value: &Value) -> bool {
    matches!(value, Value::String(text) if text.is_empty())
}
