//! [`RewardStack`]: the weighted sum of the trainer's reward functions, with per-reward stats.

use agent_rl_core::Trajectory;
use agent_rl_rewards::{Reward, Sample, Target, component_means};

use crate::error::{AlgoError, Result};
use crate::metrics::RewardStats;

/// The rewards of a trainer and their weights (TRL's `reward_funcs` + `reward_weights`).
///
/// The total of an episode is `Σ weightᵢ · scoreᵢ` over the rewards that apply to it; an episode
/// no reward applies to gets `None` (left out of its group's advantage statistics, advantage 0).
#[derive(Default)]
pub struct RewardStack {
    rewards: Vec<Box<dyn Reward>>,
    weights: Vec<f32>,
}

impl std::fmt::Debug for RewardStack {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.rewards.iter().map(|r| r.name()).collect();
        f.debug_struct("RewardStack")
            .field("rewards", &names)
            .field("weights", &self.weights)
            .finish()
    }
}

/// Scores of one batch of episodes.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ScoredBatch {
    /// Weighted total per episode (`None` when no reward applies).
    pub totals: Vec<Option<f32>>,
    /// Per reward (in the order added), each followed by its components: mean and std over the
    /// episodes it applies to, unweighted.
    pub per_reward: Vec<RewardStats>,
}

fn mean_std(values: &[f32]) -> (f32, f32) {
    if values.is_empty() {
        return (f32::NAN, f32::NAN);
    }
    let n = values.len() as f64;
    let mean = values.iter().map(|&v| f64::from(v)).sum::<f64>() / n;
    let std = if values.len() < 2 {
        0.0
    } else {
        (values
            .iter()
            .map(|&v| (f64::from(v) - mean).powi(2))
            .sum::<f64>()
            / (n - 1.0))
            .sqrt()
    };
    (mean as f32, std as f32)
}

impl RewardStack {
    /// Appends a reward with weight 1 (weights are set with [`RewardStack::set_weights`]).
    pub fn push(&mut self, reward: Box<dyn Reward>) {
        self.rewards.push(reward);
        self.weights.push(1.0);
    }

    /// Number of rewards.
    pub fn len(&self) -> usize {
        self.rewards.len()
    }

    /// True when no reward was added.
    pub fn is_empty(&self) -> bool {
        self.rewards.is_empty()
    }

    /// Checks that a reward was added (`add_reward` names the builder method that adds one)
    /// and sets the weights.
    ///
    /// # Errors
    /// [`AlgoError::InvalidConfig`] (`rewards`) when none was added; as [`Self::set_weights`].
    pub(crate) fn require_weighted(&mut self, weights: &[f32], add_reward: &str) -> Result<()> {
        if self.is_empty() {
            return Err(AlgoError::config(
                "rewards",
                format!("no reward function; add one with {add_reward}"),
            ));
        }
        self.set_weights(weights)
    }

    /// Sets the weights; an empty slice keeps all weights at 1.
    ///
    /// # Errors
    /// [`AlgoError::InvalidConfig`] (`reward_weights`) when the count differs from the rewards'.
    pub fn set_weights(&mut self, weights: &[f32]) -> Result<()> {
        if weights.is_empty() {
            return Ok(());
        }
        if weights.len() != self.rewards.len() {
            return Err(AlgoError::config(
                "reward_weights",
                format!(
                    "has {} weights for {} rewards; give one weight per add_reward, or none",
                    weights.len(),
                    self.rewards.len()
                ),
            ));
        }
        self.weights = weights.to_vec();
        Ok(())
    }

    /// Scores `trajectories[i]` against `targets[i]` with every reward.
    ///
    /// # Errors
    /// A reward's own error, or [`AlgoError::InvalidInput`] when a reward returns the wrong
    /// number of values or the two slices differ in length.
    pub fn score(&self, trajectories: &[&Trajectory], targets: &[&Target]) -> Result<ScoredBatch> {
        if trajectories.len() != targets.len() {
            return Err(AlgoError::input(
                "targets",
                format!(
                    "{} targets for {} trajectories",
                    targets.len(),
                    trajectories.len()
                ),
            ));
        }
        let samples: Vec<Sample<'_>> = trajectories
            .iter()
            .zip(targets)
            .map(|(trajectory, target)| Sample::new(trajectory, target))
            .collect();
        let mut totals: Vec<Option<f32>> = vec![None; samples.len()];
        let mut per_reward = Vec::with_capacity(self.rewards.len());
        for (reward, &weight) in self.rewards.iter().zip(&self.weights) {
            let values = reward.score_batch(&samples)?;
            if values.len() != samples.len() {
                return Err(AlgoError::input(
                    format!("reward `{}`", reward.name()),
                    format!(
                        "returned {} values for {} samples",
                        values.len(),
                        samples.len()
                    ),
                ));
            }
            let mut applied = Vec::with_capacity(values.len());
            for (total, value) in totals.iter_mut().zip(&values) {
                if let Some(score) = value.score {
                    applied.push(score);
                    *total = Some(total.unwrap_or(0.0) + weight * score);
                }
            }
            let (mean, std) = mean_std(&applied);
            per_reward.push(RewardStats {
                name: reward.name().to_owned(),
                mean,
                std,
            });
            // Components (e.g. format / arguments / outcome / guards of ToolUseReward), logged
            // as `rewards/<component>/mean` like TRL logs each reward function.
            for component in component_means(&values) {
                if component.name == reward.name() {
                    continue;
                }
                let scores: Vec<f32> = values
                    .iter()
                    .filter_map(|v| v.component(&component.name).flatten())
                    .collect();
                let (mean, std) = mean_std(&scores);
                let taken = per_reward.iter().any(|r| r.name == component.name);
                let name = if taken {
                    format!("{}/{}", reward.name(), component.name)
                } else {
                    component.name
                };
                per_reward.push(RewardStats { name, mean, std });
            }
        }
        Ok(ScoredBatch { totals, per_reward })
    }
}
