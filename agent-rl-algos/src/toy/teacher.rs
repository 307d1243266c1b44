//! A teacher whose demonstrations are partly wrong: where imitation plateaus and a reward on
//! the task's target does not.

use agent_rl_core::{Message, Task, ToolCall};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::preferences::REFUSALS;
use super::tasks::{ToyKind, demonstration_with, toy_call};
use crate::sft::{SftDataset, SftExample};

/// SFT rows for `tasks` from a teacher that mixes up the two city tools: on a `confusion`
/// share of the weather and time requests (drawn with `seed`) it calls the other tool
/// (`get_time` for weather, `get_weather` for time) with the right city and answers with that
/// tool's result; `add` requests are demonstrated correctly. Tasks not made by the toy family
/// are skipped.
///
/// With `confusion` above one half, the mix-up is what the demonstrations mostly show: a model
/// that imitates them calls the wrong tool for city requests under greedy decoding, and more
/// SFT on the same rows only confirms it. A reward that checks the task's target (as GRPO's
/// `ToolUseReward` does) pays for the right tool, which sampling still finds often enough —
/// the setting in which the learning tests and the `grpo_qwen` demo show GRPO's own gain.
///
/// ```
/// use agent_rl_algos::toy::{toy_noisy_sft_dataset, toy_tasks};
/// let rows = toy_noisy_sft_dataset(&toy_tasks(30, 1), 0.6, 7);
/// assert_eq!(rows.len(), 30);
/// ```
pub fn toy_noisy_sft_dataset(tasks: &[Task], confusion: f32, seed: u64) -> SftDataset {
    teacher_rows(tasks, [confusion, confusion], seed)
}

/// SFT rows for `tasks` from a teacher with one systematic blind spot: on a `confusion` share
/// of the *weather* requests (drawn with `seed`) it calls `get_time` with the right city and
/// answers with its result; time and `add` requests are demonstrated correctly. Tasks not made
/// by the toy family are skipped.
///
/// Unlike [`toy_noisy_sft_dataset`], whose symmetric swap a small model can read as "city
/// request: either tool", the error here is one-sided: `get_time` is what the demonstrations
/// show for most city requests, always for time and mostly for weather. With `confusion`
/// above one half, imitation's greedy reply to a weather request is the wrong tool however
/// long it trains; sampling still finds `get_weather` on about `1 - confusion` of them, and a
/// reward on the target (GRPO's `ToolUseReward`) pays for it. The setting of `grpo_gain` and
/// of the multi-seed GRPO-over-SFT learning test.
///
/// ```
/// use agent_rl_algos::toy::{toy_biased_sft_dataset, toy_tasks};
/// let rows = toy_biased_sft_dataset(&toy_tasks(30, 1), 0.7, 7);
/// assert_eq!(rows.len(), 30);
/// ```
pub fn toy_biased_sft_dataset(tasks: &[Task], confusion: f32, seed: u64) -> SftDataset {
    teacher_rows(tasks, [confusion, 0.0], seed)
}

/// SFT rows for `tasks` from a reluctant teacher: on a `refusal` share of the requests of the
/// `kinds` given (drawn with `seed`) it declines, always with the same line (one of the
/// refusals [`toy_preferences`](super::toy_preferences) ranks below any call); every other
/// request it demonstrates rightly (call, result, answer). Tasks not made by the toy family are
/// skipped.
///
/// With `refusal` above one half, a model that imitates these rows refuses requests of those
/// kinds under greedy decoding, however long it trains, although it has learned the calls
/// from the other rows: the over-cautious agent that preferences such as "a call beats a
/// refusal" are collected to fix. The setting of the RLHF learning test, whose reward model
/// judges calls against refusals reliably on requests it never saw.
///
/// ```
/// use agent_rl_algos::toy::{ToyKind, toy_reluctant_sft_dataset, toy_tasks};
/// let rows = toy_reluctant_sft_dataset(&toy_tasks(30, 1), &[ToyKind::Weather], 0.7, 7);
/// assert_eq!(rows.len(), 30);
/// ```
pub fn toy_reluctant_sft_dataset(
    tasks: &[Task],
    kinds: &[ToyKind],
    refusal: f32,
    seed: u64,
) -> SftDataset {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let rows = tasks
        .iter()
        .filter_map(|task| {
            let call = toy_call(task)?;
            let reluctant = ToyKind::of_tool(&call.name).is_some_and(|kind| kinds.contains(&kind));
            let messages = if reluctant && rng.random::<f32>() < refusal {
                let mut messages = task.messages.clone();
                messages.push(Message::assistant(REFUSALS[0]));
                messages
            } else {
                demonstration_with(task, call)?
            };
            Some(SftExample::Conversation {
                messages,
                tools: task.tools.clone(),
            })
        })
        .collect();
    SftDataset::from_examples(rows)
}

/// Demonstrations of `tasks` with the weather tool swapped for the time tool on a
/// `confusion[0]` share of weather requests and the time tool for the weather tool on a
/// `confusion[1]` share of time requests (one draw per task, with `seed`).
fn teacher_rows(tasks: &[Task], confusion: [f32; 2], seed: u64) -> SftDataset {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let rows = tasks
        .iter()
        .filter_map(|task| {
            let call = toy_call(task)?;
            let draw = rng.random::<f32>();
            let call = match call.name.as_str() {
                "get_weather" if draw < confusion[0] => ToolCall::new("get_time", call.arguments),
                "get_time" if draw < confusion[1] => ToolCall::new("get_weather", call.arguments),
                _ => call,
            };
            Some(SftExample::Conversation {
                messages: demonstration_with(task, call)?,
                tools: task.tools.clone(),
            })
        })
        .collect();
    SftDataset::from_examples(rows)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::toy::{demonstration, toy_sft_dataset, toy_tasks};

    /// The called tool of every row, with the requested kind.
    fn calls(confusion: f32) -> Vec<(String, String)> {
        called(toy_noisy_sft_dataset(&toy_tasks(600, 2), confusion, 3))
    }

    /// (requested tool, demonstrated tool) of every row of `rows` (made from `toy_tasks(600, 2)`).
    fn called(rows: SftDataset) -> Vec<(String, String)> {
        let tasks = toy_tasks(600, 2);
        tasks
            .iter()
            .zip(rows.examples())
            .map(|(task, row)| {
                let SftExample::Conversation { messages, .. } = row else {
                    return (String::new(), String::new());
                };
                let called = messages[1].tool_calls[0].name.clone();
                (toy_call(task).map(|c| c.name).unwrap_or_default(), called)
            })
            .collect()
    }

    #[test]
    fn confuses_city_tools_at_the_set_rate_and_never_add() {
        let pairs = calls(0.6);
        let city: Vec<_> = pairs.iter().filter(|(want, _)| want != "add").collect();
        let swapped = city.iter().filter(|(want, got)| want != got).count();
        let rate = swapped as f32 / city.len() as f32;
        assert!((rate - 0.6).abs() < 0.06, "swap rate {rate}");
        assert!(
            pairs
                .iter()
                .filter(|(w, _)| w == "add")
                .all(|(w, g)| w == g)
        );
        assert!(calls(0.0).iter().all(|(w, g)| w == g));
    }

    #[test]
    fn reluctant_teacher_refuses_its_kinds_at_the_set_rate_and_demonstrates_the_rest() {
        let tasks = toy_tasks(600, 2);
        let rows = toy_reluctant_sft_dataset(&tasks, &[ToyKind::Weather], 0.6, 3);
        assert_eq!(rows.len(), tasks.len());
        let (mut weather, mut refused) = (0, 0);
        for (task, row) in tasks.iter().zip(rows.examples()) {
            let SftExample::Conversation { messages, .. } = row else {
                panic!("conversational rows");
            };
            let is_weather = toy_call(task).is_some_and(|c| c.name == "get_weather");
            weather += usize::from(is_weather);
            if messages.len() == task.messages.len() + 1 {
                // A refusal: the request, then the one refusal line, no call.
                assert!(is_weather, "only weather requests are declined");
                let reply = messages.last().expect("reply");
                assert_eq!(reply.text(), REFUSALS[0]);
                assert!(reply.tool_calls.is_empty());
                refused += 1;
            } else {
                assert_eq!(Some(messages.clone()), demonstration(task));
            }
        }
        let rate = refused as f32 / weather as f32;
        assert!((rate - 0.6).abs() < 0.08, "refusal rate {rate}");
        let none = toy_reluctant_sft_dataset(&tasks, &[ToyKind::Weather], 0.0, 3);
        assert_eq!(none, toy_sft_dataset(&tasks));
        let every = toy_reluctant_sft_dataset(
            &tasks,
            &[ToyKind::Weather, ToyKind::Time, ToyKind::Add],
            1.0,
            3,
        );
        assert!(every.examples().iter().all(|row| matches!(
            row,
            SftExample::Conversation { messages, .. } if messages.last().is_some_and(|m| m.text() == REFUSALS[0])
        )));
    }

    #[test]
    fn biased_teacher_swaps_only_weather() {
        let pairs = called(toy_biased_sft_dataset(&toy_tasks(600, 2), 0.7, 3));
        let weather: Vec<_> = pairs
            .iter()
            .filter(|(want, _)| want == "get_weather")
            .collect();
        let swapped = weather.iter().filter(|(_, got)| got == "get_time").count();
        let rate = swapped as f32 / weather.len() as f32;
        assert!((rate - 0.7).abs() < 0.07, "swap rate {rate}");
        assert!(
            pairs
                .iter()
                .filter(|(want, _)| want != "get_weather")
                .all(|(want, got)| want == got)
        );
    }
}
