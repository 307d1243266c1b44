//! Shared fixtures of the SFT tests: a weather/time tool-calling conversation family.

use agent_rl_algos::sft::{SftDataset, SftExample};
use agent_rl_core::{Message, ToolCall, ToolSpec};
use serde_json::json;

/// The two tools of the toy family.
pub fn tools() -> Vec<ToolSpec> {
    vec![
        ToolSpec::new(
            "get_weather",
            "Weather now",
            json!({"type": "object", "properties": {"city": {"type": "string"}}}),
        ),
        ToolSpec::new(
            "get_time",
            "Local time",
            json!({"type": "object", "properties": {"city": {"type": "string"}}}),
        ),
    ]
}

/// The user question and the demonstrated call for `(tool, city)`.
pub fn question(tool: &str, city: &str) -> String {
    match tool {
        "get_weather" => format!("Weather in {city}?"),
        _ => format!("Time in {city}?"),
    }
}

/// A conversation prefix ending with the user's question (what the model is prompted with).
pub fn prompt(tool: &str, city: &str) -> Vec<Message> {
    vec![Message::user(question(tool, city))]
}

/// The demonstrated assistant turn calling `tool` for `city`.
pub fn call(tool: &str, city: &str) -> Message {
    Message::assistant_tool_calls(None, vec![ToolCall::new(tool, json!({"city": city}))])
}

/// One tool-calling conversation: question → call → result → answer.
pub fn conversation(tool: &str, city: &str, result: &str) -> SftExample {
    let mut messages = prompt(tool, city);
    messages.push(call(tool, city));
    messages.push(Message::tool(tool, result));
    messages.push(Message::assistant(format!("{city}: {result}.")));
    SftExample::Conversation {
        messages,
        tools: tools(),
    }
}

/// The cities of [`tool_call_dataset`].
pub const TRAIN_CITIES: [&str; 4] = ["Paris", "Oslo", "Rome", "Lima"];

/// The cities of [`held_out_tool_call_dataset`]: none of them trains.
pub const HELD_OUT_CITIES: [&str; 4] = ["Nuuk", "Baku", "Doha", "Riga"];

/// The toy dataset: `count` conversations cycling over tools and [`TRAIN_CITIES`].
pub fn tool_call_dataset(count: usize) -> SftDataset {
    conversations(count, &TRAIN_CITIES)
}

/// Held-out conversations: the same family over [`HELD_OUT_CITIES`], so no row (nor any city)
/// of it occurs in [`tool_call_dataset`].
pub fn held_out_tool_call_dataset(count: usize) -> SftDataset {
    conversations(count, &HELD_OUT_CITIES)
}

fn conversations(count: usize, cities: &[&str]) -> SftDataset {
    let rows = (0..count)
        .map(|i| {
            let tool = if i % 2 == 0 {
                "get_weather"
            } else {
                "get_time"
            };
            let result = if i % 2 == 0 { "sunny" } else { "9am" };
            conversation(tool, cities[(i / 2) % cities.len()], result)
        })
        .collect();
    SftDataset::from_examples(rows)
}
