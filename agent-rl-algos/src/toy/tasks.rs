//! The toy tasks: tools, requests, targets and demonstrations.

use agent_rl_core::{Message, Task, ToolCall, ToolSpec};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::{Value, json};

use super::environment::{execute_toy_call, toy_salt};
use crate::sft::{SftDataset, SftExample};

/// Cities the weather and time requests draw from.
const CITIES: [&str; 12] = [
    "Oslo", "Paris", "Lima", "Rome", "Cairo", "Tokyo", "Dakar", "Quito", "Perth", "Seoul", "Delhi",
    "Bern",
];

/// The three kinds of toy request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToyKind {
    /// "Weather in {city}?" → `get_weather(city)`.
    Weather,
    /// "Time in {city}?" → `get_time(city)` (a time of day such as `noon`).
    Time,
    /// "Add {a} and {b}." → `add(a, b)`.
    Add,
}

/// The tools offered in every toy task.
pub fn toy_tools() -> Vec<ToolSpec> {
    let city =
        json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]});
    vec![
        ToolSpec::new("get_weather", "Current weather of a city", city.clone()),
        ToolSpec::new("get_time", "Time of day in a city", city),
        ToolSpec::new(
            "add",
            "Sum of two integers",
            json!({"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}, "required": ["a", "b"]}),
        ),
    ]
}

/// The request text and the expected call of one task.
fn request(kind: ToyKind, rng: &mut ChaCha8Rng) -> (String, ToolCall) {
    let city = CITIES[rng.random_range(0..CITIES.len())];
    match kind {
        ToyKind::Weather => (
            format!("Weather in {city}?"),
            ToolCall::new("get_weather", json!({"city": city})),
        ),
        ToyKind::Time => (
            format!("Time in {city}?"),
            ToolCall::new("get_time", json!({"city": city})),
        ),
        ToyKind::Add => {
            let (a, b) = (rng.random_range(0..50), rng.random_range(0..50));
            (
                format!("Add {a} and {b}."),
                ToolCall::new("add", json!({"a": a, "b": b})),
            )
        }
    }
}

/// `count` tasks drawn with `seed`, cycling through the three kinds. Each task's
/// `data["target"]` holds the expected call and answer, `data["call"]` the call itself and
/// `data["salt"]` the hidden salt of the tool results.
pub fn toy_tasks(count: usize, seed: u64) -> Vec<Task> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let kinds = [ToyKind::Weather, ToyKind::Time, ToyKind::Add];
    (0..count)
        .map(|i| {
            let (text, call) = request(kinds[i % kinds.len()], &mut rng);
            let salt: u64 = rng.random_range(0..1_000_000);
            let answer = execute_toy_call(&call, salt);
            let arguments: serde_json::Map<String, Value> = call
                .arguments_object()
                .map(|args| args.iter().map(|(k, v)| (k.clone(), json!([v]))).collect())
                .unwrap_or_default();
            Task {
                id: format!("toy-{seed}-{i}"),
                messages: vec![Message::user(text)],
                tools: toy_tools(),
                data: json!({
                    "target": {
                        "expected_calls": [{"name": call.name, "arguments": arguments}],
                        "expected_answer": {"acceptable": [answer]},
                    },
                    "call": {"name": call.name, "arguments": call.arguments},
                    "salt": salt,
                }),
            }
        })
        .collect()
}

/// The demonstrated conversation of a toy task: request, call, result, answer.
///
/// Returns `None` for a task not made by [`toy_tasks`] (no `data["call"]`).
pub fn demonstration(task: &Task) -> Option<Vec<Message>> {
    let call = task.data.get("call")?;
    let call = ToolCall::new(call.get("name")?.as_str()?, call.get("arguments")?.clone());
    let result = execute_toy_call(&call, toy_salt(task));
    let mut messages = task.messages.clone();
    messages.push(Message::assistant_tool_calls(None, vec![call.clone()]));
    messages.push(Message::tool(call.name.clone(), result.clone()));
    messages.push(Message::assistant(result));
    Some(messages)
}

/// SFT rows demonstrating every toy task in `tasks` (others are skipped).
pub fn toy_sft_dataset(tasks: &[Task]) -> SftDataset {
    SftDataset::from_examples(
        tasks
            .iter()
            .filter_map(|task| {
                Some(SftExample::Conversation {
                    messages: demonstration(task)?,
                    tools: task.tools.clone(),
                })
            })
            .collect(),
    )
}

/// Single-turn variants of [`toy_tasks`]: the same requests, judged on the call alone (the
/// target keeps the expected call and drops the expected answer, so the outcome is "the call is
/// exactly right", BFCL's criterion). For GRPO without an environment.
pub fn toy_call_tasks(count: usize, seed: u64) -> Vec<Task> {
    let mut tasks = toy_tasks(count, seed);
    for task in &mut tasks {
        if let Some(target) = task.data.get_mut("target").and_then(Value::as_object_mut) {
            target.remove("expected_answer");
        }
    }
    tasks
}
