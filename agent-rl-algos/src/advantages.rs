//! Group-relative advantages (GRPO) and zero-variance group detection, as pure functions.
//!
//! Conventions match TRL's `GRPOTrainer`: the baseline is the group mean; the standard deviation is
//! the unbiased one (Bessel's correction, `n − 1`); advantages are `(r − mean) / (std + 1e-4)`, so an
//! all-equal group gets exactly zero, never NaN. Unscorable completions (`None`) are left out of the
//! mean and std and get advantage 0.

use serde::{Deserialize, Serialize};

use crate::error::{AlgoError, Result};

/// Added to the standard deviation before dividing (TRL's constant).
pub const STD_EPSILON: f64 = 1e-4;

/// A standard deviation at or below this counts as zero (`torch.isclose(std, 0)`'s absolute tolerance).
pub const ZERO_STD_TOLERANCE: f64 = 1e-8;

/// How advantages are scaled by the reward standard deviation (TRL's `scale_rewards`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AdvantageScaling {
    /// Divide by the std of the completion's own group (original GRPO).
    Group,
    /// Divide by the std of the whole batch (more robust, [arXiv:2508.08221](https://arxiv.org/abs/2508.08221)).
    Batch,
    /// Do not scale: `r − mean` (Dr. GRPO, [arXiv:2503.20783](https://arxiv.org/abs/2503.20783)).
    None,
}

/// Mean and unbiased std of the scored values; std is `None` with fewer than 2 values.
fn mean_std(values: impl Iterator<Item = f64> + Clone) -> (Option<f64>, Option<f64>) {
    let n = values.clone().count();
    if n == 0 {
        return (None, None);
    }
    let mean = values.clone().sum::<f64>() / n as f64;
    if n < 2 {
        return (Some(mean), None);
    }
    let var = values.map(|v| (v - mean) * (v - mean)).sum::<f64>() / (n - 1) as f64;
    (Some(mean), Some(var.sqrt()))
}

fn check_groups(len: usize, group_size: usize) -> Result<()> {
    if group_size == 0 {
        return Err(AlgoError::input("group_size", "is 0; must be >= 1"));
    }
    if !len.is_multiple_of(group_size) {
        return Err(AlgoError::input(
            "rewards",
            format!("length {len} is not a multiple of group_size {group_size}"),
        ));
    }
    Ok(())
}

/// Group-relative advantages of `rewards`, laid out as consecutive groups of `group_size`.
///
/// # Errors
/// [`AlgoError::InvalidInput`] when `group_size` is 0, the length is not a multiple of it, or a
/// reward is not finite (use [`group_advantages_with_missing`] for unscorable completions).
///
/// ```
/// use agent_rl_algos::{group_advantages, AdvantageScaling};
/// let adv = group_advantages(&[1.0, 0.0, 0.5, 0.5], 2, AdvantageScaling::Group)?;
/// assert!(adv[0] > 0.7 && adv[1] < -0.7);
/// assert_eq!(&adv[2..], &[0.0, 0.0]); // all-equal group: zero, not NaN
/// # Ok::<(), agent_rl_algos::AlgoError>(())
/// ```
pub fn group_advantages(
    rewards: &[f32],
    group_size: usize,
    scaling: AdvantageScaling,
) -> Result<Vec<f32>> {
    if let Some(i) = rewards.iter().position(|r| !r.is_finite()) {
        return Err(AlgoError::input(
            format!("rewards[{i}]"),
            format!(
                "is {}; rewards must be finite (pass None via group_advantages_with_missing)",
                rewards[i]
            ),
        ));
    }
    let scored: Vec<Option<f32>> = rewards.iter().copied().map(Some).collect();
    group_advantages_with_missing(&scored, group_size, scaling)
}

/// Group-relative advantages where `None` marks an unscorable completion: it is excluded from its
/// group's mean and std, and its advantage is 0. A group with a single scored completion gets zero
/// advantages under [`AdvantageScaling::Group`] (its std is undefined), as in TRL.
///
/// # Errors
/// As [`group_advantages`].
pub fn group_advantages_with_missing(
    rewards: &[Option<f32>],
    group_size: usize,
    scaling: AdvantageScaling,
) -> Result<Vec<f32>> {
    check_groups(rewards.len(), group_size)?;
    if let Some(i) = rewards
        .iter()
        .position(|r| r.is_some_and(|r| !r.is_finite()))
    {
        return Err(AlgoError::input(
            format!("rewards[{i}]"),
            "is not finite; use None for unscorable",
        ));
    }
    let batch_std = match scaling {
        AdvantageScaling::Batch => mean_std(rewards.iter().flatten().map(|&r| f64::from(r))).1,
        _ => None,
    };
    let mut out = Vec::with_capacity(rewards.len());
    for group in rewards.chunks(group_size) {
        let (mean, group_std) = mean_std(group.iter().flatten().map(|&r| f64::from(r)));
        let std = match scaling {
            AdvantageScaling::Group => group_std,
            AdvantageScaling::Batch => batch_std,
            AdvantageScaling::None => Some(0.0),
        };
        for reward in group {
            let adv = match (reward, mean) {
                (Some(r), Some(mean)) => {
                    let centred = f64::from(*r) - mean;
                    match (scaling, std) {
                        (AdvantageScaling::None, _) => centred,
                        (_, Some(std)) => centred / (std + STD_EPSILON),
                        (_, None) => 0.0, // undefined std: no signal (TRL's NaN → 0)
                    }
                }
                _ => 0.0,
            };
            out.push(adv as f32);
        }
    }
    Ok(out)
}

/// Unbiased std of each group's scored rewards (`None` where fewer than 2 are scored).
///
/// # Errors
/// [`AlgoError::InvalidInput`] when `group_size` is 0 or does not divide the length.
pub fn group_reward_std(rewards: &[Option<f32>], group_size: usize) -> Result<Vec<Option<f32>>> {
    check_groups(rewards.len(), group_size)?;
    Ok(rewards
        .chunks(group_size)
        .map(|g| {
            mean_std(g.iter().flatten().map(|&r| f64::from(r)))
                .1
                .map(|s| s as f32)
        })
        .collect())
}

/// For each group: true when its scored rewards have zero variance (all equal), so every advantage
/// in it is zero and it carries no learning signal. Groups with fewer than 2 scored rewards count
/// as zero-variance too.
///
/// # Errors
/// As [`group_reward_std`].
pub fn zero_variance_groups(rewards: &[Option<f32>], group_size: usize) -> Result<Vec<bool>> {
    Ok(group_reward_std(rewards, group_size)?
        .into_iter()
        .map(|std| std.is_none_or(|s| f64::from(s) <= ZERO_STD_TOLERANCE))
        .collect())
}

/// Indices of the completions to keep when zero-variance groups are filtered out (DAPO's dynamic
/// sampling without resampling), in order.
///
/// # Errors
/// As [`group_reward_std`].
pub fn informative_completions(rewards: &[Option<f32>], group_size: usize) -> Result<Vec<usize>> {
    let zero = zero_variance_groups(rewards, group_size)?;
    Ok((0..rewards.len())
        .filter(|i| !zero[i / group_size])
        .collect())
}

/// Fraction of groups whose rewards all equal (TRL's `frac_reward_zero_std`, per group).
///
/// # Errors
/// As [`group_reward_std`].
pub fn frac_reward_zero_std(rewards: &[Option<f32>], group_size: usize) -> Result<f32> {
    let zero = zero_variance_groups(rewards, group_size)?;
    if zero.is_empty() {
        return Ok(0.0);
    }
    Ok(zero.iter().filter(|&&z| z).count() as f32 / zero.len() as f32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_hand_computed_bessel_std() {
        // group [1, 2, 3]: mean 2, unbiased std 1.
        let adv = group_advantages(&[1.0, 2.0, 3.0], 3, AdvantageScaling::Group).expect("valid");
        let expected = [-1.0 / 1.0001, 0.0, 1.0 / 1.0001];
        for (a, e) in adv.iter().zip(expected) {
            assert!((f64::from(*a) - e).abs() < 1e-6, "{a} vs {e}");
        }
    }

    #[test]
    fn none_scaling_only_centres() {
        let adv = group_advantages(&[1.0, 3.0], 2, AdvantageScaling::None).expect("valid");
        assert_eq!(adv, vec![-1.0, 1.0]);
    }

    #[test]
    fn batch_scaling_uses_global_std() {
        // groups [0, 2] and [10, 10]: batch std of [0, 2, 10, 10] = sqrt(88/3 - ...) computed here.
        let r = [0.0f32, 2.0, 10.0, 10.0];
        let mean = 5.5f64;
        let var = r
            .iter()
            .map(|&x| (f64::from(x) - mean).powi(2))
            .sum::<f64>()
            / 3.0;
        let adv = group_advantages(&r, 2, AdvantageScaling::Batch).expect("valid");
        assert!((f64::from(adv[0]) - (-1.0 / (var.sqrt() + STD_EPSILON))).abs() < 1e-6);
        assert_eq!(&adv[2..], &[0.0, 0.0]);
    }

    #[test]
    fn missing_rewards_are_excluded_and_get_zero() {
        let r = [Some(1.0), None, Some(3.0), None, None, Some(2.0)];
        let adv = group_advantages_with_missing(&r, 3, AdvantageScaling::Group).expect("valid");
        assert_eq!(adv[1], 0.0);
        assert!((adv[0] + adv[2]).abs() < 1e-6 && adv[0] < 0.0);
        assert_eq!(
            &adv[3..],
            &[0.0, 0.0, 0.0],
            "one scored completion: std undefined, no signal"
        );
        let zero = zero_variance_groups(&r, 3).expect("valid");
        assert_eq!(zero, vec![false, true]);
        assert_eq!(
            informative_completions(&r, 3).expect("valid"),
            vec![0, 1, 2]
        );
        assert_eq!(frac_reward_zero_std(&r, 3).expect("valid"), 0.5);
    }

    #[test]
    fn rejects_bad_layouts_and_values() {
        assert!(group_advantages(&[1.0; 5], 2, AdvantageScaling::Group).is_err());
        assert!(group_advantages(&[1.0; 4], 0, AdvantageScaling::Group).is_err());
        assert!(group_advantages(&[f32::NAN, 1.0], 2, AdvantageScaling::Group).is_err());
    }
}
