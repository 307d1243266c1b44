//! GRPO with rollouts through `agent-rl serve`: the trainer samples on the server, publishes its
//! LoRA adapter after every update (the server's answers then match the trainer's policy), and
//! logs the truncated importance sampling against the server, whose weights are ~1 when the
//! server holds the learner's weights and far from 1 when it does not (the control).

use std::sync::Arc;

use agent_rl::algos::{GrpoConfig, GrpoTrainer, StepMetrics};
use agent_rl::backend::{CpuBackend, CpuTrainBackend};
use agent_rl::core::generation::{SamplingConfig, generate_ids};
use agent_rl::core::lora::LoraConfig;
use agent_rl::core::{BurnPolicy, ChatTokenizer, Message, Task};
use agent_rl::remote::{RemoteConfig, RemoteRollouts};
use agent_rl::rewards::{FnReward, Sample};
use agent_rl::serve::{ServeConfig, ServerHandle, start};
use agent_rl_test_support::{tiny_qwen2, tiny_tokenizer};
use burn::module::AutodiffModule;
use serde_json::json;

use super::common::{config, ids, post};

const SEED: u64 = 11;

fn tasks() -> Vec<Task> {
    (0..4)
        .map(|i| Task {
            id: format!("task-{i}"),
            messages: vec![Message::user(format!("count {i}"))],
            ..Task::default()
        })
        .collect()
}

fn tokenizer() -> Arc<ChatTokenizer> {
    Arc::new(tiny_tokenizer().unwrap())
}

/// The tiny model of `seed` served with runtime adapters allowed.
fn server(seed: u64) -> ServerHandle {
    let model = tiny_qwen2::<CpuBackend>(seed, &Default::default());
    let config = ServeConfig {
        allow_runtime_lora: true,
        ..config()
    };
    start(BurnPolicy::new(model, tokenizer()), config).unwrap()
}

/// A LoRA GRPO trainer on the tiny model of `SEED`, sampling on `server`.
fn trainer(server: &ServerHandle, publish_dir: &std::path::Path) -> GrpoTrainer<CpuTrainBackend> {
    let mut config = GrpoConfig {
        num_generations: 4,
        prompts_per_step: 2,
        max_steps: 3,
        seed: 9,
        ..GrpoConfig::default()
    }
    .with_max_completion_length(6);
    config.optimizer.learning_rate = 5e-2;
    let source = RemoteRollouts::new(
        &RemoteConfig {
            base_url: server.base_url(),
            model: "tiny".into(),
            ..RemoteConfig::default()
        },
        publish_dir,
    )
    .unwrap();
    GrpoTrainer::builder(tiny_qwen2(SEED, &Default::default()), tokenizer())
        .with_config(config)
        .with_lora(LoraConfig {
            r: 4,
            alpha: 8.0,
            ..LoraConfig::default()
        })
        .add_reward(FnReward::new("chars_per_token", |sample: Sample<'_>| {
            let tokens = sample.trajectory.completion_tokens().max(1);
            let chars = sample.trajectory.final_answer().map_or(0, str::len);
            Some(chars as f32 / tokens as f32)
        }))
        .with_rollout_source(source)
        .build()
        .unwrap()
}

fn greedy() -> SamplingConfig {
    SamplingConfig {
        ignore_eos: true,
        ..SamplingConfig::greedy(6)
    }
}

/// The server's greedy continuation of `prompt` as the published adapter: ids and logprobs.
fn served(server: &ServerHandle, prompt: &[u32]) -> (Vec<u32>, Vec<f32>) {
    let (status, answer) = post(
        server,
        "/v1/completions",
        &json!({"model": agent_rl::remote::DEFAULT_ADAPTER_NAME, "prompt": prompt,
                "temperature": 0, "max_tokens": 6, "ignore_eos": true, "logprobs": 0}),
    );
    assert_eq!(status, 200, "{answer}");
    let choice = &answer["choices"][0];
    let logprobs = choice["logprobs"]["token_logprobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap() as f32)
        .collect();
    (ids(&choice["token_ids"]), logprobs)
}

fn close(a: &[f32], b: &[f32], tolerance: f32) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() <= tolerance)
}

fn mismatch(metrics: &StepMetrics) -> agent_rl::algos::SamplerMismatchMetrics {
    let logged = metrics.to_json();
    for name in [
        "sampling/importance_sampling_ratio/mean",
        "sampling/importance_sampling_ratio/clipped_ratio",
        "sampling/sampling_logp_difference/mean",
    ] {
        assert!(logged[name].is_number(), "{name} missing from {logged}");
    }
    metrics
        .sampler_mismatch
        .expect("remote rollouts log the correction")
}

#[test]
fn grpo_samples_on_the_server_and_publishes_every_update() {
    let server = server(SEED);
    let dir = tempfile::tempdir().unwrap();
    let mut trainer = trainer(&server, dir.path());
    let probe = tokenizer()
        .encode_chat(&[Message::user("probe")], &[], true)
        .unwrap();
    let mut previous: Option<Vec<f32>> = None;
    for step in 1..=3 {
        let metrics = trainer.train_step(&tasks()).unwrap();
        assert_eq!(metrics.step, step);
        assert!(metrics.loss.is_finite());
        // The server held the learner's weights when it sampled: the importance weights are 1
        // up to the rounding of two batchings of the same computation.
        let m = mismatch(&metrics);
        eprintln!("step {step}: {m:?}");
        assert!(m.mean_abs_log_ratio < 1e-4, "step {step}: {m:?}");
        assert!((m.mean_weight - 1.0).abs() < 1e-4, "step {step}: {m:?}");
        assert_eq!(m.clipped_ratio, 0.0, "step {step}: {m:?}");

        // After the update the server answers as the trainer's current policy.
        let (got_ids, got_logprobs) = served(&server, &probe);
        let local = trainer.model().valid();
        let want = generate_ids(&local, std::slice::from_ref(&probe), &greedy(), &[])
            .unwrap()
            .remove(0);
        assert_eq!(got_ids, want.token_ids, "step {step}");
        assert!(
            close(&got_logprobs, &want.logprobs, 1e-4),
            "step {step}: served {got_logprobs:?}, local {:?}",
            want.logprobs
        );
        if let Some(previous) = &previous {
            assert!(
                !close(previous, &got_logprobs, 1e-3),
                "step {step}: the served adapter did not change ({got_logprobs:?})"
            );
        }
        previous = Some(got_logprobs);
    }
}

#[test]
fn a_server_with_other_weights_gives_weights_far_from_one() {
    // Control: the server's base model is another seed, so sampler and learner disagree.
    let server = server(SEED + 1);
    let dir = tempfile::tempdir().unwrap();
    let mut trainer = trainer(&server, dir.path());
    let m = mismatch(&trainer.train_step(&tasks()).unwrap());
    eprintln!("other weights: {m:?}");
    assert!(m.mean_abs_log_ratio > 0.1, "{m:?}");
    assert!(m.clipped_ratio > 0.0, "{m:?}");
    assert!(m.mean_weight <= 2.0, "the cap bounds every weight: {m:?}");
}

#[test]
fn remote_rollouts_refuse_full_fine_tuning_and_multi_turn() {
    let source = || RemoteRollouts::new(&RemoteConfig::default(), std::env::temp_dir()).unwrap();
    let base = || {
        GrpoTrainer::<CpuTrainBackend>::builder(tiny_qwen2(SEED, &Default::default()), tokenizer())
            .with_config(GrpoConfig {
                num_generations: 2,
                ..GrpoConfig::default()
            })
            .add_reward(FnReward::new("one", |_: Sample<'_>| Some(1.0)))
            .with_rollout_source(source())
    };
    let full = base().build().unwrap_err().to_string();
    assert!(
        full.contains("`lora`") && full.contains("with_lora"),
        "{full}"
    );
    let multi = base()
        .with_lora(LoraConfig::default())
        .with_environment(agent_rl::algos::toy::toy_environments())
        .build()
        .unwrap_err()
        .to_string();
    assert!(
        multi.contains("`environment`") && multi.contains("single-turn"),
        "{multi}"
    );
}
