//! [`LearnedReward`]: a reward model (or any scorer) as a reward.

use std::sync::Arc;

use agent_rl_core::Trajectory;

use crate::error::{Result, RewardError};
use crate::reward::{Reward, RewardValue, Sample, check_batch_length};

/// Anything that gives one scalar per sequence: a trained reward model, an LLM judge, a
/// heuristic. The reward-model trainer plugs its model in here.
///
/// Closures `Fn(&[&Trajectory]) -> Result<Vec<f32>>` implement it.
pub trait SequenceScorer: Send + Sync {
    /// One score per trajectory, in order.
    ///
    /// # Errors
    /// [`RewardError::Scorer`] when scoring fails.
    fn score_sequences(&self, trajectories: &[&Trajectory]) -> Result<Vec<f32>>;
}

impl<F> SequenceScorer for F
where
    F: Fn(&[&Trajectory]) -> Result<Vec<f32>> + Send + Sync,
{
    fn score_sequences(&self, trajectories: &[&Trajectory]) -> Result<Vec<f32>> {
        self(trajectories)
    }
}

/// A reward backed by a [`SequenceScorer`], called once per batch.
///
/// ```
/// use agent_rl_core::Trajectory;
/// use agent_rl_rewards::{LearnedReward, Reward, Sample, Target};
/// // A stand-in scorer: longer episodes score higher.
/// let reward = LearnedReward::new("rm", |batch: &[&Trajectory]| {
///     Ok(batch.iter().map(|t| t.turns.len() as f32).collect())
/// });
/// let (trajectory, target) = (Trajectory::default(), Target::default());
/// assert_eq!(reward.score(Sample::new(&trajectory, &target))?.score, Some(0.0));
/// # Ok::<(), agent_rl_rewards::RewardError>(())
/// ```
#[derive(Clone)]
pub struct LearnedReward {
    name: String,
    scorer: Arc<dyn SequenceScorer>,
}

impl std::fmt::Debug for LearnedReward {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LearnedReward")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl LearnedReward {
    /// A reward called `name` backed by `scorer`.
    pub fn new(name: impl Into<String>, scorer: impl SequenceScorer + 'static) -> Self {
        Self {
            name: name.into(),
            scorer: Arc::new(scorer),
        }
    }

    /// A reward backed by a shared scorer.
    pub fn from_shared(name: impl Into<String>, scorer: Arc<dyn SequenceScorer>) -> Self {
        Self {
            name: name.into(),
            scorer,
        }
    }
}

impl Reward for LearnedReward {
    fn name(&self) -> &str {
        &self.name
    }

    /// # Errors
    /// The scorer's error, [`RewardError::BatchLength`] when it returns the wrong number of
    /// scores, [`RewardError::NonFiniteScore`] for NaN or infinite scores.
    fn score_batch(&self, samples: &[Sample<'_>]) -> Result<Vec<RewardValue>> {
        if samples.is_empty() {
            return Ok(Vec::new());
        }
        let trajectories: Vec<&Trajectory> =
            samples.iter().map(|sample| sample.trajectory).collect();
        let scores = self.scorer.score_sequences(&trajectories)?;
        check_batch_length(&self.name, samples.len(), scores.len())?;
        scores
            .into_iter()
            .enumerate()
            .map(|(index, value)| {
                if value.is_finite() {
                    Ok(RewardValue::leaf(&self.name, Some(value)))
                } else {
                    Err(RewardError::NonFiniteScore {
                        reward: self.name.clone(),
                        index,
                        value,
                    })
                }
            })
            .collect()
    }
}
