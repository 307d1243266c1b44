//! Malformed renderings of a toy tool call: the text a policy produces when it has drifted off
//! the Hermes format, for preference pairs that teach a reward model to rank it below the call.

use agent_rl_core::ToolCall;
use serde_json::Value;

/// How many kinds of corruption [`malformed_call_text`] knows.
pub const MALFORMED_KINDS: usize = 4;

/// JSON as the chat template's `tojson` writes it: `", "` between items, `": "` after keys.
fn template_json(value: &Value) -> String {
    match value {
        Value::Object(map) => {
            let items: Vec<String> = map
                .iter()
                .map(|(k, v)| format!("{}: {}", Value::String(k.clone()), template_json(v)))
                .collect();
            format!("{{{}}}", items.join(", "))
        }
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(template_json).collect();
            format!("[{}]", items.join(", "))
        }
        other => other.to_string(),
    }
}

/// A Hermes tool-call block for `call` (`<tool_call>\n{"name": …, "arguments": …}\n</tool_call>`,
/// the arguments as the toy chat template renders them) broken in one of
/// [`MALFORMED_KINDS`] ways, chosen by `kind % MALFORMED_KINDS`: a repeated `"arguments":` key
/// (the drift PPO produced on the toy task), a missing closing brace, a block cut off inside
/// the arguments with no closing tag, or a bare argument value in place of the arguments
/// object. Each is reported as malformed by the Hermes parser, never parsed into a call
/// (tested).
///
/// ```
/// use agent_rl_algos::toy::malformed_call_text;
/// use agent_rl_core::ToolCall;
/// let call = ToolCall::new("get_weather", serde_json::json!({"city": "Rome"}));
/// assert_eq!(
///     malformed_call_text(&call, 0),
///     "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": \"arguments\": {\"city\": \"Rome\"}}\n</tool_call>"
/// );
/// ```
pub fn malformed_call_text(call: &ToolCall, kind: usize) -> String {
    let arguments = template_json(&call.arguments);
    let head = format!(
        "<tool_call>\n{{\"name\": \"{}\", \"arguments\": ",
        call.name
    );
    match kind % MALFORMED_KINDS {
        0 => format!("{head}\"arguments\": {arguments}}}\n</tool_call>"),
        1 => format!("{head}{arguments}\n</tool_call>"),
        2 => {
            let cut: String = arguments
                .chars()
                .take(arguments.chars().count() / 2)
                .collect();
            format!("{head}{cut}")
        }
        _ => {
            let value = call
                .arguments_object()
                .and_then(|args| args.values().next().cloned())
                .unwrap_or(Value::Null);
            format!("{head}{value}}}\n</tool_call>")
        }
    }
}

#[cfg(test)]
mod tests {
    use agent_rl_core::Message;
    use agent_rl_core::tool_calls::{HermesToolCallParser, ToolCallParser};
    use serde_json::json;

    use super::*;
    use crate::toy::{toy_tokenizer, toy_tools};

    #[test]
    fn every_kind_parses_as_malformed_never_as_a_call() {
        let parser = HermesToolCallParser::default();
        for call in [
            ToolCall::new("get_weather", json!({"city": "Rome"})),
            ToolCall::new("add", json!({"a": 57, "b": 3})),
        ] {
            for kind in 0..MALFORMED_KINDS {
                let text = malformed_call_text(&call, kind);
                let parsed = parser.parse(&text);
                assert!(parsed.tool_calls.is_empty(), "{text}");
                assert_eq!(parsed.malformed.len(), 1, "{text}");
            }
        }
    }

    #[test]
    fn the_corruptions_start_from_the_templates_own_rendering() {
        let tokenizer = toy_tokenizer().expect("toy tokenizer");
        let call = ToolCall::new("add", json!({"a": 57, "b": 3}));
        let messages = [
            Message::user("Compute 57 plus 3."),
            Message::assistant_tool_calls(None, vec![call.clone()]),
        ];
        let rendered = tokenizer
            .apply_chat_template(&messages, &toy_tools(), false)
            .expect("renders");
        // Kind 1 is the well-formed block less its closing brace.
        let well_formed =
            malformed_call_text(&call, 1).replace("\n</tool_call>", "}\n</tool_call>");
        assert!(rendered.contains(&well_formed), "{rendered}");
    }
}
