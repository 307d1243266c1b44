//! Shared pieces of the GRPO tests: tasks, toy rewards, parameter snapshots.

use agent_rl_core::{Message, Task};
use agent_rl_rewards::{FnReward, Reward, Sample};
use burn::module::{Module, ModuleVisitor, Param};
use burn::tensor::Tensor;
use burn::tensor::backend::Backend;

/// `count` single-turn tasks with short, distinct user prompts.
pub fn prompts(count: usize) -> Vec<Task> {
    (0..count)
        .map(|i| Task {
            id: format!("task-{i}"),
            messages: vec![Message::user(format!("count {i}"))],
            ..Task::default()
        })
        .collect()
}

/// Share of the first turn's generated tokens that are ASCII digits (the byte-level tokenizer
/// splits numbers into one token per digit), in [0, 1].
pub fn digit_share() -> impl Reward {
    FnReward::new("digits", |sample: Sample<'_>| {
        Some(sample.trajectory.turns.first().map_or(0.0, |turn| {
            let digits = turn.text.chars().filter(char::is_ascii_digit).count();
            (digits as f32 / turn.num_tokens.max(1) as f32).min(1.0)
        }))
    })
}

/// Characters per generated token: always varies between completions, so every group carries
/// signal (for the smoke tests).
pub fn chars_per_token() -> impl Reward {
    FnReward::new("chars_per_token", |sample: Sample<'_>| {
        let tokens = sample.trajectory.completion_tokens().max(1);
        let chars: usize = sample
            .trajectory
            .turns
            .iter()
            .map(|turn| turn.text.chars().count())
            .sum();
        Some(chars as f32 / tokens as f32)
    })
}

struct Snapshot(Vec<Vec<f32>>);

impl<B: Backend> ModuleVisitor<B> for Snapshot {
    fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<B, D>>) {
        self.0.push(param.val().into_data().iter::<f32>().collect());
    }
}

/// Every float parameter of `module`, in module order, on the host.
pub fn parameters<B: Backend, M: Module<B>>(module: &M) -> Vec<Vec<f32>> {
    let mut snapshot = Snapshot(Vec::new());
    module.visit(&mut snapshot);
    snapshot.0
}
