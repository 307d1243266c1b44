//! The reward-model loss against TRL's own `RewardTrainer.compute_loss`.
//!
//! `fixtures/reward_loss/golden.json` is written by `fixtures/reward_loss/make_golden.py`, which
//! calls TRL's code (float64) on seeded rewards, with and without margins and reward centring,
//! and records the loss, its gradient w.r.t. the chosen and rejected rewards, and TRL's metrics.

use agent_rl_algos::reward_model::{PreferenceMetrics, preference_loss};
use burn::tensor::{Tensor, TensorData};
use serde_json::Value;

use crate::B;

const GOLDEN: &str = include_str!("fixtures/reward_loss/golden.json");

fn vector(v: &Value) -> Vec<f32> {
    v.as_array()
        .expect("array")
        .iter()
        .map(|x| x.as_f64().expect("number") as f32)
        .collect()
}

fn tensor(values: &[f32]) -> Tensor<B, 1> {
    Tensor::from_data(
        TensorData::new(values.to_vec(), [values.len()]),
        &Default::default(),
    )
}

fn close(got: f32, want: f64, what: &str) {
    let tolerance = 1e-5 + 1e-5 * want.abs();
    assert!(
        (f64::from(got) - want).abs() <= tolerance,
        "{what}: {got} vs TRL {want}"
    );
}

#[test]
fn loss_gradient_and_metrics_match_trl() {
    let golden: Value = serde_json::from_str(GOLDEN).expect("golden.json");
    let cases = golden["cases"].as_array().expect("cases");
    assert!(cases.len() >= 19, "the fixture covers every setting");
    for (index, case) in cases.iter().enumerate() {
        let what = format!(
            "case {index} (margin {}, center {})",
            !case["margin"].is_null(),
            case["center"]
        );
        let chosen_values = vector(&case["chosen"]);
        let rejected_values = vector(&case["rejected"]);
        let chosen = tensor(&chosen_values).require_grad();
        let rejected = tensor(&rejected_values).require_grad();
        let margin = (!case["margin"].is_null()).then(|| tensor(&vector(&case["margin"])));
        let center = case["center"].as_f64().map(|c| c as f32);
        let loss = preference_loss(chosen.clone(), rejected.clone(), margin, center);
        let value = loss
            .clone()
            .into_data()
            .iter::<f32>()
            .next()
            .expect("scalar");
        close(
            value,
            case["loss"].as_f64().expect("loss"),
            &format!("{what} loss"),
        );
        let grads = loss.backward();
        for (param, key) in [(&chosen, "grad_chosen"), (&rejected, "grad_rejected")] {
            let got: Vec<f32> = param
                .grad(&grads)
                .expect("tracked")
                .into_data()
                .iter::<f32>()
                .collect();
            for (g, w) in got.iter().zip(case[key].as_array().expect("grad")) {
                close(*g, w.as_f64().expect("number"), &format!("{what} {key}"));
            }
        }
        let metrics = PreferenceMetrics::from_rewards(&chosen_values, &rejected_values);
        let want = &case["metrics"];
        for (got, key) in [
            (metrics.accuracy, "accuracy"),
            (metrics.margin, "margin"),
            (metrics.min_reward, "min_reward"),
            (metrics.mean_reward, "mean_reward"),
            (metrics.max_reward, "max_reward"),
        ] {
            close(
                got,
                want[key].as_f64().expect(key),
                &format!("{what} {key}"),
            );
        }
    }
}
