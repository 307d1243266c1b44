//! PPO's reward shaping, GAE, whitening and losses against TRL 1.12.0's own `PPOTrainer` code.
//!
//! `fixtures/ppo/golden.json` is written by `fixtures/ppo/make_golden.py`, which runs the
//! statements of `PPOTrainer.train` (cut out of its source) on fixed inputs in float64.

use agent_rl_algos::{
    KlEstimator, PpoLoss, PpoLossInputs, apply_missing_eos_penalty, gae, kl_penalized_rewards,
    masked_whiten,
};
use burn::tensor::{Tensor, TensorData};
use serde_json::Value;

use crate::B;

const GOLDEN: &str = include_str!("fixtures/ppo/golden.json");
const ABS_TOL: f64 = 2e-5;

fn golden() -> Value {
    serde_json::from_str(GOLDEN).expect("golden.json parses")
}

/// A `[rows, cols]` JSON matrix of numbers or booleans, flattened row-major, and its width.
fn flat(v: &Value) -> (Vec<f64>, usize) {
    let rows = v.as_array().expect("matrix");
    let cols = rows[0].as_array().expect("row").len();
    let data = rows
        .iter()
        .flat_map(|r| r.as_array().expect("row").iter())
        .map(|x| {
            x.as_f64()
                .or_else(|| x.as_bool().map(f64::from))
                .expect("number or bool")
        })
        .collect();
    (data, cols)
}

fn floats(v: &Value) -> Vec<f32> {
    match v.as_array().expect("array").first() {
        Some(Value::Array(_)) => flat(v).0.into_iter().map(|x| x as f32).collect(),
        _ => v
            .as_array()
            .expect("array")
            .iter()
            .map(|x| x.as_f64().expect("number") as f32)
            .collect(),
    }
}

fn bools(v: &Value) -> Vec<bool> {
    flat(v).0.into_iter().map(|x| x != 0.0).collect()
}

fn assert_close(name: &str, found: &[f32], expected: &[f32]) {
    assert_eq!(found.len(), expected.len(), "{name}: length");
    for (i, (f, e)) in found.iter().zip(expected).enumerate() {
        let (f, e) = (f64::from(*f), f64::from(*e));
        assert!(
            (f - e).abs() <= ABS_TOL * e.abs().max(1.0),
            "{name}[{i}]: {f} vs TRL {e}"
        );
    }
}

fn tensor(v: &Value) -> Tensor<B, 2> {
    let (data, cols) = flat(v);
    let rows = data.len() / cols;
    let data: Vec<f32> = data.into_iter().map(|x| x as f32).collect();
    Tensor::from_data(TensorData::new(data, [rows, cols]), &Default::default())
}

#[test]
fn rewards_gae_and_whitening_match_trl() {
    let doc = golden();
    let cases = doc["rewards"].as_array().expect("cases");
    assert_eq!(cases.len(), 3);
    for case in cases {
        let name = case["name"].as_str().expect("name");
        let s = &case["settings"];
        let e = &case["expected"];
        let steps = case["logprobs"][0].as_array().expect("row").len();
        let eos = doc["eos_token_id"].as_u64().expect("eos");
        // The missing-EOS penalty on the scores.
        let ended: Vec<bool> = case["postprocessed_responses"]
            .as_array()
            .expect("rows")
            .iter()
            .map(|r| {
                r.as_array()
                    .expect("row")
                    .iter()
                    .any(|t| t.as_u64() == Some(eos))
            })
            .collect();
        assert_eq!(
            ended,
            bools(&Value::Array(vec![e["contain_eos_token"].clone()]))
        );
        let mut scores = floats(&case["scores"]);
        apply_missing_eos_penalty(
            &mut scores,
            &ended,
            s["missing_eos_penalty"].as_f64().map(|p| p as f32),
        );
        assert_close(
            &format!("{name}/scores"),
            &scores,
            &floats(&e["scores_after_penalty"]),
        );
        // KL-shaped rewards, the score at TRL's index.
        let policy: Vec<bool> = bools(&e["padding_mask"]).into_iter().map(|p| !p).collect();
        let estimator = match s["kl_estimator"].as_str() {
            Some("k1") => KlEstimator::K1,
            _ => KlEstimator::K3,
        };
        let index: Vec<usize> = e["score_index"]
            .as_array()
            .expect("indices")
            .iter()
            .map(|i| i.as_u64().expect("index") as usize)
            .collect();
        let shaped = kl_penalized_rewards(
            &floats(&case["logprobs"]),
            &floats(&case["ref_logprobs"]),
            &policy,
            steps,
            &scores,
            &index,
            s["kl_coef"].as_f64().expect("kl_coef") as f32,
            estimator,
        )
        .expect("valid inputs");
        assert_close(&format!("{name}/kl"), &shaped.kl, &floats(&e["kl"]));
        assert_close(
            &format!("{name}/non_score_reward"),
            &shaped.non_score_reward,
            &floats(&e["non_score_reward"]),
        );
        // Reward whitening over TRL's value mask (one token wider), mean kept.
        let value_mask: Vec<bool> = bools(&e["padding_mask_p1"])
            .into_iter()
            .map(|p| !p)
            .collect();
        let rewards = if s["whiten_rewards"].as_bool().expect("bool") {
            masked_whiten(&shaped.rewards, &value_mask, false).expect("enough tokens")
        } else {
            shaped.rewards.clone()
        };
        assert_close(&format!("{name}/rewards"), &rewards, &floats(&e["rewards"]));
        // GAE over the full width (TRL zeroes values past the value mask and has no interior masks).
        let values = floats(&e["values_masked"]);
        let gamma = s["gamma"].as_f64().expect("gamma") as f32;
        let lam = s["lam"].as_f64().expect("lam") as f32;
        let out = gae(
            &rewards,
            &values,
            &vec![true; rewards.len()],
            steps,
            gamma,
            lam,
        )
        .expect("valid");
        assert_close(
            &format!("{name}/raw_advantages"),
            &out.advantages,
            &floats(&e["raw_advantages"]),
        );
        assert_close(
            &format!("{name}/returns"),
            &out.returns,
            &floats(&e["returns"]),
        );
        let whitened = masked_whiten(&out.advantages, &policy, true).expect("enough tokens");
        assert_close(
            &format!("{name}/advantages"),
            &whitened,
            &floats(&e["advantages"]),
        );
    }
}

#[test]
fn masked_gae_is_trl_gae_on_the_policy_tokens() {
    let doc = golden();
    for (i, case) in doc["multi_turn_gae"]
        .as_array()
        .expect("cases")
        .iter()
        .enumerate()
    {
        let steps = case["mask"][0].as_array().expect("row").len();
        let out = gae(
            &floats(&case["rewards"]),
            &floats(&case["values"]),
            &bools(&case["mask"]),
            steps,
            case["gamma"].as_f64().expect("gamma") as f32,
            case["lam"].as_f64().expect("lam") as f32,
        )
        .expect("valid");
        assert_close(
            &format!("multi_turn[{i}]/advantages"),
            &out.advantages,
            &floats(&case["advantages"]),
        );
        assert_close(
            &format!("multi_turn[{i}]/returns"),
            &out.returns,
            &floats(&case["returns"]),
        );
    }
}

#[test]
fn losses_metrics_and_gradients_match_trl() {
    let doc = golden();
    for (i, case) in doc["loss"].as_array().expect("cases").iter().enumerate() {
        let f = |k: &str| case[k].as_f64().expect("number") as f32;
        let loss_fn = PpoLoss {
            cliprange: f("cliprange"),
            cliprange_value: f("cliprange_value"),
            vf_coef: f("vf_coef"),
            entropy_coef: 0.0,
        };
        let logps = tensor(&case["new_logprobs"]).require_grad();
        let values = tensor(&case["vpred"]).require_grad();
        let out = loss_fn
            .forward(PpoLossInputs {
                logps: logps.clone(),
                old_logps: tensor(&case["old_logprobs"]),
                advantages: tensor(&case["advantages"]),
                mask: tensor(&case["policy_mask"]),
                values: values.clone(),
                old_values: tensor(&case["old_values"]),
                returns: tensor(&case["returns"]),
                value_mask: tensor(&case["value_mask"]),
                entropies: None,
            })
            .expect("shapes agree");
        let m = out.metrics;
        let loss: Vec<f32> = out.loss.clone().into_data().iter::<f32>().collect();
        assert_close(&format!("loss[{i}]"), &loss, &[f("loss")]);
        assert_close(&format!("pg_loss[{i}]"), &[m.policy_loss], &[f("pg_loss")]);
        assert_close(&format!("vf_loss[{i}]"), &[m.value_loss], &[f("vf_loss")]);
        assert_close(
            &format!("pg_clipfrac[{i}]"),
            &[m.clipfrac],
            &[f("pg_clipfrac")],
        );
        assert_close(
            &format!("vf_clipfrac[{i}]"),
            &[m.value_clipfrac],
            &[f("vf_clipfrac")],
        );
        assert_close(
            &format!("approxkl[{i}]"),
            &[m.approxkl],
            &[f("approxkl_masked")],
        );
        assert_close(&format!("ratio[{i}]"), &[m.ratio], &[f("ratio_masked")]);
        assert!(
            m.clipfrac > 0.0 && m.value_clipfrac > 0.0,
            "case {i} exercises both clips"
        );
        let grads = out.loss.backward();
        let grad_logps: Vec<f32> = logps
            .grad(&grads)
            .expect("tracked")
            .into_data()
            .iter::<f32>()
            .collect();
        let grad_values: Vec<f32> = values
            .grad(&grads)
            .expect("tracked")
            .into_data()
            .iter::<f32>()
            .collect();
        assert_close(
            &format!("d loss/d logps[{i}]"),
            &grad_logps,
            &floats(&case["grad_new_logprobs"]),
        );
        assert_close(
            &format!("d loss/d vpred[{i}]"),
            &grad_values,
            &floats(&case["grad_vpred"]),
        );
    }
}

#[test]
fn entropy_bonus_subtracts_the_masked_mean_entropy() {
    let doc = golden();
    let case = &doc["loss"][0];
    let inputs = |entropies: Option<Tensor<B, 2>>| PpoLossInputs {
        logps: tensor(&case["new_logprobs"]),
        old_logps: tensor(&case["old_logprobs"]),
        advantages: tensor(&case["advantages"]),
        mask: tensor(&case["policy_mask"]),
        values: tensor(&case["vpred"]),
        old_values: tensor(&case["old_values"]),
        returns: tensor(&case["returns"]),
        value_mask: tensor(&case["value_mask"]),
        entropies,
    };
    let loss_fn = PpoLoss {
        cliprange: 0.2,
        cliprange_value: 0.2,
        vf_coef: 0.1,
        entropy_coef: 0.0,
    };
    let base = loss_fn
        .forward(inputs(None))
        .expect("valid")
        .loss
        .into_scalar();
    let (mask, cols) = flat(&case["policy_mask"]);
    let entropy: Vec<f32> = (0..mask.len())
        .map(|i| 0.5 + (i % cols) as f32 * 0.1)
        .collect();
    let expected_h = entropy
        .iter()
        .zip(&mask)
        .map(|(h, m)| h * *m as f32)
        .sum::<f32>()
        / mask.iter().sum::<f64>() as f32;
    let h = Tensor::from_data(
        TensorData::new(entropy, [mask.len() / cols, cols]),
        &Default::default(),
    );
    let with = PpoLoss {
        entropy_coef: 0.01,
        ..loss_fn
    }
    .forward(inputs(Some(h)))
    .expect("valid");
    assert!((with.metrics.entropy.expect("given") - expected_h).abs() < 1e-5);
    assert!((with.loss.into_scalar() - (base - 0.01 * expected_h)).abs() < 1e-5);
}
