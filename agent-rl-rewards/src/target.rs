//! What a task expects: calls, a final answer, and/or an outcome verifier.

use std::fmt;
use std::sync::Arc;

use agent_rl_core::{Task, ToolSpec};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::answer::ExpectedAnswer;
use crate::error::{Result, RewardError};
use crate::matching::ExpectedCall;
use crate::verifier::OutcomeVerifier;

/// The target of a task: what a successful episode does or ends with.
///
/// Every part is optional; rewards whose part is absent return `None` (not applicable).
/// Serialises as `{"expected_calls": [...], "expected_answer": {...}}`; the verifier, a trait
/// object, is attached in code with [`Target::with_verifier`].
///
/// ```
/// use agent_rl_rewards::{ExpectedAnswer, Target};
/// use agent_rl_rewards::matching::ExpectedCall;
/// use serde_json::json;
/// let target: Target = serde_json::from_value(json!({
///     "expected_calls": [{"name": "get_weather", "arguments": {"city": ["Paris"], "unit": ["c", ""]}}],
///     "expected_answer": {"acceptable": ["18 degrees"]}
/// }))?;
/// assert_eq!(target.expected_calls.as_ref().map(Vec::len), Some(1));
/// assert!(target.expected_answer.as_ref().is_some_and(|answer| answer.accepts("18 Degrees.")));
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Clone, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Target {
    /// The calls a good episode makes, in any order. `None` = not known (no call reward);
    /// `Some(vec![])` = the task needs no call at all (every call is extra).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expected_calls: Option<Vec<ExpectedCall>>,
    /// The final answer a good episode gives.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expected_answer: Option<ExpectedAnswer>,
    /// The task needs some call to an offered tool, whichever it is and whatever its arguments
    /// (BFCL's relevance categories). Used when `expected_calls` is `None`: a good episode makes
    /// at least one well-formed call. Default `false`.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub expects_any_call: bool,
    /// A user-supplied check of the final state (e.g. "the database ends as expected").
    #[serde(skip)]
    pub verifier: Option<Arc<dyn OutcomeVerifier>>,
}

impl fmt::Debug for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Target")
            .field("expected_calls", &self.expected_calls)
            .field("expected_answer", &self.expected_answer)
            .field("expects_any_call", &self.expects_any_call)
            .field(
                "verifier",
                &self
                    .verifier
                    .as_ref()
                    .map(|verifier| verifier.name().to_owned()),
            )
            .finish()
    }
}

impl Target {
    /// A target with nothing expected.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the expected calls.
    #[must_use]
    pub fn with_expected_calls(mut self, calls: impl IntoIterator<Item = ExpectedCall>) -> Self {
        self.expected_calls = Some(calls.into_iter().collect());
        self
    }

    /// Adds one expected call.
    #[must_use]
    pub fn add_expected_call(mut self, call: ExpectedCall) -> Self {
        self.expected_calls.get_or_insert_with(Vec::new).push(call);
        self
    }

    /// Expects some call to an offered tool, not a particular one (see
    /// [`Target::expects_any_call`]).
    #[must_use]
    pub fn with_any_call(mut self) -> Self {
        self.expects_any_call = true;
        self
    }

    /// True when the target judges calls: it lists them, or expects some call.
    pub fn judges_calls(&self) -> bool {
        self.expected_calls.is_some() || self.expects_any_call
    }

    /// Sets the expected final answer.
    #[must_use]
    pub fn with_expected_answer(mut self, answer: ExpectedAnswer) -> Self {
        self.expected_answer = Some(answer);
        self
    }

    /// Sets the outcome verifier.
    #[must_use]
    pub fn with_verifier(mut self, verifier: impl OutcomeVerifier + 'static) -> Self {
        self.verifier = Some(Arc::new(verifier));
        self
    }

    /// Reads the target from a task's data: `task.data["target"]` in the JSON form above;
    /// absent or `null` gives an empty target.
    ///
    /// # Errors
    /// [`RewardError::InvalidTarget`] naming the task when the JSON has the wrong shape.
    pub fn from_task(task: &Task) -> Result<Self> {
        match task.data.get("target") {
            None | Some(Value::Null) => Ok(Self::default()),
            Some(value) => {
                serde_json::from_value(value.clone()).map_err(|err| RewardError::InvalidTarget {
                    reason: format!("task `{}`: {err}", task.id),
                })
            }
        }
    }

    /// True when the target checks how the episode ends (an answer or a verifier).
    pub fn checks_final_state(&self) -> bool {
        self.expected_answer.is_some() || self.verifier.is_some()
    }

    /// Checks that every expected call names one of `tools`.
    ///
    /// # Errors
    /// [`RewardError::UnknownTool`] for the first expected call whose tool is not offered.
    pub fn check_tools(&self, task_id: &str, tools: &[ToolSpec]) -> Result<()> {
        for call in self.expected_calls.iter().flatten() {
            if !tools.iter().any(|tool| tool.name() == call.name) {
                return Err(RewardError::UnknownTool {
                    task_id: task_id.to_owned(),
                    tool: call.name.clone(),
                    offered: tools.iter().map(|tool| tool.name().to_owned()).collect(),
                });
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn from_task_reads_data_target_and_names_the_task_on_error() {
        let mut task = Task {
            id: "t1".into(),
            ..Task::default()
        };
        assert!(
            Target::from_task(&task)
                .expect("empty")
                .expected_calls
                .is_none()
        );
        task.data = json!({"target": {"expected_calls": []}});
        assert_eq!(
            Target::from_task(&task)
                .expect("valid")
                .expected_calls
                .map(|c| c.len()),
            Some(0)
        );
        task.data = json!({"target": {"expected_cals": []}});
        let err = Target::from_task(&task).expect_err("typo");
        assert!(err.to_string().contains("`t1`"), "{err}");
    }

    #[test]
    fn unknown_tool_is_an_error_listing_the_offered_tools() {
        let target = Target::new().add_expected_call(ExpectedCall::new("missing"));
        let tools = [ToolSpec::new("present", "", json!({"type": "object"}))];
        let err = target.check_tools("t", &tools).expect_err("unknown");
        assert!(matches!(&err, RewardError::UnknownTool { tool, .. } if tool == "missing"));
        assert!(err.to_string().contains("present"), "{err}");
    }
}
