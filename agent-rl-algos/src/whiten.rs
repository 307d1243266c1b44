//! Masked whitening of per-token values (TRL's `masked_whiten`), on the host.

use crate::error::{AlgoError, Result};

/// Added to the variance before the inverse square root (TRL's constant).
pub const WHITEN_EPSILON: f64 = 1e-8;

/// Mean and unbiased variance of `values` where `mask` is set.
///
/// # Errors
/// [`AlgoError::InvalidInput`] when the lengths differ or fewer than 2 values are in the mask
/// (the unbiased variance is undefined; TRL divides by zero there).
pub fn masked_mean_var(values: &[f32], mask: &[bool]) -> Result<(f64, f64)> {
    if values.len() != mask.len() {
        return Err(AlgoError::input(
            "mask",
            format!("has {} entries for {} values", mask.len(), values.len()),
        ));
    }
    let kept = || {
        values
            .iter()
            .zip(mask)
            .filter(|(_, m)| **m)
            .map(|(&v, _)| f64::from(v))
    };
    let n = kept().count();
    if n < 2 {
        return Err(AlgoError::input(
            "mask",
            format!("selects {n} values; whitening needs at least 2"),
        ));
    }
    let n = n as f64;
    let mean = kept().sum::<f64>() / n;
    let var = kept().map(|v| (v - mean).powi(2)).sum::<f64>() / n * (n / (n - 1.0));
    Ok((mean, var))
}

/// `(v − mean) / sqrt(var + 1e-8)` with the mean and unbiased variance taken over the masked
/// entries; with `shift_mean == false` the mean is added back (only the scale changes, as TRL
/// does for rewards). Entries outside the mask become 0 (TRL's `masked_fill` that follows each
/// of its `masked_whiten` calls).
///
/// # Errors
/// As [`masked_mean_var`].
///
/// ```
/// use agent_rl_algos::masked_whiten;
/// let w = masked_whiten(&[1.0, 3.0, 100.0], &[true, true, false], true)?;
/// assert!((w[0] + 0.7071).abs() < 1e-3 && (w[1] - 0.7071).abs() < 1e-3 && w[2] == 0.0);
/// # Ok::<(), agent_rl_algos::AlgoError>(())
/// ```
pub fn masked_whiten(values: &[f32], mask: &[bool], shift_mean: bool) -> Result<Vec<f32>> {
    let (mean, var) = masked_mean_var(values, mask)?;
    let scale = 1.0 / (var + WHITEN_EPSILON).sqrt();
    Ok(values
        .iter()
        .zip(mask)
        .map(|(&v, &keep)| {
            if !keep {
                return 0.0;
            }
            let w = (f64::from(v) - mean) * scale;
            (if shift_mean { w } else { w + mean }) as f32
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unit_variance_and_errors() {
        let w = masked_whiten(&[2.0, 4.0, 6.0, 8.0], &[true; 4], true).expect("valid");
        let mean: f32 = w.iter().sum::<f32>() / 4.0;
        let var: f32 = w.iter().map(|x| (x - mean).powi(2)).sum::<f32>() / 3.0;
        assert!(mean.abs() < 1e-6 && (var - 1.0).abs() < 1e-6);
        let kept = masked_whiten(&[2.0, 4.0], &[true; 2], false).expect("valid");
        assert!(
            (kept[0] + kept[1] - 6.0).abs() < 1e-5,
            "mean kept: {kept:?}"
        );
        assert!(masked_whiten(&[1.0, 2.0], &[true, false], true).is_err());
        assert!(masked_whiten(&[1.0, 2.0], &[true], true).is_err());
    }
}
