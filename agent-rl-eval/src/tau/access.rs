//! Python-style access to the ordered JSON records of a τ-bench database: `obj["key"]` raising
//! `KeyError`, truthiness, `sorted()`, substring tests, and the `get_*_details` lookup.

use serde_json::{Map, Value};

use super::py::{Raised, lookup, type_name};
use super::pyjson::dumps;

/// `value[key]` on a dict; `KeyError` text (`'key'`) when absent.
pub fn item<'a>(value: &'a Value, key: &str) -> Result<&'a Value, Raised> {
    match value {
        Value::Object(map) => map.get(key).ok_or_else(|| format!("'{key}'")),
        Value::Array(_) => Err("list indices must be integers or slices, not str".to_owned()),
        Value::String(_) => Err("string indices must be integers, not 'str'".to_owned()),
        other => Err(format!(
            "'{}' object is not subscriptable",
            type_name(other)
        )),
    }
}

/// Mutable `value[key]`; `KeyError` text when absent.
pub fn item_mut<'a>(value: &'a mut Value, key: &str) -> Result<&'a mut Value, Raised> {
    match value {
        Value::Object(map) => map.get_mut(key).ok_or_else(|| format!("'{key}'")),
        other => Err(format!(
            "'{}' object does not support item assignment",
            type_name(other)
        )),
    }
}

/// The dict a value must be, as a map (for nested tables such as `payment_methods`).
pub fn object<'a>(value: &'a Value, key: &str) -> Result<&'a Map<String, Value>, Raised> {
    item(value, key)?
        .as_object()
        .ok_or_else(|| format!("'{key}' is not a dict"))
}

/// Mutable nested dict.
pub fn object_mut<'a>(
    value: &'a mut Value,
    key: &str,
) -> Result<&'a mut Map<String, Value>, Raised> {
    item_mut(value, key)?
        .as_object_mut()
        .ok_or_else(|| format!("'{key}' is not a dict"))
}

/// The list at `value[key]`.
pub fn array<'a>(value: &'a Value, key: &str) -> Result<&'a Vec<Value>, Raised> {
    item(value, key)?
        .as_array()
        .ok_or_else(|| format!("'{key}' is not a list"))
}

/// Mutable list at `value[key]`.
pub fn array_mut<'a>(value: &'a mut Value, key: &str) -> Result<&'a mut Vec<Value>, Raised> {
    item_mut(value, key)?
        .as_array_mut()
        .ok_or_else(|| format!("'{key}' is not a list"))
}

/// Sets `value[key] = new` (a new key goes to the end, an existing one keeps its place).
pub fn set(value: &mut Value, key: &str, new: Value) -> Result<(), Raised> {
    match value {
        Value::Object(map) => {
            map.insert(key.to_owned(), new);
            Ok(())
        }
        other => Err(format!(
            "'{}' object does not support item assignment",
            type_name(other)
        )),
    }
}

/// Python truthiness.
pub fn truthy(value: &Value) -> bool {
    match value {
        Value::Null => false,
        Value::Bool(flag) => *flag,
        Value::Number(number) => number.as_f64().is_some_and(|float| float != 0.0),
        Value::String(text) => !text.is_empty(),
        Value::Array(items) => !items.is_empty(),
        Value::Object(map) => !map.is_empty(),
    }
}

/// `value == text` for a string field.
pub fn is_str(value: &Value, text: &str) -> bool {
    value.as_str() == Some(text)
}

/// Python `needle in haystack` for a string haystack; `TypeError` text otherwise.
pub fn contains(haystack: &Value, needle: &str) -> Result<bool, Raised> {
    match haystack {
        Value::String(text) => Ok(text.contains(needle)),
        Value::Array(items) => Ok(items.iter().any(|item| is_str(item, needle))),
        Value::Object(map) => Ok(map.contains_key(needle)),
        other => Err(format!(
            "argument of type '{}' is not iterable",
            type_name(other)
        )),
    }
}

/// Python `sorted(values)` for strings or numbers; `TypeError` text for a mix.
pub fn sorted(mut values: Vec<Value>) -> Result<Vec<Value>, Raised> {
    if values.iter().all(Value::is_string) {
        values.sort_by(|left, right| left.as_str().cmp(&right.as_str()));
        return Ok(values);
    }
    if values
        .iter()
        .all(|value| value.is_number() || value.is_boolean())
    {
        let key = |value: &Value| super::py::PyNum::of(value).map_or(0.0, super::py::PyNum::as_f64);
        values.sort_by(|left, right| key(left).total_cmp(&key(right)));
        return Ok(values);
    }
    let first = values.first().map_or("str", type_name);
    let other = values
        .iter()
        .map(type_name)
        .find(|name| *name != first)
        .unwrap_or("str");
    Err(format!(
        "'<' not supported between instances of '{other}' and '{first}'"
    ))
}

/// Count of values equal (Python `==`) to `target`.
pub fn count(values: &[Value], target: &Value) -> usize {
    values
        .iter()
        .filter(|value| super::py::equal(value, target))
        .count()
}

/// The elements of an id list the tools count with `list.count` (a non-empty dict has no
/// `count`, so Python raises there).
pub fn counted_items(value: &Value) -> Result<Vec<Value>, Raised> {
    if matches!(value, Value::Object(map) if !map.is_empty()) {
        return Err("'dict' object has no attribute 'count'".to_owned());
    }
    super::py::iterate(value)
}

/// `get_*_details` of both domains: JSON of the record, or `Error: <what> not found`.
pub fn details(table: &Map<String, Value>, id: &Value, what: &str) -> Result<String, Raised> {
    Ok(match lookup(table, id)? {
        Some(record) => dumps(record),
        None => format!("Error: {what} not found"),
    })
}
