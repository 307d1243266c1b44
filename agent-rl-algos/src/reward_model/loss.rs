//! The Bradley–Terry preference loss of reward models and its metrics, as TRL's
//! `RewardTrainer.compute_loss` computes them.

use burn::prelude::*;
use burn::tensor::activation::log_sigmoid;
use serde::{Deserialize, Serialize};

/// What TRL's reward trainer logs about a batch of preference pairs.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct PreferenceMetrics {
    /// `accuracy`: fraction of pairs with `r_chosen > r_rejected` (ties count as wrong).
    pub accuracy: f32,
    /// `margin`: mean of `r_chosen − r_rejected`.
    pub margin: f32,
    /// `min_reward` over chosen and rejected rewards.
    pub min_reward: f32,
    /// `mean_reward` over chosen and rejected rewards.
    pub mean_reward: f32,
    /// `max_reward` over chosen and rejected rewards.
    pub max_reward: f32,
    /// `rewards/chosen`: mean reward of the chosen sequences.
    pub mean_chosen: f32,
    /// `rewards/rejected`: mean reward of the rejected sequences.
    pub mean_rejected: f32,
}

impl PreferenceMetrics {
    /// The metrics of paired rewards (`chosen[i]` against `rejected[i]`); all zero when empty.
    pub fn from_rewards(chosen: &[f32], rejected: &[f32]) -> Self {
        let pairs = chosen.len().min(rejected.len());
        if pairs == 0 {
            return Self::default();
        }
        let (chosen, rejected) = (&chosen[..pairs], &rejected[..pairs]);
        let n = pairs as f64;
        let mean = |values: &[f32]| values.iter().map(|&v| f64::from(v)).sum::<f64>() / n;
        let all = || chosen.iter().chain(rejected).copied();
        let correct = chosen.iter().zip(rejected).filter(|(c, r)| c > r).count();
        let (mean_chosen, mean_rejected) = (mean(chosen), mean(rejected));
        Self {
            accuracy: (correct as f64 / n) as f32,
            margin: (mean_chosen - mean_rejected) as f32,
            min_reward: all().fold(f32::INFINITY, f32::min),
            mean_reward: ((mean_chosen + mean_rejected) / 2.0) as f32,
            max_reward: all().fold(f32::NEG_INFINITY, f32::max),
            mean_chosen: mean_chosen as f32,
            mean_rejected: mean_rejected as f32,
        }
    }

    /// The metrics as `(TRL name, value)` pairs; `prefix` is `""` for training, `"eval_"` for
    /// evaluation (TRL's convention).
    pub fn named(&self, prefix: &str) -> Vec<(String, f64)> {
        [
            ("accuracy", self.accuracy),
            ("margin", self.margin),
            ("min_reward", self.min_reward),
            ("mean_reward", self.mean_reward),
            ("max_reward", self.max_reward),
            ("rewards/chosen", self.mean_chosen),
            ("rewards/rejected", self.mean_rejected),
        ]
        .into_iter()
        .map(|(name, value)| (format!("{prefix}{name}"), f64::from(value)))
        .collect()
    }
}

/// The mean Bradley–Terry loss of a batch of pairs:
/// `mean(−log σ(r_chosen − r_rejected − margin)) + c · mean((r_chosen + r_rejected)²)`, the
/// second term only with a centring coefficient `c` (Eisenstein et al., 2023, "Helping or
/// Herding?", as TRL's `center_rewards_coefficient`). `log σ` is computed stably for large
/// differences.
///
/// ```
/// use agent_rl_algos::reward_model::preference_loss;
/// use burn::backend::{Autodiff, Flex};
/// use burn::tensor::Tensor;
/// type B = Autodiff<Flex>;
/// let device = Default::default();
/// let chosen = Tensor::<B, 1>::from_floats([2.0, 0.0], &device).require_grad();
/// let rejected = Tensor::<B, 1>::from_floats([0.0, 1.0], &device);
/// let loss = preference_loss(chosen.clone(), rejected, None, None);
/// let grads = loss.backward();
/// // Descent raises the chosen rewards.
/// let grad = chosen.grad(&grads).expect("tracked").into_data().to_vec::<f32>().expect("f32");
/// assert!(grad.iter().all(|&g| g < 0.0));
/// ```
///
/// # Shapes
/// - `chosen`, `rejected`, `margin`: `[pairs]` → `[1]`
pub fn preference_loss<B: Backend>(
    chosen: Tensor<B, 1>,
    rejected: Tensor<B, 1>,
    margin: Option<Tensor<B, 1>>,
    center_rewards_coefficient: Option<f32>,
) -> Tensor<B, 1> {
    let mut difference = chosen.clone() - rejected.clone();
    if let Some(margin) = margin {
        difference = difference - margin;
    }
    let mut loss = log_sigmoid(difference).mean().neg();
    if let Some(coefficient) = center_rewards_coefficient {
        let sum = chosen + rejected;
        loss = loss + (sum.clone() * sum).mean().mul_scalar(coefficient);
    }
    loss
}
