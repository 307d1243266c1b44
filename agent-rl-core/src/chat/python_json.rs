//! JSON text exactly as Python's `json.dumps` writes it — the one Python-compatible JSON writer
//! of the workspace.
//!
//! HF chat templates call `tojson`, which transformers maps to `json.dumps(…,
//! ensure_ascii=False)`: `", "` and `": "` separators, keys in insertion order, floats in
//! Python's `repr` (`1e-07`, `1e+16`, `2.0`), and non-ASCII characters written as themselves.
//! Templates render tool schemas and call arguments with it, so any difference changes the
//! tokens the model sees. Benchmarks whose tools answer with plain `json.dumps(…)` (τ-bench)
//! need `ensure_ascii=True`: [`to_python_json_ascii`].

use serde_json::Value;

/// Python's `repr(float)`: shortest round-trip digits, fixed notation when the decimal exponent
/// lies in `-4 < decpt <= 16`, scientific (`1e+16`, `1.5e-05`) otherwise; `NaN`, `Infinity`
/// as `json.dumps` writes them.
///
/// ```
/// use agent_rl_core::chat::python_float_repr;
/// assert_eq!(python_float_repr(100.0), "100.0");
/// assert_eq!(python_float_repr(1e16), "1e+16");
/// assert_eq!(python_float_repr(-1.5e-5), "-1.5e-05");
/// ```
pub fn python_float_repr(x: f64) -> String {
    if x.is_nan() {
        return "NaN".into();
    }
    if x.is_infinite() {
        return if x > 0.0 {
            "Infinity".into()
        } else {
            "-Infinity".into()
        };
    }
    if x == 0.0 {
        return if x.is_sign_negative() {
            "-0.0".into()
        } else {
            "0.0".into()
        };
    }
    // Rust's `{:e}` gives the shortest round-trip digits, as Python's repr does.
    let sci = format!("{:e}", x.abs());
    let (mantissa, exponent) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let sign = if x < 0.0 { "-" } else { "" };
    let point = exponent + 1; // value = 0.DIGITS × 10^point
    if point > 16 || point <= -4 {
        let (head, tail) = digits.split_at(1);
        let fraction = if tail.is_empty() {
            String::new()
        } else {
            format!(".{tail}")
        };
        let exp_sign = if exponent < 0 { '-' } else { '+' };
        return format!("{sign}{head}{fraction}e{exp_sign}{:02}", exponent.abs());
    }
    let body = if point <= 0 {
        format!("0.{}{digits}", "0".repeat((-point) as usize))
    } else if (point as usize) >= digits.len() {
        format!("{digits}{}.0", "0".repeat(point as usize - digits.len()))
    } else {
        let (int, frac) = digits.split_at(point as usize);
        format!("{int}.{frac}")
    };
    format!("{sign}{body}")
}

fn write_string(out: &mut String, text: &str, ensure_ascii: bool) {
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c if ensure_ascii && !c.is_ascii() => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    out.push_str(&format!("\\u{unit:04x}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// The `json.dumps` settings the writer follows.
#[derive(Debug, Clone, Copy)]
struct Style {
    indent: Option<usize>,
    sort_keys: bool,
    ensure_ascii: bool,
}

fn write_value(out: &mut String, value: &Value, style: Style, depth: usize) {
    let Style {
        indent,
        sort_keys,
        ensure_ascii,
    } = style;
    let newline = |out: &mut String, depth: usize| {
        if let Some(width) = indent {
            out.push('\n');
            out.push_str(&" ".repeat(width * depth));
        }
    };
    let item_separator = if indent.is_some() { "," } else { ", " };
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
            (Some(i), _, _) => out.push_str(&i.to_string()),
            (_, Some(u), _) => out.push_str(&u.to_string()),
            (_, _, Some(f)) => out.push_str(&python_float_repr(f)),
            _ => out.push_str(&n.to_string()),
        },
        Value::String(s) => write_string(out, s, ensure_ascii),
        Value::Array(items) => {
            if items.is_empty() {
                out.push_str("[]");
                return;
            }
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(item_separator);
                }
                newline(out, depth + 1);
                write_value(out, item, style, depth + 1);
            }
            newline(out, depth);
            out.push(']');
        }
        Value::Object(map) => {
            if map.is_empty() {
                out.push_str("{}");
                return;
            }
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            if sort_keys {
                entries.sort_by(|a, b| a.0.cmp(b.0));
            }
            out.push('{');
            for (i, (key, item)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push_str(item_separator);
                }
                newline(out, depth + 1);
                write_string(out, key, ensure_ascii);
                out.push_str(": ");
                write_value(out, item, style, depth + 1);
            }
            newline(out, depth);
            out.push('}');
        }
    }
}

/// Serialises `value` as `json.dumps(value, ensure_ascii=False, indent=indent,
/// sort_keys=sort_keys)` does.
///
/// ```
/// use agent_rl_core::chat::to_python_json;
/// let v = serde_json::json!({"b": [1, 2.0, 1e-7, 1e16], "a": "Zürich"});
/// assert_eq!(to_python_json(&v, None, false), r#"{"b": [1, 2.0, 1e-07, 1e+16], "a": "Zürich"}"#);
/// ```
pub fn to_python_json(value: &Value, indent: Option<usize>, sort_keys: bool) -> String {
    let mut out = String::new();
    let style = Style {
        indent,
        sort_keys,
        ensure_ascii: false,
    };
    write_value(&mut out, value, style, 0);
    out
}

/// Serialises `value` as plain `json.dumps(value)` does: insertion order, `", "` / `": "`
/// separators, non-ASCII text escaped as `\uXXXX` (UTF-16 units).
///
/// ```
/// use agent_rl_core::chat::to_python_json_ascii;
/// let v = serde_json::json!({"city": "Zürich", "n": 1.0});
/// assert_eq!(to_python_json_ascii(&v), r#"{"city": "Z\u00fcrich", "n": 1.0}"#);
/// ```
pub fn to_python_json_ascii(value: &Value) -> String {
    let mut out = String::new();
    let style = Style {
        indent: None,
        sort_keys: false,
        ensure_ascii: true,
    };
    write_value(&mut out, value, style, 0);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn floats_follow_python_repr() {
        for (x, expected) in [
            (1.0, "1.0"),
            (12.5, "12.5"),
            (0.1, "0.1"),
            (1e-4, "0.0001"),
            (1e-5, "1e-05"),
            (1.5e-7, "1.5e-07"),
            (1e15, "1000000000000000.0"),
            (1e16, "1e+16"),
            (1.25e17, "1.25e+17"),
            (-2.5, "-2.5"),
            (123456.789, "123456.789"),
            (0.000123, "0.000123"),
        ] {
            assert_eq!(python_float_repr(x), expected, "{x}");
        }
    }

    #[test]
    fn indent_and_escapes_match_json_dumps() {
        let v = json!({"k": ["a\"b\\c\n\u{1}", {}], "z": {"x": null}});
        assert_eq!(
            to_python_json(&v, None, false),
            r#"{"k": ["a\"b\\c\n\u0001", {}], "z": {"x": null}}"#
        );
        assert_eq!(
            to_python_json(&json!({"b": 1, "a": [true]}), Some(2), true),
            "{\n  \"a\": [\n    true\n  ],\n  \"b\": 1\n}"
        );
    }
}
