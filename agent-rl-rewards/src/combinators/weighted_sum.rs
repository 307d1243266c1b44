//! [`WeightedSum`]: `Σ weight_i × score_i` over the applicable rewards.

use crate::error::Result;
use crate::reward::{Component, Reward, RewardValue, Sample, check_batch_length};

/// The weighted sum of several rewards, each scoring the whole batch once.
///
/// Per sample, rewards that return `None` are left out of the sum (not counted as 0); the sum is
/// `None` only when every term is `None`. Components: the sum under this reward's name, then every
/// term's components.
///
/// ```
/// use agent_rl_rewards::{Outcome, RewardExt, ToolCallFormat, WeightedSum};
/// let reward = WeightedSum::new("my_reward")
///     .add(ToolCallFormat::new(), 0.2)
///     .add_weighted(Outcome::default().weighted(1.0));
/// assert_eq!(reward.len(), 2);
/// ```
pub struct WeightedSum {
    name: String,
    terms: Vec<(Box<dyn Reward>, f32)>,
}

impl WeightedSum {
    /// An empty sum called `name`.
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            terms: Vec::new(),
        }
    }

    /// Adds `reward` with `weight`.
    #[must_use]
    pub fn add(mut self, reward: impl Reward + 'static, weight: f32) -> Self {
        self.terms.push((Box::new(reward), weight));
        self
    }

    /// Adds a [`Weighted`](crate::Weighted) reward.
    #[must_use]
    pub fn add_weighted<R: Reward + 'static>(self, weighted: crate::Weighted<R>) -> Self {
        let (reward, weight) = weighted.into_parts();
        self.add(reward, weight)
    }

    /// Number of terms.
    pub fn len(&self) -> usize {
        self.terms.len()
    }

    /// True when there is no term.
    pub fn is_empty(&self) -> bool {
        self.terms.is_empty()
    }

    /// The weights, in order.
    pub fn weights(&self) -> Vec<f32> {
        self.terms.iter().map(|(_, weight)| *weight).collect()
    }
}

impl Reward for WeightedSum {
    fn name(&self) -> &str {
        &self.name
    }

    /// # Errors
    /// [`RewardError::InvalidConfig`](crate::RewardError::InvalidConfig) for a non-finite
    /// weight, [`RewardError::BatchLength`](crate::RewardError::BatchLength) when a term returns
    /// the wrong number of values, or a term's error.
    fn score_batch(&self, samples: &[Sample<'_>]) -> Result<Vec<RewardValue>> {
        let mut totals: Vec<Option<f32>> = vec![None; samples.len()];
        let mut parts: Vec<Vec<Component>> = vec![Vec::new(); samples.len()];
        for (reward, weight) in &self.terms {
            super::check_weight(reward.name(), *weight)?;
            let values = reward.score_batch(samples)?;
            check_batch_length(reward.name(), samples.len(), values.len())?;
            for ((total, components), value) in totals.iter_mut().zip(&mut parts).zip(values) {
                if let Some(score) = value.score {
                    *total = Some(total.unwrap_or(0.0) + weight * score);
                }
                components.extend(value.components);
            }
        }
        Ok(totals
            .into_iter()
            .zip(parts)
            .map(|(score, rest)| {
                let mut components = vec![Component::new(self.name.clone(), score)];
                components.extend(rest);
                RewardValue { score, components }
            })
            .collect())
    }
}
