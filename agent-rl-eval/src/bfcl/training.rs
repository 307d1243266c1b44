//! BFCL single-turn entries as GRPO training [`Task`]s, and a deterministic train/held-out split.
//!
//! A task's `messages` are the entry's (first and only) turn, its `tools` the entry's function
//! docs as [`ToolSpec`]s rendered exactly as [`chat_request`] renders them for evaluation (BFCL's
//! `dict`/`float`/`tuple` types mapped to JSON schema), and `data["target"]` the expected calls
//! in [`Target`]'s JSON form, read from the possible answers with [`ExpectedCall::from_bfcl`]
//! (`""` among the alternatives: the argument may be omitted; see [`expected_calls`] for the
//! function names and the Java/JavaScript source text). Irrelevance entries expect no call
//! (`"expected_calls": []`), relevance entries some call (`"expects_any_call": true`).
//! `data["bfcl"]` keeps the entry id and category.
//!
//! ```
//! use agent_rl_eval::bfcl::{BfclDataset, BfclEntry, Category, CheckOptions, training_tasks};
//! use serde_json::json;
//! let entry = BfclEntry {
//!     id: "simple_python_0".into(),
//!     category: Category::SimplePython,
//!     turns: vec![vec![agent_rl_eval::bfcl::BfclMessage { role: "user".into(),
//!         content: "Area of a triangle with base 10?".into() }]],
//!     functions: vec![json!({"name": "area", "description": "Triangle area.",
//!         "parameters": {"type": "dict", "properties": {"base": {"type": "float"}},
//!         "required": ["base"]}})],
//!     ground_truth: vec![json!({"area": {"base": [10.0], "unit": ["cm", ""]}})],
//!     multi_turn: None,
//! };
//! let mut dataset = BfclDataset::default();
//! dataset.categories.insert(Category::SimplePython, vec![entry]);
//! let tasks = training_tasks(&dataset, &[], CheckOptions::default())?;
//! assert_eq!(tasks[0].tools[0].parameters()["type"], "object");
//! assert_eq!(tasks[0].data["target"]["expected_calls"][0]["name"], "area");
//! # Ok::<(), agent_rl_eval::EvalError>(())
//! ```

use agent_rl_core::{Task, ToolCall};
use agent_rl_rewards::Target;
use agent_rl_rewards::matching::ExpectedCall;
use serde_json::{Value, json};

use super::category::{Category, Language, Scoring};
use super::checker::{CheckOptions, model_function_name};
use super::data::{BfclDataset, BfclEntry};
use super::runner::chat_request;
use super::source_text::source_answer;
use crate::error::{EvalError, Result};

/// True when entries of `category` can become training tasks: every single-turn category
/// (multi-turn entries train through [`multi_turn`](super::multi_turn)'s environment).
pub fn is_trainable(category: Category) -> bool {
    category.scoring() != Scoring::MultiTurn
}

/// The training tasks of the given categories (every loaded trainable one when `categories` is
/// empty), category by category in file order.
///
/// # Errors
/// [`EvalError::InvalidConfig`] (field `categories`) for a category that is not trainable (see
/// [`is_trainable`]); [`EvalError::Record`] naming the entry for a malformed possible answer
/// or one that calls a function the entry does not offer.
pub fn training_tasks(
    dataset: &BfclDataset,
    categories: &[Category],
    options: CheckOptions,
) -> Result<Vec<Task>> {
    if let Some(category) = categories.iter().find(|category| !is_trainable(**category)) {
        return Err(EvalError::InvalidConfig {
            field: "categories".into(),
            reason: format!(
                "{category} cannot become single-turn training tasks (multi-turn categories \
                 train in the multi-turn environment)"
            ),
        });
    }
    dataset
        .categories
        .iter()
        .filter(|(category, _)| {
            if categories.is_empty() {
                is_trainable(**category)
            } else {
                categories.contains(category)
            }
        })
        .flat_map(|(_, entries)| entries)
        .map(|entry| training_task(entry, options))
        .collect()
}

/// One entry as a training task (see the module docs).
///
/// # Errors
/// As [`training_tasks`], for this entry.
pub fn training_task(entry: &BfclEntry, options: CheckOptions) -> Result<Task> {
    let request = chat_request(entry, options);
    let target = training_target(entry, options)?;
    target
        .check_tools(&entry.id, &request.tools)
        .map_err(|error| record_error(entry, error.to_string()))?;
    let target_json =
        serde_json::to_value(&target).map_err(|error| record_error(entry, error.to_string()))?;
    Ok(Task {
        id: entry.id.clone(),
        messages: request.messages,
        tools: request.tools,
        data: json!({
            "target": target_json,
            "bfcl": {"id": entry.id, "category": entry.category},
        }),
    })
}

/// The [`Target`] of an entry: its expected calls (none for irrelevance), or "some call" for
/// relevance entries, whose calls BFCL does not judge.
///
/// # Errors
/// As [`expected_calls`].
pub fn training_target(entry: &BfclEntry, options: CheckOptions) -> Result<Target> {
    if entry.category.scoring() == Scoring::Relevance {
        return Ok(Target::new().with_any_call());
    }
    Ok(Target::new().with_expected_calls(expected_calls(entry, options)?))
}

/// The expected calls of an entry, named as the model sees the functions, with the official
/// checker's choice of function doc: the first doc for the simple categories (whose checker
/// reads only the values of the possible answer, never its key), the doc the answer names
/// otherwise. Java and JavaScript values are the source text the model writes
/// (`new ArrayList<>(Arrays.asList(1, 2))`, `5L`), each one a rendering the checker accepts.
///
/// # Errors
/// [`EvalError::Record`] naming the entry for a possible answer that is not
/// `{"function": {"arg": [alternatives…]}}`, a value with no accepted source text, or a
/// relevance or multi-turn entry (they have no expected calls).
pub fn expected_calls(entry: &BfclEntry, options: CheckOptions) -> Result<Vec<ExpectedCall>> {
    if !is_trainable(entry.category) || entry.category.scoring() == Scoring::Relevance {
        return Err(record_error(
            entry,
            format!("category {} has no expected calls", entry.category),
        ));
    }
    let language = entry.category.language();
    entry
        .ground_truth
        .iter()
        .map(|answer| {
            let doc = if entry.category.scoring() == Scoring::Simple {
                entry.functions.first()
            } else {
                answer_name(answer).and_then(|name| find_doc(&entry.functions, name))
            };
            let answer = match language {
                Language::Python => answer.clone(),
                _ => source_answer(answer, doc, language)
                    .map_err(|reason| record_error(entry, reason))?,
            };
            let mut call = ExpectedCall::from_bfcl(&answer)
                .map_err(|error| record_error(entry, error.to_string()))?;
            if let Some(name) = doc.and_then(|doc| doc.get("name")).and_then(Value::as_str) {
                call.name = name.to_owned();
            }
            call.name = model_function_name(&call.name, options);
            Ok(call)
        })
        .collect()
}

fn answer_name(answer: &Value) -> Option<&str> {
    answer
        .as_object()
        .and_then(|map| map.keys().next())
        .map(String::as_str)
}

fn find_doc<'a>(functions: &'a [Value], name: &str) -> Option<&'a Value> {
    functions
        .iter()
        .find(|doc| doc.get("name").and_then(Value::as_str) == Some(name))
}

/// One call per expected call, each argument set to its first acceptable value (arguments whose
/// only alternative is "omit" are left out): a reference answer, e.g. for SFT warm-up data or
/// to check that training reward and evaluator agree. The same as
/// [`agent_rl_rewards::reference_calls`].
pub fn reference_calls(expected: &[ExpectedCall]) -> Vec<ToolCall> {
    agent_rl_rewards::reference_calls(expected)
}

/// Splits tasks into `(train, held_out)` deterministically: the `round(len × held_out_fraction)`
/// tasks whose ids hash lowest under `seed` are held out. Both parts keep the input order; the
/// split of a task depends only on its id, the seed and the set of tasks, never on the platform.
///
/// # Errors
/// [`EvalError::InvalidConfig`] (field `held_out_fraction`) unless it lies in `[0, 1]`.
pub fn split_train_held_out(
    tasks: Vec<Task>,
    held_out_fraction: f64,
    seed: u64,
) -> Result<(Vec<Task>, Vec<Task>)> {
    if !(0.0..=1.0).contains(&held_out_fraction) {
        return Err(EvalError::InvalidConfig {
            field: "held_out_fraction".into(),
            reason: format!("{held_out_fraction} is not in [0, 1]"),
        });
    }
    let held_out_count = (tasks.len() as f64 * held_out_fraction).round() as usize;
    let mut order: Vec<(u64, usize)> = tasks
        .iter()
        .enumerate()
        .map(|(index, task)| (fnv1a(seed, &task.id), index))
        .collect();
    order.sort_unstable();
    let mut held = vec![false; tasks.len()];
    for (_, index) in order.into_iter().take(held_out_count) {
        held[index] = true;
    }
    let (held_out, train): (Vec<_>, Vec<_>) = tasks
        .into_iter()
        .zip(held)
        .partition(|(_, is_held)| *is_held);
    Ok((
        train.into_iter().map(|(task, _)| task).collect(),
        held_out.into_iter().map(|(task, _)| task).collect(),
    ))
}

/// 64-bit FNV-1a over the seed's bytes then the id's, finished with splitmix64's mixer (FNV
/// alone leaves the high bits correlated with the last bytes): stable across platforms.
fn fnv1a(seed: u64, id: &str) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in seed.to_le_bytes().iter().chain(id.as_bytes()) {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash = (hash ^ (hash >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    hash = (hash ^ (hash >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    hash ^ (hash >> 31)
}

fn record_error(entry: &BfclEntry, reason: String) -> EvalError {
    EvalError::Record {
        path: format!("possible_answer of {}", entry.category).into(),
        line: 0,
        reason: format!("entry {}: {reason}", entry.id),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(id: &str) -> Task {
        Task {
            id: id.into(),
            ..Task::default()
        }
    }

    #[test]
    fn split_is_deterministic_exact_and_order_preserving() {
        let tasks: Vec<Task> = (0..50).map(|i| task(&format!("t{i}"))).collect();
        let (train, held) = split_train_held_out(tasks.clone(), 0.2, 7).expect("split");
        assert_eq!((train.len(), held.len()), (40, 10));
        let (train_again, held_again) = split_train_held_out(tasks.clone(), 0.2, 7).expect("split");
        assert_eq!(train, train_again);
        assert_eq!(held, held_again);
        let index = |t: &Task| tasks.iter().position(|x| x.id == t.id);
        assert!(held.windows(2).all(|w| index(&w[0]) < index(&w[1])));
        let (_, other) = split_train_held_out(tasks.clone(), 0.2, 8).expect("split");
        assert_ne!(held, other, "the seed changes the split");
        let many: Vec<Task> = (0..1000).map(|i| task(&format!("t{i}"))).collect();
        let (_, held) = split_train_held_out(many, 0.2, 7).expect("split");
        let short = held.iter().filter(|t| t.id.len() <= 3).count();
        assert!(
            (5..=35).contains(&short),
            "{short} of 100 short ids held out, ~20 expected"
        );
        assert!(split_train_held_out(tasks, 1.5, 0).is_err());
    }

    #[test]
    fn reference_calls_take_first_non_omitted_alternative() {
        let call = ExpectedCall::from_bfcl(&json!({"f": {"a": ["", 3], "b": [""],
            "c": [{"k": ["x", "y"], "o": [""]}]}}))
        .expect("valid");
        let calls = reference_calls(&[call]);
        assert_eq!(calls[0].arguments, json!({"a": 3, "c": {"k": "x"}}));
    }
}
