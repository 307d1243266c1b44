//! Python semantics the τ-bench tools rely on: int/float arithmetic, comparisons, dictionary
//! lookups with arbitrary JSON keys, and keyword-argument binding with CPython's `TypeError`
//! texts. An `Err(String)` here is the text of the exception Python would raise; the environment
//! turns it into the observation `Error: <text>`.

use serde_json::{Map, Number, Value};

use super::pyjson::round2;

/// The text of an exception the original tool would raise.
pub type Raised = String;

/// Python's type name of a JSON value (`int`, `float`, `str`, `list`, `dict`, …).
pub fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "NoneType",
        Value::Bool(_) => "bool",
        Value::Number(number) if number.is_f64() => "float",
        Value::Number(_) => "int",
        Value::String(_) => "str",
        Value::Array(_) => "list",
        Value::Object(_) => "dict",
    }
}

/// A Python number: `int` or `float`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum PyNum {
    /// An `int` (bools count as ints, as in Python).
    Int(i64),
    /// A `float`.
    Float(f64),
}

impl PyNum {
    /// The number a JSON value holds, if it is one (bools as 0/1).
    pub fn of(value: &Value) -> Option<Self> {
        match value {
            Value::Bool(flag) => Some(Self::Int(i64::from(*flag))),
            Value::Number(number) => match number.as_i64() {
                Some(int) if !number.is_f64() => Some(Self::Int(int)),
                _ => number.as_f64().map(Self::Float),
            },
            _ => None,
        }
    }

    /// As a float.
    pub fn as_f64(self) -> f64 {
        match self {
            Self::Int(int) => int as f64,
            Self::Float(float) => float,
        }
    }

    /// Back to JSON (a non-finite float becomes `null`).
    pub fn to_value(self) -> Value {
        match self {
            Self::Int(int) => Value::from(int),
            Self::Float(float) => Number::from_f64(float).map_or(Value::Null, Value::Number),
        }
    }

    fn combine(
        self,
        other: Self,
        int_op: fn(i64, i64) -> Option<i64>,
        float_op: fn(f64, f64) -> f64,
    ) -> Self {
        match (self, other) {
            (Self::Int(left), Self::Int(right)) => match int_op(left, right) {
                Some(int) => Self::Int(int),
                None => Self::Float(float_op(left as f64, right as f64)),
            },
            _ => Self::Float(float_op(self.as_f64(), other.as_f64())),
        }
    }

    /// `self + other`.
    pub fn plus(self, other: Self) -> Self {
        self.combine(other, i64::checked_add, |left, right| left + right)
    }

    /// `self - other`.
    pub fn minus(self, other: Self) -> Self {
        self.combine(other, i64::checked_sub, |left, right| left - right)
    }

    /// `self * other`.
    pub fn times(self, other: Self) -> Self {
        self.combine(other, i64::checked_mul, |left, right| left * right)
    }

    /// `-self`.
    pub fn negated(self) -> Self {
        Self::Int(0).minus(self)
    }

    /// `abs(self)`.
    pub fn abs(self) -> Self {
        match self {
            Self::Int(int) => Self::Int(int.saturating_abs()),
            Self::Float(float) => Self::Float(float.abs()),
        }
    }

    /// `round(self, 2)`: ints unchanged, floats correctly rounded.
    pub fn round2(self) -> Self {
        match self {
            Self::Int(_) => self,
            Self::Float(float) => Self::Float(round2(float)),
        }
    }

    /// Numeric `self < other` (int and float compare by value).
    pub fn lt(self, other: Self) -> bool {
        match (self, other) {
            (Self::Int(left), Self::Int(right)) => left < right,
            _ => self.as_f64() < other.as_f64(),
        }
    }

    /// Numeric `self == other`.
    pub fn num_eq(self, other: Self) -> bool {
        match (self, other) {
            (Self::Int(left), Self::Int(right)) => left == right,
            _ => self.as_f64() == other.as_f64(),
        }
    }

    /// Python `str(self)`.
    pub fn to_py_string(self) -> String {
        match self {
            Self::Int(int) => int.to_string(),
            Self::Float(float) => super::pyjson::float_repr(float),
        }
    }
}

/// Reads a number operand, raising Python's `TypeError` text for `op` otherwise.
pub fn num(value: &Value, other: &Value, op: &str) -> Result<PyNum, Raised> {
    PyNum::of(value).ok_or_else(|| {
        format!(
            "unsupported operand type(s) for {op}: '{}' and '{}'",
            type_name(value),
            type_name(other)
        )
    })
}

/// Both operands of a binary operation as numbers (`TypeError` text otherwise).
pub fn nums(left: &Value, right: &Value, op: &str) -> Result<(PyNum, PyNum), Raised> {
    match (PyNum::of(left), PyNum::of(right)) {
        (Some(left), Some(right)) => Ok((left, right)),
        _ if op == "<" => Err(format!(
            "'<' not supported between instances of '{}' and '{}'",
            type_name(left),
            type_name(right)
        )),
        _ => Err(format!(
            "unsupported operand type(s) for {op}: '{}' and '{}'",
            type_name(left),
            type_name(right)
        )),
    }
}

/// Python `left < right` on JSON values.
pub fn less(left: &Value, right: &Value) -> Result<bool, Raised> {
    if let (Value::String(left), Value::String(right)) = (left, right) {
        return Ok(left < right);
    }
    let (left, right) = nums(left, right, "<")?;
    Ok(left.lt(right))
}

/// Python `==` on JSON values (numbers by value, so `100 == 100.0`).
pub fn equal(left: &Value, right: &Value) -> bool {
    match (PyNum::of(left), PyNum::of(right)) {
        (Some(left), Some(right)) => left.num_eq(right),
        _ => left == right,
    }
}

/// Looks `key` up in a dict the way Python's `key in dict` does: strings look up, other
/// scalars are never found, lists and dicts raise `unhashable type`.
pub fn lookup<'a>(map: &'a Map<String, Value>, key: &Value) -> Result<Option<&'a Value>, Raised> {
    match key {
        Value::String(text) => Ok(map.get(text)),
        Value::Array(_) | Value::Object(_) => Err(format!("unhashable type: '{}'", type_name(key))),
        _ => Ok(None),
    }
}

/// The key as an owned string when it is a string (used after [`lookup`] found it).
pub fn key_text(key: &Value) -> String {
    key.as_str().map(str::to_owned).unwrap_or_default()
}

/// Iterates a value the way a Python `for` loop would (lists, strings by character, dict keys).
pub fn iterate(value: &Value) -> Result<Vec<Value>, Raised> {
    match value {
        Value::Array(items) => Ok(items.clone()),
        Value::String(text) => Ok(text
            .chars()
            .map(|ch| Value::String(ch.to_string()))
            .collect()),
        Value::Object(map) => Ok(map.keys().map(|key| Value::String(key.clone())).collect()),
        other => Err(format!("'{}' object is not iterable", type_name(other))),
    }
}

/// Python `str(value)` for an f-string interpolation.
pub fn to_str(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        Value::Null => "None".to_owned(),
        Value::Bool(flag) => if *flag { "True" } else { "False" }.to_owned(),
        Value::Number(_) => PyNum::of(value)
            .map(PyNum::to_py_string)
            .unwrap_or_default(),
        other => super::pyjson::py_repr(other),
    }
}

/// Python `len(value)`; `TypeError` text for scalars.
pub fn len(value: &Value) -> Result<usize, Raised> {
    match value {
        Value::Array(items) => Ok(items.len()),
        Value::String(text) => Ok(text.chars().count()),
        Value::Object(map) => Ok(map.len()),
        other => Err(format!(
            "object of type '{}' has no len()",
            type_name(other)
        )),
    }
}

/// The text of a `KeyError` for `key` (its Python `repr`).
pub fn key_error(key: &Value) -> Raised {
    super::pyjson::py_repr(key)
}

/// `table[key]` with a JSON key; `KeyError` / `unhashable type` text when absent or invalid.
pub fn index<'a>(table: &'a Map<String, Value>, key: &Value) -> Result<&'a Value, Raised> {
    lookup(table, key)?.ok_or_else(|| key_error(key))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic_keeps_int_float_distinction() {
        assert_eq!(PyNum::Int(2).plus(PyNum::Int(3)), PyNum::Int(5));
        assert_eq!(PyNum::Int(2).plus(PyNum::Float(0.5)), PyNum::Float(2.5));
        assert_eq!(PyNum::Int(7).round2(), PyNum::Int(7));
    }
}
