//! Python-compatible rendering of JSON values: `json.dumps` (what the agent sees; agent-rl-core's
//! writer) and the
//! `str(to_hashable(data))` form that τ-bench hashes with SHA-256 to compare database states.
//!
//! Both must match the original byte for byte: key insertion order for `dumps`, keys sorted for
//! the hash form, Python's shortest round-trip float `repr` (`100.0`, `1e+16`, `1e-05`), `\uXXXX`
//! escapes for non-ASCII text, and the int/float distinction (`1` vs `1.0`).

use serde_json::Value;
use sha2::{Digest, Sha256};

/// Python `repr(float)` (the workspace's one implementation, in agent-rl-core).
pub use agent_rl_core::chat::python_float_repr as float_repr;

/// Python's `round(x, 2)` for a float: correctly rounded (half to even on the exact binary
/// value), then the nearest float to that decimal.
pub fn round2(value: f64) -> f64 {
    if !value.is_finite() {
        return value;
    }
    format!("{value:.2}").parse().unwrap_or(value)
}

fn number_repr(number: &serde_json::Number, out: &mut String) {
    if let Some(int) = number.as_i64() {
        out.push_str(&int.to_string());
    } else if let Some(int) = number.as_u64() {
        out.push_str(&int.to_string());
    } else {
        out.push_str(&float_repr(number.as_f64().unwrap_or(f64::NAN)));
    }
}

/// Appends `[a, b]`, rendering each item with `render` (`json.dumps` and `repr` agree on it).
fn list_into(items: &[Value], out: &mut String, render: fn(&Value, &mut String)) {
    out.push('[');
    separated_into(items.iter(), out, render);
    out.push(']');
}

/// Appends `{k: v}` in insertion order, rendering keys with `key` and values with `value`.
fn dict_into(
    map: &serde_json::Map<String, Value>,
    out: &mut String,
    key: fn(&str, &mut String),
    value: fn(&Value, &mut String),
) {
    out.push('{');
    separated_into(map.iter(), out, |(name, item), out| {
        key(name, out);
        out.push_str(": ");
        value(item, out);
    });
    out.push('}');
}

/// Appends the items rendered by `render`, separated by `", "`.
fn separated_into<T>(
    items: impl Iterator<Item = T>,
    out: &mut String,
    mut render: impl FnMut(T, &mut String),
) {
    for (index, item) in items.enumerate() {
        if index > 0 {
            out.push_str(", ");
        }
        render(item, out);
    }
}

/// Python `json.dumps(value)` with default settings (`", "` / `": "` separators, insertion
/// order, `ensure_ascii`), by agent-rl-core's Python-compatible JSON writer.
pub fn dumps(value: &Value) -> String {
    agent_rl_core::chat::to_python_json_ascii(value)
}

/// Python `repr(str)`: single quotes unless the text contains `'` and no `"`.
fn str_repr(text: &str, out: &mut String) {
    let quote = if text.contains('\'') && !text.contains('"') {
        '"'
    } else {
        '\''
    };
    out.push(quote);
    for ch in text.chars() {
        match ch {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32))
            }
            c => out.push(c),
        }
    }
    out.push(quote);
}

/// Python `repr()` of the value a JSON document decodes to (`['a', 1]`, `{'k': True}`), as
/// f-strings print lists and dicts in error messages.
pub fn py_repr(value: &Value) -> String {
    let mut out = String::new();
    py_repr_into(value, &mut out);
    out
}

fn py_repr_into(value: &Value, out: &mut String) {
    match value {
        Value::Array(items) => list_into(items, out, py_repr_into),
        Value::Object(map) => dict_into(map, out, str_repr, py_repr_into),
        scalar => hashable_repr_into(scalar, out),
    }
}

/// Appends `str(to_hashable(value))` to `out`: objects become tuples of `(key, value)` pairs
/// sorted by key, arrays become tuples, scalars print with Python `repr`.
pub fn hashable_repr_into(value: &Value, out: &mut String) {
    match value {
        Value::Null => out.push_str("None"),
        Value::Bool(flag) => out.push_str(if *flag { "True" } else { "False" }),
        Value::Number(number) => number_repr(number, out),
        Value::String(text) => str_repr(text, out),
        Value::Array(items) => tuple_into(items.iter(), out, hashable_repr_into),
        Value::Object(map) => hashable_map_into(map, out),
    }
}

/// Appends the hash form of a dict: a tuple of `(key, value)` pairs sorted by key.
fn hashable_map_into(map: &serde_json::Map<String, Value>, out: &mut String) {
    let mut entries: Vec<(&String, &Value)> = map.iter().collect();
    entries.sort_by(|left, right| left.0.cmp(right.0));
    tuple_into(entries.into_iter(), out, |(key, item), out| {
        out.push('(');
        str_repr(key, out);
        out.push_str(", ");
        hashable_repr_into(item, out);
        out.push(')');
    });
}

/// Appends a Python tuple: `(a, b)`, `(a,)` for one item, `()` for none.
fn tuple_into<I, T>(items: I, out: &mut String, render: impl FnMut(T, &mut String))
where
    I: ExactSizeIterator<Item = T>,
{
    let count = items.len();
    out.push('(');
    separated_into(items, out, render);
    if count == 1 {
        out.push(',');
    }
    out.push(')');
}

/// SHA-256 hex digest of a hash-form string (τ-bench's `consistent_hash`).
pub fn sha256_hex(text: &str) -> String {
    let digest = Sha256::digest(text.as_bytes());
    digest.iter().map(|byte| format!("{byte:02x}")).collect()
}

/// τ-bench's hash of a database made of named tables, given sorted by name.
pub fn tables_hash(tables: &[(&str, &serde_json::Map<String, Value>)]) -> String {
    let mut text = String::with_capacity(8 << 20);
    tuple_into(tables.iter(), &mut text, |(name, table), out| {
        out.push('(');
        str_repr(name, out);
        out.push_str(", ");
        hashable_map_into(table, out);
        out.push(')');
    });
    sha256_hex(&text)
}

/// τ-bench's `consistent_hash(to_hashable(value))`.
pub fn data_hash(value: &Value) -> String {
    let mut text = String::new();
    hashable_repr_into(value, &mut text);
    sha256_hex(&text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn floats_print_like_python() {
        let cases = [
            (100.0, "100.0"),
            (47.84, "47.84"),
            (1e16, "1e+16"),
            (1e15, "1000000000000000.0"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (-1.5e-7, "-1.5e-07"),
            (0.1 + 0.2, "0.30000000000000004"),
            (-17.99, "-17.99"),
        ];
        for (value, expected) in cases {
            assert_eq!(float_repr(value), expected);
        }
    }

    #[test]
    fn round2_is_half_even_on_exact_value() {
        assert_eq!(round2(0.125), 0.12);
        assert_eq!(round2(0.375), 0.38);
        assert_eq!(round2(1.005), 1.0);
    }

    #[test]
    fn dumps_matches_python() {
        let value = json!({"b": [1, 2.5, "é\"x"], "a": {}, "c": null, "d": true});
        assert_eq!(
            dumps(&value),
            r#"{"b": [1, 2.5, "\u00e9\"x"], "a": {}, "c": null, "d": true}"#
        );
    }

    #[test]
    fn repr_matches_python() {
        assert_eq!(
            py_repr(&json!(["a", 1, 2.0, null, {"k": true}])),
            "['a', 1, 2.0, None, {'k': True}]"
        );
    }

    #[test]
    fn hash_matches_documented_example() {
        let value = json!({"b": [1, 2.5, "x'y", 100.0, 1e16, 0.1 + 0.2],
            "a": {"d": null, "c": true}, "e": [7], "f": [], "g": {}});
        let mut text = String::new();
        hashable_repr_into(&value, &mut text);
        assert_eq!(
            text,
            "(('a', (('c', True), ('d', None))), ('b', (1, 2.5, \"x'y\", 100.0, 1e+16, \
             0.30000000000000004)), ('e', (7,)), ('f', ()), ('g', ()))"
        );
        assert_eq!(
            sha256_hex(&text),
            "92929edf8ffde0ceb4691d726c972f4a6d27764c424c9c25b0ed5cd0194bc109"
        );
    }
}
