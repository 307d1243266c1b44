//! The toy tasks: tools, requests, targets and demonstrations.

use agent_rl_core::{Message, Task, ToolCall, ToolSpec};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::{Value, json};

use super::environment::{execute_toy_call, toy_salt};
use super::split::{CLASSIC_CITIES, ToySplit};
use crate::sft::{SftDataset, SftExample};

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

impl ToyKind {
    /// The kinds whose requests name a city (weather, time): the tool choice the two-layer
    /// model has to read from one word of the request.
    pub const CITY: [Self; 2] = [Self::Weather, Self::Time];

    /// The kind whose expected call names `tool` (`get_weather`, `get_time`, `add`); `None` for
    /// any other name.
    ///
    /// ```
    /// use agent_rl_algos::toy::ToyKind;
    /// assert_eq!(ToyKind::of_tool("get_time"), Some(ToyKind::Time));
    /// assert_eq!(ToyKind::of_tool("search"), None);
    /// ```
    pub fn of_tool(tool: &str) -> Option<Self> {
        match tool {
            "get_weather" => Some(Self::Weather),
            "get_time" => Some(Self::Time),
            "add" => Some(Self::Add),
            _ => None,
        }
    }
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

/// Where a request's values come from: [`toy_tasks`]' classic pool or a [`ToySplit`].
#[derive(Debug, Clone, Copy)]
enum Pool {
    Classic,
    Split(ToySplit),
}

/// The request text and the expected call of one task. The classic pool draws exactly as
/// [`toy_tasks`] always has (city, then operands; one phrasing, no draw for it).
fn request(pool: Pool, kind: ToyKind, rng: &mut ChaCha8Rng) -> (String, ToolCall) {
    let (cities, numbers, phrasings): (Vec<String>, _, &[&str]) = match pool {
        Pool::Classic => (
            CLASSIC_CITIES.iter().map(|c| (*c).to_owned()).collect(),
            ToySplit::Train.numbers(),
            &ToySplit::Train.phrasings(kind)[..1],
        ),
        Pool::Split(split) => (split.cities(), split.numbers(), split.phrasings(kind)),
    };
    let city = cities[rng.random_range(0..cities.len())].clone();
    let (a, b) = match kind {
        ToyKind::Add => (rng.random_range(numbers.clone()), rng.random_range(numbers)),
        ToyKind::Weather | ToyKind::Time => (0, 0),
    };
    let phrasing = if phrasings.len() > 1 {
        phrasings[rng.random_range(0..phrasings.len())]
    } else {
        phrasings[0]
    };
    let text = phrasing
        .replace("{city}", &city)
        .replace("{a}", &a.to_string())
        .replace("{b}", &b.to_string());
    let call = match kind {
        ToyKind::Weather => ToolCall::new("get_weather", json!({"city": city})),
        ToyKind::Time => ToolCall::new("get_time", json!({"city": city})),
        ToyKind::Add => ToolCall::new("add", json!({"a": a, "b": b})),
    };
    (text, call)
}

/// `count` tasks drawn with `seed`, cycling through the three kinds. Each task's
/// `data["target"]` holds the expected call and answer, `data["call"]` the call itself and
/// `data["salt"]` the hidden salt of the tool results.
///
/// These are the classic requests (twelve cities, numbers 0..50, one phrasing per kind): two
/// seeds share most of their requests. For held-out requests that no training request
/// matches, use [`toy_split_tasks`].
pub fn toy_tasks(count: usize, seed: u64) -> Vec<Task> {
    tasks_from(Pool::Classic, count, seed, "toy")
}

/// `count` tasks of `split` drawn with `seed`, cycling through the three kinds, with targets as
/// in [`toy_tasks`]. No request, `add` operand or phrasing of a [`ToySplit::HeldOut`] task
/// occurs in any [`ToySplit::Train`] task (nor in any [`toy_tasks`] task); the cities are
/// shared (see [`ToySplit`]).
///
/// ```
/// use agent_rl_algos::toy::{ToySplit, toy_split_tasks};
/// let held_out = toy_split_tasks(ToySplit::HeldOut, 3, 1);
/// assert_eq!(held_out[0].id, "toy-held_out-1-0");
/// ```
pub fn toy_split_tasks(split: ToySplit, count: usize, seed: u64) -> Vec<Task> {
    let label = match split {
        ToySplit::Train => "toy-train",
        ToySplit::HeldOut => "toy-held_out",
    };
    tasks_from(Pool::Split(split), count, seed, label)
}

fn tasks_from(pool: Pool, count: usize, seed: u64, label: &str) -> Vec<Task> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let kinds = [ToyKind::Weather, ToyKind::Time, ToyKind::Add];
    (0..count)
        .map(|i| {
            let id = format!("{label}-{seed}-{i}");
            toy_task(pool, kinds[i % kinds.len()], id, &mut rng)
        })
        .collect()
}

/// One task of `kind` from `pool`.
fn toy_task(pool: Pool, kind: ToyKind, id: String, rng: &mut ChaCha8Rng) -> Task {
    let (text, call) = request(pool, kind, rng);
    let salt: u64 = rng.random_range(0..1_000_000);
    let answer = execute_toy_call(&call, salt);
    Task {
        id,
        messages: vec![Message::user(text)],
        tools: toy_tools(),
        data: json!({
            "target": {
                "expected_calls": [expected_call(&call)],
                "expected_answer": {"acceptable": [answer]},
            },
            "call": {"name": call.name, "arguments": call.arguments},
            "salt": salt,
        }),
    }
}

/// `call` as an expected call of a target: each argument's value as the only acceptable one.
pub(super) fn expected_call(call: &ToolCall) -> Value {
    let arguments: serde_json::Map<String, Value> = call
        .arguments_object()
        .map(|args| args.iter().map(|(k, v)| (k.clone(), json!([v]))).collect())
        .unwrap_or_default();
    json!({"name": call.name, "arguments": arguments})
}

/// The demonstrated conversation of a toy task: request, call, result, answer.
///
/// Tasks of the harder [`ToyTier`](super::ToyTier)s show each turn's calls and results before
/// the answer. Returns `None` for a task not made by the toy family (no `data["call"]` or
/// `data["turns"]`).
pub fn demonstration(task: &Task) -> Option<Vec<Message>> {
    match toy_call(task) {
        Some(call) => demonstration_with(task, call),
        None => super::tiers::tier_demonstration(task),
    }
}

/// The call a toy task expects (`data["call"]`); `None` for a task not made here.
pub(super) fn toy_call(task: &Task) -> Option<ToolCall> {
    let call = task.data.get("call")?;
    Some(ToolCall::new(
        call.get("name")?.as_str()?,
        call.get("arguments")?.clone(),
    ))
}

/// The conversation of `task` in which the assistant makes `call` and answers with its result.
pub(super) fn demonstration_with(task: &Task, call: ToolCall) -> Option<Vec<Message>> {
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

/// Single-turn variants of [`toy_tasks`]: the same requests, judged on the call alone (see
/// [`call_only`]). For GRPO without an environment.
pub fn toy_call_tasks(count: usize, seed: u64) -> Vec<Task> {
    call_only(toy_tasks(count, seed))
}

/// The same tasks judged on the call alone: each target keeps the expected call and drops the
/// expected answer, so the outcome is "the call is exactly right", BFCL's criterion.
pub fn call_only(mut tasks: Vec<Task>) -> Vec<Task> {
    for task in &mut tasks {
        if let Some(target) = task.data.get_mut("target").and_then(Value::as_object_mut) {
            target.remove("expected_answer");
        }
    }
    tasks
}
