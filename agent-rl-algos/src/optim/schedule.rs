//! Learning-rate schedules with linear warmup, as Hugging Face's `get_scheduler` defines them.

use serde::{Deserialize, Serialize};

/// Shape of the learning rate after warmup (HF's `lr_scheduler_type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LrSchedule {
    /// Constant after warmup.
    Constant,
    /// Linear decay to 0 at the last step.
    Linear,
    /// Half-cosine decay to 0 at the last step.
    Cosine,
}

impl LrSchedule {
    /// Multiplier of the peak learning rate at optimiser step `step` (0-based): `step / warmup`
    /// during warmup, then the decay over the remaining `total_steps − warmup` steps.
    pub fn factor(self, step: usize, warmup: usize, total_steps: usize) -> f64 {
        if step < warmup {
            return step as f64 / warmup.max(1) as f64;
        }
        let remaining = total_steps.saturating_sub(warmup).max(1) as f64;
        let progress = (step - warmup) as f64 / remaining;
        match self {
            LrSchedule::Constant => 1.0,
            LrSchedule::Linear => (total_steps.saturating_sub(step) as f64 / remaining).max(0.0),
            LrSchedule::Cosine => (0.5 * (1.0 + (std::f64::consts::PI * progress).cos())).max(0.0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_hugging_face_formulas() {
        // warmup 2 of 10 steps
        let lin: Vec<f64> = (0..10)
            .map(|s| LrSchedule::Linear.factor(s, 2, 10))
            .collect();
        let expected = [0.0, 0.5, 1.0, 0.875, 0.75, 0.625, 0.5, 0.375, 0.25, 0.125];
        for (a, e) in lin.iter().zip(expected) {
            assert!((a - e).abs() < 1e-12, "{lin:?}");
        }
        assert!((LrSchedule::Cosine.factor(6, 2, 10) - 0.5).abs() < 1e-12);
        assert!((LrSchedule::Cosine.factor(2, 2, 10) - 1.0).abs() < 1e-12);
        assert_eq!(LrSchedule::Constant.factor(9, 2, 10), 1.0);
        assert_eq!(LrSchedule::Linear.factor(0, 0, 4), 1.0);
    }
}
