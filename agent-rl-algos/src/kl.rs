//! Per-token KL estimators between the policy and the reference model.
//!
//! With `r = log π_ref − log π_θ` evaluated on tokens sampled from the policy
//! ([Schulman, "Approximating KL Divergence"](http://joschu.net/blog/kl-approx.html)):
//! `k1 = −r` (unbiased, high variance, can be negative), `k2 = r²/2` (biased, low variance),
//! `k3 = eʳ − r − 1` (unbiased, non-negative; TRL's and DeepSeekMath's choice).

use burn::tensor::{Tensor, backend::Backend};
use serde::{Deserialize, Serialize};

/// Which estimator of KL(π_θ ‖ π_ref) to use per token.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum KlEstimator {
    /// `log π_θ − log π_ref`.
    K1,
    /// `½ (log π_θ − log π_ref)²`.
    K2,
    /// `π_ref/π_θ − log(π_ref/π_θ) − 1`.
    K3,
}

impl KlEstimator {
    /// The estimate for one token from its log-probability under the policy and the reference
    /// (the scalar form of [`per_token_kl`], for host-side reward shaping).
    pub fn estimate(self, logp: f32, ref_logp: f32) -> f32 {
        let r = f64::from(ref_logp) - f64::from(logp);
        let kl = match self {
            Self::K1 => -r,
            Self::K2 => 0.5 * r * r,
            Self::K3 => r.exp() - r - 1.0,
        };
        kl as f32
    }
}

/// Per-token KL estimate from the policy's and the reference model's log-probabilities.
///
/// # Shapes
/// - `logps`, `ref_logps`: `[batch, steps]`; returns `[batch, steps]`.
pub fn per_token_kl<B: Backend, const D: usize>(
    logps: Tensor<B, D>,
    ref_logps: Tensor<B, D>,
    estimator: KlEstimator,
) -> Tensor<B, D> {
    let r = ref_logps - logps;
    match estimator {
        KlEstimator::K1 => r.neg(),
        KlEstimator::K2 => r.powi_scalar(2).mul_scalar(0.5),
        KlEstimator::K3 => (r.clone().exp() - r).sub_scalar(1.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use burn::backend::Flex;

    #[test]
    fn estimators_match_formulas() {
        let device = Default::default();
        let logps = Tensor::<Flex, 1>::from_floats([-1.0, -2.0, -0.5], &device);
        let refs = Tensor::<Flex, 1>::from_floats([-1.5, -2.0, -0.1], &device);
        let get = |e| -> Vec<f32> {
            per_token_kl(logps.clone(), refs.clone(), e)
                .into_data()
                .iter::<f32>()
                .collect()
        };
        let rs = [-0.5f32, 0.0, 0.4];
        for ((k1, k2), (k3, r)) in get(KlEstimator::K1)
            .into_iter()
            .zip(get(KlEstimator::K2))
            .zip(get(KlEstimator::K3).into_iter().zip(rs))
        {
            assert!((k1 + r).abs() < 1e-6);
            assert!((k2 - r * r / 2.0).abs() < 1e-6);
            assert!((k3 - (r.exp() - r - 1.0)).abs() < 1e-6);
            assert!(k3 >= 0.0);
        }
        for estimator in [KlEstimator::K1, KlEstimator::K2, KlEstimator::K3] {
            let scalar: Vec<f32> = [(-1.0, -1.5), (-2.0, -2.0), (-0.5, -0.1)]
                .iter()
                .map(|&(l, r)| estimator.estimate(l, r))
                .collect();
            for (s, t) in scalar.iter().zip(get(estimator)) {
                assert!((s - t).abs() < 1e-6, "{estimator:?}: {s} vs {t}");
            }
        }
    }
}
