//! Where a model's toy calls go wrong: the tool it picks and the arguments it copies, counted
//! apart for weather, time and `add` requests.

use agent_rl_core::{
    AgentLoop, AgentLoopConfig, ChatTokenizer, HermesToolCallParser, Qwen2ForCausalLm,
    SamplingConfig, Task,
};
use burn::tensor::backend::Backend;
use serde::{Deserialize, Serialize};

use super::tasks::{ToyKind, toy_call};
use crate::error::Result;

/// Counts of one class of requests: how many there were, how many first calls named the right
/// tool, carried the right arguments (whatever the tool), and both.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct CallCounts {
    /// Requests of the class.
    pub requests: usize,
    /// First call names the expected tool.
    pub right_tool: usize,
    /// First call's arguments equal the expected ones.
    pub right_arguments: usize,
    /// Both: the first call is the expected call.
    pub exact: usize,
}

impl CallCounts {
    /// `count` as a share of the requests (0 when there are none).
    pub fn share(&self, count: usize) -> f32 {
        if self.requests == 0 {
            0.0
        } else {
            count as f32 / self.requests as f32
        }
    }

    fn add(&mut self, right_tool: bool, right_arguments: bool) {
        self.requests += 1;
        self.right_tool += usize::from(right_tool);
        self.right_arguments += usize::from(right_arguments);
        self.exact += usize::from(right_tool && right_arguments);
    }
}

/// The first calls of a model on toy requests, counted by class (see [`toy_call_breakdown`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ToyCallBreakdown {
    /// Weather requests: the tool is the decision (`get_weather`, not `get_time`), the argument
    /// a known city.
    pub weather: CallCounts,
    /// Time requests.
    pub time: CallCounts,
    /// `add` requests: the tool is obvious, the operands must be copied.
    pub add: CallCounts,
}

impl ToyCallBreakdown {
    /// Exact first calls over every request.
    pub fn exact_rate(&self) -> f32 {
        let all = [self.weather, self.time, self.add];
        let requests: usize = all.iter().map(|c| c.requests).sum();
        let exact: usize = all.iter().map(|c| c.exact).sum();
        if requests == 0 {
            0.0
        } else {
            exact as f32 / requests as f32
        }
    }
}

/// Greedy single-turn episodes of `model` on the toy `tasks` (completions of at most
/// `max_new_tokens`), each first call compared with the task's expected call: the tool and the
/// arguments apart, weather, time and `add` requests apart. A reply without a call counts as neither;
/// tasks not made by the toy family are skipped.
///
/// # Errors
/// Rollout failures.
pub fn toy_call_breakdown<B: Backend>(
    model: &Qwen2ForCausalLm<B>,
    tokenizer: &ChatTokenizer,
    tasks: &[Task],
    max_new_tokens: usize,
) -> Result<ToyCallBreakdown> {
    let config = AgentLoopConfig {
        sampling: SamplingConfig::greedy(max_new_tokens),
        max_tool_iterations: 1,
        ..AgentLoopConfig::default()
    };
    let parser = HermesToolCallParser::default();
    let episodes = AgentLoop::new(model, tokenizer, &parser, config).run(tasks, 1, None)?;
    let mut breakdown = ToyCallBreakdown::default();
    for episode in &episodes {
        let Some(expected) = toy_call(&tasks[episode.task_index]) else {
            continue;
        };
        let made = episode.trajectory.tool_calls().next();
        let right_tool = made.is_some_and(|call| call.name == expected.name);
        let right_arguments = made.is_some_and(|call| call.arguments == expected.arguments);
        let counts = match ToyKind::of_tool(&expected.name) {
            Some(ToyKind::Add) => &mut breakdown.add,
            Some(ToyKind::Time) => &mut breakdown.time,
            _ => &mut breakdown.weather,
        };
        counts.add(right_tool, right_arguments);
    }
    Ok(breakdown)
}
