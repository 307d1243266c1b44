//! Synthetic preferences on the toy tool-use family — "the right call beats a wrong one", "a
//! call beats a refusal" — and the split of toy tasks by request, so that held-out tasks and
//! pairs use requests that no training task uses.

use agent_rl_core::{Message, Task, ToolCall};
use rand::seq::IndexedRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::{Map, Value};

use super::environment::stable_hash;
use super::malformed::malformed_call_text;
use super::tasks::toy_call_tasks;
use crate::reward_model::{PreferenceDataset, PreferencePair};
use crate::sft::TextOrMessages;

/// Texts of the refusals the preferences rank below any call.
pub(super) const REFUSALS: [&str; 4] = [
    "I cannot help with that.",
    "Sorry, I do not know.",
    "I am unable to answer.",
    "Please ask someone else.",
];

/// The user request of a task: the text of its first message (empty for a task without
/// messages).
pub fn toy_request(task: &Task) -> &str {
    task.messages.first().map_or("", Message::text)
}

/// Whether a request is reserved for held-out tasks: one request in four, chosen by a stable
/// hash of its text (the same on every platform and for every task list). Of the 24 weather and
/// time requests (12 cities × 2 tools) six are held out, and a quarter of the 2,500 `add`
/// requests.
///
/// ```
/// use agent_rl_algos::toy::is_held_out_request;
/// let held = (0..50).filter(|n| is_held_out_request(&format!("Add {n} and 7."))).count();
/// assert!((6..=20).contains(&held));
/// ```
pub fn is_held_out_request(request: &str) -> bool {
    stable_hash(request) % 4 == 3
}

/// The expected call of a toy task (`data["call"]`), `None` for other tasks.
pub fn toy_expected_call(task: &Task) -> Option<ToolCall> {
    let call = task.data.get("call")?;
    Some(ToolCall::new(
        call.get("name")?.as_str()?,
        call.get("arguments")?.clone(),
    ))
}

/// The argument values of a toy task's expected call (empty for other tasks).
pub fn toy_argument_values(task: &Task) -> Vec<Value> {
    toy_expected_call(task)
        .and_then(|call| {
            call.arguments_object()
                .map(|args| args.values().cloned().collect())
        })
        .unwrap_or_default()
}

/// Toy tasks split by request (see [`toy_request_split`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ToyRequestSplit {
    /// Tasks whose request is a training request.
    pub train: Vec<Task>,
    /// Tasks whose request is held out ([`is_held_out_request`]).
    pub held_out: Vec<Task>,
}

/// Splits toy tasks by their request text ([`is_held_out_request`]); tasks without an expected
/// call are dropped. No held-out request — neither its text nor its expected call — ever
/// appears among the training tasks, whatever seeds drew the two lists. (Argument values do
/// recur: `Time in Oslo?` may be held out while `Weather in Oslo?` is trained on, as `Add 3
/// and 4.` may be while `Add 4 and 3.` is.)
///
/// ```
/// use agent_rl_algos::toy::{toy_request, toy_request_split, toy_tasks};
/// let split = toy_request_split(toy_tasks(300, 1));
/// assert!(!split.train.is_empty() && !split.held_out.is_empty());
/// let held: Vec<&str> = split.held_out.iter().map(toy_request).collect();
/// assert!(split.train.iter().all(|task| !held.contains(&toy_request(task))));
/// ```
pub fn toy_request_split(tasks: impl IntoIterator<Item = Task>) -> ToyRequestSplit {
    let mut split = ToyRequestSplit::default();
    for task in tasks {
        if toy_expected_call(&task).is_none() {
            continue;
        }
        if is_held_out_request(toy_request(&task)) {
            split.held_out.push(task);
        } else {
            split.train.push(task);
        }
    }
    split
}

/// The RLHF demo's tasks, single-turn ([`toy_call_tasks`]: judged on the call): the training
/// requests among `count` tasks drawn with `seed`, and `held_out` tasks with held-out requests
/// drawn with `seed + 1000` (fewer only if the draw of `8 × held_out` tasks has too few).
///
/// ```
/// use agent_rl_algos::toy::{toy_request, toy_rlhf_tasks};
/// let (train, held_out) = toy_rlhf_tasks(200, 20, 1);
/// assert_eq!(held_out.len(), 20);
/// assert!(held_out.iter().all(|t| train.iter().all(|u| toy_request(t) != toy_request(u))));
/// ```
pub fn toy_rlhf_tasks(count: usize, held_out: usize, seed: u64) -> (Vec<Task>, Vec<Task>) {
    let train = toy_request_split(toy_call_tasks(count, seed)).train;
    let mut tested = toy_request_split(toy_call_tasks(8 * held_out, seed.wrapping_add(1000)));
    tested.held_out.truncate(held_out);
    (train, tested.held_out)
}

/// A call with the right arguments but the wrong tool (weather ↔ time; `add` → `get_weather`).
fn wrong_tool(call: &ToolCall) -> ToolCall {
    let name = match call.name.as_str() {
        "get_weather" => "get_time",
        _ => "get_weather",
    };
    ToolCall::new(name, call.arguments.clone())
}

/// The right tool with one argument replaced by another value of the same type drawn from
/// `pool`; `None` when the pool has no other value.
fn wrong_arguments(call: &ToolCall, pool: &[Value], rng: &mut ChaCha8Rng) -> Option<ToolCall> {
    let args = call.arguments_object()?;
    let keys: Vec<&String> = args.keys().collect();
    let key = *keys.choose(rng)?;
    let current = &args[key];
    let others: Vec<&Value> = pool
        .iter()
        .filter(|v| *v != current && v.is_string() == current.is_string())
        .collect();
    let replacement = (*others.choose(rng)?).clone();
    let mut changed: Map<String, Value> = args.clone();
    changed.insert(key.clone(), replacement);
    Some(ToolCall::new(call.name.clone(), Value::Object(changed)))
}

/// Preference pairs on toy tasks, four per task with an expected call, in this order: the
/// right call beats a wrong call, the right call beats a refusal, the wrong call beats the
/// refusal, and the right call beats a malformed rendering of itself
/// ([`malformed_call_text`], its kind cycling with the task index). Without the last pair a
/// reward model never sees a malformed call and may score one like the call it resembles,
/// which PPO then exploits. The wrong call alternates between the wrong tool with the right
/// arguments (even tasks) and the right tool with one wrong argument value drawn from the other tasks of
/// `tasks` (odd tasks). The conversations are single-turn — the request, then one assistant
/// message — as [`RewardModelScorer`](crate::RewardModelScorer) renders a single-turn episode,
/// and carry the task's tools. `seed` draws the wrong values and the refusals.
///
/// ```
/// use agent_rl_algos::toy::{toy_preferences, toy_tasks};
/// let pairs = toy_preferences(&toy_tasks(4, 1), 0);
/// assert_eq!(pairs.len(), 16);
/// ```
pub fn toy_preferences(tasks: &[Task], seed: u64) -> PreferenceDataset {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut pool: Vec<Value> = Vec::new();
    for value in tasks.iter().flat_map(toy_argument_values) {
        if !pool.contains(&value) {
            pool.push(value);
        }
    }
    let mut pairs = Vec::with_capacity(4 * tasks.len());
    for (index, task) in tasks.iter().enumerate() {
        let Some(right) = toy_expected_call(task) else {
            continue;
        };
        let wrong = if index % 2 == 0 {
            wrong_tool(&right)
        } else {
            wrong_arguments(&right, &pool, &mut rng).unwrap_or_else(|| wrong_tool(&right))
        };
        let refusal = REFUSALS[rng.random_range(0..REFUSALS.len())];
        let conversation = |reply: Message| {
            let mut messages = task.messages.clone();
            messages.push(reply);
            TextOrMessages::Messages(messages)
        };
        let malformed = conversation(Message::assistant(malformed_call_text(&right, index)));
        let right = conversation(Message::assistant_tool_calls(None, vec![right]));
        let wrong = conversation(Message::assistant_tool_calls(None, vec![wrong]));
        let refusal = conversation(Message::assistant(refusal));
        for (chosen, rejected) in [
            (&right, &wrong),
            (&right, &refusal),
            (&wrong, &refusal),
            (&right, &malformed),
        ] {
            pairs.push(PreferencePair {
                chosen: chosen.clone(),
                rejected: rejected.clone(),
                tools: task.tools.clone(),
                margin: None,
            });
        }
    }
    PreferenceDataset::from_pairs(pairs)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;
    use crate::toy::{ToyPairKind, toy_tasks};

    #[test]
    fn held_out_requests_never_reach_training_tasks_or_pairs() {
        let split = toy_request_split(toy_tasks(600, 3));
        let held: BTreeSet<&str> = split.held_out.iter().map(toy_request).collect();
        assert!(held.len() >= 20, "{held:?}");
        let train = toy_preferences(&split.train, 1);
        for pair in train.pairs() {
            for side in [&pair.chosen, &pair.rejected] {
                let TextOrMessages::Messages(messages) = side else {
                    panic!("conversational pairs");
                };
                assert!(!held.contains(messages[0].text()));
            }
        }
    }

    #[test]
    fn every_pair_prefers_right_calls_and_calls_over_refusals() {
        let tasks = toy_tasks(6, 2);
        let pairs = toy_preferences(&tasks, 0);
        let reply = |side: &TextOrMessages| match side {
            TextOrMessages::Messages(m) => m.last().cloned().expect("reply"),
            TextOrMessages::Text(_) => panic!("conversational pairs"),
        };
        for (index, (task, triple)) in tasks.iter().zip(pairs.pairs().chunks(4)).enumerate() {
            let right = toy_expected_call(task).expect("toy call");
            assert_eq!(reply(&triple[0].chosen).tool_calls, vec![right.clone()]);
            let wrong = reply(&triple[0].rejected).tool_calls;
            assert_eq!(wrong.len(), 1);
            // Even tasks: the wrong tool; odd tasks: the right tool with a wrong value.
            assert_eq!(wrong[0].name == right.name, index % 2 == 1);
            assert_ne!(wrong[0], right);
            assert!(reply(&triple[1].rejected).tool_calls.is_empty());
            assert_eq!(reply(&triple[2].chosen).tool_calls, wrong);
            assert_eq!(reply(&triple[3].chosen).tool_calls, vec![right.clone()]);
            let malformed = reply(&triple[3].rejected);
            assert!(malformed.tool_calls.is_empty() && malformed.text().contains("<tool_call>"));
            let base = 4 * index;
            let kind = ToyPairKind::of_index(base);
            assert_eq!(kind == ToyPairKind::WrongTool, wrong[0].name != right.name);
            assert_eq!(
                ToyPairKind::of_index(base + 1),
                ToyPairKind::RightOverRefusal
            );
            assert_eq!(
                ToyPairKind::of_index(base + 2),
                ToyPairKind::WrongOverRefusal
            );
            assert_eq!(ToyPairKind::of_index(base + 3), ToyPairKind::Malformed);
        }
    }
}
