//! Property and unit tests of the GRPO loss beyond the TRL golden cases.

use agent_rl_algos::{
    AlgoError, GrpoLoss, GrpoLossInputs, ImportanceSamplingLevel, KlEstimator, LossType,
};
use burn::tensor::{Tensor, TensorData};
use proptest::prelude::*;

use crate::B;

fn settings(loss_type: LossType, level: ImportanceSamplingLevel) -> GrpoLoss {
    GrpoLoss {
        loss_type,
        importance_sampling_level: level,
        beta: 0.0,
        kl_estimator: KlEstimator::K3,
        use_bias_correction_kl: true,
        epsilon_low: 0.2,
        epsilon_high: 0.28,
        delta: None,
        max_completion_length: 4,
        gradient_accumulation_steps: 1,
    }
}

fn t2(data: Vec<f32>, rows: usize) -> Tensor<B, 2> {
    let cols = data.len() / rows;
    Tensor::from_data(TensorData::new(data, [rows, cols]), &Default::default())
}

fn t1(data: &[f32]) -> Tensor<B, 1> {
    Tensor::from_floats(data, &Default::default())
}

/// Loss and d loss / d logps of one evaluation.
fn run(
    loss: &GrpoLoss,
    logps: Vec<f32>,
    old: Option<Vec<f32>>,
    adv: &[f32],
    mask: Vec<f32>,
) -> (f32, Vec<f32>) {
    let rows = adv.len();
    let logps_t = t2(logps, rows).require_grad();
    let out = loss
        .forward(GrpoLossInputs {
            logps: logps_t.clone(),
            old_logps: old.map(|o| t2(o, rows)),
            ref_logps: Some(t2(vec![-1.0; mask.len()], rows)),
            advantages: t1(adv),
            mask: t2(mask, rows),
            num_items_in_batch: None,
            sampler_weights: None,
        })
        .expect("valid inputs");
    let value = out
        .loss
        .clone()
        .into_data()
        .iter::<f32>()
        .next()
        .expect("scalar");
    let grads = out.loss.backward();
    let grad = logps_t
        .grad(&grads)
        .expect("tracked")
        .into_data()
        .iter::<f32>()
        .collect();
    (value, grad)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// The clipped objective never exceeds the clip bound, and a clipped token has zero gradient.
    #[test]
    fn clipping_bounds_objective_and_stops_gradient(log_ratio in -1.5f32..1.5, adv in -3.0f32..3.0) {
        let loss = settings(LossType::Bnpo, ImportanceSamplingLevel::Token);
        let (value, grad) = run(&loss, vec![-1.0 + log_ratio], Some(vec![-1.0]), &[adv], vec![1.0]);
        let objective = -value;
        let ratio = log_ratio.exp();
        if adv > 0.0 {
            prop_assert!(objective <= (1.0 + loss.epsilon_high) * adv + 1e-5);
            if ratio > 1.0 + loss.epsilon_high + 1e-4 {
                prop_assert_eq!(grad[0], 0.0);
            }
        } else {
            prop_assert!(objective <= (1.0 - loss.epsilon_low) * adv + 1e-5);
            if ratio < 1.0 - loss.epsilon_low - 1e-4 {
                prop_assert_eq!(grad[0], 0.0);
            }
        }
        prop_assert!(objective <= ratio * adv + 1e-5, "pessimistic: min of both branches");
    }

    /// Two-sided clipping caps the loss of a negative-advantage token at delta·|A|.
    #[test]
    fn delta_caps_negative_advantage_loss(log_ratio in 0.0f32..3.0, adv in -3.0f32..-0.01) {
        let loss = GrpoLoss { delta: Some(1.5), ..settings(LossType::Bnpo, ImportanceSamplingLevel::Token) };
        let (value, grad) = run(&loss, vec![-1.0 + log_ratio], Some(vec![-1.0]), &[adv], vec![1.0]);
        prop_assert!(value <= 1.5 * adv.abs() + 1e-4);
        if log_ratio.exp() > 1.5 + 1e-3 {
            prop_assert_eq!(grad[0], 0.0);
        }
    }

    /// With full masks and max_completion_length = steps, all four normalisations agree.
    #[test]
    fn loss_types_agree_on_full_masks(
        logps in prop::collection::vec(-3.0f32..-0.01, 8), noise in prop::collection::vec(-0.3f32..0.3, 8),
        adv in prop::collection::vec(-2.0f32..2.0, 2),
    ) {
        let old: Vec<f32> = logps.iter().zip(&noise).map(|(l, n)| l + n).collect();
        let results: Vec<(f32, Vec<f32>)> = [LossType::Grpo, LossType::Bnpo, LossType::DrGrpo, LossType::Dapo]
            .into_iter()
            .map(|lt| run(&settings(lt, ImportanceSamplingLevel::Token), logps.clone(), Some(old.clone()), &adv, vec![1.0; 8]))
            .collect();
        for (value, grad) in &results[1..] {
            prop_assert!((value - results[0].0).abs() < 1e-5);
            for (g, g0) in grad.iter().zip(&results[0].1) {
                prop_assert!((g - g0).abs() < 1e-6);
            }
        }
    }

    /// On-policy, token- and sequence-level ratios are both 1 and give the same gradient (−A/len).
    #[test]
    fn on_policy_token_and_sequence_levels_agree(
        logps in prop::collection::vec(-3.0f32..-0.01, 8), adv in prop::collection::vec(-2.0f32..2.0, 2),
        len0 in 1usize..=4, len1 in 0usize..=4,
    ) {
        let mask: Vec<f32> = (0..8).map(|i| if (i < 4 && i < len0) || (i >= 4 && i - 4 < len1) { 1.0 } else { 0.0 }).collect();
        let token = run(&settings(LossType::Grpo, ImportanceSamplingLevel::Token), logps.clone(), None, &adv, mask.clone());
        let seq = run(&settings(LossType::Grpo, ImportanceSamplingLevel::Sequence), logps, None, &adv, mask.clone());
        prop_assert!((token.0 - seq.0).abs() < 1e-5);
        for (i, (a, b)) in token.1.iter().zip(&seq.1).enumerate() {
            prop_assert!((a - b).abs() < 1e-6);
            let row = i / 4;
            let len = if row == 0 { len0 } else { len1 };
            let expected = if mask[i] > 0.0 { -adv[row] / len as f32 / 2.0 } else { 0.0 };
            prop_assert!((a - expected).abs() < 1e-6, "grad[{}] = {} expected {}", i, a, expected);
        }
    }
}

#[test]
fn every_kl_estimator_gives_finite_loss_and_gradient() {
    for estimator in [KlEstimator::K1, KlEstimator::K2, KlEstimator::K3] {
        let loss = GrpoLoss {
            beta: 0.1,
            kl_estimator: estimator,
            ..settings(LossType::Grpo, ImportanceSamplingLevel::Token)
        };
        let (value, grad) = run(
            &loss,
            vec![-0.5, -2.0, -1.0, -0.1],
            None,
            &[1.0, -1.0],
            vec![1.0, 1.0, 1.0, 0.0],
        );
        assert!(
            value.is_finite() && grad.iter().all(|g| g.is_finite()),
            "{estimator:?}"
        );
        assert_eq!(grad[3], 0.0, "masked token gets no gradient");
    }
}

#[test]
fn metrics_are_fractions_and_region_is_low_plus_high() {
    let loss = settings(LossType::Bnpo, ImportanceSamplingLevel::Token);
    let logps = vec![-0.2, -1.0, -2.0, -1.0];
    let old = vec![-1.0, -1.0, -1.0, -1.0]; // ratios e^0.8, 1, e^-1, 1
    let out = loss
        .forward(GrpoLossInputs {
            logps: t2(logps, 2),
            old_logps: Some(t2(old, 2)),
            ref_logps: None,
            advantages: t1(&[1.0, -1.0]),
            mask: t2(vec![1.0; 4], 2),
            num_items_in_batch: None,
            sampler_weights: None,
        })
        .expect("valid");
    let m = out.metrics;
    assert_eq!(m.kl, None);
    assert!((m.clip_ratio_high_mean - 0.25).abs() < 1e-6);
    assert!((m.clip_ratio_low_mean - 0.25).abs() < 1e-6);
    assert!((m.clip_ratio_region_mean - 0.5).abs() < 1e-6);
    assert!((m.clip_ratio_high_max - 0.5).abs() < 1e-6 && m.clip_ratio_low_min == 0.0);
}

#[test]
fn inconsistent_inputs_are_errors() {
    let loss = GrpoLoss {
        beta: 0.04,
        ..settings(LossType::Grpo, ImportanceSamplingLevel::Token)
    };
    let inputs = |mask_cols: usize, with_ref: bool| GrpoLossInputs::<B> {
        logps: t2(vec![-1.0; 4], 2),
        old_logps: None,
        ref_logps: with_ref.then(|| t2(vec![-1.0; 4], 2)),
        advantages: t1(&[1.0, -1.0]),
        mask: t2(vec![1.0; 2 * mask_cols], 2),
        num_items_in_batch: None,
        sampler_weights: None,
    };
    assert!(matches!(
        loss.forward(inputs(3, true)),
        Err(AlgoError::ShapeMismatch { .. })
    ));
    assert!(matches!(
        loss.forward(inputs(2, false)),
        Err(AlgoError::InvalidInput { .. })
    ));
    let no_kl = GrpoLoss { beta: 0.0, ..loss };
    assert!(
        no_kl.forward(inputs(2, false)).is_ok(),
        "beta = 0 needs no reference model"
    );
}
