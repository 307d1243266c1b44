//! [`Clipped`]: a reward with its score clamped to a range.

use crate::error::{Result, RewardError};
use crate::reward::{Reward, RewardValue, Sample};

/// A reward whose score is clamped to `[min, max]` (components unchanged). Made by
/// [`RewardExt::clipped`](crate::RewardExt::clipped).
#[derive(Debug, Clone, PartialEq)]
pub struct Clipped<R> {
    inner: R,
    min: f32,
    max: f32,
}

impl<R: Reward> Clipped<R> {
    /// `inner` clamped to `[min, max]`.
    ///
    /// # Errors
    /// [`RewardError::InvalidConfig`] unless `min <= max` and neither is NaN.
    pub fn new(inner: R, min: f32, max: f32) -> Result<Self> {
        if min.is_nan() || max.is_nan() || min > max {
            return Err(RewardError::InvalidConfig {
                field: format!("clip range of `{}`", inner.name()),
                reason: format!("need min <= max, found [{min}, {max}]"),
            });
        }
        Ok(Self { inner, min, max })
    }

    /// The range.
    pub fn range(&self) -> (f32, f32) {
        (self.min, self.max)
    }
}

impl<R: Reward> Reward for Clipped<R> {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn score_batch(&self, samples: &[Sample<'_>]) -> Result<Vec<RewardValue>> {
        let mut values = self.inner.score_batch(samples)?;
        for value in &mut values {
            value.score = value.score.map(|score| score.clamp(self.min, self.max));
        }
        Ok(values)
    }
}
