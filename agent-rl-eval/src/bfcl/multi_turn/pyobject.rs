//! Python's container and comparison protocol on [`PyValue`]: `in`, `d[k]`, `d[k] = v`,
//! `del`, ordering operators, `str.lower()`, `float()` and `int()`, each with the exception text
//! CPython gives when the operands do not fit (arguments come from model output, so any type
//! can arrive).

use super::backend::CallError;
use super::value::PyValue;

/// `TypeError: unhashable type` for a value that cannot be a dict key or set member.
///
/// # Errors
/// The `TypeError` for a `list` or `dict`.
pub fn hashable(key: &PyValue) -> Result<(), CallError> {
    match key {
        PyValue::List(_) | PyValue::Dict(_) => Err(CallError::raised(format!(
            "unhashable type: '{}'",
            key.type_name()
        ))),
        PyValue::Tuple(items) => items.iter().try_for_each(hashable),
        _ => Ok(()),
    }
}

/// `item in container`.
///
/// # Errors
/// Python's `TypeError` (an unhashable key of a dict, a non-string in a string, a container
/// that is not one).
pub fn contains(container: &PyValue, item: &PyValue) -> Result<bool, CallError> {
    match container {
        PyValue::Dict(pairs) => {
            hashable(item)?;
            Ok(pairs.iter().any(|(key, _)| key == item))
        }
        PyValue::List(items) | PyValue::Tuple(items) => Ok(items.contains(item)),
        PyValue::Str(text) => match item {
            PyValue::Str(needle) => Ok(text.contains(needle.as_str())),
            other => Err(CallError::raised(format!(
                "'in <string>' requires string as left operand, not {}",
                other.type_name()
            ))),
        },
        other => Err(CallError::raised(format!(
            "argument of type '{}' is not iterable",
            other.type_name()
        ))),
    }
}

/// `container[key]` for dicts and lists.
///
/// # Errors
/// `KeyError` (its text is the key's `repr`), `IndexError`, or `TypeError`.
pub fn get_item<'a>(container: &'a PyValue, key: &PyValue) -> Result<&'a PyValue, CallError> {
    match container {
        PyValue::Dict(pairs) => {
            hashable(key)?;
            pairs
                .iter()
                .find(|(k, _)| k == key)
                .map(|(_, value)| value)
                .ok_or_else(|| CallError::raised(key.repr()))
        }
        PyValue::List(items) | PyValue::Tuple(items) => match key {
            PyValue::Int(index) => {
                let position = if *index < 0 {
                    items.len() as i64 + index
                } else {
                    *index
                };
                usize::try_from(position)
                    .ok()
                    .and_then(|i| items.get(i))
                    .ok_or_else(|| {
                        CallError::raised(format!("{} index out of range", container.type_name()))
                    })
            }
            other => Err(CallError::raised(format!(
                "{} indices must be integers or slices, not {}",
                container.type_name(),
                other.type_name()
            ))),
        },
        other => Err(CallError::raised(format!(
            "'{}' object is not subscriptable",
            other.type_name()
        ))),
    }
}

/// `&mut container[key]` for an existing dict key.
///
/// # Errors
/// As [`get_item`], for dicts only.
pub fn get_item_mut<'a>(
    container: &'a mut PyValue,
    key: &PyValue,
) -> Result<&'a mut PyValue, CallError> {
    match container {
        PyValue::Dict(pairs) => {
            hashable(key)?;
            pairs
                .iter_mut()
                .find(|(k, _)| k == key)
                .map(|(_, value)| value)
                .ok_or_else(|| CallError::raised(key.repr()))
        }
        other => Err(CallError::raised(format!(
            "'{}' object does not support item assignment",
            other.type_name()
        ))),
    }
}

/// `dict[key] = value` (an existing equal key keeps its place and its original key object).
///
/// # Errors
/// `TypeError` for an unhashable key or a container that is not a dict.
pub fn set_item(container: &mut PyValue, key: PyValue, value: PyValue) -> Result<(), CallError> {
    hashable(&key)?;
    match container {
        PyValue::Dict(pairs) => {
            match pairs.iter_mut().find(|(k, _)| *k == key) {
                Some(slot) => slot.1 = value,
                None => pairs.push((key, value)),
            }
            Ok(())
        }
        other => Err(CallError::raised(format!(
            "'{}' object does not support item assignment",
            other.type_name()
        ))),
    }
}

/// `del dict[key]` for a key known to be present (no-op otherwise).
pub fn remove_key(container: &mut PyValue, key: &PyValue) {
    if let PyValue::Dict(pairs) = container {
        pairs.retain(|(k, _)| k != key);
    }
}

/// `dict.get(key)` without the hashability check (for keys known to be strings).
pub fn dict_get<'a>(container: &'a PyValue, key: &PyValue) -> Option<&'a PyValue> {
    match container {
        PyValue::Dict(pairs) => pairs.iter().find(|(k, _)| k == key).map(|(_, v)| v),
        _ => None,
    }
}

/// `scenario.get(key, default)` on a loaded `initial_config` part.
pub fn config_or(config: &PyValue, key: &str, default: PyValue) -> PyValue {
    config.get(key).cloned().unwrap_or(default)
}

/// `f"{value}"`: Python's `str()` of a value.
pub fn format(value: &PyValue) -> String {
    value.to_py_str()
}

/// `template.format(**named)` for templates whose fields are plain names (`{symbol}`, `{{`,
/// `}}`). `Ok(Err(name))` is Python's `KeyError` for a field not among `named`.
///
/// # Errors
/// Python's `ValueError` for an unmatched brace; unsupported for positional fields, conversions,
/// format specs, attribute and index lookups.
pub fn format_named(
    template: &str,
    named: &[(&str, &PyValue)],
) -> Result<Result<String, String>, CallError> {
    let mut out = String::with_capacity(template.len());
    let mut chars = template.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '{' if chars.peek() == Some(&'{') => {
                chars.next();
                out.push('{');
            }
            '}' if chars.peek() == Some(&'}') => {
                chars.next();
                out.push('}');
            }
            '}' => {
                return Err(CallError::raised("Single '}' encountered in format string"));
            }
            '{' => {
                let mut field = String::new();
                loop {
                    match chars.next() {
                        Some('}') => break,
                        Some(c) => field.push(c),
                        None => {
                            return Err(CallError::raised("expected '}' before end of string"));
                        }
                    }
                }
                let plain = field
                    .chars()
                    .next()
                    .is_some_and(|c| c.is_alphabetic() || c == '_')
                    && field.chars().all(|c| c.is_alphanumeric() || c == '_');
                if !plain {
                    return Err(CallError::Unsupported(format!(
                        "str.format field {{{field}}}"
                    )));
                }
                match named.iter().find(|(name, _)| *name == field) {
                    Some((_, value)) => out.push_str(&format(value)),
                    None => return Ok(Err(field)),
                }
            }
            other => out.push(other),
        }
    }
    Ok(Ok(out))
}

/// The ordering operators `<`, `<=`, `>`, `>=` on numbers and on strings.
///
/// # Errors
/// Python's `TypeError` for operands that do not order; unsupported for sequences.
pub fn order(op: &str, left: &PyValue, right: &PyValue) -> Result<bool, CallError> {
    use std::cmp::Ordering::{Equal, Greater, Less};
    let ordering = match (left, right) {
        (PyValue::Str(a), PyValue::Str(b)) => Some(a.cmp(b)),
        (PyValue::List(_), PyValue::List(_)) | (PyValue::Tuple(_), PyValue::Tuple(_)) => {
            return Err(CallError::Unsupported("ordering of sequences".into()));
        }
        _ => match (left.as_number(), right.as_number()) {
            (Some(a), Some(b)) => a.partial_cmp(&b),
            _ => {
                return Err(CallError::raised(format!(
                    "'{op}' not supported between instances of '{}' and '{}'",
                    left.type_name(),
                    right.type_name()
                )));
            }
        },
    };
    Ok(match (op, ordering) {
        (_, None) => false,
        ("<", Some(o)) => o == Less,
        ("<=", Some(o)) => o != Greater,
        (">", Some(o)) => o == Greater,
        (">=", Some(o)) => o != Less,
        (_, Some(o)) => o == Equal,
    })
}

/// `value.lower()`.
///
/// # Errors
/// `AttributeError` for a value that is not a `str`.
pub fn lower(value: &PyValue) -> Result<String, CallError> {
    match value {
        PyValue::Str(text) => Ok(text.to_lowercase()),
        other => Err(no_attribute(other, "lower")),
    }
}

/// Python's `AttributeError` text for a missing attribute.
pub fn no_attribute(value: &PyValue, attribute: &str) -> CallError {
    CallError::raised(format!(
        "'{}' object has no attribute '{attribute}'",
        value.type_name()
    ))
}

/// `float(value)`.
///
/// # Errors
/// `ValueError`/`TypeError` as Python raises them.
pub fn to_float(value: &PyValue) -> Result<f64, CallError> {
    match value {
        PyValue::Str(text) => {
            let trimmed = text.trim();
            let lowered = trimmed.to_ascii_lowercase();
            let parsed = match lowered.trim_start_matches(['+', '-']) {
                "inf" | "infinity" | "nan" => lowered.parse::<f64>().ok().or_else(|| {
                    let negative = lowered.starts_with('-');
                    let body = lowered.trim_start_matches(['+', '-']);
                    let magnitude = if body == "nan" {
                        f64::NAN
                    } else {
                        f64::INFINITY
                    };
                    Some(if negative { -magnitude } else { magnitude })
                }),
                body if !body.is_empty()
                    && body.chars().all(|c| {
                        c.is_ascii_digit() || matches!(c, '.' | 'e' | '+' | '-' | '_')
                    }) =>
                {
                    trimmed.replace('_', "").parse::<f64>().ok()
                }
                _ => None,
            };
            parsed.ok_or_else(|| {
                CallError::raised(format!(
                    "could not convert string to float: {}",
                    value.repr()
                ))
            })
        }
        other => other.as_number().ok_or_else(|| {
            CallError::raised(format!(
                "float() argument must be a string or a real number, not '{}'",
                other.type_name()
            ))
        }),
    }
}

/// `int(value)` (floats truncate toward zero).
///
/// # Errors
/// `ValueError`/`TypeError`/`OverflowError` as Python raises them; unsupported beyond 64 bits.
pub fn to_int(value: &PyValue) -> Result<i64, CallError> {
    match value {
        PyValue::Bool(flag) => Ok(i64::from(*flag)),
        PyValue::Int(n) => Ok(*n),
        PyValue::Float(x) if x.is_nan() => {
            Err(CallError::raised("cannot convert float NaN to integer"))
        }
        PyValue::Float(x) if x.is_infinite() => Err(CallError::raised(
            "cannot convert float infinity to integer",
        )),
        PyValue::Float(x) if x.abs() < 9.2e18 => Ok(x.trunc() as i64),
        PyValue::Float(_) => Err(CallError::Unsupported("int() beyond 64 bits".into())),
        PyValue::Str(text) => {
            let trimmed = text.trim();
            let digits = trimmed.trim_start_matches(['+', '-']);
            if !digits.is_empty() && digits.chars().all(|c| c.is_ascii_digit()) {
                trimmed
                    .parse::<i64>()
                    .map_err(|_| CallError::Unsupported("int() beyond 64 bits".into()))
            } else {
                Err(CallError::raised(format!(
                    "invalid literal for int() with base 10: {}",
                    value.repr()
                )))
            }
        }
        other => Err(CallError::raised(format!(
            "int() argument must be a string, a bytes-like object or a real number, not '{}'",
            other.type_name()
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raised(result: Result<impl std::fmt::Debug, CallError>) -> String {
        match result {
            Err(CallError::Raised(text)) => text,
            other => format!("{other:?}"),
        }
    }

    /// Texts as CPython 3.11 prints them.
    #[test]
    fn errors_read_like_python() {
        let list = PyValue::List(vec![]);
        let dict = PyValue::Dict(vec![]);
        assert_eq!(raised(contains(&dict, &list)), "unhashable type: 'list'");
        assert_eq!(
            raised(contains(&PyValue::Int(1), &list)),
            "argument of type 'int' is not iterable"
        );
        assert_eq!(
            raised(contains(&PyValue::str("ab"), &PyValue::Int(1))),
            "'in <string>' requires string as left operand, not int"
        );
        assert_eq!(raised(get_item(&dict, &PyValue::str("k"))), "'k'");
        assert_eq!(
            raised(order("<", &PyValue::str("x"), &PyValue::Int(1))),
            "'<' not supported between instances of 'str' and 'int'"
        );
        assert_eq!(
            raised(lower(&PyValue::Int(3))),
            "'int' object has no attribute 'lower'"
        );
        assert_eq!(
            raised(to_float(&PyValue::str("abc"))),
            "could not convert string to float: 'abc'"
        );
        assert_eq!(
            raised(to_float(&PyValue::None)),
            "float() argument must be a string or a real number, not 'NoneType'"
        );
        assert_eq!(
            raised(to_int(&PyValue::str("1.5"))),
            "invalid literal for int() with base 10: '1.5'"
        );
        assert_eq!(to_int(&PyValue::Float(-2.7)), Ok(-2));
        assert_eq!(to_float(&PyValue::str(" 2.5 ")), Ok(2.5));
        assert_eq!(
            order("<=", &PyValue::Int(1), &PyValue::Float(1.0)),
            Ok(true)
        );
    }
}

#[cfg(test)]
mod format_tests {
    use super::*;

    /// `str.format(symbol=...)` as Python does it: doubled braces, a missing name as `KeyError`,
    /// an unmatched brace as `ValueError`.
    #[test]
    fn format_named_reads_like_python() {
        let symbol = PyValue::str("NVDA");
        let named = [("symbol", &symbol)];
        assert_eq!(
            format_named("{symbol} {{x}} }}", &named).expect("formats"),
            Ok("NVDA {x} }".to_owned())
        );
        assert_eq!(
            format_named("{other}", &named).expect("formats"),
            Err("other".to_owned())
        );
        assert_eq!(
            format_named("a } b", &named),
            Err(CallError::raised("Single '}' encountered in format string"))
        );
        assert!(matches!(
            format_named("{symbol:>8}", &named),
            Err(CallError::Unsupported(_))
        ));
    }
}
