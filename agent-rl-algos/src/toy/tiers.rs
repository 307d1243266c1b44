//! Difficulty tiers of the toy family, the levels of a curriculum: one call; two calls in one
//! turn; a call whose result feeds a second call.

use agent_rl_core::{Message, Task, ToolCall};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::environment::{execute_toy_call, toy_salt};
use super::split::ToySplit;
use super::tasks::{expected_call, toy_split_tasks, toy_tools};

/// How hard a toy request is (easiest first).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToyTier {
    /// One call: weather, time or `add` (the [`toy_split_tasks`] requests).
    OneCall,
    /// Weather and time of one city: two calls in one turn, both results in the answer
    /// (`"sunny, noon"`).
    TwoCalls,
    /// "Add a and b, then add c": `add(a, b)`, then `add` of its result and `c`; the answer is
    /// the second result.
    Chained,
}

impl ToyTier {
    /// Every tier, easiest first.
    pub const ALL: [Self; 3] = [Self::OneCall, Self::TwoCalls, Self::Chained];
}

/// `count` tasks of `tier` from the values of `split`, drawn with `seed`. Targets list every
/// expected call and the final answer; `data["turns"]` holds the calls turn by turn, so
/// [`demonstration`](super::demonstration) can show them.
///
/// ```
/// use agent_rl_algos::toy::{ToySplit, ToyTier, demonstration, toy_tier_tasks};
/// let task = &toy_tier_tasks(ToyTier::Chained, ToySplit::Train, 1, 3)[0];
/// // request, call, result, call, result, answer
/// assert_eq!(demonstration(task).map(|m| m.len()), Some(6));
/// ```
pub fn toy_tier_tasks(tier: ToyTier, split: ToySplit, count: usize, seed: u64) -> Vec<Task> {
    if tier == ToyTier::OneCall {
        return toy_split_tasks(split, count, seed);
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let cities = split.cities();
    let numbers = split.numbers();
    (0..count)
        .map(|i| {
            let salt: u64 = rng.random_range(0..1_000_000);
            let (text, turns) = match tier {
                ToyTier::TwoCalls => {
                    let city = &cities[rng.random_range(0..cities.len())];
                    let text = match split {
                        ToySplit::Train => format!("Weather and time in {city}?"),
                        ToySplit::HeldOut => format!("Time and weather at {city}?"),
                    };
                    let calls = vec![
                        ToolCall::new("get_weather", json!({"city": city})),
                        ToolCall::new("get_time", json!({"city": city})),
                    ];
                    (text, vec![calls])
                }
                ToyTier::Chained | ToyTier::OneCall => {
                    let [a, b, c] = [0; 3].map(|_| rng.random_range(numbers.clone()));
                    let text = match split {
                        ToySplit::Train => format!("Add {a} and {b}, then add {c}."),
                        ToySplit::HeldOut => format!("Sum {a} and {b}, and then {c}."),
                    };
                    let first = ToolCall::new("add", json!({"a": a, "b": b}));
                    let second = ToolCall::new("add", json!({"a": a + b, "b": c}));
                    (text, vec![vec![first], vec![second]])
                }
            };
            tier_task(format!("toy-{tier:?}-{seed}-{i}"), text, turns, salt)
        })
        .collect()
}

/// The answer of a tier task whose turns make `turns`: every result of the last turn, joined.
fn answer(turns: &[Vec<ToolCall>], salt: u64) -> String {
    turns
        .last()
        .map(|calls| {
            calls
                .iter()
                .map(|call| execute_toy_call(call, salt))
                .collect::<Vec<_>>()
                .join(", ")
        })
        .unwrap_or_default()
}

fn tier_task(id: String, text: String, turns: Vec<Vec<ToolCall>>, salt: u64) -> Task {
    let expected: Vec<Value> = turns.iter().flatten().map(expected_call).collect();
    let turns_json: Vec<Value> = turns
        .iter()
        .map(|calls| {
            calls
                .iter()
                .map(|c| json!({"name": c.name, "arguments": c.arguments}))
                .collect()
        })
        .collect();
    Task {
        id,
        messages: vec![Message::user(text)],
        tools: toy_tools(),
        data: json!({
            "target": {
                "expected_calls": expected,
                "expected_answer": {"acceptable": [answer(&turns, salt)]},
            },
            "turns": turns_json,
            "salt": salt,
        }),
    }
}

/// The demonstrated conversation of a tier task (`data["turns"]`): each turn's calls, their
/// results, then the answer. `None` for a task without turns.
pub(super) fn tier_demonstration(task: &Task) -> Option<Vec<Message>> {
    let salt = toy_salt(task);
    let mut turns = Vec::new();
    for turn in task.data.get("turns")?.as_array()? {
        let calls = turn
            .as_array()?
            .iter()
            .map(|c| {
                Some(ToolCall::new(
                    c.get("name")?.as_str()?,
                    c.get("arguments")?.clone(),
                ))
            })
            .collect::<Option<Vec<_>>>()?;
        turns.push(calls);
    }
    let mut messages = task.messages.clone();
    for calls in &turns {
        messages.push(Message::assistant_tool_calls(None, calls.clone()));
        for call in calls {
            messages.push(Message::tool(
                call.name.clone(),
                execute_toy_call(call, salt),
            ));
        }
    }
    messages.push(Message::assistant(answer(&turns, salt)));
    Some(messages)
}
