//! Property tests of GAE and whitening.

use agent_rl_algos::{gae, masked_whiten};
use proptest::prelude::*;

fn batch() -> impl Strategy<Value = (Vec<f32>, Vec<f32>, Vec<bool>, usize)> {
    (1usize..5, 1usize..9).prop_flat_map(|(rows, steps)| {
        let n = rows * steps;
        (
            prop::collection::vec(-3.0f32..3.0, n),
            prop::collection::vec(-3.0f32..3.0, n),
            prop::collection::vec(any::<bool>(), n),
            Just(steps),
        )
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// γ = λ = 1: the advantage is the reward-to-go (over the masked tokens) minus the value.
    #[test]
    fn unit_gamma_lambda_is_returns_minus_values((rewards, values, mask, steps) in batch()) {
        let out = gae(&rewards, &values, &mask, steps, 1.0, 1.0).expect("valid");
        for row in 0..rewards.len() / steps {
            let mut to_go = 0.0f64;
            for t in (row * steps..(row + 1) * steps).rev() {
                if !mask[t] {
                    prop_assert_eq!(out.advantages[t], 0.0);
                    continue;
                }
                to_go += f64::from(rewards[t]);
                let expected = to_go - f64::from(values[t]);
                prop_assert!((f64::from(out.advantages[t]) - expected).abs() < 1e-4);
                prop_assert!((f64::from(out.returns[t]) - to_go).abs() < 1e-4);
            }
        }
    }

    /// Zero rewards and a critic that predicts them (all zero) give zero advantages, for any γ, λ.
    #[test]
    fn perfect_values_give_zero_advantages(
        (rewards, _values, mask, steps) in batch(), gamma in 0.0f32..=1.0, lam in 0.0f32..=1.0,
    ) {
        let zeros = vec![0.0; rewards.len()];
        let out = gae(&zeros, &zeros, &mask, steps, gamma, lam).expect("valid");
        prop_assert!(out.advantages.iter().all(|&a| a == 0.0));
    }

    /// A critic that is exact (V_t = discounted reward-to-go) gives zero advantages for any λ.
    #[test]
    fn exact_critic_gives_zero_advantages(
        (rewards, _values, mask, steps) in batch(), gamma in 0.0f32..=1.0, lam in 0.0f32..=1.0,
    ) {
        let mut values = vec![0.0f32; rewards.len()];
        for row in 0..rewards.len() / steps {
            let mut next = 0.0f64;
            for t in (row * steps..(row + 1) * steps).rev() {
                if mask[t] {
                    next = f64::from(rewards[t]) + f64::from(gamma) * next;
                    values[t] = next as f32;
                }
            }
        }
        let out = gae(&rewards, &values, &mask, steps, gamma, lam).expect("valid");
        prop_assert!(out.advantages.iter().all(|&a| a.abs() < 1e-4), "{:?}", out.advantages);
    }

    /// Masked tokens are skipped: GAE equals GAE on the row with those tokens removed.
    #[test]
    fn masked_tokens_are_skipped((rewards, values, mask, steps) in batch(), gamma in 0.0f32..=1.0, lam in 0.0f32..=1.0) {
        let out = gae(&rewards, &values, &mask, steps, gamma, lam).expect("valid");
        for row in 0..rewards.len() / steps {
            let kept: Vec<usize> = (row * steps..(row + 1) * steps).filter(|&t| mask[t]).collect();
            if kept.is_empty() {
                continue;
            }
            let r: Vec<f32> = kept.iter().map(|&t| rewards[t]).collect();
            let v: Vec<f32> = kept.iter().map(|&t| values[t]).collect();
            let dense = gae(&r, &v, &vec![true; r.len()], r.len(), gamma, lam).expect("valid");
            for (k, &t) in kept.iter().enumerate() {
                prop_assert!((out.advantages[t] - dense.advantages[k]).abs() < 1e-5);
            }
        }
    }

    /// Whitened values have mean 0 and unbiased variance ≈ 1 over the mask, 0 outside it.
    #[test]
    fn whitening_normalises((values, _v, mask, _steps) in batch()) {
        let kept: Vec<f32> = values.iter().zip(&mask).filter(|(_, m)| **m).map(|(v, _)| *v).collect();
        prop_assume!(kept.len() >= 2);
        let mean = kept.iter().sum::<f32>() / kept.len() as f32;
        let var = kept.iter().map(|v| (v - mean).powi(2)).sum::<f32>() / (kept.len() - 1) as f32;
        prop_assume!(var > 1e-3);
        let w = masked_whiten(&values, &mask, true).expect("valid");
        let wk: Vec<f32> = w.iter().zip(&mask).filter(|(_, m)| **m).map(|(v, _)| *v).collect();
        let wmean = wk.iter().sum::<f32>() / wk.len() as f32;
        let wvar = wk.iter().map(|v| (v - wmean).powi(2)).sum::<f32>() / (wk.len() - 1) as f32;
        prop_assert!(wmean.abs() < 1e-4 && (wvar - 1.0).abs() < 1e-3);
        prop_assert!(w.iter().zip(&mask).all(|(v, m)| *m || *v == 0.0));
    }
}
