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
    #[arg(long)]
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
