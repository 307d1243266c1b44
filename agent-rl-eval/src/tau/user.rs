//! Simulated customers: a trait, a scripted one for tests, and one backed by any chat
//! [`Policy`] with the original's prompt (loaded from the data directory, never embedded).

use std::path::Path;

use agent_rl_core::{ChatRequest, CoreError, Message, Policy, SamplingConfig};

use crate::{EvalError, Result};

/// The token with which the simulated user ends the conversation.
pub const STOP_TOKEN: &str = "###STOP###";

/// The fixed first turn the simulator sees from the agent (the original's convention).
pub const OPENING_LINE: &str = "Hi! How can I help you today?";

/// A simulated customer.
pub trait UserSimulator: Send {
    /// Starts a conversation for `instruction` and returns the customer's first message.
    ///
    /// # Errors
    /// Failures of the backing model.
    fn reset(&mut self, instruction: &str) -> Result<String, CoreError>;

    /// The customer's reply to the agent's message (contains [`STOP_TOKEN`] when done).
    ///
    /// # Errors
    /// Failures of the backing model.
    fn step(&mut self, agent_message: &str) -> Result<String, CoreError>;
}

/// Replays canned customer turns; once they run out it answers [`STOP_TOKEN`].
#[derive(Debug, Clone, Default)]
pub struct ScriptedUser {
    turns: Vec<String>,
    next: usize,
    /// Messages the agent sent, in order (for assertions).
    pub heard: Vec<String>,
}

impl ScriptedUser {
    /// A user that says `turns` in order (the first one is the opening message).
    pub fn new(turns: impl IntoIterator<Item = impl Into<String>>) -> Self {
        Self {
            turns: turns.into_iter().map(Into::into).collect(),
            next: 0,
            heard: Vec::new(),
        }
    }

    fn next_turn(&mut self) -> String {
        let turn = self
            .turns
            .get(self.next)
            .cloned()
            .unwrap_or_else(|| STOP_TOKEN.to_owned());
        self.next += 1;
        turn
    }
}

impl UserSimulator for ScriptedUser {
    fn reset(&mut self, _instruction: &str) -> Result<String, CoreError> {
        self.next = 0;
        self.heard.clear();
        Ok(self.next_turn())
    }

    fn step(&mut self, agent_message: &str) -> Result<String, CoreError> {
        self.heard.push(agent_message.to_owned());
        Ok(self.next_turn())
    }
}

/// Reads `user_simulator_prompt.txt` (with its `{instruction}` placeholder).
///
/// # Errors
/// [`EvalError::Io`] naming the file; [`EvalError::Layout`] when the placeholder is missing.
pub fn load_user_prompt(path: &Path) -> Result<String> {
    let text = std::fs::read_to_string(path).map_err(|source| EvalError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    if !text.contains("{instruction}") {
        return Err(EvalError::Layout {
            path: path.to_path_buf(),
            reason: "the user simulator prompt has no `{instruction}` placeholder".into(),
        });
    }
    Ok(text)
}

/// The simulator's system prompt for `instruction`; with no instruction, the "Instruction"
/// paragraph is left out as in the original.
pub fn render_user_prompt(template: &str, instruction: &str) -> String {
    const PARAGRAPH: &str = "\n\nInstruction: {instruction}\n";
    if instruction.is_empty() && template.contains(PARAGRAPH) {
        template.replace(PARAGRAPH, "\n")
    } else if instruction.is_empty() {
        template
            .lines()
            .filter(|line| !line.contains("{instruction}"))
            .collect::<Vec<_>>()
            .join("\n")
    } else {
        template.replace("{instruction}", instruction)
    }
}

/// A customer simulated by a chat model (the original's `llm` strategy). From the model's point
/// of view the agent is the "user" and the customer the "assistant".
pub struct LlmUser<P> {
    policy: P,
    template: String,
    sampling: SamplingConfig,
    history: Vec<Message>,
}

impl<P: Policy + Send> LlmUser<P> {
    /// A simulator using `policy` with the prompt `template` (see [`load_user_prompt`]).
    pub fn new(policy: P, template: impl Into<String>, sampling: SamplingConfig) -> Self {
        Self {
            policy,
            template: template.into(),
            sampling,
            history: Vec::new(),
        }
    }

    fn reply(&mut self) -> Result<String, CoreError> {
        let request = ChatRequest {
            messages: self.history.clone(),
            tools: Vec::new(),
        };
        let completion = self
            .policy
            .generate(&[request], &self.sampling)?
            .into_iter()
            .next();
        let text = completion
            .map(|completion| completion.text.trim().to_owned())
            .ok_or_else(|| CoreError::Environment {
                environment: "tau user".into(),
                reason: "no completion".into(),
            })?;
        self.history.push(Message::assistant(text.clone()));
        Ok(text)
    }
}

impl<P: Policy + Send> UserSimulator for LlmUser<P> {
    fn reset(&mut self, instruction: &str) -> Result<String, CoreError> {
        self.history = vec![
            Message::system(render_user_prompt(&self.template, instruction)),
            Message::user(OPENING_LINE),
        ];
        self.reply()
    }

    fn step(&mut self, agent_message: &str) -> Result<String, CoreError> {
        self.history.push(Message::user(agent_message));
        self.reply()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scripted_user_stops_after_its_turns() {
        let mut user = ScriptedUser::new(["hello", "thanks"]);
        assert_eq!(user.reset("x").ok().as_deref(), Some("hello"));
        assert_eq!(user.step("hi").ok().as_deref(), Some("thanks"));
        assert_eq!(user.step("bye").ok().as_deref(), Some(STOP_TOKEN));
    }

    #[test]
    fn prompt_drops_instruction_line_when_empty() {
        let template = "A\n\nInstruction: {instruction}\nRules:";
        assert_eq!(
            render_user_prompt(template, "be kind"),
            "A\n\nInstruction: be kind\nRules:"
        );
        assert_eq!(render_user_prompt(template, ""), "A\nRules:");
    }
}
