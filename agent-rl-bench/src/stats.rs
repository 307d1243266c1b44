//! Summaries of repeated measurements.

/// The median of `values` (the upper one of the middle two for an even count); NaN when empty.
pub fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(f64::NAN)
}

/// Mean and unbiased standard deviation of `values` (sd 0 for fewer than two).
pub fn mean_sd(values: &[f32]) -> (f32, f32) {
    let n = values.len().max(1) as f32;
    let mean = values.iter().sum::<f32>() / n;
    let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f32>() / (n - 1.0).max(1.0);
    (mean, var.sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_takes_the_upper_middle() {
        assert_eq!(median(vec![3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(vec![4.0, 1.0, 3.0, 2.0]), 3.0);
        assert!(median(Vec::new()).is_nan());
    }

    #[test]
    fn mean_sd_is_unbiased_and_zero_for_one_value() {
        let (mean, sd) = mean_sd(&[1.0, 2.0, 3.0]);
        assert!((mean - 2.0).abs() < 1e-6 && (sd - 1.0).abs() < 1e-6);
        assert_eq!(mean_sd(&[5.0]), (5.0, 0.0));
    }
}
