//! Turning parsed Python calls into BFCL's decoded form `[{name: {arg: value}}]`, with the same
//! rules as the official prompting decoder.

use serde_json::{Map, Number, Value};

use super::pyparse::{PyExpr, parse_expression};

/// Decodes BFCL's prompting-mode Python output (`[f(a=1), g(b='x')]`) into calls.
///
/// Mirrors the official decoder: trim backticks, newlines and spaces, add missing outer brackets,
/// strip wrapping single quotes, parse; the body must be a call or a list/tuple of calls. Only
/// keyword arguments are kept.
///
/// # Errors
/// A message when the text is not such a list of calls (the entry then fails as
/// `ast_decoder:decoder_failed`).
pub fn decode_python_calls(text: &str) -> Result<Vec<Value>, String> {
    let cleaned = bracketed(text);
    let cleaned = cleaned.trim().trim_matches('\'');
    match parse_expression(cleaned)? {
        call @ PyExpr::Call { .. } => Ok(vec![resolve_call(&call)?]),
        PyExpr::List(items) | PyExpr::Tuple(items) => items
            .iter()
            .map(|item| match item {
                PyExpr::Call { .. } => resolve_call(item),
                _ => Err("list element is not a call".to_owned()),
            })
            .collect(),
        _ => Err("output is neither a call nor a list of calls".into()),
    }
}

/// The official pre-processing: strip "`", newlines and spaces at both ends, then make sure the
/// text starts with `[` and ends with `]`.
pub fn bracketed(text: &str) -> String {
    let trimmed = text.trim_matches(|c| c == '`' || c == '\n' || c == ' ');
    let mut out = String::with_capacity(trimmed.len() + 2);
    if !trimmed.starts_with('[') {
        out.push('[');
    }
    out.push_str(trimmed);
    if !trimmed.ends_with(']') {
        out.push(']');
    }
    out
}

fn dotted_name(expr: &PyExpr) -> String {
    let mut parts = Vec::new();
    let mut current = expr;
    while let PyExpr::Attribute(value, attr) = current {
        parts.push(attr.clone());
        current = value;
    }
    if let PyExpr::Name(name) = current {
        parts.push(name.clone());
    }
    parts.reverse();
    parts.join(".")
}

fn resolve_call(expr: &PyExpr) -> Result<Value, String> {
    let PyExpr::Call { func, keywords, .. } = expr else {
        return Err("not a call".into());
    };
    let mut arguments = Map::new();
    for (name, value) in keywords {
        arguments.insert(name.clone(), resolve_value(value)?);
    }
    let mut call = Map::new();
    call.insert(dotted_name(func), Value::Object(arguments));
    Ok(Value::Object(call))
}

fn int_value(value: i128) -> Value {
    if let Ok(small) = i64::try_from(value) {
        Value::from(small)
    } else if let Ok(unsigned) = u64::try_from(value) {
        Value::from(unsigned)
    } else {
        float_value(value as f64)
    }
}

fn float_value(value: f64) -> Value {
    Number::from_f64(value).map_or(Value::Null, Value::Number)
}

fn dict_key(key: Value) -> String {
    match key {
        Value::String(text) => text,
        other => other.to_string(),
    }
}

fn resolve_value(expr: &PyExpr) -> Result<Value, String> {
    Ok(match expr {
        PyExpr::Str(text) => Value::String(text.clone()),
        PyExpr::Int(value) => int_value(*value),
        PyExpr::Float(value) => float_value(*value),
        PyExpr::Bool(flag) => Value::Bool(*flag),
        PyExpr::None => Value::Null,
        PyExpr::Ellipsis => Value::String("...".into()),
        PyExpr::Name(name) => Value::String(name.clone()),
        // The official decoder negates the operand's constant whatever the operator is.
        PyExpr::Unary(_, operand) => match operand.as_ref() {
            PyExpr::Int(value) => int_value(-value),
            PyExpr::Float(value) => float_value(-value),
            PyExpr::Bool(flag) => int_value(-i128::from(*flag)),
            _ => return Err("unsupported unary operand".into()),
        },
        PyExpr::List(items) | PyExpr::Tuple(items) => {
            Value::Array(items.iter().map(resolve_value).collect::<Result<_, _>>()?)
        }
        PyExpr::Dict(pairs) => {
            let mut map = Map::new();
            for (key, value) in pairs {
                map.insert(dict_key(resolve_value(key)?), resolve_value(value)?);
            }
            Value::Object(map)
        }
        PyExpr::Binary(..) => evaluate(expr)?,
        PyExpr::Call {
            keywords, source, ..
        } => {
            if keywords.is_empty() {
                Value::String(source.clone())
            } else {
                resolve_call(expr)?
            }
        }
        PyExpr::Subscript(source) => Value::String(source.clone()),
        PyExpr::Attribute(..) | PyExpr::Set(_) => {
            return Err("unsupported value expression".into());
        }
    })
}

#[derive(Clone, Copy)]
enum Num {
    Int(i128),
    Float(f64),
}

fn evaluate(expr: &PyExpr) -> Result<Value, String> {
    match expr {
        PyExpr::Str(text) => Ok(Value::String(text.clone())),
        PyExpr::Binary(op, left, right) if op == "+" => match (evaluate(left)?, evaluate(right)?) {
            (Value::String(a), Value::String(b)) => Ok(Value::String(a + &b)),
            (a, b) => arithmetic(op, number(&a)?, number(&b)?),
        },
        PyExpr::Binary(op, left, right) => {
            arithmetic(op, number(&evaluate(left)?)?, number(&evaluate(right)?)?)
        }
        PyExpr::Unary(op, operand) => {
            let value = number(&evaluate(operand)?)?;
            match (op.as_str(), value) {
                ("-", Num::Int(v)) => Ok(int_value(-v)),
                ("-", Num::Float(v)) => Ok(float_value(-v)),
                ("+", _) => Ok(to_value(value)),
                _ => Err("unsupported operator".into()),
            }
        }
        PyExpr::Int(_) | PyExpr::Float(_) | PyExpr::Bool(_) => resolve_value(expr),
        _ => Err("cannot evaluate expression".into()),
    }
}

fn number(value: &Value) -> Result<Num, String> {
    match value {
        Value::Bool(flag) => Ok(Num::Int(i128::from(*flag))),
        Value::Number(n) if n.is_f64() => n.as_f64().map(Num::Float).ok_or_else(|| "nan".into()),
        Value::Number(n) => n
            .as_i64()
            .map(i128::from)
            .or_else(|| n.as_u64().map(i128::from))
            .map(Num::Int)
            .ok_or_else(|| "bad int".into()),
        _ => Err("operand is not a number".into()),
    }
}

fn to_value(value: Num) -> Value {
    match value {
        Num::Int(v) => int_value(v),
        Num::Float(v) => float_value(v),
    }
}

fn as_f64(value: Num) -> f64 {
    match value {
        Num::Int(v) => v as f64,
        Num::Float(v) => v,
    }
}

fn arithmetic(op: &str, left: Num, right: Num) -> Result<Value, String> {
    if let (Num::Int(a), Num::Int(b)) = (left, right) {
        let result = match op {
            "+" => a.checked_add(b),
            "-" => a.checked_sub(b),
            "*" => a.checked_mul(b),
            "//" if b != 0 => Some(a.div_euclid(b) - i128::from(a.rem_euclid(b) != 0 && b < 0)),
            "%" if b != 0 => Some(a - b * (a as f64 / b as f64).floor() as i128),
            "**" if b >= 0 => u32::try_from(b).ok().and_then(|e| a.checked_pow(e)),
            "/" if b != 0 => return Ok(float_value(a as f64 / b as f64)),
            _ => None,
        };
        if let Some(result) = result {
            return Ok(int_value(result));
        }
    }
    let (a, b) = (as_f64(left), as_f64(right));
    let result = match op {
        "+" => a + b,
        "-" => a - b,
        "*" => a * b,
        "/" if b != 0.0 => a / b,
        "//" if b != 0.0 => (a / b).floor(),
        "%" if b != 0.0 => a - b * (a / b).floor(),
        "**" => a.powf(b),
        _ => return Err(format!("unsupported operation {op}")),
    };
    Ok(float_value(result))
}
