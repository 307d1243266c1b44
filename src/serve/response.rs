//! Response bodies in OpenAI's shapes, plus the token ids (`prompt_token_ids`, `token_ids`, as
//! vLLM names them) so that clients can stay token-in / token-out.

use agent_rl_core::generation::{FinishReason, Generation};
use agent_rl_core::{ChatTokenizer, ToolCallParser};
use rand::Rng;
use rand::distr::Alphanumeric;
use serde_json::{Value, json};

/// A fresh id with `prefix` (`chatcmpl-…`, `call_…`).
pub(crate) fn fresh_id(prefix: &str) -> String {
    let tail: String = rand::rng()
        .sample_iter(&Alphanumeric)
        .take(24)
        .map(char::from)
        .collect();
    format!("{prefix}{tail}")
}

/// Seconds since the Unix epoch.
pub(crate) fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// The generated text with a matched stop string cut off (OpenAI leaves stops out), and the
/// OpenAI finish reason.
pub(crate) fn final_text(
    tokenizer: &ChatTokenizer,
    generation: &Generation,
    stops: &[String],
) -> (String, &'static str) {
    let mut text = tokenizer
        .decode(&generation.token_ids, true)
        .unwrap_or_default();
    if let Some(cut) = stops.iter().filter_map(|s| text.find(s.as_str())).min() {
        text.truncate(cut);
        return (text, "stop");
    }
    let reason = match generation.finish_reason {
        FinishReason::Stop | FinishReason::StopString => "stop",
        FinishReason::Length => "length",
    };
    (text, reason)
}

/// One token's text (special tokens kept) for log-probability listings.
fn token_text(tokenizer: &ChatTokenizer, id: u32) -> String {
    tokenizer.decode(&[id], false).unwrap_or_default()
}

/// Chat `logprobs.content`: per token its text, log-probability and alternatives.
pub(crate) fn chat_logprobs(tokenizer: &ChatTokenizer, generation: &Generation) -> Value {
    let content: Vec<Value> = generation
        .token_ids
        .iter()
        .zip(&generation.logprobs)
        .enumerate()
        .map(|(step, (&id, &logprob))| {
            let text = token_text(tokenizer, id);
            let top: Vec<Value> = generation
                .top_logprobs
                .get(step)
                .map(|alternatives| {
                    alternatives
                        .iter()
                        .map(|&(alt, lp)| {
                            let t = token_text(tokenizer, alt);
                            json!({"token": t, "logprob": lp, "bytes": t.as_bytes(), "token_id": alt})
                        })
                        .collect()
                })
                .unwrap_or_default();
            json!({"token": text, "logprob": logprob, "bytes": text.as_bytes(), "token_id": id, "top_logprobs": top})
        })
        .collect();
    json!({ "content": content })
}

/// Legacy completions `logprobs`: tokens, token_logprobs, top_logprobs (maps), text_offset.
pub(crate) fn completion_logprobs(tokenizer: &ChatTokenizer, generation: &Generation) -> Value {
    let tokens: Vec<String> = generation
        .token_ids
        .iter()
        .map(|&id| token_text(tokenizer, id))
        .collect();
    let mut offset = 0;
    let offsets: Vec<usize> = tokens
        .iter()
        .map(|t| {
            let at = offset;
            offset += t.len();
            at
        })
        .collect();
    let top: Vec<Value> = generation
        .top_logprobs
        .iter()
        .map(|alternatives| {
            let map: serde_json::Map<String, Value> = alternatives
                .iter()
                .map(|&(id, lp)| (token_text(tokenizer, id), json!(lp)))
                .collect();
            Value::Object(map)
        })
        .collect();
    json!({"tokens": tokens, "token_logprobs": generation.logprobs, "top_logprobs": top, "text_offset": offsets})
}

/// The assistant message of a chat choice: tool calls parsed from `text` when `parse_tools`
/// (with fresh call ids and `arguments` as a JSON string, as OpenAI sends them). When a call is
/// malformed the whole text stays in `content` so that nothing the model wrote is lost.
/// Returns the message and whether it calls tools.
pub(crate) fn chat_message(
    text: &str,
    parser: &dyn ToolCallParser,
    parse_tools: bool,
) -> (Value, bool) {
    if !parse_tools {
        return (json!({"role": "assistant", "content": text}), false);
    }
    let parsed = parser.parse(text);
    let calls: Vec<Value> = parsed
        .tool_calls
        .iter()
        .map(|call| {
            json!({"id": fresh_id("call_"), "type": "function",
                   "function": {"name": call.name, "arguments": call.arguments.to_string()}})
        })
        .collect();
    let content = if !parsed.malformed.is_empty() {
        Some(text.to_owned())
    } else if parsed.content.is_empty() && !calls.is_empty() {
        None
    } else {
        Some(parsed.content.clone())
    };
    let has_calls = !calls.is_empty();
    let mut message = json!({"role": "assistant", "content": content});
    if has_calls {
        message["tool_calls"] = Value::Array(calls);
    }
    (message, has_calls)
}

/// `usage`.
pub(crate) fn usage(prompt_tokens: usize, completion_tokens: usize) -> Value {
    json!({"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
           "total_tokens": prompt_tokens + completion_tokens})
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use agent_rl_core::HermesToolCallParser;

    #[test]
    fn hermes_output_becomes_openai_tool_calls_with_string_arguments() {
        let parser = HermesToolCallParser::default();
        let text = "Checking.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>";
        let (message, calls) = chat_message(text, &parser, true);
        assert!(calls);
        assert_eq!(message["content"], "Checking.");
        let call = &message["tool_calls"][0];
        assert_eq!(call["type"], "function");
        assert!(call["id"].as_str().unwrap().starts_with("call_"));
        assert_eq!(call["function"]["name"], "get_weather");
        let arguments: Value =
            serde_json::from_str(call["function"]["arguments"].as_str().unwrap()).unwrap();
        assert_eq!(arguments, json!({"city": "Paris"}));
        // Only a call: content is null. A malformed call keeps the whole text. No parsing: text.
        let (only, _) = chat_message(
            "<tool_call>{\"name\": \"f\", \"arguments\": {}}</tool_call>",
            &parser,
            true,
        );
        assert!(only["content"].is_null());
        let broken = "<tool_call>{\"name\": \"f\"";
        let (message, calls) = chat_message(broken, &parser, true);
        assert!(!calls);
        assert_eq!(message["content"], broken);
        let (plain, _) = chat_message(text, &parser, false);
        assert_eq!(plain["content"], text);
        assert!(plain.get("tool_calls").is_none());
    }
}
