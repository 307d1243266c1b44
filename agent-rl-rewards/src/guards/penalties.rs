//! The [`Guards`] reward and its per-guard breakdown.

use serde::Serialize;

use agent_rl_core::FinishReason;

use super::config::GuardConfig;
use super::overlong::overlong_penalty;
use crate::audit::CallAudit;
use crate::error::Result;
use crate::reward::{Component, Reward, RewardValue, Sample, score_each};

/// The penalty of each guard for one episode (each `>= 0`) and the capped total.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct GuardPenalties {
    /// Calls beyond the expected count; `None` when the target lists no expected calls.
    pub extra_calls: Option<f32>,
    /// Identical repeated calls.
    pub duplicate_calls: f32,
    /// Calls to tools that were not offered.
    pub hallucinated_tools: f32,
    /// Malformed calls and calls with schema-invalid arguments.
    pub invalid_calls: f32,
    /// Empty final answer; `None` when the target checks no final answer or state.
    pub empty_answer: Option<f32>,
    /// Truncated turns.
    pub truncated_turns: f32,
    /// Soft over-length penalty of the longest turn; `None` when disabled.
    pub overlong: Option<f32>,
    /// `min(sum of the above, max_total_penalty)`.
    pub total: f32,
}

impl GuardPenalties {
    /// The penalties as named components (`guards/<guard>`, negative values).
    pub fn components(&self) -> Vec<Component> {
        let negative = |value: f32| if value == 0.0 { 0.0 } else { -value };
        vec![
            Component::new("guards/extra_calls", self.extra_calls.map(negative)),
            Component::new(
                "guards/duplicate_calls",
                Some(negative(self.duplicate_calls)),
            ),
            Component::new(
                "guards/hallucinated_tools",
                Some(negative(self.hallucinated_tools)),
            ),
            Component::new("guards/invalid_calls", Some(negative(self.invalid_calls))),
            Component::new("guards/empty_answer", self.empty_answer.map(negative)),
            Component::new(
                "guards/truncated_turns",
                Some(negative(self.truncated_turns)),
            ),
            Component::new("guards/overlong", self.overlong.map(negative)),
        ]
    }
}

/// Per-episode penalties against reward farming; the score is `−total` in
/// `[−max_total_penalty, 0]`.
///
/// Every guard is monotone: adding calls to an episode can only keep or raise each count, and the
/// cap is applied to the sum, so no padding can lower the penalty. The empty-answer guard looks
/// at the final answer's text only (never at calls), so a call cannot buy it off.
///
/// # Errors
/// Scoring fails with [`RewardError::InvalidSchema`](crate::RewardError::InvalidSchema) when an
/// offered tool's schema is malformed, or [`RewardError::InvalidConfig`](crate::RewardError::InvalidConfig)
/// for a bad config.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Guards {
    /// Penalties and cap.
    pub config: GuardConfig,
}

impl Guards {
    /// Guards with `config`.
    pub fn new(config: GuardConfig) -> Self {
        Self { config }
    }

    /// The penalties for one sample.
    ///
    /// # Errors
    /// As the type's docs.
    pub fn penalties(&self, sample: Sample<'_>) -> Result<GuardPenalties> {
        let config = &self.config;
        let trajectory = sample.trajectory;
        let target = sample.target;
        let audit = CallAudit::of(trajectory)?;
        let per = |count: usize, penalty: f32| count as f32 * penalty;
        let extra_calls = target.expected_calls.as_ref().map(|expected| {
            per(
                audit.attempts.saturating_sub(expected.len()),
                config.extra_call_penalty,
            )
        });
        let empty_answer = target.checks_final_state().then(|| {
            let empty = trajectory
                .final_answer()
                .is_none_or(|answer| answer.trim().is_empty());
            if empty {
                config.empty_answer_penalty
            } else {
                0.0
            }
        });
        let truncated = trajectory
            .turns
            .iter()
            .filter(|turn| turn.finish_reason == FinishReason::Length)
            .count();
        let overlong = config.overlong.as_ref().map(|overlong| {
            trajectory
                .turns
                .iter()
                .map(|turn| overlong_penalty(turn.num_tokens, trajectory.max_new_tokens, overlong))
                .fold(0.0_f32, f32::max)
        });
        let mut penalties = GuardPenalties {
            extra_calls,
            duplicate_calls: per(audit.duplicates, config.duplicate_call_penalty),
            hallucinated_tools: per(audit.unknown_tool, config.hallucinated_tool_penalty),
            invalid_calls: per(
                audit.malformed + audit.invalid_arguments,
                config.invalid_call_penalty,
            ),
            empty_answer,
            truncated_turns: per(truncated, config.truncated_turn_penalty),
            overlong,
            total: 0.0,
        };
        let sum = penalties.extra_calls.unwrap_or(0.0)
            + penalties.duplicate_calls
            + penalties.hallucinated_tools
            + penalties.invalid_calls
            + penalties.empty_answer.unwrap_or(0.0)
            + penalties.truncated_turns
            + penalties.overlong.unwrap_or(0.0);
        penalties.total = sum.min(config.max_total_penalty);
        Ok(penalties)
    }
}

impl Reward for Guards {
    fn name(&self) -> &str {
        "guards"
    }

    fn score_batch(&self, samples: &[Sample<'_>]) -> Result<Vec<RewardValue>> {
        self.config.validate()?;
        score_each(samples, |sample| {
            let penalties = self.penalties(sample)?;
            let score = Some(if penalties.total == 0.0 {
                0.0
            } else {
                -penalties.total
            });
            let mut components = vec![Component::new(self.name(), score)];
            components.extend(penalties.components());
            Ok(RewardValue { score, components })
        })
    }
}
