//! PPO's clipped policy loss, clipped value loss and entropy bonus (TRL 1.12's `PPOTrainer`).

use burn::tensor::{Tensor, backend::Backend};
use serde::{Deserialize, Serialize};

use crate::error::{AlgoError, Result};
use crate::loss::masked_mean;

/// The settings of the PPO loss (a view of [`PpoConfig`](crate::PpoConfig)).
///
/// With ratio `ρ = exp(logp − old_logp)` per policy token and the critic's prediction `v`:
/// - policy loss `pg = mean_mask(max(−A·ρ, −A·clip(ρ, 1 − ε, 1 + ε)))`;
/// - value loss `vf = ½ · mean_vmask(max((v − R)², (clip(v, v_old − ε_v, v_old + ε_v) − R)²))`;
/// - `loss = pg + vf_coef · vf − entropy_coef · mean_mask(H)`.
///
/// This is TRL 1.12's PPO loss (checked against it by `tests/ppo_golden.rs`), plus the optional
/// entropy bonus TRL does not have.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PpoLoss {
    /// Policy clip range ε.
    pub cliprange: f32,
    /// Value clip range ε_v around the rollout's values.
    pub cliprange_value: f32,
    /// Weight of the value loss.
    pub vf_coef: f32,
    /// Weight of the entropy bonus (0 = none).
    pub entropy_coef: f32,
}

/// The tensors of one PPO loss evaluation, all `[batch, steps]`.
#[derive(Debug, Clone)]
pub struct PpoLossInputs<B: Backend> {
    /// Current policy log-probabilities of the sampled tokens (with gradients).
    pub logps: Tensor<B, 2>,
    /// Log-probabilities at rollout time.
    pub old_logps: Tensor<B, 2>,
    /// Per-token advantages (whitened).
    pub advantages: Tensor<B, 2>,
    /// 1 for policy tokens in the loss, 0 for prompt padding, tool results and padding.
    pub mask: Tensor<B, 2>,
    /// Current critic predictions (with gradients).
    pub values: Tensor<B, 2>,
    /// Critic predictions at rollout time.
    pub old_values: Tensor<B, 2>,
    /// Value targets (GAE returns).
    pub returns: Tensor<B, 2>,
    /// 1 where the value loss counts (usually `mask`).
    pub value_mask: Tensor<B, 2>,
    /// Per-token policy entropies (with gradients) for the bonus; `None` when `entropy_coef == 0`.
    pub entropies: Option<Tensor<B, 2>>,
}

/// Diagnostics of one evaluation, averaged over the masked tokens.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct PpoLossMetrics {
    /// `loss/policy_avg`: the clipped policy loss.
    pub policy_loss: f32,
    /// `loss/value_avg`: the clipped value loss (before `vf_coef`).
    pub value_loss: f32,
    /// `policy/approxkl_avg`: `½ (logp − old_logp)²` over policy tokens (TRL averages over
    /// padding too, where it is 0).
    pub approxkl: f32,
    /// `policy/clipfrac_avg`: fraction of policy tokens where the clipped branch is taken.
    pub clipfrac: f32,
    /// `val/clipfrac_avg`: fraction of value tokens where the clipped value loss is larger.
    pub value_clipfrac: f32,
    /// `val/ratio`: mean importance ratio over policy tokens (TRL: over padding too, ratio 1).
    pub ratio: f32,
    /// `policy/entropy_avg`: mean entropy over policy tokens, when entropies were given.
    pub entropy: Option<f32>,
}

/// The loss and its diagnostics.
#[derive(Debug, Clone)]
pub struct PpoLossOutput<B: Backend> {
    /// `pg + vf_coef · vf − entropy_coef · H`, `[1]`.
    pub loss: Tensor<B, 1>,
    /// Host-side diagnostics.
    pub metrics: PpoLossMetrics,
}

fn scalar<B: Backend>(t: Tensor<B, 1>) -> f32 {
    t.detach()
        .into_data()
        .iter::<f32>()
        .next()
        .unwrap_or(f32::NAN)
}

impl PpoLoss {
    /// Computes the loss (differentiable w.r.t. `logps`, `values` and `entropies`).
    ///
    /// # Shapes
    /// - every input `[batch, steps]`; returns `loss`: `[1]`
    ///
    /// # Errors
    /// [`AlgoError::ShapeMismatch`] when an input's shape differs from `logps`'.
    pub fn forward<B: Backend>(&self, inputs: PpoLossInputs<B>) -> Result<PpoLossOutput<B>> {
        let PpoLossInputs {
            logps,
            old_logps,
            advantages,
            mask,
            values,
            old_values,
            returns,
            value_mask,
            entropies,
        } = inputs;
        let shape = logps.dims();
        let mut named = vec![
            ("old_logps", old_logps.dims()),
            ("advantages", advantages.dims()),
            ("mask", mask.dims()),
            ("values", values.dims()),
            ("old_values", old_values.dims()),
            ("returns", returns.dims()),
            ("value_mask", value_mask.dims()),
        ];
        if let Some(e) = &entropies {
            named.push(("entropies", e.dims()));
        }
        if let Some((name, found)) = named.into_iter().find(|(_, d)| *d != shape) {
            return Err(AlgoError::ShapeMismatch {
                name: name.into(),
                expected: shape.to_vec(),
                found: found.to_vec(),
            });
        }

        // Policy: TRL's pg_losses / pg_losses2.
        let log_ratio = logps - old_logps;
        let ratio = log_ratio.clone().exp();
        let clipped_ratio = ratio
            .clone()
            .clamp(1.0 - self.cliprange, 1.0 + self.cliprange);
        let unclipped = advantages.clone().neg() * ratio.clone();
        let clipped = advantages.neg() * clipped_ratio;
        let pg_clipped = clipped
            .clone()
            .detach()
            .greater(unclipped.clone().detach())
            .float();
        let policy_loss = masked_mean(unclipped.max_pair(clipped), mask.clone());

        // Value: TRL's vf_losses1 / vf_losses2.
        let values_clipped = values
            .clone()
            .max_pair(old_values.clone().sub_scalar(self.cliprange_value))
            .min_pair(old_values.add_scalar(self.cliprange_value));
        let vf1 = (values - returns.clone()).powi_scalar(2);
        let vf2 = (values_clipped - returns).powi_scalar(2);
        let vf_clipped = vf2.clone().detach().greater(vf1.clone().detach()).float();
        let value_loss = masked_mean(vf1.max_pair(vf2), value_mask.clone()).mul_scalar(0.5);

        let mut loss = policy_loss.clone() + value_loss.clone().mul_scalar(self.vf_coef);
        let entropy = entropies.map(|h| masked_mean(h, mask.clone()));
        if let Some(h) = &entropy
            && self.entropy_coef != 0.0
        {
            loss = loss - h.clone().mul_scalar(self.entropy_coef);
        }

        let log_ratio = log_ratio.detach();
        let metrics = PpoLossMetrics {
            policy_loss: scalar(policy_loss),
            value_loss: scalar(value_loss),
            approxkl: scalar(masked_mean(
                log_ratio.clone().powi_scalar(2).mul_scalar(0.5),
                mask.clone(),
            )),
            clipfrac: scalar(masked_mean(pg_clipped, mask.clone())),
            value_clipfrac: scalar(masked_mean(vf_clipped, value_mask)),
            ratio: scalar(masked_mean(ratio.detach(), mask)),
            entropy: entropy.map(scalar),
        };
        Ok(PpoLossOutput { loss, metrics })
    }
}
