//! Guard penalties and caps.

use serde::{Deserialize, Serialize};

use crate::error::{Result, RewardError};

/// The soft over-length penalty of DAPO (arXiv:2503.14476): no penalty up to
/// `max_new_tokens − buffer`, then a linear ramp to `max_penalty` at `max_new_tokens`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct OverlongConfig {
    /// Length of the ramp as a fraction of the turn's `max_new_tokens`, in `(0, 1]`. Default 0.25.
    pub buffer_fraction: f32,
    /// Penalty at (or beyond) the budget, `>= 0`. Default 0.2.
    pub max_penalty: f32,
}

impl Default for OverlongConfig {
    fn default() -> Self {
        Self {
            buffer_fraction: 0.25,
            max_penalty: 0.2,
        }
    }
}

/// Penalties per event and the per-episode cap.
///
/// All penalties are `>= 0` and are subtracted. The total per episode is
/// `min(Σ count × penalty, max_total_penalty)`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct GuardConfig {
    /// Per call attempt beyond the number of expected calls (only when the target lists expected
    /// calls). Default 0.1.
    pub extra_call_penalty: f32,
    /// Per call identical (name and arguments) to an earlier call of the episode. Default 0.1.
    pub duplicate_call_penalty: f32,
    /// Per call to a tool that was not offered. Default 0.2.
    pub hallucinated_tool_penalty: f32,
    /// Per malformed call or call whose arguments break the tool's schema. Default 0.1.
    pub invalid_call_penalty: f32,
    /// When the target checks a final answer or state and the last turn has no text content (or
    /// there is no turn). Default 0.2.
    pub empty_answer_penalty: f32,
    /// Per turn cut off by the token budget (`FinishReason::Length`). Default 0.2.
    pub truncated_turn_penalty: f32,
    /// Soft over-length penalty on the longest turn; `None` disables it. Default on.
    pub overlong: Option<OverlongConfig>,
    /// Cap on the total penalty per episode, `>= 0`. Default 0.5.
    pub max_total_penalty: f32,
}

impl Default for GuardConfig {
    fn default() -> Self {
        Self {
            extra_call_penalty: 0.1,
            duplicate_call_penalty: 0.1,
            hallucinated_tool_penalty: 0.2,
            invalid_call_penalty: 0.1,
            empty_answer_penalty: 0.2,
            truncated_turn_penalty: 0.2,
            overlong: Some(OverlongConfig::default()),
            max_total_penalty: 0.5,
        }
    }
}

impl GuardConfig {
    /// Sets [`GuardConfig::max_total_penalty`].
    #[must_use]
    pub fn with_max_total_penalty(mut self, max_total_penalty: f32) -> Self {
        self.max_total_penalty = max_total_penalty;
        self
    }

    /// Sets [`GuardConfig::overlong`].
    #[must_use]
    pub fn with_overlong(mut self, overlong: Option<OverlongConfig>) -> Self {
        self.overlong = overlong;
        self
    }

    /// Checks every field's range.
    ///
    /// # Errors
    /// [`RewardError::InvalidConfig`] naming the field.
    pub fn validate(&self) -> Result<()> {
        let non_negative = [
            ("extra_call_penalty", self.extra_call_penalty),
            ("duplicate_call_penalty", self.duplicate_call_penalty),
            ("hallucinated_tool_penalty", self.hallucinated_tool_penalty),
            ("invalid_call_penalty", self.invalid_call_penalty),
            ("empty_answer_penalty", self.empty_answer_penalty),
            ("truncated_turn_penalty", self.truncated_turn_penalty),
            ("max_total_penalty", self.max_total_penalty),
            (
                "overlong.max_penalty",
                self.overlong.as_ref().map_or(0.0, |o| o.max_penalty),
            ),
        ];
        for (field, value) in non_negative {
            if !(value.is_finite() && value >= 0.0) {
                return Err(invalid(
                    field,
                    format!("must be finite and >= 0, found {value}"),
                ));
            }
        }
        if let Some(overlong) = &self.overlong
            && !(overlong.buffer_fraction > 0.0 && overlong.buffer_fraction <= 1.0)
        {
            return Err(invalid(
                "overlong.buffer_fraction",
                format!("must be in (0, 1], found {}", overlong.buffer_fraction),
            ));
        }
        Ok(())
    }
}

fn invalid(field: &str, reason: String) -> RewardError {
    RewardError::InvalidConfig {
        field: format!("guards.{field}"),
        reason,
    }
}
