//! [`ArgumentMatch`]: the calls match the target's expected calls.

use agent_rl_core::ToolCall;

use crate::error::Result;
use crate::matching::{MatchOptions, match_calls};
use crate::reward::{Reward, RewardValue, Sample, score_each};

/// Rewards calling the expected functions with acceptable arguments, using the
/// [matching engine](crate::matching) (the same semantics as the BFCL evaluator): acceptable
/// value lists, `""` = may be omitted, int→float leniency, optional string normalisation,
/// order-insensitive optimal assignment of parallel calls, optional partial credit.
///
/// The score is [`CallsMatch::score`](crate::matching::CallsMatch::score): the matched credit over
/// `max(expected, actual)` calls, so both missing and extra calls cost. Identical repeated calls
/// are matched once (by default), so repeating a right call cannot earn credit for a second
/// expected call. `None` when the target has no expected calls; a target that
/// [expects some call](crate::Target::expects_any_call) scores `1` for any call, `0` for none.
///
/// # Errors
/// Scoring fails with [`RewardError::UnknownTool`](crate::RewardError::UnknownTool) when the
/// target expects a tool that the trajectory does not offer (checked when it lists any tools).
#[derive(Debug, Clone, PartialEq)]
pub struct ArgumentMatch {
    /// Matching options. Default: [`MatchOptions::bfcl`] with partial credit on.
    pub options: MatchOptions,
    /// Match identical repeated calls once. Default `true`.
    pub deduplicate: bool,
}

impl Default for ArgumentMatch {
    fn default() -> Self {
        Self {
            options: MatchOptions::bfcl().with_partial_credit(true),
            deduplicate: true,
        }
    }
}

impl ArgumentMatch {
    /// The reward with the given matching options (identical calls deduplicated).
    pub fn new(options: MatchOptions) -> Self {
        Self {
            options,
            deduplicate: true,
        }
    }

    /// Sets [`ArgumentMatch::deduplicate`].
    #[must_use]
    pub fn with_deduplicate(mut self, deduplicate: bool) -> Self {
        self.deduplicate = deduplicate;
        self
    }

    /// The score for one sample.
    ///
    /// # Errors
    /// As the type's docs.
    pub fn score_sample(&self, sample: Sample<'_>) -> Result<Option<f32>> {
        let Some(expected) = &sample.target.expected_calls else {
            // "Some call" targets judge no argument: any call has acceptable ones.
            let any_call = sample.trajectory.tool_calls().next().is_some();
            return Ok(sample
                .target
                .expects_any_call
                .then_some(if any_call { 1.0 } else { 0.0 }));
        };
        let trajectory = sample.trajectory;
        if !trajectory.tools.is_empty() {
            sample
                .target
                .check_tools(&trajectory.task_id, &trajectory.tools)?;
        }
        let mut calls: Vec<ToolCall> = Vec::new();
        for call in trajectory.tool_calls() {
            let repeated = calls
                .iter()
                .any(|seen| seen.name == call.name && seen.arguments == call.arguments);
            if !(self.deduplicate && repeated) {
                calls.push(call.clone());
            }
        }
        Ok(Some(
            match_calls(&calls, expected, &self.options).score() as f32
        ))
    }
}

impl Reward for ArgumentMatch {
    fn name(&self) -> &str {
        "arguments"
    }

    fn score_batch(&self, samples: &[Sample<'_>]) -> Result<Vec<RewardValue>> {
        score_each(samples, |sample| {
            Ok(RewardValue::leaf(self.name(), self.score_sample(sample)?))
        })
    }
}
