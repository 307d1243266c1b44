//! Why an argument did not match: typed mismatch kinds with the path where they occurred.

use std::fmt;

use serde::Serialize;
use serde_json::Value;

/// The JSON type of a value, with integers and floats told apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ValueKind {
    /// `null`.
    Null,
    /// `true` / `false`.
    Boolean,
    /// A number without fraction or exponent in its JSON form (`3`).
    Integer,
    /// Any other number (`3.0`, `2.5`, `1e3`).
    Float,
    /// A string.
    String,
    /// A list.
    Array,
    /// An object.
    Object,
}

impl ValueKind {
    /// The kind of `value`.
    pub fn of(value: &Value) -> Self {
        match value {
            Value::Null => ValueKind::Null,
            Value::Bool(_) => ValueKind::Boolean,
            Value::Number(number) if number.is_f64() => ValueKind::Float,
            Value::Number(_) => ValueKind::Integer,
            Value::String(_) => ValueKind::String,
            Value::Array(_) => ValueKind::Array,
            Value::Object(_) => ValueKind::Object,
        }
    }

    /// Lowercase name (`"integer"`, `"float"`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            ValueKind::Null => "null",
            ValueKind::Boolean => "boolean",
            ValueKind::Integer => "integer",
            ValueKind::Float => "float",
            ValueKind::String => "string",
            ValueKind::Array => "array",
            ValueKind::Object => "object",
        }
    }
}

impl fmt::Display for ValueKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What kind of difference was found.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum MismatchKind {
    /// The call names another function.
    WrongFunction {
        /// The expected function.
        expected: String,
        /// The function the model called.
        found: String,
    },
    /// The call's arguments are not a JSON object.
    ArgumentsNotObject {
        /// The kind of value found instead.
        found: ValueKind,
    },
    /// A required argument (or nested field) is absent.
    MissingRequired,
    /// An argument (or nested field) that the target does not list.
    UnexpectedArgument,
    /// The value has a type none of the acceptable values has.
    WrongType {
        /// Kinds of the acceptable values.
        expected: Vec<ValueKind>,
        /// Kind of the value given.
        found: ValueKind,
    },
    /// A list has the wrong number of elements.
    WrongLength {
        /// Length of the acceptable list.
        expected: usize,
        /// Length of the list given.
        found: usize,
    },
    /// The value has an acceptable type but is none of the acceptable values.
    WrongValue {
        /// The value given.
        found: Value,
    },
}

/// One difference between a call and its expected call.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Mismatch {
    /// Where: `""` for the call itself, else the argument name, then `.field` and `[index]`
    /// for nested values (e.g. `guest.name`, `rooms[1].kind`).
    pub path: String,
    /// What was wrong.
    #[serde(flatten)]
    pub kind: MismatchKind,
}

impl Mismatch {
    /// A mismatch of `kind` at `path`.
    pub fn new(path: impl Into<String>, kind: MismatchKind) -> Self {
        Self {
            path: path.into(),
            kind,
        }
    }
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = if self.path.is_empty() {
            String::new()
        } else {
            format!("`{}`: ", self.path)
        };
        match &self.kind {
            MismatchKind::WrongFunction { expected, found } => {
                write!(f, "{at}called `{found}`, expected `{expected}`")
            }
            MismatchKind::ArgumentsNotObject { found } => {
                write!(f, "{at}arguments are a {found}, not an object")
            }
            MismatchKind::MissingRequired => write!(f, "{at}missing required argument"),
            MismatchKind::UnexpectedArgument => write!(f, "{at}unexpected argument"),
            MismatchKind::WrongType { expected, found } => {
                let names: Vec<_> = expected.iter().map(|kind| kind.as_str()).collect();
                write!(f, "{at}wrong type {found}, expected {}", names.join(" or "))
            }
            MismatchKind::WrongLength { expected, found } => {
                write!(f, "{at}list of {found} elements, expected {expected}")
            }
            MismatchKind::WrongValue { found } => write!(f, "{at}value {found} is not acceptable"),
        }
    }
}
