//! [`Weighted`]: a reward with its score scaled.

use crate::error::Result;
use crate::reward::{Reward, RewardValue, Sample};

/// A reward whose score is multiplied by a weight; its components stay unscaled for logging.
/// Made by [`RewardExt::weighted`](crate::RewardExt::weighted).
#[derive(Debug, Clone, PartialEq)]
pub struct Weighted<R> {
    inner: R,
    weight: f32,
}

impl<R: Reward> Weighted<R> {
    /// `inner` scaled by `weight`.
    pub fn new(inner: R, weight: f32) -> Self {
        Self { inner, weight }
    }

    /// The weight.
    pub fn weight(&self) -> f32 {
        self.weight
    }

    /// The wrapped reward.
    pub fn inner(&self) -> &R {
        &self.inner
    }

    /// The wrapped reward and the weight.
    pub fn into_parts(self) -> (R, f32) {
        (self.inner, self.weight)
    }
}

impl<R: Reward> Reward for Weighted<R> {
    fn name(&self) -> &str {
        self.inner.name()
    }

    /// # Errors
    /// [`RewardError::InvalidConfig`](crate::RewardError::InvalidConfig) for a non-finite weight,
    /// or the inner reward's error.
    fn score_batch(&self, samples: &[Sample<'_>]) -> Result<Vec<RewardValue>> {
        super::check_weight(self.inner.name(), self.weight)?;
        let mut values = self.inner.score_batch(samples)?;
        crate::reward::check_batch_length(self.name(), samples.len(), values.len())?;
        for value in &mut values {
            value.score = value.score.map(|score| score * self.weight);
        }
        Ok(values)
    }
}
