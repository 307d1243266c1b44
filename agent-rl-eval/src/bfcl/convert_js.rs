//! JavaScript source-text arguments converted to values, with the official converter's
//! patterns (text that does not match stays a string).

use std::sync::LazyLock;

use regex::Regex;
use serde_json::{Map, Value};

use super::convert::{INT, guess_number, parse_float, parse_int, regex, strip_ends};
use super::value::PyType;

static JS_FLOAT: LazyLock<Regex> = LazyLock::new(|| regex(r"^-?\d+(\.\d+)?$"));
static JS_BIGINT: LazyLock<Regex> = LazyLock::new(|| regex(r"^-?\d+n$"));
static JS_ARRAY_2D: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"^(?:\[\s*\[.*?\]\s*(,\s*\[.*?\]\s*)*\]|\bnew\s+Array\(\s*\[.*?\]\s*(,\s*\[.*?\]\s*)*\))",
    )
});
static JS_INNER: LazyLock<Regex> = LazyLock::new(|| regex(r"\[(.*?)\]"));
static JS_ARRAY: LazyLock<Regex> =
    LazyLock::new(|| regex(r"^(?:\[(.*?)\]|\bnew\s+Array\((.*?)\))"));
static JS_DICT: LazyLock<Regex> = LazyLock::new(|| regex(r"^\{(.*?)\}"));

/// The Python type a JavaScript type converts to.
pub fn js_expected_type(js_type: &str) -> Option<PyType> {
    Some(match js_type {
        "String" | "any" => PyType::Str,
        "integer" | "Bigint" => PyType::Int,
        "float" => PyType::Float,
        "Boolean" => PyType::Bool,
        "dict" => PyType::Dict,
        "array" => PyType::List,
        _ => return None,
    })
}

/// Converts JavaScript source text of the declared type (`nested` = the declared item type).
pub fn js_convert(text: &str, js_type: &str, nested: Option<&str>) -> Value {
    let unchanged = || Value::String(text.to_owned());
    match js_type {
        "String" => {
            let quoted = text.len() >= 2
                && ((text.starts_with('"') && text.ends_with('"'))
                    || (text.starts_with('\'') && text.ends_with('\'')));
            if quoted {
                Value::String(strip_ends(text))
            } else {
                unchanged()
            }
        }
        "integer" if INT.is_match(text) => parse_int(text),
        "float" if JS_FLOAT.is_match(text) => parse_float(text),
        "Bigint" if JS_BIGINT.is_match(text) => parse_int(&text[..text.len() - 1]),
        "Boolean" if text == "true" || text == "false" => Value::Bool(text == "true"),
        "array" => js_array(text.trim(), nested),
        "dict" => js_dict(text.trim()),
        _ => unchanged(),
    }
}

fn js_array(code: &str, nested: Option<&str>) -> Value {
    if let Some(found) = JS_ARRAY_2D.find(code) {
        let inner: Vec<Value> = JS_INNER
            .captures_iter(found.as_str())
            .enumerate()
            .map(|(index, captures)| {
                let mut inner = captures[1].trim();
                if index == 0 && inner.starts_with('[') {
                    inner = &inner[1..];
                }
                Value::Array(inner.split(',').map(|item| js_value(item.trim())).collect())
            })
            .collect();
        return Value::Array(inner);
    }
    let Some(captures) = JS_ARRAY.captures(code) else {
        return Value::String(code.to_owned());
    };
    let body = captures
        .get(1)
        .or_else(|| captures.get(2))
        .map_or("", |m| m.as_str())
        .trim();
    let items: Vec<&str> = if body.is_empty() {
        Vec::new()
    } else {
        body.split(',').collect()
    };
    Value::Array(
        items
            .into_iter()
            .map(|item| match nested {
                Some(nested) => js_convert(item.trim(), nested, None),
                None => js_value(item.trim()),
            })
            .collect(),
    )
}

fn js_dict(code: &str) -> Value {
    if code == "{}" {
        return Value::Object(Map::new());
    }
    let Some(captures) = JS_DICT.captures(code) else {
        return Value::String(code.to_owned());
    };
    let mut map = Map::new();
    for (key, value) in js_pairs(&captures[1]) {
        let key = key
            .trim()
            .trim_matches(|c| c == '\'' || c == '"')
            .to_owned();
        let value = value.trim();
        let parsed = if value.starts_with('[') && value.ends_with(']') {
            js_array(value, None)
        } else if value.starts_with('{') && value.ends_with('}') {
            js_dict(value)
        } else {
            js_value(value.trim_matches(|c| c == '\'' || c == '"'))
        };
        map.insert(key, parsed);
    }
    Value::Object(map)
}

/// The official `([^:]+):\s*(.*?)(?:,\s*(?=[^,]+:)|$)` pair scan, written out by hand (the
/// `regex` crate has no look-ahead): a value ends at the first comma followed by a key.
fn js_pairs(content: &str) -> Vec<(String, String)> {
    let mut pairs = Vec::new();
    let mut rest = content;
    while let Some(colon) = rest.find(':') {
        let key = &rest[..colon];
        let after = rest[colon + 1..].trim_start();
        let mut end = after.len();
        let mut next = after.len();
        for (index, c) in after.char_indices() {
            if c == ',' {
                let tail = after[index + 1..].trim_start();
                if let Some(next_colon) = tail.find(':')
                    && next_colon > 0
                    && !tail[..next_colon].contains(',')
                {
                    end = index;
                    next = after.len() - tail.len();
                    break;
                }
            }
        }
        pairs.push((key.to_owned(), after[..end].to_owned()));
        rest = &after[next..];
        if next == after.len() {
            break;
        }
    }
    pairs
}

/// A JavaScript literal without a declared type.
fn js_value(text: &str) -> Value {
    let text = text.trim();
    match text {
        "true" => Value::Bool(true),
        "false" => Value::Bool(false),
        _ if text.len() >= 2
            && ((text.starts_with('"') && text.ends_with('"'))
                || (text.starts_with('\'') && text.ends_with('\''))) =>
        {
            Value::String(strip_ends(text))
        }
        _ => guess_number(text),
    }
}
