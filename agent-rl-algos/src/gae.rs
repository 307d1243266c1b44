//! Generalized advantage estimation (GAE, [Schulman et al. 2015](https://arxiv.org/abs/1506.02438))
//! over masked token sequences, as a pure function on the host.
//!
//! Per row, walking backwards over the tokens in the mask:
//! `δ_t = r_t + γ·V(next) − V_t`, `A_t = δ_t + γλ·A(next)`, `R_t = A_t + V_t`, where *next* is the
//! next token **in the mask** (0 after the last). Tokens outside the mask — prompt padding, and in
//! multi-turn episodes the tool-result tokens the environment appended — are not actions: they
//! are skipped (advantage and return 0, their rewards ignored), so the policy token before a tool
//! result bootstraps from the value of the first policy token after it. With a mask that covers
//! the whole row this is exactly TRL's `PPOTrainer` loop (checked by `tests/ppo_golden.rs`).

use crate::error::{AlgoError, Result};

/// Advantages and returns of a batch, row-major `[batch, steps]` like the inputs.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Gae {
    /// `A_t` (0 outside the mask).
    pub advantages: Vec<f32>,
    /// `A_t + V_t`, the value targets (0 outside the mask).
    pub returns: Vec<f32>,
}

/// Checks that every row-major `[batch, steps]` input has `batch × steps` entries.
pub(crate) fn check_rows(steps: usize, inputs: &[(&str, usize)]) -> Result<usize> {
    if steps == 0 {
        return Err(AlgoError::input(
            "steps",
            "is 0; rows need at least one token",
        ));
    }
    let len = inputs.first().map_or(0, |&(_, len)| len);
    if !len.is_multiple_of(steps) {
        return Err(AlgoError::input(
            inputs[0].0,
            format!("has {len} entries, not a multiple of steps = {steps}"),
        ));
    }
    if let Some(&(name, found)) = inputs.iter().find(|&&(_, l)| l != len) {
        return Err(AlgoError::input(
            name,
            format!("has {found} entries, expected {len} ([batch, steps] row-major)"),
        ));
    }
    Ok(len / steps)
}

/// GAE(γ, λ) of per-token `rewards` under the critic's `values`.
///
/// # Shapes
/// - `rewards`, `values`, `mask`: row-major `[batch, steps]`; returns the same layout.
///
/// # Errors
/// [`AlgoError::InvalidInput`] when the lengths disagree or are not a multiple of `steps`, or
/// γ, λ are outside `[0, 1]`.
///
/// ```
/// use agent_rl_algos::gae;
/// // One row, reward 1 at the last token, a critic that predicts 0: with γ = λ = 1 every
/// // advantage is the return to go.
/// let out = gae(&[0.0, 0.0, 1.0], &[0.0; 3], &[true; 3], 3, 1.0, 1.0)?;
/// assert_eq!(out.advantages, vec![1.0, 1.0, 1.0]);
/// # Ok::<(), agent_rl_algos::AlgoError>(())
/// ```
pub fn gae(
    rewards: &[f32],
    values: &[f32],
    mask: &[bool],
    steps: usize,
    gamma: f32,
    lam: f32,
) -> Result<Gae> {
    check_rows(
        steps,
        &[
            ("rewards", rewards.len()),
            ("values", values.len()),
            ("mask", mask.len()),
        ],
    )?;
    for (name, x) in [("gamma", gamma), ("lam", lam)] {
        if !(0.0..=1.0).contains(&x) {
            return Err(AlgoError::input(name, format!("is {x}; must be in [0, 1]")));
        }
    }
    let (gamma, lam) = (f64::from(gamma), f64::from(lam));
    let mut out = Gae {
        advantages: vec![0.0; rewards.len()],
        returns: vec![0.0; rewards.len()],
    };
    for start in (0..rewards.len()).step_by(steps) {
        let (mut next_value, mut next_advantage) = (0.0f64, 0.0f64);
        for t in (start..start + steps).rev() {
            if !mask[t] {
                continue;
            }
            let value = f64::from(values[t]);
            let delta = f64::from(rewards[t]) + gamma * next_value - value;
            let advantage = delta + gamma * lam * next_advantage;
            out.advantages[t] = advantage as f32;
            out.returns[t] = (advantage + value) as f32;
            next_value = value;
            next_advantage = advantage;
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skips_masked_tokens_and_rejects_bad_input() {
        // [policy, tool, policy]: the first token bootstraps from the third's value.
        let out = gae(
            &[0.0, 5.0, 1.0],
            &[0.5, 9.0, 0.25],
            &[true, false, true],
            3,
            1.0,
            0.5,
        )
        .expect("valid");
        let a2 = 1.0 - 0.25;
        let a0 = (0.0 + 0.25 - 0.5) + 0.5 * a2;
        assert_eq!(out.advantages, vec![a0, 0.0, a2]);
        assert_eq!(out.returns, vec![a0 + 0.5, 0.0, a2 + 0.25]);
        assert!(gae(&[0.0; 4], &[0.0; 3], &[true; 4], 2, 1.0, 1.0).is_err());
        assert!(gae(&[0.0; 3], &[0.0; 3], &[true; 3], 2, 1.0, 1.0).is_err());
        assert!(gae(&[0.0; 2], &[0.0; 2], &[true; 2], 2, 1.5, 1.0).is_err());
        assert!(gae(&[], &[], &[], 0, 1.0, 1.0).is_err());
    }
}
