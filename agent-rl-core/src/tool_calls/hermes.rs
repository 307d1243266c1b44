//! Qwen2.5 / Hermes format: `<tool_call>\n{"name": …, "arguments": {…}}\n</tool_call>`.

use serde_json::Value;

use super::{MalformedToolCall, ParsedOutput, ToolCallParser};
use crate::conversation::ToolCall;

/// Parser for the `<tool_call>{json}</tool_call>` format that Qwen2.5's chat template teaches.
///
/// `arguments` may be an object or a string holding a JSON object (some models emit that); any
/// other shape, invalid JSON, a missing name or a block without its closing tag (a truncated
/// completion) is reported in [`ParsedOutput::malformed`].
///
/// ```
/// use agent_rl_core::tool_calls::{HermesToolCallParser, ToolCallParser};
/// let out = HermesToolCallParser::default().parse(
///     "Let me check.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>",
/// );
/// assert_eq!(out.content, "Let me check.");
/// assert_eq!(out.tool_calls[0].name, "get_weather");
/// assert!(out.malformed.is_empty());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HermesToolCallParser {
    /// Opening tag, `<tool_call>` by default.
    pub open_tag: String,
    /// Closing tag, `</tool_call>` by default.
    pub close_tag: String,
}

impl Default for HermesToolCallParser {
    fn default() -> Self {
        Self {
            open_tag: "<tool_call>".into(),
            close_tag: "</tool_call>".into(),
        }
    }
}

fn parse_block(raw: &str) -> Result<ToolCall, String> {
    let value: Value =
        serde_json::from_str(raw.trim()).map_err(|err| format!("invalid JSON: {err}"))?;
    let object = value.as_object().ok_or("not a JSON object")?;
    let name = match object.get("name") {
        Some(Value::String(name)) if !name.is_empty() => name.clone(),
        Some(_) => return Err("`name` is not a non-empty string".into()),
        None => return Err("missing `name`".into()),
    };
    let arguments = match object.get("arguments").or_else(|| object.get("parameters")) {
        None => return Err("missing `arguments`".into()),
        Some(Value::Object(map)) => Value::Object(map.clone()),
        Some(Value::String(text)) => match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(map)) => Value::Object(map),
            _ => return Err("`arguments` string is not a JSON object".into()),
        },
        Some(_) => return Err("`arguments` is not an object".into()),
    };
    Ok(ToolCall {
        id: None,
        name,
        arguments,
    })
}

impl ToolCallParser for HermesToolCallParser {
    fn parse(&self, text: &str) -> ParsedOutput {
        let mut out = ParsedOutput::default();
        let mut content = String::new();
        let mut rest = text;
        while let Some(start) = rest.find(&self.open_tag) {
            content.push_str(&rest[..start]);
            let after_open = &rest[start + self.open_tag.len()..];
            match after_open.find(&self.close_tag) {
                Some(end) => {
                    let raw = &after_open[..end];
                    match parse_block(raw) {
                        Ok(call) => out.tool_calls.push(call),
                        Err(reason) => out.malformed.push(MalformedToolCall {
                            raw: raw.to_owned(),
                            reason,
                        }),
                    }
                    rest = &after_open[end + self.close_tag.len()..];
                }
                None => {
                    out.malformed.push(MalformedToolCall {
                        raw: after_open.to_owned(),
                        reason: format!("unterminated: no `{}`", self.close_tag),
                    });
                    rest = "";
                }
            }
        }
        content.push_str(rest);
        out.content = content.trim().to_owned();
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(text: &str) -> ParsedOutput {
        HermesToolCallParser::default().parse(text)
    }

    #[test]
    fn parser_table() {
        struct Case {
            text: &'static str,
            calls: Vec<(&'static str, Value)>,
            malformed: &'static [&'static str],
            content: &'static str,
        }
        let cases = [
            Case {
                text: "just text",
                calls: vec![],
                malformed: &[],
                content: "just text",
            },
            Case {
                text: "<tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": 1}}\n</tool_call>",
                calls: vec![("f", json!({"a": 1}))],
                malformed: &[],
                content: "",
            },
            Case {
                text: "<tool_call>{\"name\":\"f\",\"arguments\":{}}</tool_call>\n<tool_call>{\"name\":\"g\",\"arguments\":\"{\\\"b\\\": [1,2]}\"}</tool_call>",
                calls: vec![("f", json!({})), ("g", json!({"b": [1, 2]}))],
                malformed: &[],
                content: "",
            },
            Case {
                text: "a<tool_call>{\"name\": \"f\", \"arguments\": {\"a\": 1}</tool_call>b",
                calls: vec![],
                malformed: &["invalid JSON"],
                content: "ab",
            },
            Case {
                text: "<tool_call>{\"arguments\": {}}</tool_call>",
                calls: vec![],
                malformed: &["missing `name`"],
                content: "",
            },
            Case {
                text: "<tool_call>{\"name\": \"f\"}</tool_call>",
                calls: vec![],
                malformed: &["missing `arguments`"],
                content: "",
            },
            Case {
                text: "<tool_call>{\"name\": \"f\", \"arguments\": [1]}</tool_call>",
                calls: vec![],
                malformed: &["`arguments` is not an object"],
                content: "",
            },
            Case {
                text: "<tool_call>[1, 2]</tool_call>",
                calls: vec![],
                malformed: &["not a JSON object"],
                content: "",
            },
            Case {
                text: "ok <tool_call>{\"name\": \"f\", \"argum",
                calls: vec![],
                malformed: &["unterminated"],
                content: "ok",
            },
            Case {
                text: "<tool_call>{\"name\": \"f\", \"arguments\": {}}</tool_call><tool_call>oops</tool_call>",
                calls: vec![("f", json!({}))],
                malformed: &["invalid JSON"],
                content: "",
            },
        ];
        for case in cases {
            let out = parse(case.text);
            let calls: Vec<_> = out
                .tool_calls
                .iter()
                .map(|c| (c.name.as_str(), c.arguments.clone()))
                .collect();
            assert_eq!(calls, case.calls, "{}", case.text);
            assert_eq!(out.malformed.len(), case.malformed.len(), "{}", case.text);
            for (bad, reason) in out.malformed.iter().zip(case.malformed) {
                assert!(bad.reason.contains(reason), "{}: {}", case.text, bad.reason);
            }
            assert_eq!(out.content, case.content, "{}", case.text);
        }
    }

    /// serde_json refuses nesting past its recursion limit (128) with an error instead of
    /// overflowing the stack, in the block and in an `arguments` string alike; run on a thread
    /// with a small stack so that unbounded recursion would abort rather than pass.
    #[test]
    fn deep_nesting_is_malformed_not_an_abort() {
        let depth = 10_000;
        let nested = format!("{}1{}", "[".repeat(depth), "]".repeat(depth));
        let escaped = format!("{}1{}", "{\\\"a\\\": ".repeat(depth), "}".repeat(depth));
        let texts = [
            format!(
                "<tool_call>{{\"name\": \"f\", \"arguments\": {{\"x\": {nested}}}}}</tool_call>"
            ),
            format!("<tool_call>{{\"name\": \"f\", \"arguments\": \"{escaped}\"}}</tool_call>"),
        ];
        let outputs = std::thread::Builder::new()
            .stack_size(1 << 20)
            .spawn(move || texts.iter().map(|text| parse(text)).collect::<Vec<_>>())
            .expect("spawn")
            .join()
            .expect("no panic");
        for out in outputs {
            assert!(out.tool_calls.is_empty());
            assert_eq!(out.malformed.len(), 1);
        }
    }
}
