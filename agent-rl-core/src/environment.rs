//! Environments an agent acts in: tasks, actions, observations.
//!
//! One [`Environment`] instance serves one episode at a time; an [`EnvironmentFactory`] makes a
//! fresh one per rollout so that episodes never share state (a τ-bench database, a workspace).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::conversation::{Message, ToolCall, ToolSpec};
use crate::error::CoreError;

/// A task: the opening conversation, the tools offered, and environment-specific data.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Task {
    /// Stable identifier (used for grouping, curricula and reports).
    pub id: String,
    /// The conversation the agent starts from (system prompt, first user turn, …).
    #[serde(default)]
    pub messages: Vec<Message>,
    /// Tools offered to the agent.
    #[serde(default)]
    pub tools: Vec<ToolSpec>,
    /// Environment- or reward-specific payload (expected calls, database targets, …).
    #[serde(default)]
    pub data: Value,
}

/// What the agent does in one step: talk, or call a tool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// A text reply to the user (or the final answer).
    Respond(String),
    /// One tool call.
    ToolCall(ToolCall),
}

/// The environment's answer to one action.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepOutcome {
    /// The message the agent sees next: a `tool` message for a call, a `user` message for a reply.
    pub observation: Message,
    /// True when the episode is over.
    pub done: bool,
    /// A reward the environment itself assigns (e.g. τ-bench's end-of-episode reward).
    #[serde(default)]
    pub reward: Option<f32>,
    /// Free-form diagnostics (error kinds, counters).
    #[serde(default)]
    pub info: Value,
}

/// An environment the agent acts in, one episode at a time.
pub trait Environment: Send {
    /// Starts an episode on `task` and returns the messages the agent sees first (usually the
    /// task's own messages, or a simulated user's opening turn).
    ///
    /// # Errors
    /// [`CoreError::Environment`] when the task cannot be set up (unknown id, bad data).
    fn reset(&mut self, task: &Task) -> Result<Vec<Message>, CoreError>;

    /// Applies one action and returns what the agent observes.
    ///
    /// A bad tool call from the model (unknown tool, bad arguments) is not an error: it is an
    /// observation telling the model what went wrong.
    ///
    /// # Errors
    /// [`CoreError::Environment`] only for failures of the environment itself.
    fn step(&mut self, action: &Action) -> Result<StepOutcome, CoreError>;

    /// Applies the actions of one assistant message in order and returns their outcomes, in
    /// order; the agent loop appends their observations to the conversation after the message.
    ///
    /// The default ([`step_each`]) steps each action, one outcome per action, and stops after
    /// the first outcome that ends the episode. An environment for which one message's calls
    /// form a unit (BFCL multi-turn counts steps, not calls) overrides it; an override also
    /// returns one outcome per action unless the message as a whole ends the episode or moves
    /// the conversation on (then a single outcome can answer it), and nothing follows an
    /// outcome that ends the episode. No actions, no outcomes.
    ///
    /// # Errors
    /// As [`Environment::step`].
    fn step_message(&mut self, actions: &[Action]) -> Result<Vec<StepOutcome>, CoreError> {
        step_each(self, actions)
    }
}

/// Steps `actions` one by one, stopping after the first outcome that ends the episode (the
/// default [`Environment::step_message`]; an override can fall back on it).
///
/// # Errors
/// As [`Environment::step`].
pub fn step_each<E: Environment + ?Sized>(
    environment: &mut E,
    actions: &[Action],
) -> Result<Vec<StepOutcome>, CoreError> {
    let mut outcomes = Vec::with_capacity(actions.len());
    for action in actions {
        let outcome = environment.step(action)?;
        let done = outcome.done;
        outcomes.push(outcome);
        if done {
            break;
        }
    }
    Ok(outcomes)
}

/// Makes a fresh [`Environment`] per episode.
pub trait EnvironmentFactory: Send + Sync {
    /// A new environment with no episode state.
    fn create(&self) -> Box<dyn Environment>;
}

impl<F> EnvironmentFactory for F
where
    F: Fn() -> Box<dyn Environment> + Send + Sync,
{
    fn create(&self) -> Box<dyn Environment> {
        self()
    }
}
