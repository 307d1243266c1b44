//! [`SftDataset`]: TRL-style supervised rows read from JSONL, with where each row came from.

use std::path::{Path, PathBuf};

use agent_rl_core::{Message, Role, ToolSpec};
use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;
use serde_json::Value;

use crate::error::{AlgoError, Result};

/// A prompt or completion: plain text, or a list of chat messages (TRL's "conversational" form).
#[derive(Debug, Clone, PartialEq)]
pub enum TextOrMessages {
    /// Plain text, tokenised as is (no chat template).
    Text(String),
    /// Chat messages, rendered with the tokenizer's chat template.
    Messages(Vec<Message>),
}

/// One supervised example, in one of TRL's dataset layouts.
#[derive(Debug, Clone, PartialEq)]
pub enum SftExample {
    /// `{"messages": [...], "tools": [...]?}`: a whole conversation; with
    /// [`SftConfig::assistant_only_loss`](crate::SftConfig::assistant_only_loss) the loss covers
    /// the assistant turns only.
    Conversation {
        /// The messages (system, user, assistant with optional `tool_calls`, tool).
        messages: Vec<Message>,
        /// Tools offered to the model (rendered by the template), possibly none.
        tools: Vec<ToolSpec>,
    },
    /// `{"prompt": ..., "completion": ...}`: both text or both message lists; with
    /// [`SftConfig::completion_only_loss`](crate::SftConfig::completion_only_loss) the loss
    /// covers the completion only.
    PromptCompletion {
        /// What the model is given.
        prompt: TextOrMessages,
        /// What it should produce.
        completion: TextOrMessages,
        /// Tools offered to the model (message lists only), possibly none.
        tools: Vec<ToolSpec>,
    },
}

/// Where a row came from, so that errors can name it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowOrigin {
    /// The JSONL file, or `<memory>` for rows built in code.
    pub path: PathBuf,
    /// 1-based line in the file (1-based index for rows built in code).
    pub line: usize,
}

impl RowOrigin {
    /// An [`AlgoError::DatasetRow`] at this origin.
    pub fn error(&self, reason: impl Into<String>) -> AlgoError {
        AlgoError::DatasetRow {
            path: self.path.clone(),
            line: self.line,
            reason: reason.into(),
        }
    }

    /// The origins of `count` rows built in code: `<memory>` and the 1-based index.
    pub(crate) fn in_memory(count: usize) -> Vec<Self> {
        (1..=count)
            .map(|line| Self {
                path: PathBuf::from("<memory>"),
                line,
            })
            .collect()
    }
}

/// The text of a JSONL dataset file.
///
/// # Errors
/// [`AlgoError::DatasetRead`] naming the file.
pub(crate) fn read_jsonl_file(path: &Path) -> Result<String> {
    std::fs::read_to_string(path).map_err(|source| AlgoError::DatasetRead {
        path: path.to_owned(),
        source,
    })
}

/// Each non-blank line of JSONL `text` parsed as JSON, with its origin (`source`, 1-based line);
/// a line that is not JSON is an [`AlgoError::DatasetRow`] naming it.
pub(crate) fn jsonl_rows<'a>(
    text: &'a str,
    source: &'a Path,
) -> impl Iterator<Item = Result<(RowOrigin, Value)>> + 'a {
    text.lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(move |(index, line)| {
            let origin = RowOrigin {
                path: source.to_owned(),
                line: index + 1,
            };
            match serde_json::from_str(line) {
                Ok(value) => Ok((origin, value)),
                Err(err) => Err(origin.error(format!("invalid JSON: {err}"))),
            }
        })
}

/// Supervised rows with their origins.
///
/// ```
/// use agent_rl_algos::sft::{SftDataset, SftExample};
/// let data = SftDataset::from_jsonl_str(
///     r#"{"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]}
/// {"prompt": "2+2=", "completion": "4"}"#,
///     "inline.jsonl",
/// )?;
/// assert_eq!(data.len(), 2);
/// assert!(matches!(data.examples()[1], SftExample::PromptCompletion { .. }));
/// let bad = SftDataset::from_jsonl_str("{\"prompt\": \"x\"}", "inline.jsonl")
///     .expect_err("no completion");
/// assert!(bad.to_string().starts_with("inline.jsonl:1:"));
/// # Ok::<(), agent_rl_algos::AlgoError>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SftDataset {
    examples: Vec<SftExample>,
    origins: Vec<RowOrigin>,
}

fn parse_messages(value: &Value, key: &str) -> std::result::Result<Vec<Message>, String> {
    let messages: Vec<Message> = serde_json::from_value(value.clone())
        .map_err(|err| format!("`{key}` is not a list of chat messages: {err}"))?;
    if messages.is_empty() {
        return Err(format!("`{key}` is an empty list"));
    }
    Ok(messages)
}

pub(crate) fn parse_text_or_messages(
    value: &Value,
    key: &str,
) -> std::result::Result<TextOrMessages, String> {
    match value {
        Value::String(text) => Ok(TextOrMessages::Text(text.clone())),
        Value::Array(_) => parse_messages(value, key).map(TextOrMessages::Messages),
        other => Err(format!(
            "`{key}` must be a string or a list of messages, found {}",
            json_kind(other)
        )),
    }
}

pub(crate) fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

impl SftExample {
    /// Parses one JSON row in TRL's `messages`/`tools` or `prompt`/`completion` layout; other keys
    /// are ignored (datasets often carry ids and metadata).
    ///
    /// # Errors
    /// A message saying which key is missing or malformed.
    pub fn from_json(row: &Value) -> std::result::Result<Self, String> {
        let Value::Object(map) = row else {
            return Err(format!(
                "a row must be a JSON object, found {}",
                json_kind(row)
            ));
        };
        let tools: Vec<ToolSpec> = match map.get("tools") {
            None | Some(Value::Null) => Vec::new(),
            Some(value) => serde_json::from_value(value.clone())
                .map_err(|err| format!("`tools` is not a list of tool specs: {err}"))?,
        };
        if let Some(messages) = map.get("messages") {
            let messages = parse_messages(messages, "messages")?;
            return Ok(SftExample::Conversation { messages, tools });
        }
        match (map.get("prompt"), map.get("completion")) {
            (Some(prompt), Some(completion)) => {
                let prompt = parse_text_or_messages(prompt, "prompt")?;
                let completion = parse_text_or_messages(completion, "completion")?;
                match (&prompt, &completion) {
                    (TextOrMessages::Text(_), TextOrMessages::Text(_)) if !tools.is_empty() => {
                        Err("`tools` needs conversational rows (message lists), \
                             but `prompt` and `completion` are strings"
                            .into())
                    }
                    (TextOrMessages::Text(_), TextOrMessages::Text(_))
                    | (TextOrMessages::Messages(_), TextOrMessages::Messages(_)) => {
                        Ok(SftExample::PromptCompletion {
                            prompt,
                            completion,
                            tools,
                        })
                    }
                    _ => Err("`prompt` and `completion` must both be strings or both be \
                              message lists"
                        .into()),
                }
            }
            (prompt, _) => {
                let keys: Vec<&str> = map.keys().map(String::as_str).collect();
                Err(format!(
                    "row has neither `messages` nor `prompt` + `completion` ({} missing; keys \
                     found: {keys:?})",
                    if prompt.is_some() {
                        "`completion`"
                    } else {
                        "`prompt`"
                    }
                ))
            }
        }
    }

    /// Whether any assistant message carries loss under assistant-only masking.
    pub fn has_assistant_turn(&self) -> bool {
        let has = |messages: &[Message]| messages.iter().any(|m| m.role == Role::Assistant);
        match self {
            SftExample::Conversation { messages, .. } => has(messages),
            SftExample::PromptCompletion { completion, .. } => match completion {
                TextOrMessages::Text(_) => true,
                TextOrMessages::Messages(messages) => has(messages),
            },
        }
    }
}

/// Which of `total` rows go to the eval split: `round(eval_fraction × total)` of them (at least 1
/// when the fraction is positive and there are 2 or more rows, never all), chosen by a seeded
/// shuffle.
pub(crate) fn eval_rows(total: usize, eval_fraction: f32, seed: u64) -> Vec<bool> {
    let mut eval_count = (f64::from(eval_fraction) * total as f64).round() as usize;
    if eval_fraction > 0.0 && total >= 2 {
        eval_count = eval_count.clamp(1, total - 1);
    } else {
        eval_count = eval_count.min(total.saturating_sub(1));
    }
    let mut order: Vec<usize> = (0..total).collect();
    order.shuffle(&mut ChaCha8Rng::seed_from_u64(seed));
    let mut is_eval = vec![false; total];
    for &index in &order[..eval_count] {
        is_eval[index] = true;
    }
    is_eval
}

impl SftDataset {
    /// Reads a JSONL file (one row per non-blank line).
    ///
    /// # Errors
    /// [`AlgoError::DatasetRead`] when the file cannot be read; [`AlgoError::DatasetRow`] naming
    /// the file and line of the first malformed row.
    pub fn from_jsonl(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref();
        Self::from_jsonl_str(&read_jsonl_file(path)?, path)
    }

    /// Parses JSONL text; `source` names it in errors.
    ///
    /// # Errors
    /// [`AlgoError::DatasetRow`] naming `source` and the line of the first malformed row.
    pub fn from_jsonl_str(text: &str, source: impl AsRef<Path>) -> Result<Self> {
        let mut dataset = Self::default();
        for row in jsonl_rows(text, source.as_ref()) {
            let (origin, value) = row?;
            let example = SftExample::from_json(&value).map_err(|reason| origin.error(reason))?;
            dataset.examples.push(example);
            dataset.origins.push(origin);
        }
        Ok(dataset)
    }

    /// Rows built in code; their origins are `<memory>` and the 1-based index.
    pub fn from_examples(examples: Vec<SftExample>) -> Self {
        let origins = RowOrigin::in_memory(examples.len());
        Self { examples, origins }
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.examples.len()
    }

    /// Whether there are no rows.
    pub fn is_empty(&self) -> bool {
        self.examples.is_empty()
    }

    /// The rows, in file order.
    pub fn examples(&self) -> &[SftExample] {
        &self.examples
    }

    /// The rows with their origins.
    pub fn iter(&self) -> impl Iterator<Item = (&SftExample, &RowOrigin)> {
        self.examples.iter().zip(&self.origins)
    }

    /// Splits off `round(eval_fraction × len)` rows (at least 1 when the fraction is positive
    /// and there are 2 or more rows) chosen by a seeded shuffle; returns `(train, eval)`, each
    /// in file order.
    pub fn split(&self, eval_fraction: f32, seed: u64) -> (SftDataset, SftDataset) {
        let is_eval = eval_rows(self.len(), eval_fraction, seed);
        let (mut train, mut eval) = (SftDataset::default(), SftDataset::default());
        for (index, (example, origin)) in self.iter().enumerate() {
            let part = if is_eval[index] {
                &mut eval
            } else {
                &mut train
            };
            part.examples.push(example.clone());
            part.origins.push(origin.clone());
        }
        (train, eval)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_layout() {
        let text = r#"{"messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "weather?"}, {"role": "assistant", "tool_calls": [{"type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}]}, {"role": "tool", "name": "get_weather", "content": "sunny"}, {"role": "assistant", "content": "Sunny."}], "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": {}}}], "id": 7}

{"prompt": "2+2=", "completion": "4"}
{"prompt": [{"role": "user", "content": "hi"}], "completion": [{"role": "assistant", "content": "hello"}]}"#;
        let data = SftDataset::from_jsonl_str(text, "d.jsonl").expect("valid rows");
        assert_eq!(data.len(), 3);
        let origins: Vec<usize> = data.iter().map(|(_, o)| o.line).collect();
        assert_eq!(origins, [1, 3, 4]);
        match &data.examples()[0] {
            SftExample::Conversation { messages, tools } => {
                assert_eq!(messages.len(), 5);
                assert_eq!(messages[2].tool_calls[0].name, "get_weather");
                assert_eq!(tools[0].name(), "get_weather");
            }
            other => panic!("expected a conversation, got {other:?}"),
        }
        assert!(matches!(
            &data.examples()[2],
            SftExample::PromptCompletion {
                prompt: TextOrMessages::Messages(_),
                ..
            }
        ));
    }

    #[test]
    fn malformed_rows_name_file_and_line() {
        let cases = [
            (
                "{\"messages\": [{\"role\": \"robot\", \"content\": \"x\"}]}",
                "messages",
            ),
            ("{\"messages\": []}", "empty"),
            ("{\"prompt\": \"x\"}", "`completion` missing"),
            ("{\"text\": \"x\"}", "neither"),
            (
                "{\"prompt\": \"x\", \"completion\": [{\"role\": \"assistant\", \"content\": \"y\"}]}",
                "both",
            ),
            ("{\"prompt\": 3, \"completion\": \"y\"}", "a number"),
            ("[1, 2]", "JSON object"),
            ("{\"messages\": ", "invalid JSON"),
            (
                "{\"messages\": [{\"role\": \"user\", \"content\": \"x\"}], \"tools\": [{}]}",
                "tools",
            ),
        ];
        for (row, needle) in cases {
            let text = format!("{{\"prompt\": \"a\", \"completion\": \"b\"}}\n{row}\n");
            let err =
                SftDataset::from_jsonl_str(&text, "data/train.jsonl").expect_err("malformed row");
            let message = err.to_string();
            assert!(message.starts_with("data/train.jsonl:2: "), "{message}");
            assert!(message.contains(needle), "{row}: {message}");
        }
    }

    #[test]
    fn missing_file_is_a_read_error() {
        let err = SftDataset::from_jsonl("/nonexistent/x.jsonl").expect_err("no file");
        assert!(matches!(err, AlgoError::DatasetRead { .. }), "{err}");
    }

    #[test]
    fn split_is_seeded_and_disjoint() {
        let rows = (0..10)
            .map(|i| SftExample::PromptCompletion {
                prompt: TextOrMessages::Text(format!("p{i}")),
                completion: TextOrMessages::Text("c".into()),
                tools: Vec::new(),
            })
            .collect();
        let data = SftDataset::from_examples(rows);
        let (train, eval) = data.split(0.2, 1);
        assert_eq!((train.len(), eval.len()), (8, 2));
        assert_eq!(data.split(0.2, 1), (train.clone(), eval.clone()));
        let mut lines: Vec<usize> = train
            .iter()
            .chain(eval.iter())
            .map(|(_, o)| o.line)
            .collect();
        lines.sort_unstable();
        assert_eq!(lines, (1..=10).collect::<Vec<_>>());
        assert_eq!(data.split(0.01, 1).1.len(), 1);
        assert_eq!(data.split(0.0, 1).1.len(), 0);
    }
}
