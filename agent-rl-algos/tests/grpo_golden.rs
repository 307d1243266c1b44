//! The Rust GRPO loss against TRL 1.16's own `GRPOTrainer._compute_loss`.
//!
//! `fixtures/grpo_loss/golden.json` is written by `fixtures/grpo_loss/make_golden.py`, which calls
//! TRL's code on seeded inputs (float64) and records the loss, d loss / d logprobs and the metrics
//! for every loss type × importance level × clip setting × KL setting.

use agent_rl_algos::{
    AdvantageScaling, GrpoLoss, GrpoLossInputs, ImportanceSamplingLevel, KlEstimator, LossType,
    group_advantages,
};
use burn::tensor::{Tensor, TensorData};
use serde_json::Value;

use crate::B;

const GOLDEN: &str = include_str!("fixtures/grpo_loss/golden.json");
const ABS_TOL: f64 = 1e-5;

fn matrix(v: &Value) -> (Vec<f32>, [usize; 2]) {
    let rows = v.as_array().expect("matrix is an array of rows");
    let cols = rows[0].as_array().expect("row is an array").len();
    let data = rows
        .iter()
        .flat_map(|r| {
            r.as_array()
                .expect("row")
                .iter()
                .map(|x| x.as_f64().expect("number") as f32)
        })
        .collect();
    (data, [rows.len(), cols])
}

fn vector(v: &Value) -> Vec<f32> {
    v.as_array()
        .expect("array")
        .iter()
        .map(|x| x.as_f64().expect("number") as f32)
        .collect()
}

fn tensor(v: &Value) -> Tensor<B, 2> {
    let (data, shape) = matrix(v);
    Tensor::from_data(TensorData::new(data, shape), &Default::default())
}

fn close(found: f64, expected: f64) -> bool {
    (found - expected).abs() <= ABS_TOL * expected.abs().max(1.0)
}

fn loss_for(case: &Value, max_completion_length: usize) -> GrpoLoss {
    let s = |k: &str| case[k].as_str().expect("string field");
    let f = |k: &str| case[k].as_f64().expect("number field") as f32;
    GrpoLoss {
        loss_type: match s("loss_type") {
            "grpo" => LossType::Grpo,
            "bnpo" => LossType::Bnpo,
            "dr_grpo" => LossType::DrGrpo,
            "dapo" => LossType::Dapo,
            other => panic!("unknown loss type {other}"),
        },
        importance_sampling_level: match s("importance_sampling_level") {
            "token" => ImportanceSamplingLevel::Token,
            _ => ImportanceSamplingLevel::Sequence,
        },
        beta: f("beta"),
        kl_estimator: KlEstimator::K3,
        use_bias_correction_kl: case["use_bias_correction_kl"].as_bool().expect("bool"),
        epsilon_low: f("epsilon"),
        epsilon_high: case["epsilon_high"]
            .as_f64()
            .map_or(f("epsilon"), |e| e as f32),
        delta: case["delta"].as_f64().map(|d| d as f32),
        max_completion_length,
        gradient_accumulation_steps: case["gradient_accumulation_steps"].as_u64().expect("int")
            as usize,
    }
}

#[test]
fn grpo_loss_value_gradient_and_metrics_match_trl() {
    let golden: Value = serde_json::from_str(GOLDEN).expect("golden.json parses");
    let max_completion_length = golden["max_completion_length"].as_u64().expect("int") as usize;
    let cases = golden["cases"].as_array().expect("cases");
    assert!(cases.len() >= 100, "fixture holds every combination");
    let mut failures = Vec::new();
    for case in cases {
        let name = case["name"].as_str().expect("name");
        let input = &golden["inputs"][case["input"].as_str().expect("input name")];
        let logps = tensor(&input["logps"]).require_grad();
        let out = loss_for(case, max_completion_length)
            .forward(GrpoLossInputs {
                logps: logps.clone(),
                old_logps: (!input["old_logps"].is_null()).then(|| tensor(&input["old_logps"])),
                ref_logps: Some(tensor(&input["ref_logps"])),
                advantages: Tensor::from_floats(
                    vector(&input["advantages"]).as_slice(),
                    &Default::default(),
                ),
                mask: tensor(&input["mask"]),
                num_items_in_batch: case["num_items_in_batch"].as_f64().map(|n| n as f32),
                sampler_weights: None,
            })
            .expect("valid inputs");
        let loss = f64::from(
            out.loss
                .clone()
                .into_data()
                .iter::<f32>()
                .next()
                .expect("scalar"),
        );
        let expected_loss = case["loss"].as_f64().expect("loss");
        if !close(loss, expected_loss) {
            failures.push(format!("{name}: loss {loss} vs TRL {expected_loss}"));
        }

        let grads = out.loss.backward();
        let grad: Vec<f32> = logps
            .grad(&grads)
            .expect("tracked")
            .into_data()
            .iter::<f32>()
            .collect();
        let (expected_grad, _) = matrix(&case["grad"]);
        let mut norm = (0.0f64, 0.0f64);
        for (i, (g, e)) in grad.iter().zip(&expected_grad).enumerate() {
            let (g, e) = (f64::from(*g), f64::from(*e));
            norm.0 += g * g;
            norm.1 += e * e;
            if !close(g, e) {
                failures.push(format!("{name}: grad[{i}] {g} vs TRL {e}"));
            }
        }
        let (norm, expected_norm) = (norm.0.sqrt(), norm.1.sqrt());
        if (norm - expected_norm).abs() > 1e-4 * expected_norm.max(1e-6) {
            failures.push(format!("{name}: grad norm {norm} vs TRL {expected_norm}"));
        }

        let metrics = &case["metrics"];
        for (key, value) in out.metrics.named() {
            match metrics.get(key).and_then(Value::as_f64) {
                Some(e) if close(f64::from(value), e) => {}
                Some(e) if e.is_nan() && value.is_nan() => {}
                other => failures.push(format!("{name}: metric {key} = {value}, TRL {other:?}")),
            }
        }
        if out.metrics.kl.is_none() && metrics.get("kl").is_some() {
            failures.push(format!("{name}: kl metric missing"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn fixture_advantages_match_rust_group_advantages() {
    let golden: Value = serde_json::from_str(GOLDEN).expect("golden.json parses");
    let group = golden["group_size"].as_u64().expect("int") as usize;
    for (name, input) in golden["inputs"].as_object().expect("inputs") {
        let rewards = vector(&input["rewards"]);
        let expected = vector(&input["advantages"]);
        let found = group_advantages(&rewards, group, AdvantageScaling::Group).expect("valid");
        for (f, e) in found.iter().zip(&expected) {
            assert!((f - e).abs() < 1e-5, "{name}: {found:?} vs {expected:?}");
        }
    }
}
