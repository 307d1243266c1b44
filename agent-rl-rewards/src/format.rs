//! [`ToolCallFormat`]: calls parse, name offered tools, and satisfy their schemas.

use crate::audit::CallAudit;
use crate::error::Result;
use crate::reward::{Reward, RewardValue, Sample, score_each};

/// Rewards well-formed tool use: every call attempt parses, names one of the offered tools, and
/// has arguments that validate against that tool's JSON schema (required present, types, enums).
///
/// The score is per episode, `1 / (1 + bad)` where `bad` counts the attempts that fail any check:
/// `1` when every attempt is valid, falling with each bad one. It never pays per valid call, so
/// padding an episode with extra well-formed calls cannot raise it.
///
/// When the target expects calls, an episode must attempt them to earn anything: with no
/// malformed fragment and no call naming an expected tool (no call at all, or only calls to other
/// tools) the score is `0`. Not calling is not well-formed tool use, and must not pay more than
/// a flawed attempt at the right call. The same holds for a target that
/// [expects some call](crate::Target::expects_any_call): an episode without attempts scores `0`.
/// When the target expects no call, or says nothing about calls, an episode without attempts
/// scores `1`.
///
/// # Errors
/// Scoring fails with [`RewardError::InvalidSchema`](crate::RewardError::InvalidSchema) when an
/// offered tool's schema is malformed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ToolCallFormat;

impl ToolCallFormat {
    /// The reward.
    pub fn new() -> Self {
        Self
    }

    /// The score for one sample.
    ///
    /// # Errors
    /// As [`CallAudit::of`].
    pub fn score_sample(&self, sample: Sample<'_>) -> Result<Option<f32>> {
        let audit = CallAudit::of(sample.trajectory)?;
        if let Some(expected) = sample
            .target
            .expected_calls
            .as_ref()
            .filter(|c| !c.is_empty())
        {
            let aimed = sample
                .trajectory
                .tool_calls()
                .any(|call| expected.iter().any(|e| e.name == call.name));
            if audit.malformed == 0 && !aimed {
                return Ok(Some(0.0));
            }
        } else if sample.target.expected_calls.is_none()
            && sample.target.expects_any_call
            && audit.malformed == 0
            && audit.attempts == 0
        {
            return Ok(Some(0.0));
        }
        Ok(Some(1.0 / (1.0 + audit.bad() as f32)))
    }
}

impl Reward for ToolCallFormat {
    fn name(&self) -> &str {
        "format"
    }

    fn score_batch(&self, samples: &[Sample<'_>]) -> Result<Vec<RewardValue>> {
        score_each(samples, |sample| {
            Ok(RewardValue::leaf(self.name(), self.score_sample(sample)?))
        })
    }
}
