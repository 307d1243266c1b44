//! A reward from a name and a per-sample closure, as TRL accepts plain reward functions.

use crate::error::Result;
use crate::reward::{Reward, RewardValue, Sample};

/// A [`Reward`] that scores each sample with a closure; `None` means "not applicable".
///
/// ```
/// use agent_rl_core::Trajectory;
/// use agent_rl_rewards::{FnReward, Reward, Sample, Target};
/// let short = FnReward::new("short", |s: Sample<'_>| Some(f32::from(s.trajectory.turns.len() <= 2)));
/// let (trajectory, target) = (Trajectory::default(), Target::default());
/// assert_eq!(short.score(Sample::new(&trajectory, &target))?.score, Some(1.0));
/// # Ok::<(), agent_rl_rewards::RewardError>(())
/// ```
pub struct FnReward<F> {
    name: String,
    score: F,
}

impl<F> FnReward<F>
where
    F: Fn(Sample<'_>) -> Option<f32> + Send + Sync,
{
    /// A reward called `name` (its component name in logs) scoring with `score`.
    pub fn new(name: impl Into<String>, score: F) -> Self {
        Self {
            name: name.into(),
            score,
        }
    }
}

impl<F> Reward for FnReward<F>
where
    F: Fn(Sample<'_>) -> Option<f32> + Send + Sync,
{
    fn name(&self) -> &str {
        &self.name
    }

    fn score_batch(&self, samples: &[Sample<'_>]) -> Result<Vec<RewardValue>> {
        Ok(samples
            .iter()
            .map(|&sample| RewardValue::leaf(&self.name, (self.score)(sample)))
            .collect())
    }
}
