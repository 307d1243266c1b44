//! Property tests of the group-relative advantages.

use agent_rl_algos::{
    AdvantageScaling, group_advantages, group_advantages_with_missing, informative_completions,
    zero_variance_groups,
};
use proptest::prelude::*;

const SCALINGS: [AdvantageScaling; 3] = [
    AdvantageScaling::Group,
    AdvantageScaling::Batch,
    AdvantageScaling::None,
];

/// Rewards on a quarter grid in [-8, 8]: exact in f32, so shifts by integers are exact too.
fn rewards(groups: usize, group_size: usize) -> impl Strategy<Value = Vec<f32>> {
    prop::collection::vec(
        (-32i32..=32).prop_map(|q| q as f32 / 4.0),
        groups * group_size,
    )
}

fn layout() -> impl Strategy<Value = (usize, usize)> {
    (1usize..6, 2usize..9)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn zero_mean_per_group((groups, k) in layout(), seed in rewards(6, 9), scaling in 0usize..3) {
        let r = &seed[..groups * k];
        let adv = group_advantages(r, k, SCALINGS[scaling]).expect("valid layout");
        for group in adv.chunks(k) {
            let sum: f32 = group.iter().sum();
            let scale = group.iter().map(|a| a.abs()).fold(1.0f32, f32::max);
            prop_assert!(sum.abs() <= 1e-4 * scale * k as f32, "group {group:?} sums to {sum}");
        }
    }

    #[test]
    fn all_equal_rewards_give_exact_zeros((groups, k) in layout(), value in -1e6f32..1e6, scaling in 0usize..3) {
        let r = vec![value; groups * k];
        let adv = group_advantages(&r, k, SCALINGS[scaling]).expect("valid layout");
        prop_assert!(adv.iter().all(|&a| a == 0.0), "{adv:?}");
        prop_assert!(zero_variance_groups(&r.iter().map(|&x| Some(x)).collect::<Vec<_>>(), k)
            .expect("valid").iter().all(|&z| z));
    }

    #[test]
    fn shifting_one_group_leaves_its_advantages_unchanged(
        (groups, k) in layout(), seed in rewards(6, 9), shift in -1000i32..1000, which in 0usize..6,
        scaling in prop::sample::select(vec![AdvantageScaling::Group, AdvantageScaling::None]),
    ) {
        let r = seed[..groups * k].to_vec();
        let g = which % groups;
        let mut shifted = r.clone();
        for x in &mut shifted[g * k..(g + 1) * k] {
            *x += shift as f32;
        }
        let a = group_advantages(&r, k, scaling).expect("valid");
        let b = group_advantages(&shifted, k, scaling).expect("valid");
        for (x, y) in a.iter().zip(&b) {
            prop_assert!((x - y).abs() <= 1e-4 * x.abs().max(1.0), "{a:?} vs {b:?}");
        }
    }

    #[test]
    fn group_scaled_advantages_are_bounded((groups, k) in layout(), seed in rewards(6, 9)) {
        // |r - mean| / std <= (k - 1) / sqrt(k) for the unbiased std.
        let adv = group_advantages(&seed[..groups * k], k, AdvantageScaling::Group).expect("valid");
        let bound = (k as f32 - 1.0) / (k as f32).sqrt();
        prop_assert!(adv.iter().all(|a| a.is_finite() && a.abs() <= bound + 1e-4), "{adv:?}");
    }

    #[test]
    fn missing_rewards_get_zero_and_scored_ones_stay_centred(
        (groups, k) in layout(), seed in rewards(6, 9), holes in prop::collection::vec(any::<bool>(), 54),
        scaling in 0usize..3,
    ) {
        let r: Vec<Option<f32>> = seed[..groups * k].iter().zip(&holes).map(|(&x, &h)| (!h).then_some(x)).collect();
        let adv = group_advantages_with_missing(&r, k, SCALINGS[scaling]).expect("valid");
        prop_assert!(adv.iter().all(|a| a.is_finite()));
        for (rg, ag) in r.chunks(k).zip(adv.chunks(k)) {
            let sum: f32 = rg.iter().zip(ag).filter(|(x, _)| x.is_some()).map(|(_, a)| a).sum();
            prop_assert!(sum.abs() < 1e-3, "{rg:?} -> {ag:?}");
            prop_assert!(rg.iter().zip(ag).all(|(x, a)| x.is_some() || *a == 0.0));
        }
        let kept = informative_completions(&r, k).expect("valid");
        let zero = zero_variance_groups(&r, k).expect("valid");
        prop_assert!(kept.iter().all(|&i| !zero[i / k]));
        prop_assert_eq!(kept.len(), zero.iter().filter(|&&z| !z).count() * k);
    }
}
