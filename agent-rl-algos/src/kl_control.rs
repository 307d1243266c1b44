//! The KL coefficient of PPO's reward shaping: fixed, or adapted toward a target KL.

use serde::{Deserialize, Serialize};

use crate::error::{AlgoError, Result};

/// The proportional error of the adaptive controller is clipped to ±0.2 (Ziegler et al.).
const MAX_PROPORTIONAL_ERROR: f64 = 0.2;

/// Adaptive KL control settings ([Ziegler et al. 2019](https://arxiv.org/abs/1909.08593), §2.2,
/// the `AdaptiveKLController` older TRL releases shipped).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AdaptiveKl {
    /// The KL (summed over a sequence's tokens, per sequence) to steer toward. Must be > 0.
    pub target: f32,
    /// Episodes over which the coefficient may change by a factor of about e^0.2. Must be > 0.
    pub horizon: f32,
}

/// The current KL coefficient β and how it changes.
///
/// Fixed: β stays at its initial value. Adaptive: after each rollout batch of `n` episodes with
/// mean sequence KL `kl`, `e = clip(kl / target − 1, −0.2, 0.2)` and `β ← β · (1 + e · n / horizon)`.
///
/// ```
/// use agent_rl_algos::{AdaptiveKl, KlController};
/// let mut kl = KlController::new(0.1, Some(AdaptiveKl { target: 6.0, horizon: 10_000.0 }))?;
/// kl.update(12.0, 100); // twice the target: β grows by 0.2 · 100 / 10000
/// assert!((kl.value() - 0.1 * 1.002).abs() < 1e-7);
/// # Ok::<(), agent_rl_algos::AlgoError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct KlController {
    value: f64,
    adaptive: Option<AdaptiveKl>,
}

impl KlController {
    /// A controller starting at `init_kl_coef`, adaptive when `adaptive` is given.
    ///
    /// # Errors
    /// [`AlgoError::InvalidConfig`] for a negative or non-finite coefficient, or a target or
    /// horizon that is not > 0.
    pub fn new(init_kl_coef: f32, adaptive: Option<AdaptiveKl>) -> Result<Self> {
        if !(init_kl_coef.is_finite() && init_kl_coef >= 0.0) {
            return Err(AlgoError::config(
                "kl_coef",
                format!("is {init_kl_coef}; set a finite value >= 0"),
            ));
        }
        if let Some(a) = adaptive {
            for (field, x) in [("kl_target", a.target), ("kl_horizon", a.horizon)] {
                if !(x.is_finite() && x > 0.0) {
                    return Err(AlgoError::config(field, format!("is {x}; must be > 0")));
                }
            }
        }
        Ok(Self {
            value: f64::from(init_kl_coef),
            adaptive,
        })
    }

    /// The current coefficient β.
    pub fn value(&self) -> f32 {
        self.value as f32
    }

    /// Sets β (e.g. when resuming a run).
    pub fn set_value(&mut self, value: f32) {
        self.value = f64::from(value);
    }

    /// Updates β after a rollout batch of `episodes` episodes whose mean sequence KL was
    /// `current_kl`; a fixed controller, or a non-finite KL, leaves it unchanged.
    pub fn update(&mut self, current_kl: f32, episodes: usize) {
        let Some(adaptive) = self.adaptive else {
            return;
        };
        if !current_kl.is_finite() {
            return;
        }
        let error = (f64::from(current_kl) / f64::from(adaptive.target) - 1.0)
            .clamp(-MAX_PROPORTIONAL_ERROR, MAX_PROPORTIONAL_ERROR);
        self.value *= 1.0 + error * episodes as f64 / f64::from(adaptive.horizon);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_stays_adaptive_moves_toward_target() {
        let mut fixed = KlController::new(0.05, None).expect("valid");
        fixed.update(100.0, 64);
        assert_eq!(fixed.value(), 0.05);
        let adaptive = AdaptiveKl {
            target: 1.0,
            horizon: 100.0,
        };
        let mut kl = KlController::new(0.5, Some(adaptive)).expect("valid");
        kl.update(0.5, 10); // half the target: e = -0.5 clipped to -0.2
        assert!((f64::from(kl.value()) - 0.5 * (1.0 - 0.2 * 0.1)).abs() < 1e-7);
        let before = kl.value();
        kl.update(1.1, 10); // e = 0.1
        assert!((f64::from(kl.value()) - f64::from(before) * 1.01).abs() < 1e-7);
        kl.update(f32::NAN, 10);
        assert!(kl.value().is_finite());
        assert!(KlController::new(-1.0, None).is_err());
        let bad = AdaptiveKl {
            target: 0.0,
            horizon: 1.0,
        };
        assert!(KlController::new(0.1, Some(bad)).is_err());
    }
}
