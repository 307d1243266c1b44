//! Conversation types in the OpenAI / Hugging Face JSON shapes: messages, tool calls, tool specs.
//!
//! These are the types every crate speaks: the chat template renders them, the tool-call parsers
//! produce them, environments consume them and rewards score them.

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

/// Who wrote a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// System instructions.
    System,
    /// The user (or a simulated user).
    User,
    /// The model being trained or evaluated.
    Assistant,
    /// A tool result, answering an assistant tool call.
    Tool,
}

impl Role {
    /// The role's name as chat templates see it (`"system"`, `"user"`, `"assistant"`, `"tool"`).
    pub fn as_str(self) -> &'static str {
        match self {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
        }
    }
}

/// One tool call: a function name and its JSON arguments.
///
/// Serialises in the OpenAI shape `{"id": …, "type": "function", "function": {"name": …,
/// "arguments": {…}}}` and deserialises from it with `arguments` either an object or a JSON string
/// (as the OpenAI API sends it), or from the flat `{"name": …, "arguments": …}` shape.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ToolCall {
    /// Call id, when the API or environment assigned one.
    pub id: Option<String>,
    /// Name of the function called.
    pub name: String,
    /// Arguments as JSON (an object for well-formed calls; kept as given otherwise).
    pub arguments: Value,
}

impl ToolCall {
    /// A call without an id.
    pub fn new(name: impl Into<String>, arguments: Value) -> Self {
        Self {
            id: None,
            name: name.into(),
            arguments,
        }
    }

    /// The arguments as an object map, or `None` when they are not a JSON object.
    pub fn arguments_object(&self) -> Option<&Map<String, Value>> {
        self.arguments.as_object()
    }
}

#[derive(Serialize, Deserialize)]
struct FunctionPart {
    name: String,
    #[serde(default)]
    arguments: Value,
}

#[derive(Serialize, Deserialize)]
struct ToolCallWire {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    id: Option<String>,
    #[serde(rename = "type", default = "function_type")]
    kind: String,
    function: FunctionPart,
}

fn function_type() -> String {
    "function".to_owned()
}

impl Serialize for ToolCall {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        ToolCallWire {
            id: self.id.clone(),
            kind: function_type(),
            function: FunctionPart {
                name: self.name.clone(),
                arguments: self.arguments.clone(),
            },
        }
        .serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for ToolCall {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        let id = value.get("id").and_then(Value::as_str).map(str::to_owned);
        let part = value.get("function").unwrap_or(&value);
        let name = part
            .get("name")
            .and_then(Value::as_str)
            .ok_or_else(|| D::Error::custom("tool call without a string `name`"))?
            .to_owned();
        let arguments = match part.get("arguments") {
            None | Some(Value::Null) => Value::Object(Map::new()),
            Some(Value::String(text)) => serde_json::from_str(text).map_err(|err| {
                D::Error::custom(format!(
                    "tool call `{name}`: `arguments` string is not JSON: {err}"
                ))
            })?,
            Some(other) => other.clone(),
        };
        Ok(ToolCall {
            id,
            name,
            arguments,
        })
    }
}

/// One chat message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    /// Author of the message.
    pub role: Role,
    /// Text content (`None` for an assistant turn that only calls tools).
    #[serde(default)]
    pub content: Option<String>,
    /// Tool calls made by an assistant message.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// For tool messages: the id of the call this answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// For tool messages: the name of the tool that produced it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

impl Message {
    fn with_role(role: Role, content: impl Into<String>) -> Self {
        Self {
            role,
            content: Some(content.into()),
            tool_calls: Vec::new(),
            tool_call_id: None,
            name: None,
        }
    }

    /// A system message.
    pub fn system(content: impl Into<String>) -> Self {
        Self::with_role(Role::System, content)
    }

    /// A user message.
    pub fn user(content: impl Into<String>) -> Self {
        Self::with_role(Role::User, content)
    }

    /// An assistant message with text only.
    pub fn assistant(content: impl Into<String>) -> Self {
        Self::with_role(Role::Assistant, content)
    }

    /// An assistant message that calls tools (with optional text before the calls).
    pub fn assistant_tool_calls(content: Option<String>, tool_calls: Vec<ToolCall>) -> Self {
        Self {
            role: Role::Assistant,
            content,
            tool_calls,
            tool_call_id: None,
            name: None,
        }
    }

    /// A tool result message.
    pub fn tool(name: impl Into<String>, content: impl Into<String>) -> Self {
        Self {
            name: Some(name.into()),
            ..Self::with_role(Role::Tool, content)
        }
    }

    /// The text content, or `""` when there is none.
    pub fn text(&self) -> &str {
        self.content.as_deref().unwrap_or("")
    }
}

/// A tool offered to the model: name, description and JSON-schema parameters.
///
/// Serialises in the OpenAI shape `{"type": "function", "function": {"name", "description",
/// "parameters"}}` that chat templates expect, and deserialises from that or from the flat
/// `{"name", "description", "parameters"}` shape. Extra keys of the function object are kept.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSpec {
    /// The function object (`name`, `description`, `parameters`, and any other keys), in order.
    pub function: Map<String, Value>,
}

impl ToolSpec {
    /// A tool from its name, description and JSON-schema parameters.
    pub fn new(name: impl Into<String>, description: impl Into<String>, parameters: Value) -> Self {
        let mut function = Map::new();
        function.insert("name".into(), Value::String(name.into()));
        function.insert("description".into(), Value::String(description.into()));
        function.insert("parameters".into(), parameters);
        Self { function }
    }

    /// The tool's name (`""` if the spec has none).
    pub fn name(&self) -> &str {
        self.function
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or("")
    }

    /// The JSON schema of the parameters (`null` if absent).
    pub fn parameters(&self) -> &Value {
        self.function.get("parameters").unwrap_or(&Value::Null)
    }

    /// The OpenAI-shaped JSON value (`{"type": "function", "function": {…}}`).
    pub fn to_json(&self) -> Value {
        let mut outer = Map::new();
        outer.insert("type".into(), Value::String("function".into()));
        outer.insert("function".into(), Value::Object(self.function.clone()));
        Value::Object(outer)
    }
}

impl Serialize for ToolSpec {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.to_json().serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for ToolSpec {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        let function = value.get("function").cloned().unwrap_or(value);
        match function {
            Value::Object(map) if map.get("name").is_some_and(Value::is_string) => {
                Ok(ToolSpec { function: map })
            }
            _ => Err(D::Error::custom(
                "tool spec needs a `function` object with a string `name`",
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn tool_call_accepts_string_and_object_arguments() {
        let a: ToolCall = serde_json::from_value(
            json!({"type": "function", "function": {"name": "f", "arguments": "{\"x\": 1}"}}),
        )
        .expect("string arguments");
        let b: ToolCall =
            serde_json::from_value(json!({"name": "f", "arguments": {"x": 1}})).expect("flat");
        assert_eq!(a, b);
        assert_eq!(a.arguments, json!({"x": 1}));
    }

    #[test]
    fn tool_call_with_bad_argument_string_is_an_error_naming_the_tool() {
        let err = serde_json::from_value::<ToolCall>(json!({"name": "f", "arguments": "{oops"}))
            .expect_err("bad JSON");
        assert!(err.to_string().contains("`f`"), "{err}");
    }

    #[test]
    fn tool_spec_round_trips_openai_shape_and_keeps_key_order() {
        let spec: ToolSpec = serde_json::from_value(json!({"type": "function", "function": {
            "name": "get_weather", "description": "d", "parameters": {"type": "object"}, "strict": true}}))
        .expect("spec");
        assert_eq!(spec.name(), "get_weather");
        let keys: Vec<_> = spec.function.keys().cloned().collect();
        assert_eq!(keys, ["name", "description", "parameters", "strict"]);
        let back: ToolSpec = serde_json::from_value(spec.to_json()).expect("round trip");
        assert_eq!(back, spec);
    }
}
