//! [`Outcome`]: the episode ended right.

use crate::error::Result;
use crate::matching::{MatchOptions, match_calls};
use crate::reward::{Reward, RewardValue, Sample, score_each};

/// Rewards a correct end result: `1` on success, `0` on failure.
///
/// Success means every check the target provides passes:
/// - the [verifier](crate::Target::verifier), if any;
/// - the [expected answer](crate::Target::expected_answer), if any, against the final answer
///   (the content of the last assistant turn).
///
/// When the target has neither, the result of a pure function-calling task is its calls: success
/// then means the calls match the expected calls exactly (every expected call matched, no other
/// call; BFCL's pass criterion). `None` when the target has none of the three.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Outcome {
    /// Options used when the outcome is judged on calls. Default [`MatchOptions::bfcl`].
    pub options: MatchOptions,
}

impl Outcome {
    /// The reward with the given matching options for call-judged outcomes.
    pub fn new(options: MatchOptions) -> Self {
        Self { options }
    }

    /// Whether the sample succeeded, or `None` when the target judges nothing.
    ///
    /// # Errors
    /// An error of the verifier.
    pub fn succeeded(&self, sample: Sample<'_>) -> Result<Option<bool>> {
        let target = sample.target;
        let trajectory = sample.trajectory;
        if target.checks_final_state() {
            let mut success = true;
            if let Some(verifier) = &target.verifier {
                success &= verifier.verify(trajectory)?;
            }
            if let Some(answer) = &target.expected_answer {
                success &= trajectory
                    .final_answer()
                    .is_some_and(|text| answer.accepts(text));
            }
            return Ok(Some(success));
        }
        let Some(expected) = &target.expected_calls else {
            return Ok(None);
        };
        let calls: Vec<_> = trajectory.tool_calls().cloned().collect();
        let no_malformed = trajectory
            .turns
            .iter()
            .all(|turn| turn.parsed.malformed.is_empty());
        Ok(Some(
            no_malformed && match_calls(&calls, expected, &self.options).is_exact(),
        ))
    }
}

impl Reward for Outcome {
    fn name(&self) -> &str {
        "outcome"
    }

    fn score_batch(&self, samples: &[Sample<'_>]) -> Result<Vec<RewardValue>> {
        score_each(samples, |sample| {
            let score = self
                .succeeded(sample)?
                .map(|success| if success { 1.0 } else { 0.0 });
            Ok(RewardValue::leaf(self.name(), score))
        })
    }
}
