//! Python values as the multi-turn backends hold and return them, with Python's `repr`, `str`,
//! `json.dumps` and `==`, so that execution results compare as the official checker's strings.

use serde_json::Value;

/// A Python value.
#[derive(Debug, Clone)]
pub enum PyValue {
    /// `None`.
    None,
    /// `bool`.
    Bool(bool),
    /// `int` (64-bit; larger integers are not represented).
    Int(i64),
    /// `float`.
    Float(f64),
    /// `str`.
    Str(String),
    /// `list`.
    List(Vec<PyValue>),
    /// `tuple`.
    Tuple(Vec<PyValue>),
    /// `dict`, in insertion order.
    Dict(Vec<(PyValue, PyValue)>),
    /// An object that is neither JSON-serialisable nor one of the above (a `Decimal`, an instance):
    /// its `repr`.
    Opaque(String),
}

impl PyValue {
    /// A `str` value.
    pub fn str(text: impl Into<String>) -> Self {
        PyValue::Str(text.into())
    }

    /// A dict with string keys, in the given order.
    pub fn dict<K: Into<String>>(pairs: impl IntoIterator<Item = (K, PyValue)>) -> Self {
        PyValue::Dict(
            pairs
                .into_iter()
                .map(|(key, value)| (PyValue::Str(key.into()), value))
                .collect(),
        )
    }

    /// The value under a string key of a dict.
    pub fn get(&self, key: &str) -> Option<&PyValue> {
        match self {
            PyValue::Dict(pairs) => pairs
                .iter()
                .find(|(k, _)| matches!(k, PyValue::Str(s) if s == key))
                .map(|(_, v)| v),
            _ => None,
        }
    }

    /// The value as a float when it is a Python number (`bool`, `int`, `float`).
    pub fn as_number(&self) -> Option<f64> {
        match self {
            PyValue::Bool(flag) => Some(f64::from(u8::from(*flag))),
            PyValue::Int(n) => Some(*n as f64),
            PyValue::Float(x) => Some(*x),
            _ => None,
        }
    }

    /// Python's type name.
    pub fn type_name(&self) -> &'static str {
        match self {
            PyValue::None => "NoneType",
            PyValue::Bool(_) => "bool",
            PyValue::Int(_) => "int",
            PyValue::Float(_) => "float",
            PyValue::Str(_) => "str",
            PyValue::List(_) => "list",
            PyValue::Tuple(_) => "tuple",
            PyValue::Dict(_) => "dict",
            PyValue::Opaque(_) => "object",
        }
    }

    /// Converts JSON (an entry's `initial_config`): integers stay `int`, other numbers `float`.
    pub fn from_json(value: &Value) -> Self {
        match value {
            Value::Null => PyValue::None,
            Value::Bool(flag) => PyValue::Bool(*flag),
            Value::Number(n) => match n.as_i64() {
                Some(int) if !n.is_f64() => PyValue::Int(int),
                _ => PyValue::Float(n.as_f64().unwrap_or(f64::NAN)),
            },
            Value::String(text) => PyValue::Str(text.clone()),
            Value::Array(items) => PyValue::List(items.iter().map(PyValue::from_json).collect()),
            Value::Object(map) => PyValue::dict(
                map.iter()
                    .map(|(key, value)| (key.clone(), PyValue::from_json(value))),
            ),
        }
    }

    /// Python's `repr()`.
    pub fn repr(&self) -> String {
        match self {
            PyValue::None => "None".into(),
            PyValue::Bool(true) => "True".into(),
            PyValue::Bool(false) => "False".into(),
            PyValue::Int(n) => n.to_string(),
            PyValue::Float(x) => float_repr(*x),
            PyValue::Str(text) => str_repr(text),
            PyValue::List(items) => format!("[{}]", join(items, PyValue::repr)),
            PyValue::Tuple(items) if items.len() == 1 => format!("({},)", items[0].repr()),
            PyValue::Tuple(items) => format!("({})", join(items, PyValue::repr)),
            PyValue::Dict(pairs) => {
                let items: Vec<String> = pairs
                    .iter()
                    .map(|(k, v)| format!("{}: {}", k.repr(), v.repr()))
                    .collect();
                format!("{{{}}}", items.join(", "))
            }
            PyValue::Opaque(repr) => repr.clone(),
        }
    }

    /// Python's `str()`: a string itself, anything else its `repr`.
    pub fn to_py_str(&self) -> String {
        match self {
            PyValue::Str(text) => text.clone(),
            other => other.repr(),
        }
    }

    /// Python's `json.dumps()` with default settings (`ensure_ascii`, `", "` and `": "`).
    ///
    /// # Errors
    /// The value holds something JSON cannot encode (an [`PyValue::Opaque`] object, a
    /// dict key that is a list, tuple or dict), as Python's `TypeError`.
    pub fn json_dumps(&self) -> Result<String, String> {
        Ok(match self {
            PyValue::None => "null".into(),
            PyValue::Bool(flag) => flag.to_string(),
            PyValue::Int(n) => n.to_string(),
            PyValue::Float(x) if x.is_nan() => "NaN".into(),
            PyValue::Float(x) if x.is_infinite() => {
                if *x > 0.0 { "Infinity" } else { "-Infinity" }.into()
            }
            PyValue::Float(x) => float_repr(*x),
            PyValue::Str(text) => json_str(text),
            PyValue::List(items) | PyValue::Tuple(items) => {
                let parts: Result<Vec<String>, String> =
                    items.iter().map(PyValue::json_dumps).collect();
                format!("[{}]", parts?.join(", "))
            }
            PyValue::Dict(pairs) => {
                let mut parts = Vec::with_capacity(pairs.len());
                for (key, value) in pairs {
                    let key = match key {
                        PyValue::Str(text) => text.clone(),
                        PyValue::Bool(_) | PyValue::None => key.json_dumps()?,
                        PyValue::Int(_) | PyValue::Float(_) => key.json_dumps()?,
                        other => {
                            return Err(format!(
                                "keys must be str, int, float, bool or None, not {}",
                                other.type_name()
                            ));
                        }
                    };
                    parts.push(format!("{}: {}", json_str(&key), value.json_dumps()?));
                }
                format!("{{{}}}", parts.join(", "))
            }
            PyValue::Opaque(repr) => {
                return Err(format!("Object of type {repr} is not JSON serializable"));
            }
        })
    }
}

fn join(items: &[PyValue], render: fn(&PyValue) -> String) -> String {
    items.iter().map(render).collect::<Vec<_>>().join(", ")
}

/// Python's `==`: numbers (bools included) by value, sequences element-wise (a list never equals
/// a tuple), dicts key by key regardless of order.
impl PartialEq for PyValue {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (PyValue::None, PyValue::None) => true,
            (PyValue::Str(a), PyValue::Str(b)) => a == b,
            (PyValue::List(a), PyValue::List(b)) | (PyValue::Tuple(a), PyValue::Tuple(b)) => a == b,
            (PyValue::Dict(a), PyValue::Dict(b)) => {
                a.len() == b.len()
                    && a.iter()
                        .all(|(key, x)| b.iter().any(|(k, y)| k == key && x == y))
            }
            (PyValue::Opaque(a), PyValue::Opaque(b)) => a == b,
            (PyValue::Int(a), PyValue::Int(b)) => a == b,
            _ => match (self.as_number(), other.as_number()) {
                (Some(x), Some(y)) => x == y,
                _ => false,
            },
        }
    }
}

/// Python's `repr(float)`: the shortest round-tripping digits, positional for exponents in
/// `-4..16`, else scientific with a signed exponent of at least two digits.
pub fn float_repr(x: f64) -> String {
    if x.is_nan() {
        return "nan".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf" } else { "-inf" }.into();
    }
    if x == 0.0 {
        return if x.is_sign_negative() { "-0.0" } else { "0.0" }.into();
    }
    let scientific = format!("{x:e}");
    let (mantissa, exponent) = scientific.split_once('e').unwrap_or((&scientific, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let negative = mantissa.starts_with('-');
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let sign = if negative { "-" } else { "" };
    if (-4..16).contains(&exponent) {
        let point = exponent + 1;
        let body = if point <= 0 {
            format!("0.{}{digits}", "0".repeat(point.unsigned_abs() as usize))
        } else if point as usize >= digits.len() {
            format!("{digits}{}.0", "0".repeat(point as usize - digits.len()))
        } else {
            let (whole, fraction) = digits.split_at(point as usize);
            format!("{whole}.{fraction}")
        };
        format!("{sign}{body}")
    } else {
        let (first, rest) = digits.split_at(1);
        let fraction = if rest.is_empty() {
            String::new()
        } else {
            format!(".{rest}")
        };
        let exponent_sign = if exponent < 0 { '-' } else { '+' };
        format!(
            "{sign}{first}{fraction}e{exponent_sign}{:02}",
            exponent.abs()
        )
    }
}

/// Python's `repr(str)`: single quotes unless the text holds `'` and no `"`.
pub fn str_repr(text: &str) -> String {
    let quote = if text.contains('\'') && !text.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::with_capacity(text.len() + 2);
    out.push(quote);
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c if (0x80..0xa0).contains(&(c as u32)) => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

fn json_str(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
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
            c if c.is_ascii() && (c as u32) >= 0x20 => out.push(c),
            c => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    out.push_str(&format!("\\u{unit:04x}"));
                }
            }
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_print_like_python() {
        let cases = [
            (1.0, "1.0"),
            (0.1, "0.1"),
            (1e16, "1e+16"),
            (1.5e-7, "1.5e-07"),
            (0.0001, "0.0001"),
            (123456789012345.6, "123456789012345.6"),
            (-2.5, "-2.5"),
            (1e22, "1e+22"),
            (0.3333333333333333, "0.3333333333333333"),
        ];
        for (x, want) in cases {
            assert_eq!(float_repr(x), want, "{x}");
        }
    }

    #[test]
    fn reprs_and_json_match_python() {
        let value = PyValue::dict([
            (
                "a",
                PyValue::List(vec![PyValue::Int(1), PyValue::Float(2.0)]),
            ),
            ("b", PyValue::str("it's é")),
            ("c", PyValue::None),
        ]);
        assert_eq!(value.repr(), "{'a': [1, 2.0], 'b': \"it's é\", 'c': None}");
        assert_eq!(
            value.json_dumps().as_deref(),
            Ok("{\"a\": [1, 2.0], \"b\": \"it's \\u00e9\", \"c\": null}")
        );
        assert_eq!(PyValue::Tuple(vec![PyValue::Int(1)]).repr(), "(1,)");
        assert_eq!(PyValue::Int(1), PyValue::Float(1.0));
        assert_ne!(PyValue::List(vec![]), PyValue::Tuple(vec![]));
    }
}
