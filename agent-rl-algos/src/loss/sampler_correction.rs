//! Truncated importance sampling against the rollout engine: when episodes are sampled by
//! another engine than the learner (an inference server), the two disagree slightly on the
//! log-probability of the same tokens (other kernels, batching, precision, or weights one step
//! behind). Each policy token's loss is then weighted by `min(exp(log π_learner − log π_sampler),
//! cap)` — the truncated importance sampling of [Yao et al. 2025, "Your efficient RL framework
//! secretly brings you off-policy RL training"](https://fengyao.notion.site/off-policy-rl), as
//! TRL's `vllm_importance_sampling_correction` (token truncation, cap 2) and verl apply it.

use serde::{Deserialize, Serialize};

/// Per-token weights of one batch and the sums its metrics come from.
#[derive(Debug, Clone, PartialEq)]
pub struct SamplerCorrection {
    /// `min(exp(learner − sampler), cap)` per token in the loss, 1 elsewhere (row-major, the
    /// shape of the inputs).
    pub weights: Vec<f32>,
    /// The batch's statistics (merge several with [`SamplerMismatch::merge`]).
    pub mismatch: SamplerMismatch,
}

/// Sums over the tokens in the loss, from which [`SamplerMismatchMetrics`] are read.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct SamplerMismatch {
    /// Tokens in the loss.
    pub tokens: usize,
    /// Sum of the truncated weights.
    pub weight_sum: f64,
    /// Tokens whose weight the cap cut.
    pub clipped: usize,
    /// Sum of `|log π_learner − log π_sampler|`.
    pub abs_log_ratio_sum: f64,
    /// Largest `|log π_learner − log π_sampler|` (0 when there are no tokens).
    pub abs_log_ratio_max: f32,
}

/// What is logged of the correction (TRL's `sampling/*` names, see
/// [`SamplerMismatchMetrics::named`]).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct SamplerMismatchMetrics {
    /// `sampling/importance_sampling_ratio/mean`: mean truncated weight over loss tokens.
    pub mean_weight: f32,
    /// `sampling/importance_sampling_ratio/clipped_ratio`: share of loss tokens the cap cut.
    pub clipped_ratio: f32,
    /// `sampling/sampling_logp_difference/mean`: mean `|log π_learner − log π_sampler|`.
    pub mean_abs_log_ratio: f32,
    /// `sampling/sampling_logp_difference/max`: largest `|log π_learner − log π_sampler|`.
    pub max_abs_log_ratio: f32,
}

impl SamplerMismatch {
    /// Adds another batch's sums.
    pub fn merge(&mut self, other: &Self) {
        self.tokens += other.tokens;
        self.weight_sum += other.weight_sum;
        self.clipped += other.clipped;
        self.abs_log_ratio_sum += other.abs_log_ratio_sum;
        self.abs_log_ratio_max = self.abs_log_ratio_max.max(other.abs_log_ratio_max);
    }

    /// The means; `None` when no token was in the loss.
    pub fn metrics(&self) -> Option<SamplerMismatchMetrics> {
        (self.tokens > 0).then(|| {
            let n = self.tokens as f64;
            SamplerMismatchMetrics {
                mean_weight: (self.weight_sum / n) as f32,
                clipped_ratio: (self.clipped as f64 / n) as f32,
                mean_abs_log_ratio: (self.abs_log_ratio_sum / n) as f32,
                max_abs_log_ratio: self.abs_log_ratio_max,
            }
        })
    }
}

impl SamplerMismatchMetrics {
    /// The metrics as `(name, value)` pairs.
    pub fn named(&self) -> [(&'static str, f32); 4] {
        [
            ("sampling/importance_sampling_ratio/mean", self.mean_weight),
            (
                "sampling/importance_sampling_ratio/clipped_ratio",
                self.clipped_ratio,
            ),
            (
                "sampling/sampling_logp_difference/mean",
                self.mean_abs_log_ratio,
            ),
            (
                "sampling/sampling_logp_difference/max",
                self.max_abs_log_ratio,
            ),
        ]
    }
}

/// The truncated importance weights `min(exp(learner − sampler), cap)` of the tokens where
/// `mask > 0`, and 1 where `mask == 0` (padding, environment tokens: outside the loss anyway).
///
/// `learner` holds the learner's log-probabilities of the sampled tokens before the update
/// (the "old" policy), `sampler` those the rollout engine reported; all three slices are the
/// same row-major `[batch, steps]` layout.
///
/// # Panics
/// When the slices differ in length (an internal invariant: the trainer builds all three from
/// the same rows).
pub fn truncated_importance_weights(
    learner: &[f32],
    sampler: &[f32],
    mask: &[f32],
    cap: f32,
) -> SamplerCorrection {
    assert!(
        learner.len() == sampler.len() && sampler.len() == mask.len(),
        "learner, sampler and mask log-probabilities cover the same tokens"
    );
    let mut mismatch = SamplerMismatch::default();
    let weights = learner
        .iter()
        .zip(sampler)
        .zip(mask)
        .map(|((&learner, &sampler), &mask)| {
            if mask <= 0.0 {
                return 1.0;
            }
            let log_ratio = learner - sampler;
            let ratio = log_ratio.exp();
            let weight = ratio.min(cap);
            mismatch.tokens += 1;
            mismatch.weight_sum += f64::from(weight);
            mismatch.clipped += usize::from(ratio > cap);
            mismatch.abs_log_ratio_sum += f64::from(log_ratio.abs());
            mismatch.abs_log_ratio_max = mismatch.abs_log_ratio_max.max(log_ratio.abs());
            weight
        })
        .collect();
    SamplerCorrection { weights, mismatch }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Golden values worked by hand (cap 2):
    /// - learner −1.0, sampler −1.0: log-ratio 0, weight e⁰ = 1;
    /// - learner −0.5, sampler −1.5: log-ratio +1, e¹ = 2.71828 > 2, cut to 2 (clipped);
    /// - learner −2.0, sampler −1.5: log-ratio −0.5, e^−0.5 = 0.60653;
    /// - masked token (learner −9, sampler 0): weight 1, left out of every statistic;
    /// - learner −0.1, sampler −0.8: log-ratio +0.7, e^0.7 = 2.01375 > 2, cut to 2 (clipped).
    ///
    /// Over the four loss tokens: mean weight (1 + 2 + 0.60653 + 2) / 4 = 1.40163, clipped
    /// 2 / 4 = 0.5, mean |log-ratio| (0 + 1 + 0.5 + 0.7) / 4 = 0.55, max 1.
    #[test]
    fn weights_and_metrics_match_the_hand_computation() {
        let learner = [-1.0, -0.5, -2.0, -9.0, -0.1];
        let sampler = [-1.0, -1.5, -1.5, 0.0, -0.8];
        let mask = [1.0, 1.0, 1.0, 0.0, 1.0];
        let out = truncated_importance_weights(&learner, &sampler, &mask, 2.0);
        let want = [1.0, 2.0, 0.606_530_66, 1.0, 2.0];
        for (got, want) in out.weights.iter().zip(want) {
            assert!((got - want).abs() < 1e-6, "{:?}", out.weights);
        }
        let metrics = out.mismatch.metrics().expect("four loss tokens");
        assert!(
            (metrics.mean_weight - 1.401_632_7).abs() < 1e-6,
            "{metrics:?}"
        );
        assert!((metrics.clipped_ratio - 0.5).abs() < 1e-7);
        assert!((metrics.mean_abs_log_ratio - 0.55).abs() < 1e-6);
        assert!((metrics.max_abs_log_ratio - 1.0).abs() < 1e-6);
    }

    #[test]
    fn a_larger_cap_cuts_less_and_merging_pools_tokens() {
        let learner = [-0.5, -0.1];
        let sampler = [-1.5, -0.8];
        let mask = [1.0, 1.0];
        let loose = truncated_importance_weights(&learner, &sampler, &mask, 3.0);
        assert!((loose.weights[0] - std::f32::consts::E).abs() < 1e-6);
        assert_eq!(loose.mismatch.clipped, 0);
        let mut pooled = loose.mismatch;
        pooled.merge(&truncated_importance_weights(&[-1.0], &[-1.0], &[1.0], 3.0).mismatch);
        let metrics = pooled.metrics().expect("three tokens");
        let want = (std::f32::consts::E + 0.7f32.exp() + 1.0) / 3.0;
        assert!((metrics.mean_weight - want).abs() < 1e-6, "{metrics:?}");
        assert_eq!(SamplerMismatch::default().metrics(), None);
    }

    /// The weights multiply the surrogate per token: on-policy (ratio 1) with β = 0 and DAPO
    /// normalisation the loss is `−Σ w·A·mask / Σ mask`.
    #[test]
    fn the_grpo_loss_weights_each_token_by_the_correction() {
        use crate::config::GrpoConfig;
        use crate::loss::{GrpoLoss, GrpoLossInputs};
        use burn::backend::Flex;
        use burn::tensor::Tensor;
        let device = Default::default();
        let loss = |weights: Option<[[f32; 2]; 2]>| {
            GrpoLoss::from_config(&GrpoConfig::default())
                .forward(GrpoLossInputs::<Flex> {
                    logps: Tensor::from_floats([[-1.0, -0.5], [-2.0, -0.1]], &device),
                    old_logps: None,
                    ref_logps: None,
                    advantages: Tensor::from_floats([1.0, -0.5], &device),
                    mask: Tensor::from_floats([[1.0, 1.0], [1.0, 0.0]], &device),
                    num_items_in_batch: None,
                    sampler_weights: weights.map(|w| Tensor::from_floats(w, &device)),
                })
                .expect("valid inputs")
                .loss
                .into_data()
                .iter::<f32>()
                .next()
                .expect("scalar")
        };
        // Unweighted: −(1 + 1 − 0.5) / 3; weighted: −(2·1 + 0.5·1 + 1.5·(−0.5)) / 3.
        assert!((loss(None) + 1.5 / 3.0).abs() < 1e-6);
        let weighted = loss(Some([[2.0, 0.5], [1.5, 7.0]]));
        assert!((weighted + 1.75 / 3.0).abs() < 1e-6, "{weighted}");
    }
}
