//! Diagnostics of one GRPO loss evaluation, with TRL's metric names.

use serde::{Deserialize, Serialize};

/// Clipping and KL statistics of a GRPO loss evaluation.
///
/// A token is *low-clipped* when its ratio is below `1 − ε` with a negative advantage and
/// *high-clipped* when above `1 + ε_high` with a positive advantage (the cases where the clipped
/// branch wins and the gradient vanishes). With two-sided clipping the ratio compared is the one
/// already capped at `delta`, as in TRL.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct GrpoLossMetrics {
    /// `kl`: mean per-token KL to the reference over active tokens; `None` when `beta == 0`.
    pub kl: Option<f32>,
    /// `clip_ratio/low_mean`: fraction of active tokens (sequences, at sequence level) low-clipped.
    pub clip_ratio_low_mean: f32,
    /// `clip_ratio/high_mean`: fraction high-clipped.
    pub clip_ratio_high_mean: f32,
    /// `clip_ratio/region_mean`: fraction clipped either way.
    pub clip_ratio_region_mean: f32,
    /// `clip_ratio/low_min`: smallest per-sequence low-clipped fraction (empty sequences ignored;
    /// NaN if all are empty).
    pub clip_ratio_low_min: f32,
    /// `clip_ratio/high_max`: largest per-sequence high-clipped fraction (NaN if all are empty).
    pub clip_ratio_high_max: f32,
}

impl GrpoLossMetrics {
    /// The metrics as `(TRL name, value)` pairs (`kl` only when present).
    pub fn named(&self) -> Vec<(&'static str, f32)> {
        let mut out = Vec::with_capacity(6);
        if let Some(kl) = self.kl {
            out.push(("kl", kl));
        }
        out.extend([
            ("clip_ratio/low_mean", self.clip_ratio_low_mean),
            ("clip_ratio/high_mean", self.clip_ratio_high_mean),
            ("clip_ratio/region_mean", self.clip_ratio_region_mean),
            ("clip_ratio/low_min", self.clip_ratio_low_min),
            ("clip_ratio/high_max", self.clip_ratio_high_max),
        ]);
        out
    }

    /// Computes the clip statistics on the host.
    ///
    /// `ratios` is row-major `[batch, width]` with `width` = `steps` (token level) or 1 (sequence
    /// level); `mask` is `[batch, steps]`; `kl` is the already reduced KL metric.
    #[expect(
        clippy::too_many_arguments,
        reason = "internal helper fed by GrpoLoss::forward only"
    )]
    pub(crate) fn from_host(
        ratios: &[f32],
        width: usize,
        advantages: &[f32],
        mask: &[f32],
        steps: usize,
        low: f32,
        high: f32,
        kl: Option<f32>,
    ) -> Self {
        let batch = advantages.len();
        let (mut low_sum, mut high_sum, mut region_sum, mut count) =
            (0.0f64, 0.0f64, 0.0f64, 0.0f64);
        let (mut low_min, mut high_max) = (f32::NAN, f32::NAN);
        for row in 0..batch {
            let adv = advantages[row];
            let (mut row_low, mut row_high, mut row_count) = (0.0f64, 0.0f64, 0.0f64);
            for col in 0..width {
                let ratio = ratios[row * width + col];
                let weight = if width == 1 {
                    1.0
                } else {
                    f64::from(mask[row * steps + col])
                };
                let is_low = ratio < low && adv < 0.0;
                let is_high = ratio > high && adv > 0.0;
                row_low += weight * f64::from(u8::from(is_low));
                row_high += weight * f64::from(u8::from(is_high));
                region_sum += weight * f64::from(u8::from(is_low || is_high));
                row_count += weight;
            }
            low_sum += row_low;
            high_sum += row_high;
            count += row_count;
            if row_count > 0.0 {
                let (l, h) = ((row_low / row_count) as f32, (row_high / row_count) as f32);
                low_min = if low_min.is_nan() { l } else { low_min.min(l) };
                high_max = if high_max.is_nan() {
                    h
                } else {
                    high_max.max(h)
                };
            }
        }
        let count = count.max(1.0);
        Self {
            kl,
            clip_ratio_low_mean: (low_sum / count) as f32,
            clip_ratio_high_mean: (high_sum / count) as f32,
            clip_ratio_region_mean: (region_sum / count) as f32,
            clip_ratio_low_min: low_min,
            clip_ratio_high_max: high_max,
        }
    }
}
