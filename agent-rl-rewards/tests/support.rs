//! Builders shared by the integration tests.

use agent_rl_core::tool_calls::MalformedToolCall;
use agent_rl_core::{AssistantTurn, FinishReason, ParsedOutput, ToolCall, ToolSpec, Trajectory};
use agent_rl_rewards::{Result, Reward, RewardValue, Sample};
use serde_json::{Value, json};

/// An object schema with the given `(name, type)` properties, all required.
pub fn tool(name: &str, properties: &[(&str, &str)]) -> ToolSpec {
    let props: serde_json::Map<String, Value> = properties
        .iter()
        .map(|(key, kind)| ((*key).to_owned(), json!({"type": kind})))
        .collect();
    let required: Vec<&str> = properties.iter().map(|(key, _)| *key).collect();
    ToolSpec::new(
        name,
        "test tool",
        json!({"type": "object", "properties": props, "required": required}),
    )
}

/// A turn with `content`, well-formed `calls` and `malformed` fragments, stopped normally.
pub fn turn(content: &str, calls: Vec<ToolCall>, malformed: usize) -> AssistantTurn {
    let mut text = content.to_owned();
    for call in &calls {
        text.push_str(&format!(
            "<tool_call>{}</tool_call>",
            json!({"name": call.name, "arguments": call.arguments})
        ));
    }
    let malformed: Vec<MalformedToolCall> = (0..malformed)
        .map(|_| MalformedToolCall {
            raw: "{oops".into(),
            reason: "invalid JSON".into(),
        })
        .collect();
    let num_tokens = text.len() / 4 + 1;
    AssistantTurn {
        text,
        parsed: ParsedOutput {
            content: content.to_owned(),
            tool_calls: calls,
            malformed,
        },
        finish_reason: FinishReason::Stop,
        num_tokens,
        observations: Vec::new(),
    }
}

/// A trajectory offering `tools` with `turns` and a 256-token budget.
pub fn trajectory(tools: Vec<ToolSpec>, turns: Vec<AssistantTurn>) -> Trajectory {
    Trajectory {
        task_id: "task".into(),
        tools,
        turns,
        max_new_tokens: 256,
        ..Trajectory::default()
    }
}

/// A reward returning fixed scores, looked up by the trajectory's `task_id` (an index).
pub struct TableReward {
    pub name: String,
    pub scores: Vec<Option<f32>>,
}

impl Reward for TableReward {
    fn name(&self) -> &str {
        &self.name
    }

    fn score_batch(&self, samples: &[Sample<'_>]) -> Result<Vec<RewardValue>> {
        Ok(samples
            .iter()
            .map(|sample| {
                let index: usize = sample
                    .trajectory
                    .task_id
                    .parse()
                    .expect("task ids are indices");
                RewardValue::leaf(&self.name, self.scores[index])
            })
            .collect())
    }
}

/// Trajectories whose task ids are `0..count`.
pub fn indexed_trajectories(count: usize) -> Vec<Trajectory> {
    (0..count)
        .map(|index| Trajectory {
            task_id: index.to_string(),
            ..Trajectory::default()
        })
        .collect()
}
