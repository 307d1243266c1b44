//! PPO's per-token rewards: the KL penalty to the reference on every policy token, plus the
//! sequence score on the last one; and the missing-EOS penalty on scores.

use crate::error::{AlgoError, Result};
use crate::gae::check_rows;
use crate::kl::KlEstimator;

/// Per-token rewards of a rollout batch, row-major `[batch, steps]`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TokenRewards {
    /// `non_score_reward` plus each row's score at its score position: what GAE consumes.
    pub rewards: Vec<f32>,
    /// The per-token KL estimate (0 outside the mask).
    pub kl: Vec<f32>,
    /// `−β · kl` (TRL's `non_score_reward`).
    pub non_score_reward: Vec<f32>,
}

/// Builds the rewards of a batch: `r_t = −β · KL_t` on every masked token, and each row's
/// `scores[i]` added at `score_index[i]` (TRL: `rewards[i, end] += score`).
///
/// The trainer puts the score on the last policy token of each episode ([`last_policy_token`]).
/// TRL's `PPOTrainer` puts it one token past the last non-padding token (the first padding
/// position when there is room); the golden test passes TRL's index to check the arithmetic.
///
/// # Shapes
/// - `logps`, `ref_logps`, `mask`: `[batch, steps]` row-major; `scores`, `score_index`: `[batch]`.
///
/// # Errors
/// [`AlgoError::InvalidInput`] when lengths disagree, a score index is not below `steps`, or a
/// score or `kl_coef` is not finite.
#[expect(
    clippy::too_many_arguments,
    reason = "the inputs of TRL's reward block, each a tensor or setting"
)]
pub fn kl_penalized_rewards(
    logps: &[f32],
    ref_logps: &[f32],
    mask: &[bool],
    steps: usize,
    scores: &[f32],
    score_index: &[usize],
    kl_coef: f32,
    estimator: KlEstimator,
) -> Result<TokenRewards> {
    let batch = check_rows(
        steps,
        &[
            ("logps", logps.len()),
            ("ref_logps", ref_logps.len()),
            ("mask", mask.len()),
        ],
    )?;
    for (name, len) in [("scores", scores.len()), ("score_index", score_index.len())] {
        if len != batch {
            return Err(AlgoError::input(
                name,
                format!("has {len} entries for {batch} rows"),
            ));
        }
    }
    if !kl_coef.is_finite() {
        return Err(AlgoError::input(
            "kl_coef",
            format!("is {kl_coef}; must be finite"),
        ));
    }
    let kl: Vec<f32> = (0..logps.len())
        .map(|i| {
            if mask[i] {
                estimator.estimate(logps[i], ref_logps[i])
            } else {
                0.0
            }
        })
        .collect();
    let non_score_reward: Vec<f32> = kl.iter().map(|&k| -kl_coef * k).collect();
    let mut rewards = non_score_reward.clone();
    for (row, (&score, &index)) in scores.iter().zip(score_index).enumerate() {
        if index >= steps {
            return Err(AlgoError::input(
                format!("score_index[{row}]"),
                format!("is {index}, not below steps = {steps}"),
            ));
        }
        if !score.is_finite() {
            return Err(AlgoError::input(
                format!("scores[{row}]"),
                format!("is {score}; must be finite"),
            ));
        }
        rewards[row * steps + index] += score;
    }
    Ok(TokenRewards {
        rewards,
        kl,
        non_score_reward,
    })
}

/// Index of the last token in `mask_row` (the last policy token of an episode), `None` when
/// the row has none.
pub fn last_policy_token(mask_row: &[bool]) -> Option<usize> {
    mask_row.iter().rposition(|&m| m)
}

/// Subtracts `penalty` from the score of every episode that did not end with an EOS token
/// (TRL's `missing_eos_penalty`: `scores[~contain_eos_token] -= penalty`); `None` leaves the
/// scores as they are.
pub fn apply_missing_eos_penalty(
    scores: &mut [f32],
    ended_with_eos: &[bool],
    penalty: Option<f32>,
) {
    let Some(penalty) = penalty else {
        return;
    };
    for (score, &eos) in scores.iter_mut().zip(ended_with_eos) {
        if !eos {
            *score -= penalty;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn penalty_on_tokens_score_at_index() {
        let out = kl_penalized_rewards(
            &[-1.0, -2.0, -1.0, -1.0],
            &[-1.5, -2.0, -1.0, -3.0],
            &[true, true, true, false],
            2,
            &[1.0, 2.0],
            &[1, 0],
            0.5,
            KlEstimator::K1,
        )
        .expect("valid");
        assert_eq!(out.kl, vec![0.5, 0.0, 0.0, 0.0]);
        assert_eq!(out.rewards, vec![-0.25, 1.0, 2.0, 0.0]);
        assert!(
            kl_penalized_rewards(
                &[0.0; 2],
                &[0.0; 2],
                &[true; 2],
                2,
                &[1.0],
                &[2],
                0.1,
                KlEstimator::K1
            )
            .is_err()
        );
        assert_eq!(last_policy_token(&[true, false, true, false]), Some(2));
        assert_eq!(last_policy_token(&[false]), None);
        let mut scores = [1.0, 1.0];
        apply_missing_eos_penalty(&mut scores, &[true, false], Some(0.5));
        assert_eq!(scores, [1.0, 0.5]);
    }
}
