//! Java source-text arguments converted to values, with the official converter's patterns: text
//! that does not match its type's pattern stays a string (and then usually fails the type
//! check). The helpers shared with [`convert_js`](super::convert_js) live here too.

use std::sync::LazyLock;

use regex::Regex;
use serde_json::{Map, Number, Value};

use super::value::PyType;

pub(super) fn regex(pattern: &str) -> Regex {
    // The patterns are constants of this file; a typo is caught by the unit tests.
    Regex::new(pattern).unwrap_or_else(|_| Regex::new("$^").unwrap_or_else(|_| unreachable!()))
}

pub(super) static INT: LazyLock<Regex> = LazyLock::new(|| regex(r"^-?\d+$"));
static JAVA_FLOAT: LazyLock<Regex> = LazyLock::new(|| regex(r"^-?\d+(\.\d+)?([eE][+-]?\d+)?[fF]$"));
static JAVA_DOUBLE: LazyLock<Regex> = LazyLock::new(|| regex(r"^-?\d+(\.\d+)?([eE][+-]?\d+)?$"));
static JAVA_LONG: LazyLock<Regex> = LazyLock::new(|| regex(r"^-?\d+[lL]$"));
static AS_LIST: LazyLock<Regex> =
    LazyLock::new(|| regex(r"new\s+ArrayList<\w*>\(Arrays\.asList\((.+?)\)\)"));
static ADD_LIST: LazyLock<Regex> =
    LazyLock::new(|| regex(r"(?s)new\s+ArrayList<\w*>\(\)\s*\{\{\s*(.+?)\s*\}\}"));
static ADD_CALL: LazyLock<Regex> = LazyLock::new(|| regex(r"add\((.+?)\)"));
static EMPTY_LIST: LazyLock<Regex> = LazyLock::new(|| regex(r"new\s+ArrayList<\w*>\(\)"));
static ARRAY: LazyLock<Regex> = LazyLock::new(|| regex(r"new\s+\w+\[\]\s*\{(.*?)\}"));
static HASHMAP: LazyLock<Regex> =
    LazyLock::new(|| regex(r"(?s)new\s+HashMap<.*?>\s*\(\)\s*\{\s*\{?\s*(.*?)\s*\}?\s*\}"));
static PUT: LazyLock<Regex> = LazyLock::new(|| regex(r#"put\("(.*?)",\s*(.*?)\)"#));
static EMPTY_MAP: LazyLock<Regex> = LazyLock::new(|| regex(r"new\s+HashMap<.*?>\s*\(\)"));
/// The Python type a Java type converts to; `None` for types the official checker rejects.
pub fn java_expected_type(java_type: &str) -> Option<PyType> {
    Some(match java_type {
        "byte" | "short" | "integer" | "long" => PyType::Int,
        "float" | "double" => PyType::Float,
        "boolean" => PyType::Bool,
        "char" | "String" | "any" => PyType::Str,
        "Array" | "ArrayList" | "Queue" | "Stack" => PyType::List,
        "HashMap" | "Hashtable" => PyType::Dict,
        _ => return None,
    })
}

pub(super) fn parse_int(text: &str) -> Value {
    text.parse::<i64>()
        .map(Value::from)
        .unwrap_or_else(|_| parse_float(text))
}

pub(super) fn parse_float(text: &str) -> Value {
    text.parse::<f64>()
        .ok()
        .and_then(Number::from_f64)
        .map_or_else(|| Value::String(text.to_owned()), Value::Number)
}

/// Python's `int(text)` then `float(text)`, else the text.
pub(super) fn guess_number(text: &str) -> Value {
    let trimmed = text.trim();
    if let Ok(value) = trimmed.replace('_', "").parse::<i64>() {
        return Value::from(value);
    }
    match trimmed.parse::<f64>().ok().and_then(Number::from_f64) {
        Some(number) => Value::Number(number),
        None => Value::String(text.to_owned()),
    }
}

/// Converts Java source text of the declared type (`nested` = the declared item type).
pub fn java_convert(text: &str, java_type: &str, nested: Option<&str>) -> Value {
    let unchanged = || Value::String(text.to_owned());
    match java_type {
        "byte" | "short" | "integer" if INT.is_match(text) => parse_int(text),
        "float" if JAVA_FLOAT.is_match(text) => parse_float(&text[..text.len() - 1]),
        "double" if JAVA_DOUBLE.is_match(text) => parse_float(text),
        "long" if JAVA_LONG.is_match(text) => parse_int(&text[..text.len() - 1]),
        "boolean" if text == "true" || text == "false" => Value::Bool(text == "true"),
        "ArrayList" => java_arraylist(text, nested),
        "Array" => match ARRAY.captures(text) {
            Some(captures) => Value::Array(
                captures[1]
                    .split(',')
                    .map(str::trim)
                    .filter(|item| !item.is_empty())
                    .map(|item| match nested {
                        Some(nested) => java_convert(item, nested, None),
                        None => java_value(item),
                    })
                    .collect(),
            ),
            None => unchanged(),
        },
        "HashMap" => java_hashmap(text),
        _ => unchanged(),
    }
}

fn java_item(item: &str, nested: Option<&str>) -> Value {
    match nested {
        Some("char" | "String") => Value::String(strip_ends(item)),
        Some(nested) => java_convert(item, nested, None),
        None => java_value(item),
    }
}

pub(super) fn strip_ends(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    if chars.len() < 2 {
        String::new()
    } else {
        chars[1..chars.len() - 1].iter().collect()
    }
}

fn java_arraylist(text: &str, nested: Option<&str>) -> Value {
    if let Some(captures) = AS_LIST.captures(text) {
        return Value::Array(
            captures[1]
                .split(',')
                .map(|item| java_item(item.trim(), nested))
                .collect(),
        );
    }
    if let Some(captures) = ADD_LIST.captures(text) {
        return Value::Array(
            ADD_CALL
                .captures_iter(&captures[1])
                .map(|add| java_item(add[1].trim(), nested))
                .collect(),
        );
    }
    if EMPTY_LIST.is_match(text) {
        return Value::Array(Vec::new());
    }
    Value::String(text.to_owned())
}

fn java_hashmap(text: &str) -> Value {
    if let Some(captures) = HASHMAP.captures(text) {
        let mut map = Map::new();
        for put in PUT.captures_iter(&captures[1]) {
            map.insert(put[1].to_owned(), java_value(put[2].trim()));
        }
        return Value::Object(map);
    }
    if EMPTY_MAP.is_match(text) {
        return Value::Object(Map::new());
    }
    Value::String(text.to_owned())
}

/// A Java literal without a declared type: boolean, string, long, float, int, double, else text.
fn java_value(text: &str) -> Value {
    match text {
        "true" => Value::Bool(true),
        "false" => Value::Bool(false),
        _ if text.len() >= 2 && text.starts_with('"') && text.ends_with('"') => {
            Value::String(text[1..text.len() - 1].to_owned())
        }
        _ if text.len() == 1 && text == "\"" => Value::String(String::new()),
        _ if JAVA_LONG.is_match(text) => parse_int(&text[..text.len() - 1]),
        _ if JAVA_FLOAT.is_match(text) => parse_float(&text[..text.len() - 1]),
        _ => guess_number(text),
    }
}
