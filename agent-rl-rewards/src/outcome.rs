//! [`Outcome`]: the episode ended right.

use crate::error::Result;
use crate::matching::{ExpectedCall, MatchOptions, match_calls};
use crate::reward::{Reward, RewardValue, Sample, score_each};

/// Rewards a correct end result: `1` on success, `0` on failure.
///
/// Success means every check the target provides passes:
/// - the [verifier](crate::Target::verifier), if any;
/// - the [expected answer](crate::Target::expected_answer), if any, against the final answer
///   (the content of the last assistant turn);
/// - the [expected calls](crate::Target::expected_calls), if any: every expected call matched,
///   no other call, no malformed attempt (BFCL's pass criterion). With an answer or a verifier
///   beside them, the calls are required too, so that stating the right answer without making
///   the call (or after a hallucinated or malformed one) is not a success; set
///   [`Outcome::answer_only`] to judge such targets on the answer and verifier alone;
/// - with none of these but [some call expected](crate::Target::expects_any_call): at least one
///   call and no malformed attempt (BFCL's relevance criterion).
///
/// `None` when the target judges none of these.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Outcome {
    /// Options used when the calls are judged. Default [`MatchOptions::bfcl`].
    pub options: MatchOptions,
    /// Judge a target that has an answer or a verifier on those alone, ignoring its expected
    /// calls. Default `false`: the calls are required as well.
    pub answer_only: bool,
}

impl Outcome {
    /// The reward with the given matching options for the calls.
    pub fn new(options: MatchOptions) -> Self {
        Self {
            options,
            answer_only: false,
        }
    }

    /// The same reward, judging targets with an answer or verifier on those alone.
    #[must_use]
    pub fn with_answer_only(mut self, answer_only: bool) -> Self {
        self.answer_only = answer_only;
        self
    }

    /// Whether the sample succeeded, or `None` when the target judges nothing.
    ///
    /// # Errors
    /// An error of the verifier.
    pub fn succeeded(&self, sample: Sample<'_>) -> Result<Option<bool>> {
        let target = sample.target;
        let trajectory = sample.trajectory;
        let calls_right = |expected: &[ExpectedCall]| {
            let calls: Vec<_> = trajectory.tool_calls().cloned().collect();
            let no_malformed = trajectory
                .turns
                .iter()
                .all(|turn| turn.parsed.malformed.is_empty());
            no_malformed && match_calls(&calls, expected, &self.options).is_exact()
        };
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
            if let Some(expected) = target.expected_calls.as_ref().filter(|_| !self.answer_only) {
                success &= calls_right(expected);
            }
            return Ok(Some(success));
        }
        if target.expected_calls.is_none() && target.expects_any_call {
            let no_malformed = trajectory
                .turns
                .iter()
                .all(|turn| turn.parsed.malformed.is_empty());
            return Ok(Some(
                no_malformed && trajectory.tool_calls().next().is_some(),
            ));
        }
        Ok(target.expected_calls.as_deref().map(calls_right))
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
