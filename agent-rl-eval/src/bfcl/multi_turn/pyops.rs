//! Python operator semantics the backends need: `+ - * / **`, truthiness, iteration, ordering.

use std::cmp::Ordering;

use super::backend::CallError;
use super::value::PyValue;

fn unsupported_operand(op: &str, a: &PyValue, b: &PyValue) -> CallError {
    CallError::raised(format!(
        "unsupported operand type(s) for {op}: '{}' and '{}'",
        a.type_name(),
        b.type_name()
    ))
}

fn as_int(value: &PyValue) -> Option<i64> {
    match value {
        PyValue::Bool(flag) => Some(i64::from(*flag)),
        PyValue::Int(n) => Some(*n),
        _ => None,
    }
}

fn overflow() -> CallError {
    CallError::Unsupported("integer arithmetic beyond 64 bits".into())
}

fn numeric(
    op: &str,
    a: &PyValue,
    b: &PyValue,
    ints: fn(i64, i64) -> Option<i64>,
    floats: fn(f64, f64) -> f64,
) -> Result<PyValue, CallError> {
    if let (Some(x), Some(y)) = (as_int(a), as_int(b)) {
        return ints(x, y).map(PyValue::Int).ok_or_else(overflow);
    }
    match (a.as_number(), b.as_number()) {
        (Some(x), Some(y)) => Ok(PyValue::Float(floats(x, y))),
        _ => Err(unsupported_operand(op, a, b)),
    }
}

/// `a + b` (numbers, and `str`/`list`/`tuple` concatenation).
///
/// # Errors
/// Python's `TypeError` for other operand types.
pub fn add(a: &PyValue, b: &PyValue) -> Result<PyValue, CallError> {
    match (a, b) {
        (PyValue::Str(x), PyValue::Str(y)) => Ok(PyValue::Str(format!("{x}{y}"))),
        (PyValue::List(x), PyValue::List(y)) => Ok(PyValue::List([x.clone(), y.clone()].concat())),
        (PyValue::Tuple(x), PyValue::Tuple(y)) => {
            Ok(PyValue::Tuple([x.clone(), y.clone()].concat()))
        }
        (PyValue::Str(_), _) if b.as_number().is_some() => Err(CallError::raised(format!(
            "can only concatenate str (not \"{}\") to str",
            b.type_name()
        ))),
        _ => numeric("+", a, b, i64::checked_add, |x, y| x + y),
    }
}

/// `a - b` on numbers.
///
/// # Errors
/// Python's `TypeError` for other operand types.
pub fn sub(a: &PyValue, b: &PyValue) -> Result<PyValue, CallError> {
    numeric("-", a, b, i64::checked_sub, |x, y| x - y)
}

/// `a * b` on numbers.
///
/// # Errors
/// Python's `TypeError`, or unsupported for sequence repetition.
pub fn mul(a: &PyValue, b: &PyValue) -> Result<PyValue, CallError> {
    if a.as_number().is_none() || b.as_number().is_none() {
        return Err(CallError::Unsupported("sequence repetition".into()));
    }
    numeric("*", a, b, i64::checked_mul, |x, y| x * y)
}

/// `a / b` (true division, always a float).
///
/// # Errors
/// Python's `TypeError`; `ZeroDivisionError` text for a zero divisor.
pub fn truediv(a: &PyValue, b: &PyValue) -> Result<PyValue, CallError> {
    match (a.as_number(), b.as_number()) {
        // The literal pattern compares with `==`, so it matches -0.0 too, as Python does.
        (Some(_), Some(0.0)) => Err(CallError::raised(
            if as_int(b).is_some() && as_int(a).is_some() {
                "division by zero"
            } else {
                "float division by zero"
            },
        )),
        (Some(x), Some(y)) => match (as_int(a), as_int(b)) {
            // Python divides two ints exactly then rounds once; f64 division of values that
            // fit 2^53 is the same.
            (Some(p), Some(q)) if p.abs() < (1 << 53) && q.abs() < (1 << 53) => {
                Ok(PyValue::Float(p as f64 / q as f64))
            }
            (Some(_), Some(_)) => Err(overflow()),
            _ => Ok(PyValue::Float(x / y)),
        },
        _ => Err(unsupported_operand("/", a, b)),
    }
}

/// `a ** b`.
///
/// # Errors
/// Python's `TypeError`/`ZeroDivisionError`; unsupported for complex results and overflow.
pub fn pow(a: &PyValue, b: &PyValue) -> Result<PyValue, CallError> {
    if let (Some(x), Some(y)) = (as_int(a), as_int(b))
        && y >= 0
    {
        let exponent = u32::try_from(y).map_err(|_| overflow())?;
        return x
            .checked_pow(exponent)
            .map(PyValue::Int)
            .ok_or_else(overflow);
    }
    let (Some(x), Some(y)) = (a.as_number(), b.as_number()) else {
        return Err(unsupported_operand("** or pow()", a, b));
    };
    if x == 0.0 && y < 0.0 {
        return Err(CallError::raised(
            "0.0 cannot be raised to a negative power",
        ));
    }
    if x < 0.0 && y.fract() != 0.0 {
        return Err(CallError::Unsupported("complex power results".into()));
    }
    let result = x.powf(y);
    if result.is_infinite() && x.is_finite() && y.is_finite() {
        return Err(CallError::Unsupported("float overflow in power".into()));
    }
    Ok(PyValue::Float(result))
}

/// Python's truthiness.
pub fn truthy(value: &PyValue) -> bool {
    match value {
        PyValue::None => false,
        PyValue::Bool(flag) => *flag,
        PyValue::Int(n) => *n != 0,
        PyValue::Float(x) => *x != 0.0,
        PyValue::Str(text) => !text.is_empty(),
        PyValue::List(items) | PyValue::Tuple(items) => !items.is_empty(),
        PyValue::Dict(pairs) => !pairs.is_empty(),
        PyValue::Opaque(_) => true,
    }
}

/// The items `for x in value` yields (a dict's keys, a string's characters).
///
/// # Errors
/// Python's `TypeError` for a value that is not iterable.
pub fn iterate(value: &PyValue) -> Result<Vec<PyValue>, CallError> {
    match value {
        PyValue::List(items) | PyValue::Tuple(items) => Ok(items.clone()),
        PyValue::Dict(pairs) => Ok(pairs.iter().map(|(key, _)| key.clone()).collect()),
        PyValue::Str(text) => Ok(text.chars().map(|c| PyValue::Str(c.into())).collect()),
        other => Err(CallError::raised(format!(
            "'{}' object is not iterable",
            other.type_name()
        ))),
    }
}

/// Python's `<` ordering for numbers and strings.
///
/// # Errors
/// Python's `TypeError` for values that do not order.
pub fn compare(a: &PyValue, b: &PyValue) -> Result<Ordering, CallError> {
    match (a, b) {
        (PyValue::Str(x), PyValue::Str(y)) => Ok(x.cmp(y)),
        _ => match (a.as_number(), b.as_number()) {
            (Some(x), Some(y)) => x
                .partial_cmp(&y)
                .ok_or_else(|| CallError::Unsupported("comparison with nan".into())),
            _ => Err(CallError::raised(format!(
                "'<' not supported between instances of '{}' and '{}'",
                b.type_name(),
                a.type_name()
            ))),
        },
    }
}

/// `sum(items)` (starting from `0`).
///
/// # Errors
/// As [`add`].
pub fn sum(items: &[PyValue]) -> Result<PyValue, CallError> {
    items
        .iter()
        .try_fold(PyValue::Int(0), |total, item| add(&total, item))
}
