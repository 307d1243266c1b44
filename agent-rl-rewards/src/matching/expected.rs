//! What a call should look like: function name and, per argument, a list of acceptable values.
//!
//! The JSON form follows BFCL's "possible answer" convention, so that the same targets serve
//! training and evaluation:
//!
//! ```json
//! {"name": "get_weather", "arguments": {"city": ["Paris", "Paris, France"], "unit": ["celsius", ""]}}
//! ```
//!
//! Each argument maps to a list of alternatives; the empty string `""` among them means the
//! argument may be omitted. Inside an alternative, a JSON object is itself a set of fields with
//! alternatives (`{"k": ["a", "b"]}` accepts `{"k": "a"}` and `{"k": "b"}`; a field value that is
//! not a list is a single literal), and a list of objects is matched element by element. Any other
//! value is a literal, compared recursively. To require a literal list inside an object field,
//! wrap it: `{"k": [[1, 2]]}`.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use crate::error::{Result, RewardError};

/// One acceptable value of an argument (or of a nested field).
#[derive(Debug, Clone, PartialEq)]
pub enum ValuePattern {
    /// A JSON value compared recursively (lists element-wise, objects key by key), with the
    /// string normalisation and int→float leniency of [`MatchOptions`](super::MatchOptions).
    Literal(Value),
    /// An object whose fields each have their own alternatives (BFCL's nested dicts).
    Object(Vec<ExpectedArgument>),
    /// A list matched element by element, each element against its own pattern (BFCL's lists
    /// of dicts).
    List(Vec<ValuePattern>),
}

impl ValuePattern {
    /// Reads one alternative in the BFCL convention (see the module docs).
    pub fn from_bfcl(value: &Value) -> Self {
        match value {
            Value::Object(map) => ValuePattern::Object(
                map.iter()
                    .map(|(name, alternatives)| ExpectedArgument::from_bfcl(name, alternatives))
                    .collect(),
            ),
            Value::Array(items) if !items.is_empty() && items.iter().all(Value::is_object) => {
                ValuePattern::List(items.iter().map(ValuePattern::from_bfcl).collect())
            }
            other => ValuePattern::Literal(other.clone()),
        }
    }

    /// The BFCL JSON form of this alternative.
    pub fn to_bfcl(&self) -> Value {
        match self {
            ValuePattern::Literal(value) => value.clone(),
            ValuePattern::Object(fields) => Value::Object(
                fields
                    .iter()
                    .map(|field| (field.name.clone(), field.alternatives_json()))
                    .collect(),
            ),
            ValuePattern::List(items) => Value::Array(items.iter().map(Self::to_bfcl).collect()),
        }
    }

    /// True for the `""` alternative that marks an argument as omittable.
    pub fn is_omission_marker(&self) -> bool {
        matches!(self, ValuePattern::Literal(Value::String(text)) if text.is_empty())
    }
}

impl From<Value> for ValuePattern {
    fn from(value: Value) -> Self {
        ValuePattern::Literal(value)
    }
}

/// One expected argument: its name and the values that are accepted for it.
#[derive(Debug, Clone, PartialEq)]
pub struct ExpectedArgument {
    /// Argument (or nested field) name.
    pub name: String,
    /// Accepted values; a `""` literal among them means the argument may be omitted.
    pub acceptable: Vec<ValuePattern>,
}

impl ExpectedArgument {
    /// An argument accepting any of `acceptable` (literals).
    pub fn new(name: impl Into<String>, acceptable: impl IntoIterator<Item = Value>) -> Self {
        Self {
            name: name.into(),
            acceptable: acceptable.into_iter().map(ValuePattern::Literal).collect(),
        }
    }

    /// Reads `name: alternatives` in the BFCL convention: a list of alternatives, or a single
    /// non-list value taken as the only alternative.
    pub fn from_bfcl(name: &str, alternatives: &Value) -> Self {
        let acceptable = match alternatives {
            Value::Array(items) => items.iter().map(ValuePattern::from_bfcl).collect(),
            single => vec![ValuePattern::from_bfcl(single)],
        };
        Self {
            name: name.to_owned(),
            acceptable,
        }
    }

    /// True when the argument may be left out (`""` is among the acceptable values).
    pub fn is_optional(&self) -> bool {
        self.acceptable.iter().any(ValuePattern::is_omission_marker)
    }

    /// The alternatives as a BFCL JSON list.
    pub fn alternatives_json(&self) -> Value {
        Value::Array(self.acceptable.iter().map(ValuePattern::to_bfcl).collect())
    }
}

/// An expected tool call: the function and, per argument, the acceptable values.
///
/// ```
/// use agent_rl_rewards::matching::ExpectedCall;
/// use serde_json::json;
/// let call = ExpectedCall::new("get_weather")
///     .with_argument("city", [json!("Paris")])
///     .with_optional_argument("unit", [json!("celsius")]);
/// assert!(call.argument("unit").is_some_and(|unit| unit.is_optional()));
/// let parsed: ExpectedCall = serde_json::from_value(json!(
///     {"name": "get_weather", "arguments": {"city": ["Paris"], "unit": ["celsius", ""]}}
/// ))?;
/// assert_eq!(parsed, call);
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ExpectedCall {
    /// Name of the function that must be called.
    pub name: String,
    /// The expected arguments, in order. An argument the model passes that is not listed here is
    /// an unexpected argument.
    pub arguments: Vec<ExpectedArgument>,
}

impl ExpectedCall {
    /// A call to `name` with no arguments yet.
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            arguments: Vec::new(),
        }
    }

    /// Adds a required argument accepting any of `acceptable`.
    #[must_use]
    pub fn with_argument(
        mut self,
        name: impl Into<String>,
        acceptable: impl IntoIterator<Item = Value>,
    ) -> Self {
        self.arguments.push(ExpectedArgument::new(name, acceptable));
        self
    }

    /// Adds an argument that may be omitted, or given as any of `acceptable`.
    #[must_use]
    pub fn with_optional_argument(
        mut self,
        name: impl Into<String>,
        acceptable: impl IntoIterator<Item = Value>,
    ) -> Self {
        let mut argument = ExpectedArgument::new(name, acceptable);
        argument
            .acceptable
            .push(ValuePattern::Literal(Value::String(String::new())));
        self.arguments.push(argument);
        self
    }

    /// Adds an argument with explicit patterns (nested objects or lists with alternatives).
    #[must_use]
    pub fn with_patterns(
        mut self,
        name: impl Into<String>,
        acceptable: impl IntoIterator<Item = ValuePattern>,
    ) -> Self {
        self.arguments.push(ExpectedArgument {
            name: name.into(),
            acceptable: acceptable.into_iter().collect(),
        });
        self
    }

    /// The expected argument called `name`.
    pub fn argument(&self, name: &str) -> Option<&ExpectedArgument> {
        self.arguments.iter().find(|argument| argument.name == name)
    }

    /// Reads BFCL's possible-answer shape `{"function_name": {"arg": [alternatives…]}}`.
    ///
    /// ```
    /// use agent_rl_rewards::matching::ExpectedCall;
    /// use serde_json::json;
    /// let call = ExpectedCall::from_bfcl(&json!({"calc_area": {"base": [10], "unit": ["cm", ""]}}))?;
    /// assert_eq!(call.name, "calc_area");
    /// assert_eq!(call.arguments.len(), 2);
    /// # Ok::<(), agent_rl_rewards::RewardError>(())
    /// ```
    ///
    /// # Errors
    /// [`RewardError::InvalidTarget`] unless `value` is an object with exactly one key whose
    /// value is an object.
    pub fn from_bfcl(value: &Value) -> Result<Self> {
        let invalid = |reason: &str| RewardError::InvalidTarget {
            reason: format!("BFCL possible answer {value}: {reason}"),
        };
        let map = value.as_object().ok_or_else(|| invalid("not an object"))?;
        let mut entries = map.iter();
        let (name, arguments) = match (entries.next(), entries.next()) {
            (Some(entry), None) => entry,
            _ => return Err(invalid("must have exactly one function name as key")),
        };
        let arguments = arguments
            .as_object()
            .ok_or_else(|| invalid("arguments not an object"))?;
        Ok(Self {
            name: name.clone(),
            arguments: arguments
                .iter()
                .map(|(argument, alternatives)| ExpectedArgument::from_bfcl(argument, alternatives))
                .collect(),
        })
    }

    /// The BFCL possible-answer shape `{"function_name": {"arg": [alternatives…]}}`.
    pub fn to_bfcl(&self) -> Value {
        let mut outer = Map::new();
        outer.insert(self.name.clone(), self.arguments_json());
        Value::Object(outer)
    }

    fn arguments_json(&self) -> Value {
        Value::Object(
            self.arguments
                .iter()
                .map(|argument| (argument.name.clone(), argument.alternatives_json()))
                .collect(),
        )
    }
}

impl Serialize for ExpectedCall {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        let mut map = Map::new();
        map.insert("name".into(), Value::String(self.name.clone()));
        map.insert("arguments".into(), self.arguments_json());
        Value::Object(map).serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for ExpectedCall {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        use serde::de::Error as _;
        let value = Value::deserialize(deserializer)?;
        let name = value
            .get("name")
            .and_then(Value::as_str)
            .ok_or_else(|| D::Error::custom("expected call without a string `name`"))?;
        let arguments = match value.get("arguments") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Object(map)) => map
                .iter()
                .map(|(argument, alternatives)| ExpectedArgument::from_bfcl(argument, alternatives))
                .collect(),
            Some(_) => {
                return Err(D::Error::custom(format!(
                    "expected call `{name}`: `arguments` must be an object of alternatives"
                )));
            }
        };
        Ok(Self {
            name: name.to_owned(),
            arguments,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn bfcl_nested_dicts_and_lists_of_dicts_become_patterns() {
        let call = ExpectedCall::from_bfcl(&json!({"book": {
            "guest": [{"name": ["Ann", "ann b"], "age": [30, ""]}],
            "rooms": [[{"kind": ["single"]}, {"kind": ["double"]}]],
            "dates": [["2024-01-01", "2024-01-02"]],
        }}))
        .expect("valid");
        let guest = call.argument("guest").expect("guest");
        let ValuePattern::Object(fields) = &guest.acceptable[0] else {
            panic!("object pattern")
        };
        assert!(fields[1].is_optional());
        let rooms = call.argument("rooms").expect("rooms");
        assert!(matches!(&rooms.acceptable[0], ValuePattern::List(items) if items.len() == 2));
        let dates = call.argument("dates").expect("dates");
        assert_eq!(
            dates.acceptable[0],
            ValuePattern::Literal(json!(["2024-01-01", "2024-01-02"]))
        );
        let back = ExpectedCall::from_bfcl(&call.to_bfcl()).expect("round trip");
        assert_eq!(back, call);
    }

    #[test]
    fn bfcl_shape_errors_are_typed() {
        for bad in [
            json!([1]),
            json!({}),
            json!({"f": {}, "g": {}}),
            json!({"f": 3}),
        ] {
            let err = ExpectedCall::from_bfcl(&bad).expect_err("invalid");
            assert!(matches!(err, RewardError::InvalidTarget { .. }), "{err}");
        }
    }

    #[test]
    fn serde_round_trip() {
        let call = ExpectedCall::new("f")
            .with_argument("a", [json!(1), json!(1.5)])
            .with_optional_argument("b", [json!("x")]);
        let json = serde_json::to_value(&call).expect("serialise");
        assert_eq!(
            json,
            json!({"name": "f", "arguments": {"a": [1, 1.5], "b": ["x", ""]}})
        );
        let back: ExpectedCall = serde_json::from_value(json).expect("deserialise");
        assert_eq!(back, call);
    }
}
