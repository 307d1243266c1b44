//! One τ-bench episode as the runner drives it: an agent turn at a time, with the counts of
//! every tool call the model emitted — executed, dropped by the per-turn limit, or malformed.

use agent_rl_core::{Action, Environment, Message, ParsedOutput, ToolSpec};
use serde::{Deserialize, Serialize};

use super::env::{EpisodeStats, TauEnvironment};
use super::schema::{CallFault, call_fault};

/// The tool calls of one episode. Every call the model emitted is *attempted* (well-formed or
/// malformed); it is then either *executed* (sent to the environment) or *dropped* (beyond the
/// per-turn limit, after the episode ended within the turn, or malformed, which cannot run), so
/// `attempted = executed + dropped`. Unknown-tool, schema-invalid and malformed calls are counted
/// over the attempted calls: executed ones as the environment classified them, dropped ones
/// against the offered tools' names and schemas.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCallCounts {
    /// Calls the model emitted, well-formed or malformed.
    pub attempted_tool_calls: usize,
    /// Calls sent to the environment.
    pub executed_tool_calls: usize,
    /// Attempted calls not executed (`attempted − executed`).
    pub dropped_tool_calls: usize,
    /// Attempted calls to tools that do not exist.
    pub unknown_tool_calls: usize,
    /// Attempted calls whose arguments fail the tool's schema.
    pub invalid_argument_calls: usize,
    /// Call attempts that did not parse.
    pub malformed_calls: usize,
}

impl ToolCallCounts {
    /// Hallucinated calls: unknown tool, schema-invalid arguments, or malformed.
    pub fn hallucinated(&self) -> usize {
        self.unknown_tool_calls + self.invalid_argument_calls + self.malformed_calls
    }
}

/// One finished episode.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EpisodeResult {
    /// Index of the task in the split.
    pub task_id: usize,
    /// Trial number (0-based).
    pub trial: usize,
    /// Reward (0 when the episode hit the step limit or failed).
    pub reward: f32,
    /// Agent turns taken.
    pub steps: usize,
    /// Every tool call the model emitted (flattened into the episode's JSON).
    #[serde(flatten)]
    pub calls: ToolCallCounts,
    /// Counters from the environment (executed calls only).
    pub stats: EpisodeStats,
    /// The conversation (system, user, assistant, tool messages).
    pub messages: Vec<Message>,
    /// Why the episode failed, if it did (the original records reward 0).
    pub error: Option<String>,
}

/// An episode in progress.
pub(super) struct Running {
    pub task_id: usize,
    pub trial: usize,
    pub env: TauEnvironment,
    pub messages: Vec<Message>,
    pub steps: usize,
    /// Attempted, malformed, and the dropped well-formed calls' faults; the executed calls'
    /// counts come from the environment when the episode finishes.
    pub emitted: ToolCallCounts,
    pub reward: Option<f32>,
    pub error: Option<String>,
}

impl Running {
    /// A new episode whose environment has been reset (or failed to: `error`).
    pub fn new(
        (task_id, trial): (usize, usize),
        env: TauEnvironment,
        messages: Vec<Message>,
        error: Option<String>,
    ) -> Self {
        Self {
            task_id,
            trial,
            env,
            messages,
            steps: 0,
            emitted: ToolCallCounts::default(),
            reward: error.as_ref().map(|_| 0.0),
            error,
        }
    }

    pub fn finished(self) -> EpisodeResult {
        let stats = self.env.stats().clone();
        let calls = ToolCallCounts {
            executed_tool_calls: stats.tool_calls,
            dropped_tool_calls: self
                .emitted
                .attempted_tool_calls
                .saturating_sub(stats.tool_calls),
            unknown_tool_calls: self.emitted.unknown_tool_calls + stats.unknown_tool_calls,
            invalid_argument_calls: self.emitted.invalid_argument_calls
                + stats.invalid_argument_calls,
            ..self.emitted
        };
        EpisodeResult {
            task_id: self.task_id,
            trial: self.trial,
            reward: self.reward.unwrap_or(0.0),
            steps: self.steps,
            calls,
            stats,
            messages: self.messages,
            error: self.error,
        }
    }

    /// One agent turn: the first `limit` well-formed calls are executed in order until the
    /// episode ends (the rest are dropped), or, without a well-formed call, the text is the
    /// reply to the customer.
    pub fn advance(&mut self, parsed: &ParsedOutput, tools: &[ToolSpec], limit: usize) {
        self.steps += 1;
        self.emitted.attempted_tool_calls += parsed.attempted_calls();
        self.emitted.malformed_calls += parsed.malformed.len();
        if parsed.tool_calls.is_empty() {
            self.messages
                .push(Message::assistant(parsed.content.clone()));
            self.act(&Action::Respond(parsed.content.clone()));
            return;
        }
        let executable = &parsed.tool_calls[..limit.min(parsed.tool_calls.len())];
        let content = Some(parsed.content.clone()).filter(|text| !text.is_empty());
        self.messages
            .push(Message::assistant_tool_calls(content, executable.to_vec()));
        for (index, call) in parsed.tool_calls.iter().enumerate() {
            if index < executable.len() && self.reward.is_none() {
                self.act(&Action::ToolCall(call.clone()));
                continue;
            }
            match call_fault(tools, call) {
                Some(CallFault::UnknownTool) => self.emitted.unknown_tool_calls += 1,
                Some(CallFault::InvalidArguments(_)) => self.emitted.invalid_argument_calls += 1,
                None => {}
            }
        }
    }

    fn act(&mut self, action: &Action) {
        match self.env.step(action) {
            Ok(outcome) => {
                self.messages.push(outcome.observation);
                if outcome.done {
                    self.reward = Some(outcome.reward.unwrap_or(0.0));
                }
            }
            Err(error) => {
                self.error = Some(error.to_string());
                self.reward = Some(0.0);
            }
        }
    }
}
