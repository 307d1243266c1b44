//! `--messages FILE.json [--tools FILE.json]` in the OpenAI/HF JSON shapes.

use std::path::{Path, PathBuf};

use agent_rl::core::{Message, ToolSpec};
use anyhow::Context;
use serde_json::Value;

/// Conversation input of `generate` and `chat-template`.
#[derive(Debug, Clone, clap::Args)]
pub struct ConversationArgs {
    /// JSON file: an array of messages, or an object with `messages` (and optionally `tools`).
    #[arg(long)]
    pub messages: Option<PathBuf>,
    /// JSON file: an array of tools (`{"type": "function", "function": {…}}` or flat).
    #[arg(long, requires = "messages")]
    pub tools: Option<PathBuf>,
}

fn read(path: &Path) -> anyhow::Result<Value> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    serde_json::from_str(&text).with_context(|| format!("{} is not valid JSON", path.display()))
}

impl ConversationArgs {
    /// Loads the messages (required here) and tools.
    pub fn load(&self) -> anyhow::Result<(Vec<Message>, Vec<ToolSpec>)> {
        let path = self
            .messages
            .as_ref()
            .context("--messages FILE.json is required")?;
        let value = read(path)?;
        let (messages, mut tools) = match value {
            Value::Object(mut map) => (
                map.remove("messages")
                    .with_context(|| format!("{}: no `messages` key", path.display()))?,
                map.remove("tools"),
            ),
            other => (other, None),
        };
        let messages: Vec<Message> = serde_json::from_value(messages).with_context(|| {
            format!(
                "{}: `messages` is not a list of chat messages",
                path.display()
            )
        })?;
        if let Some(tools_path) = &self.tools {
            tools = Some(read(tools_path)?);
        }
        let tools: Vec<ToolSpec> = match tools {
            None | Some(Value::Null) => Vec::new(),
            Some(value) => {
                serde_json::from_value(value).context("`tools` is not a list of tool specs")?
            }
        };
        Ok((messages, tools))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn field_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            "[ -~]{0,16}".prop_map(Value::String),
        ];
        leaf.prop_recursive(2, 8, 3, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
                prop::collection::vec(
                    (
                        prop_oneof![
                            Just("name".to_owned()),
                            Just("arguments".to_owned()),
                            Just("function".to_owned()),
                            "[a-z]{1,6}"
                        ],
                        inner
                    ),
                    0..3
                )
                .prop_map(|pairs| Value::Object(pairs.into_iter().collect())),
            ]
        })
    }

    fn message() -> impl Strategy<Value = Value> {
        let role = prop_oneof![
            Just(json!("user")),
            Just(json!("assistant")),
            Just(json!("tool")),
            Just(json!("system")),
            field_value(),
        ];
        let key = prop_oneof![
            Just("content"),
            Just("tool_calls"),
            Just("name"),
            Just("tool_call_id"),
            Just("reasoning_content"),
        ];
        (role, prop::collection::vec((key, field_value()), 0..4)).prop_map(|(role, fields)| {
            let mut map = serde_json::Map::new();
            map.insert("role".into(), role);
            for (key, value) in fields {
                map.insert(key.into(), value);
            }
            Value::Object(map)
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 96, failure_persistence: None, ..ProptestConfig::default() })]

        /// Generated message (and tools) files load or give an error naming the file.
        #[test]
        fn malformed_message_files_load_or_err(
            messages in prop::collection::vec(message(), 0..4),
            wrapped in any::<bool>(),
            tools in proptest::option::of(field_value()),
            cut in any::<usize>(),
        ) {
            let dir = tempfile::tempdir().expect("temp dir");
            let path = dir.path().join("messages.json");
            let value = if wrapped {
                json!({"messages": messages, "tools": tools})
            } else {
                Value::Array(messages)
            };
            let mut text = value.to_string();
            if cut % 4 == 0 {
                text.truncate(cut % (text.len() + 1));
            }
            std::fs::write(&path, &text).expect("write");
            let args = ConversationArgs { messages: Some(path), tools: None };
            let loaded = std::panic::catch_unwind(|| args.load().map(|(m, t)| (m.len(), t.len())));
            prop_assert!(loaded.is_ok(), "panicked on {text}");
        }
    }
}
