//! [`PreferenceDataset`]: preference pairs in TRL's layouts, read from JSONL with where each row
//! came from, and their tokenisation.
//!
//! Row layouts (other keys are ignored):
//!
//! | layout | keys | pairs |
//! |---|---|---|
//! | implicit prompt | `chosen`, `rejected` (whole conversations or texts sharing their start) | 1 |
//! | explicit prompt | `prompt`, `chosen`, `rejected` (the prompt is prepended to both) | 1 |
//! | ranked list (this crate's extension) | optional `prompt`, `ranked`: ≥ 2 completions, best first | every `(better, worse)` pair: n(n−1)/2 |
//!
//! Completions are all strings or all message lists (conversational rows); conversational rows may
//! carry `tools` (rendered by the chat template); pair rows may carry a numeric `margin` (how much
//! better `chosen` is; TRL subtracts it inside the loss). Conversations are rendered with the chat
//! template *without* a generation prompt; text rows get the eos token appended when missing, as
//! TRL does.

use std::path::Path;

use agent_rl_core::{ChatTokenizer, Message, ToolSpec};
use serde_json::{Map, Value};

use crate::error::Result;
use crate::sft::dataset::{
    RowOrigin, TextOrMessages, eval_rows, json_kind, jsonl_rows, parse_text_or_messages,
    read_jsonl_file,
};
use crate::sft::masking::eos_texts;

/// One preference pair, the prompt (if any) already prepended to both sides.
#[derive(Debug, Clone, PartialEq)]
pub struct PreferencePair {
    /// The preferred sequence.
    pub chosen: TextOrMessages,
    /// The other sequence.
    pub rejected: TextOrMessages,
    /// Tools offered to the model (conversational rows), possibly none.
    pub tools: Vec<ToolSpec>,
    /// How much better `chosen` should score (`None` = 0).
    pub margin: Option<f32>,
}

fn join(
    prompt: Option<&TextOrMessages>,
    completion: TextOrMessages,
) -> Result<TextOrMessages, String> {
    match (prompt, completion) {
        (None, completion) => Ok(completion),
        (Some(TextOrMessages::Text(p)), TextOrMessages::Text(c)) => {
            Ok(TextOrMessages::Text(format!("{p}{c}")))
        }
        (Some(TextOrMessages::Messages(p)), TextOrMessages::Messages(c)) => Ok(
            TextOrMessages::Messages(p.iter().cloned().chain(c).collect()),
        ),
        _ => Err("`prompt` and the completions must all be strings or all be message lists".into()),
    }
}

fn is_messages(side: &TextOrMessages) -> bool {
    matches!(side, TextOrMessages::Messages(_))
}

impl PreferencePair {
    /// Parses one JSON row into its pairs (one, or n(n−1)/2 for a ranked list of n).
    ///
    /// # Errors
    /// A message naming the key that is missing or malformed.
    pub fn from_json(row: &Value) -> std::result::Result<Vec<Self>, String> {
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
        let margin = match map.get("margin") {
            None | Some(Value::Null) => None,
            Some(Value::Number(n)) => {
                match n.as_f64().map(|m| m as f32).filter(|m| m.is_finite()) {
                    Some(m) => Some(m),
                    None => return Err(format!("`margin` {n} is not a finite number")),
                }
            }
            Some(other) => {
                return Err(format!(
                    "`margin` must be a number, found {}",
                    json_kind(other)
                ));
            }
        };
        let prompt = map
            .get("prompt")
            .map(|p| parse_text_or_messages(p, "prompt"))
            .transpose()?;
        let completions = completions(map, margin.is_some())?;
        let mut pairs = Vec::new();
        for (better, worse) in completions {
            let chosen = join(prompt.as_ref(), better)?;
            let rejected = join(prompt.as_ref(), worse)?;
            if is_messages(&chosen) != is_messages(&rejected) {
                return Err(
                    "`chosen` and `rejected` must both be strings or both be message lists".into(),
                );
            }
            if !tools.is_empty() && !is_messages(&chosen) {
                return Err("`tools` needs conversational rows (message lists), but the completions are strings".into());
            }
            pairs.push(Self {
                chosen,
                rejected,
                tools: tools.clone(),
                margin,
            });
        }
        Ok(pairs)
    }
}

/// The `(better, worse)` completion pairs of a row.
fn completions(
    map: &Map<String, Value>,
    has_margin: bool,
) -> std::result::Result<Vec<(TextOrMessages, TextOrMessages)>, String> {
    if let Some(ranked) = map.get("ranked") {
        if map.contains_key("chosen") || map.contains_key("rejected") {
            return Err("a row has either `ranked` or `chosen` + `rejected`, not both".into());
        }
        if has_margin {
            return Err("`margin` belongs to a single pair; a `ranked` row has several".into());
        }
        let Value::Array(items) = ranked else {
            return Err(format!(
                "`ranked` must be a list of completions, found {}",
                json_kind(ranked)
            ));
        };
        if items.len() < 2 {
            return Err(format!(
                "`ranked` has {} completion(s); a ranking needs at least 2",
                items.len()
            ));
        }
        let parsed = items
            .iter()
            .enumerate()
            .map(|(i, item)| parse_text_or_messages(item, &format!("ranked[{i}]")))
            .collect::<std::result::Result<Vec<_>, _>>()?;
        let mut pairs = Vec::new();
        for (i, better) in parsed.iter().enumerate() {
            for worse in &parsed[i + 1..] {
                pairs.push((better.clone(), worse.clone()));
            }
        }
        return Ok(pairs);
    }
    match (map.get("chosen"), map.get("rejected")) {
        (Some(chosen), Some(rejected)) => Ok(vec![(
            parse_text_or_messages(chosen, "chosen")?,
            parse_text_or_messages(rejected, "rejected")?,
        )]),
        (chosen, _) => {
            let keys: Vec<&str> = map.keys().map(String::as_str).collect();
            Err(format!(
                "row has neither `chosen` + `rejected` nor `ranked` ({} missing; keys found: {keys:?})",
                if chosen.is_some() {
                    "`rejected`"
                } else {
                    "`chosen`"
                }
            ))
        }
    }
}

/// Preference pairs with the row each came from.
///
/// ```
/// use agent_rl_algos::reward_model::PreferenceDataset;
/// let data = PreferenceDataset::from_jsonl_str(
///     r#"{"prompt": [{"role": "user", "content": "hi"}], "chosen": [{"role": "assistant", "content": "hello"}], "rejected": [{"role": "assistant", "content": "go away"}], "margin": 1.0}
/// {"prompt": "2+2=", "ranked": ["4", "5", "fish"]}"#,
///     "prefs.jsonl",
/// )?;
/// assert_eq!(data.len(), 1 + 3); // a ranking of 3 gives 3 pairs
/// let bad = PreferenceDataset::from_jsonl_str(r#"{"chosen": "x"}"#, "prefs.jsonl").expect_err("no rejected");
/// assert!(bad.to_string().starts_with("prefs.jsonl:1:"));
/// # Ok::<(), agent_rl_algos::AlgoError>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PreferenceDataset {
    pairs: Vec<PreferencePair>,
    origins: Vec<RowOrigin>,
}

impl PreferenceDataset {
    /// Reads a JSONL file (one row per non-blank line).
    ///
    /// # Errors
    /// [`AlgoError::DatasetRead`](crate::AlgoError::DatasetRead) when the file cannot be read; [`AlgoError::DatasetRow`](crate::AlgoError::DatasetRow) naming
    /// the file, line and key of the first malformed row.
    pub fn from_jsonl(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref();
        Self::from_jsonl_str(&read_jsonl_file(path)?, path)
    }

    /// Parses JSONL text; `source` names it in errors.
    ///
    /// # Errors
    /// [`AlgoError::DatasetRow`](crate::AlgoError::DatasetRow) naming `source`, the line and the key of the first malformed row.
    pub fn from_jsonl_str(text: &str, source: impl AsRef<Path>) -> Result<Self> {
        let mut dataset = Self::default();
        for row in jsonl_rows(text, source.as_ref()) {
            let (origin, value) = row?;
            let pairs = PreferencePair::from_json(&value).map_err(|reason| origin.error(reason))?;
            dataset
                .origins
                .extend(std::iter::repeat_n(origin, pairs.len()));
            dataset.pairs.extend(pairs);
        }
        Ok(dataset)
    }

    /// Pairs built in code, one row each; their origins are `<memory>` and the 1-based index.
    pub fn from_pairs(pairs: Vec<PreferencePair>) -> Self {
        let origins = RowOrigin::in_memory(pairs.len());
        Self { pairs, origins }
    }

    /// Number of pairs.
    pub fn len(&self) -> usize {
        self.pairs.len()
    }

    /// Whether there are no pairs.
    pub fn is_empty(&self) -> bool {
        self.pairs.is_empty()
    }

    /// The pairs, in file order.
    pub fn pairs(&self) -> &[PreferencePair] {
        &self.pairs
    }

    /// The pairs with their origins.
    pub fn iter(&self) -> impl Iterator<Item = (&PreferencePair, &RowOrigin)> {
        self.pairs.iter().zip(&self.origins)
    }

    /// Splits off `round(eval_fraction × rows)` source rows (seeded, at least one when the
    /// fraction is positive and there are 2 or more rows); all pairs of a row stay together, so
    /// pairs expanded from one ranking never straddle the split. Returns `(train, eval)`.
    pub fn split(&self, eval_fraction: f32, seed: u64) -> (Self, Self) {
        // Row number of each pair: pairs of one row are contiguous and share an origin.
        let mut row_of = Vec::with_capacity(self.len());
        for (index, origin) in self.origins.iter().enumerate() {
            let same = index > 0 && self.origins[index - 1] == *origin;
            let row = row_of
                .last()
                .map_or(0, |&r: &usize| if same { r } else { r + 1 });
            row_of.push(row);
        }
        let rows = row_of.last().map_or(0, |&r| r + 1);
        let is_eval = eval_rows(rows, eval_fraction, seed);
        let (mut train, mut eval) = (Self::default(), Self::default());
        for ((pair, origin), row) in self.iter().zip(row_of) {
            let part = if is_eval[row] { &mut eval } else { &mut train };
            part.pairs.push(pair.clone());
            part.origins.push(origin.clone());
        }
        (train, eval)
    }
}

/// Token ids of one side: conversations rendered with the chat template (no generation prompt),
/// texts with the eos token appended unless they end with it.
///
/// # Errors
/// [`AlgoError::Core`](crate::AlgoError::Core) when the template or the tokenizer fails.
pub fn tokenize_side(
    tokenizer: &ChatTokenizer,
    side: &TextOrMessages,
    tools: &[ToolSpec],
) -> Result<Vec<u32>> {
    match side {
        TextOrMessages::Messages(messages) => Ok(tokenize_messages(tokenizer, messages, tools)?),
        TextOrMessages::Text(text) => {
            let mut ids = tokenizer.encode(text)?;
            let ends_with_eos = eos_texts(tokenizer)
                .iter()
                .any(|eos| text.ends_with(eos.as_str()));
            if let (false, Some(&eos)) = (ends_with_eos, tokenizer.eos_ids.first()) {
                ids.push(eos);
            }
            Ok(ids)
        }
    }
}

/// A conversation as a reward model reads it: the chat template without a generation prompt.
///
/// # Errors
/// [`AlgoError::Core`](crate::AlgoError::Core) when the template or the tokenizer fails.
pub fn tokenize_messages(
    tokenizer: &ChatTokenizer,
    messages: &[Message],
    tools: &[ToolSpec],
) -> Result<Vec<u32>> {
    Ok(tokenizer.encode_chat(messages, tools, false)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_layout() {
        let text = r#"{"chosen": [{"role": "user", "content": "w?"}, {"role": "assistant", "content": "sunny"}], "rejected": [{"role": "user", "content": "w?"}, {"role": "assistant", "content": "no"}], "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": {}}}]}
{"prompt": "a", "chosen": "b", "rejected": "c", "margin": 0.5}

{"prompt": [{"role": "user", "content": "q"}], "ranked": [[{"role": "assistant", "content": "1"}], [{"role": "assistant", "content": "2"}], [{"role": "assistant", "content": "3"}], [{"role": "assistant", "content": "4"}]]}"#;
        let data = PreferenceDataset::from_jsonl_str(text, "p.jsonl").expect("valid");
        assert_eq!(data.len(), 1 + 1 + 6);
        assert_eq!(data.pairs()[0].tools.len(), 1);
        assert_eq!(data.pairs()[1].chosen, TextOrMessages::Text("ab".into()));
        assert_eq!(data.pairs()[1].margin, Some(0.5));
        let TextOrMessages::Messages(first) = &data.pairs()[2].chosen else {
            panic!("messages")
        };
        assert_eq!(first.len(), 2);
        let lines: Vec<usize> = data.iter().map(|(_, o)| o.line).collect();
        assert_eq!(lines, [1, 2, 4, 4, 4, 4, 4, 4]);
    }

    #[test]
    fn malformed_rows_name_file_line_and_key() {
        let cases = [
            (r#"{"chosen": "x"}"#, "`rejected` missing"),
            (r#"{"rejected": "x"}"#, "`chosen` missing"),
            (
                r#"{"chosen": "x", "rejected": [{"role": "assistant", "content": "y"}]}"#,
                "both",
            ),
            (
                r#"{"chosen": "x", "rejected": "y", "margin": "big"}"#,
                "`margin`",
            ),
            (r#"{"prompt": "p", "ranked": ["x"]}"#, "at least 2"),
            (r#"{"ranked": ["x", "y"], "margin": 1}"#, "`margin`"),
            (r#"{"ranked": ["x", 3]}"#, "ranked[1]"),
            (
                r#"{"chosen": "x", "rejected": "y", "tools": [{"type": "function", "function": {"name": "f", "parameters": {}}}]}"#,
                "`tools`",
            ),
            (
                r#"{"prompt": [{"role": "user", "content": "q"}], "chosen": "x", "rejected": "y"}"#,
                "all be strings",
            ),
            ("[1]", "JSON object"),
            ("{", "invalid JSON"),
        ];
        for (row, needle) in cases {
            let text = format!("{{\"chosen\": \"a\", \"rejected\": \"b\"}}\n{row}\n");
            let message = PreferenceDataset::from_jsonl_str(&text, "data/prefs.jsonl")
                .expect_err(row)
                .to_string();
            assert!(message.starts_with("data/prefs.jsonl:2: "), "{message}");
            assert!(message.contains(needle), "{row}: {message}");
        }
    }

    #[test]
    fn split_keeps_the_pairs_of_a_ranking_together() {
        let mut text = String::new();
        for i in 0..10 {
            text.push_str(&format!(
                "{{\"prompt\": \"p{i}\", \"ranked\": [\"a\", \"b\", \"c\"]}}\n"
            ));
        }
        let data = PreferenceDataset::from_jsonl_str(&text, "r.jsonl").expect("valid");
        let (train, eval) = data.split(0.2, 3);
        assert_eq!((train.len(), eval.len()), (24, 6));
        let eval_lines: std::collections::BTreeSet<usize> =
            eval.iter().map(|(_, o)| o.line).collect();
        assert_eq!(eval_lines.len(), 2);
        assert!(train.iter().all(|(_, o)| !eval_lines.contains(&o.line)));
    }
}
