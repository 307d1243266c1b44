//! [`ToolUseReward`]: the standard tool-use recipe, built so that it cannot be farmed.

use serde::{Deserialize, Serialize};

use crate::argument_match::ArgumentMatch;
use crate::error::{Result, RewardError};
use crate::format::ToolCallFormat;
use crate::guards::{GuardConfig, Guards};
use crate::matching::MatchOptions;
use crate::outcome::Outcome;
use crate::reward::{Component, Reward, RewardValue, Sample, score_each};

/// Weights of the standard recipe.
///
/// The score of one episode is
///
/// ```text
/// process = format_weight × format + arguments_weight × arguments      (each part in [0, 1])
/// score   = outcome_weight × outcome + scale × process − guard penalty
/// scale   = failed_outcome_process_scale when the outcome failed, else 1
/// ```
///
/// with the guard penalty capped at `guards.max_total_penalty`. Parts that are not applicable
/// (`None`) are left out. [`ToolUseConfig::validate`] enforces
/// `outcome_weight >= format_weight + arguments_weight` and
/// `failed_outcome_process_scale × (format_weight + arguments_weight) + max_total_penalty <
/// outcome_weight`: the best failed episode then scores strictly below the worst successful one,
/// so no amount of process reward can stand in for success.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ToolUseConfig {
    /// Weight of [`ToolCallFormat`], `>= 0`. Default 1.
    pub format_weight: f32,
    /// Weight of [`ArgumentMatch`], `>= 0`. Default 1.
    pub arguments_weight: f32,
    /// Weight of [`Outcome`], `> 0` and at least the sum of the process weights. Default 2.
    pub outcome_weight: f32,
    /// Factor on the process rewards of an episode whose outcome failed, in `[0, 1)`. Default 0.5:
    /// failed episodes still learn from better calls, at half pay.
    pub failed_outcome_process_scale: f32,
    /// Guard penalties; `None` turns the guards off. Default on.
    pub guards: Option<GuardConfig>,
    /// Matching options for arguments and call-judged outcomes. Default [`MatchOptions::bfcl`]
    /// with partial credit (partial credit affects [`ArgumentMatch`] only; the outcome needs
    /// exact calls).
    pub matching: MatchOptions,
    /// Judge the outcome of a target that has an answer (or a verifier) on that alone, ignoring
    /// its expected calls ([`Outcome::answer_only`]). Default `false`: the calls are required
    /// too, so skipping the tool and stating the answer is a failure.
    pub outcome_answer_only: bool,
}

impl Default for ToolUseConfig {
    fn default() -> Self {
        Self {
            format_weight: 1.0,
            arguments_weight: 1.0,
            outcome_weight: 2.0,
            failed_outcome_process_scale: 0.5,
            guards: Some(GuardConfig::default()),
            matching: MatchOptions::bfcl().with_partial_credit(true),
            outcome_answer_only: false,
        }
    }
}

impl ToolUseConfig {
    /// Checks ranges and the no-farming inequalities (see the type docs).
    ///
    /// # Errors
    /// [`RewardError::InvalidConfig`] naming the field and the inequality it breaks.
    pub fn validate(&self) -> Result<()> {
        let invalid = |field: &str, reason: String| {
            Err(RewardError::InvalidConfig {
                field: field.into(),
                reason,
            })
        };
        for (field, weight) in [
            ("format_weight", self.format_weight),
            ("arguments_weight", self.arguments_weight),
            ("outcome_weight", self.outcome_weight),
        ] {
            if !(weight.is_finite() && weight >= 0.0) {
                return invalid(field, format!("must be finite and >= 0, found {weight}"));
            }
        }
        let scale = self.failed_outcome_process_scale;
        if !(0.0..1.0).contains(&scale) {
            return invalid(
                "failed_outcome_process_scale",
                format!("must be in [0, 1), found {scale}"),
            );
        }
        if let Some(guards) = &self.guards {
            guards.validate()?;
        }
        self.matching.validate()?;
        let process = self.format_weight + self.arguments_weight;
        if self.outcome_weight < process || self.outcome_weight <= 0.0 {
            return invalid(
                "outcome_weight",
                format!(
                    "must be > 0 and >= format_weight + arguments_weight = {process}, found {}",
                    self.outcome_weight
                ),
            );
        }
        let cap = self
            .guards
            .as_ref()
            .map_or(0.0, |guards| guards.max_total_penalty);
        if scale * process + cap >= self.outcome_weight {
            return invalid(
                "outcome_weight",
                format!(
                    "a failed episode could tie a successful one: need failed_outcome_process_scale × process weights \
                     ({scale} × {process}) + guards.max_total_penalty ({cap}) < outcome_weight ({})",
                    self.outcome_weight
                ),
            );
        }
        Ok(())
    }
}

/// The standard tool-use reward: format 1, arguments 1, outcome 2, guards on.
///
/// See [`ToolUseConfig`] for the formula. Process rewards are per episode (never per call) and
/// saturate at 1, identical repeated calls earn nothing, extra calls lower the argument score and
/// draw guard penalties, and a failed outcome always ranks below a successful one.
///
/// Components: `tool_use` (the score), `format`, `arguments`, `outcome`, `guards` and each
/// `guards/<guard>`.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolUseReward {
    config: ToolUseConfig,
    arguments: ArgumentMatch,
    outcome: Outcome,
    guards: Option<Guards>,
}

impl Default for ToolUseReward {
    fn default() -> Self {
        Self::from_valid(ToolUseConfig::default())
    }
}

impl ToolUseReward {
    /// The recipe with `config`.
    ///
    /// # Errors
    /// As [`ToolUseConfig::validate`].
    pub fn new(config: ToolUseConfig) -> Result<Self> {
        config.validate()?;
        Ok(Self::from_valid(config))
    }

    fn from_valid(config: ToolUseConfig) -> Self {
        Self {
            arguments: ArgumentMatch::new(config.matching.clone()),
            outcome: Outcome::new(config.matching.clone().with_partial_credit(false))
                .with_answer_only(config.outcome_answer_only),
            guards: config.guards.clone().map(Guards::new),
            config,
        }
    }

    /// The configuration.
    pub fn config(&self) -> &ToolUseConfig {
        &self.config
    }

    fn score_sample(&self, sample: Sample<'_>) -> Result<RewardValue> {
        let config = &self.config;
        let format = ToolCallFormat.score_sample(sample)?;
        let arguments = self.arguments.score_sample(sample)?;
        let outcome = self
            .outcome
            .succeeded(sample)?
            .map(|success| if success { 1.0 } else { 0.0 });
        let penalties = self
            .guards
            .as_ref()
            .map(|guards| guards.penalties(sample))
            .transpose()?;
        let process = config.format_weight * format.unwrap_or(0.0)
            + config.arguments_weight * arguments.unwrap_or(0.0);
        let scale = if outcome == Some(0.0) {
            config.failed_outcome_process_scale
        } else {
            1.0
        };
        let penalty = penalties.as_ref().map_or(0.0, |penalties| penalties.total);
        let score = config.outcome_weight * outcome.unwrap_or(0.0) + scale * process - penalty;
        let mut components = vec![
            Component::new("tool_use", Some(score)),
            Component::new("format", format),
            Component::new("arguments", arguments),
            Component::new("outcome", outcome),
        ];
        if let Some(penalties) = penalties {
            components.push(Component::new(
                "guards",
                Some(if penalty == 0.0 { 0.0 } else { -penalty }),
            ));
            components.extend(penalties.components());
        }
        Ok(RewardValue {
            score: Some(score),
            components,
        })
    }
}

impl Reward for ToolUseReward {
    fn name(&self) -> &str {
        "tool_use"
    }

    fn score_batch(&self, samples: &[Sample<'_>]) -> Result<Vec<RewardValue>> {
        score_each(samples, |sample| self.score_sample(sample))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_config_is_valid_and_matches_the_recipe() {
        let config = ToolUseConfig::default();
        config.validate().expect("default is valid");
        assert_eq!(
            (
                config.format_weight,
                config.arguments_weight,
                config.outcome_weight
            ),
            (1.0, 1.0, 2.0)
        );
    }

    #[test]
    fn configs_that_would_let_process_rewards_beat_the_outcome_are_rejected() {
        let cases = [
            ToolUseConfig {
                outcome_weight: 1.5,
                ..ToolUseConfig::default()
            },
            ToolUseConfig {
                failed_outcome_process_scale: 1.0,
                ..ToolUseConfig::default()
            },
            ToolUseConfig {
                guards: Some(GuardConfig::default().with_max_total_penalty(1.0)),
                ..ToolUseConfig::default()
            },
            ToolUseConfig {
                format_weight: -1.0,
                ..ToolUseConfig::default()
            },
            ToolUseConfig {
                outcome_weight: f32::NAN,
                ..ToolUseConfig::default()
            },
        ];
        for config in cases {
            let err = ToolUseReward::new(config.clone()).expect_err("invalid");
            assert!(
                matches!(err, RewardError::InvalidConfig { .. }),
                "{config:?}: {err}"
            );
        }
    }
}
