//! [`NormalizedSum`]: normalise each reward within its group, then sum (GDPO-style).

use crate::error::{Result, RewardError};
use crate::reward::{Component, Reward, RewardValue, Sample, check_batch_length};

/// Normalise-then-sum: each reward is standardised within each group of samples (the
/// completions of one prompt), then the standardised scores are summed with weights.
///
/// Summing raw rewards lets the one with the largest spread dominate the group-relative advantage
/// and hides the others; standardising each reward per group first gives every reward a say in
/// proportion to its weight (the per-reward, decoupled group normalisation of GDPO).
///
/// The batch must be made of consecutive groups of `group_size` samples. Within a group, a reward's
/// `Some` scores become `(score − mean) / (std + epsilon)` (population std); `None` scores stay
/// `None` and are left out of the mean, the std and the sum; a group whose scores are all equal
/// gets zeros, never NaN.
pub struct NormalizedSum {
    name: String,
    group_size: usize,
    epsilon: f32,
    terms: Vec<(Box<dyn Reward>, f32)>,
}

impl NormalizedSum {
    /// An empty sum over groups of `group_size` samples, `epsilon = 1e-4`.
    pub fn new(name: impl Into<String>, group_size: usize) -> Self {
        Self {
            name: name.into(),
            group_size,
            epsilon: 1e-4,
            terms: Vec::new(),
        }
    }

    /// Adds `reward` with `weight`.
    #[must_use]
    pub fn add(mut self, reward: impl Reward + 'static, weight: f32) -> Self {
        self.terms.push((Box::new(reward), weight));
        self
    }

    /// Sets the epsilon added to the standard deviation (`> 0`).
    #[must_use]
    pub fn with_epsilon(mut self, epsilon: f32) -> Self {
        self.epsilon = epsilon;
        self
    }

    fn validate(&self, batch_size: usize) -> Result<()> {
        if !(self.epsilon.is_finite() && self.epsilon > 0.0) {
            return Err(RewardError::InvalidConfig {
                field: "epsilon".into(),
                reason: format!("must be finite and > 0, found {}", self.epsilon),
            });
        }
        if self.group_size == 0 || !batch_size.is_multiple_of(self.group_size) {
            return Err(RewardError::GroupSize {
                reward: self.name.clone(),
                batch_size,
                group_size: self.group_size,
            });
        }
        Ok(())
    }
}

/// Standardises the `Some` values of one group in place.
fn standardize(group: &mut [Option<f32>], epsilon: f32) {
    let present: Vec<f64> = group
        .iter()
        .flatten()
        .map(|&score| f64::from(score))
        .collect();
    if present.is_empty() {
        return;
    }
    let mean = present.iter().sum::<f64>() / present.len() as f64;
    let variance = present
        .iter()
        .map(|score| (score - mean).powi(2))
        .sum::<f64>()
        / present.len() as f64;
    let std = variance.sqrt();
    for score in group.iter_mut().flatten() {
        *score = if std == 0.0 {
            0.0
        } else {
            ((f64::from(*score) - mean) / (std + f64::from(epsilon))) as f32
        };
    }
}

impl Reward for NormalizedSum {
    fn name(&self) -> &str {
        &self.name
    }

    /// # Errors
    /// [`RewardError::GroupSize`] when the batch is not whole groups,
    /// [`RewardError::InvalidConfig`] for a bad epsilon or weight, or a term's error.
    fn score_batch(&self, samples: &[Sample<'_>]) -> Result<Vec<RewardValue>> {
        self.validate(samples.len())?;
        let mut totals: Vec<Option<f32>> = vec![None; samples.len()];
        let mut parts: Vec<Vec<Component>> = vec![Vec::new(); samples.len()];
        for (reward, weight) in &self.terms {
            super::check_weight(reward.name(), *weight)?;
            let values = reward.score_batch(samples)?;
            check_batch_length(reward.name(), samples.len(), values.len())?;
            let mut scores: Vec<Option<f32>> = values.iter().map(|value| value.score).collect();
            for group in scores.chunks_mut(self.group_size) {
                standardize(group, self.epsilon);
            }
            for (((total, components), value), normalized) in
                totals.iter_mut().zip(&mut parts).zip(values).zip(scores)
            {
                if let Some(score) = normalized {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn standardize_ignores_none_and_never_gives_nan() {
        let mut group = [Some(1.0), None, Some(3.0)];
        standardize(&mut group, 1e-4);
        let a = group[0].expect("some");
        let c = group[2].expect("some");
        assert!(
            (a + c).abs() < 1e-6 && a < 0.0 && (c - 1.0).abs() < 1e-3,
            "{group:?}"
        );
        assert_eq!(group[1], None);
        let mut equal = [Some(2.0), Some(2.0)];
        standardize(&mut equal, 1e-4);
        assert_eq!(equal, [Some(0.0), Some(0.0)]);
    }
}
