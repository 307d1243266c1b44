//! A finished episode as trainers and rewards see it.

use serde::{Deserialize, Serialize};

use crate::conversation::{Message, ToolSpec};
use crate::generation::FinishReason;
use crate::tool_calls::ParsedOutput;

/// One assistant turn: the raw generated text, its parse, and how generation ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AssistantTurn {
    /// Text exactly as generated (special tokens removed).
    pub text: String,
    /// The text split into content, tool calls and malformed fragments.
    pub parsed: ParsedOutput,
    /// Why generation of this turn stopped.
    pub finish_reason: FinishReason,
    /// Number of tokens the model generated in this turn.
    pub num_tokens: usize,
    /// Tool results (role `tool`) or user replies the environment returned after this turn.
    #[serde(default)]
    pub observations: Vec<Message>,
}

/// A complete episode: the task context, every assistant turn, and the final answer.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Trajectory {
    /// Id of the task this episode ran.
    pub task_id: String,
    /// Tools offered to the model.
    #[serde(default)]
    pub tools: Vec<ToolSpec>,
    /// The conversation the episode started from.
    #[serde(default)]
    pub prompt: Vec<Message>,
    /// Assistant turns in order, each with the observations that followed it.
    #[serde(default)]
    pub turns: Vec<AssistantTurn>,
    /// The generation budget per turn (`max_new_tokens`), for over-length penalties.
    #[serde(default)]
    pub max_new_tokens: usize,
    /// Reward reported by the environment at the end of the episode, if any.
    #[serde(default)]
    pub environment_reward: Option<f32>,
}

impl Trajectory {
    /// The content of the last assistant turn (the final answer), if there is a turn.
    pub fn final_answer(&self) -> Option<&str> {
        self.turns.last().map(|turn| turn.parsed.content.as_str())
    }

    /// All well-formed tool calls over the episode, in order.
    pub fn tool_calls(&self) -> impl Iterator<Item = &crate::conversation::ToolCall> {
        self.turns
            .iter()
            .flat_map(|turn| turn.parsed.tool_calls.iter())
    }

    /// Total tokens generated over all turns.
    pub fn completion_tokens(&self) -> usize {
        self.turns.iter().map(|turn| turn.num_tokens).sum()
    }
}
