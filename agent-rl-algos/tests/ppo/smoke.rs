//! PPO smoke tests: every parameter of policy and critic moves, TRL's metric names are logged,
//! multi-turn episodes train, a resumed run ends where the uninterrupted one does, bad settings
//! are refused.

use agent_rl_algos::toy::{toy_environments, toy_model_config, toy_tasks, toy_tokenizer};
use agent_rl_algos::{MetricsHistory, PpoConfig, PpoTrainer};
use agent_rl_core::weights::random_model;
use agent_rl_rewards::ToolUseReward;
use agent_rl_test_support::{tiny_qwen2, tiny_tokenizer};

use crate::B;
use crate::grpo::{chars_per_token, parameters, prompts};

fn config() -> PpoConfig {
    let mut config = PpoConfig {
        prompts_per_step: 4,
        max_steps: 4,
        num_ppo_epochs: 2,
        num_mini_batches: 2,
        kl_target: Some(0.5),
        kl_horizon: 10.0,
        entropy_coef: 0.01,
        missing_eos_penalty: Some(0.5),
        whiten_rewards: true,
        seed: 9,
        ..PpoConfig::default()
    }
    .with_max_completion_length(6);
    config.optimizer.learning_rate = 1e-3;
    config.optimizer.gradient_accumulation_steps = 2;
    config
}

#[test]
fn two_steps_change_every_parameter_and_log_trl_names() {
    let model = tiny_qwen2::<B>(5, &Default::default());
    let before = parameters(&model);
    let mut trainer = PpoTrainer::builder(model, tiny_tokenizer().expect("fixture tokenizer"))
        .with_config(config())
        .add_reward(chars_per_token())
        .with_observer(MetricsHistory::default())
        .build()
        .expect("valid trainer");
    let critic_before = parameters(trainer.critic());
    let tasks = prompts(5);
    let first = trainer.train_step(&tasks).expect("step 1");
    let second = trainer.train_step(&tasks).expect("step 2");
    assert_eq!(trainer.global_step(), 2);
    for metrics in [&first, &second] {
        assert!(metrics.loss.is_finite(), "{metrics:?}");
        let ppo = metrics.ppo.expect("PPO metrics");
        assert!(ppo.value_loss_avg.is_finite() && ppo.value_loss_avg > 0.0);
        assert!(
            ppo.entropy_avg > 0.0 && ppo.ratio > 0.5 && ppo.ratio < 1.5,
            "{ppo:?}"
        );
        let json = metrics.to_json();
        for key in [
            "objective/kl",
            "objective/entropy",
            "objective/non_score_reward",
            "objective/rlhf_reward",
            "objective/scores",
            "policy/approxkl_avg",
            "policy/clipfrac_avg",
            "loss/policy_avg",
            "loss/value_avg",
            "val/clipfrac_avg",
            "policy/entropy_avg",
            "val/ratio",
            "val/num_eos_tokens",
            "rewards/chars_per_token/mean",
        ] {
            assert!(json.get(key).is_some_and(|v| !v.is_null()), "missing {key}");
        }
    }
    let (kl1, kl2) = (first.ppo.expect("ppo").kl, second.ppo.expect("ppo").kl);
    assert_eq!(kl1, 0.0, "the first rollout is the reference's own");
    assert!(kl2 != 0.0, "the policy moved from the reference");
    assert!(trainer.kl_coef() != 0.05, "the adaptive controller moved β");
    for (name, old, new) in [
        ("policy", before, parameters(trainer.model())),
        ("critic", critic_before, parameters(trainer.critic())),
    ] {
        assert_eq!(old.len(), new.len());
        for (i, (a, b)) in old.iter().zip(&new).enumerate() {
            assert!(
                a.iter().zip(b).any(|(x, y)| x != y),
                "{name} parameter #{i} did not change"
            );
        }
    }
}

#[test]
fn multi_turn_episodes_train_with_finite_loss() {
    let config = PpoConfig {
        prompts_per_step: 2,
        max_steps: 1,
        max_tool_iterations: 2,
        ..config()
    }
    .with_max_completion_length(24);
    let model =
        random_model::<B>(&toy_model_config(), 3, 0.05, &Default::default()).expect("model");
    let mut trainer = PpoTrainer::builder(model, toy_tokenizer().expect("toy tokenizer"))
        .with_config(config)
        .add_reward(ToolUseReward::default())
        .with_environment(toy_environments())
        .build()
        .expect("valid trainer");
    let metrics = trainer.train_step(&toy_tasks(4, 2)).expect("step");
    assert!(metrics.loss.is_finite());
    assert!(metrics.ppo.is_some_and(|p| p.value_loss_avg.is_finite()));
}

#[test]
fn resumed_run_matches_the_uninterrupted_run() {
    let dir = tempfile::tempdir().expect("temp dir");
    let tasks = prompts(5);
    let build = |seed: u64, config: PpoConfig| {
        PpoTrainer::builder(
            tiny_qwen2::<B>(seed, &Default::default()),
            tiny_tokenizer().expect("fixture tokenizer"),
        )
        .with_config(config)
        .add_reward(chars_per_token())
    };
    let mut full = build(1, config())
        .with_checkpointing(dir.path(), 2)
        .build()
        .expect("valid trainer");
    let report = full.train(&tasks).expect("training runs");
    let midway = dir.path().join("checkpoint-2");
    assert_eq!(
        report.checkpoints,
        vec![midway.clone(), dir.path().join("checkpoint-4")]
    );
    for file in [
        "model/model.safetensors",
        "critic/model.safetensors",
        "critic/config.json",
        "reference/model.safetensors",
        "optimizer.bin",
        "critic_optimizer.bin",
        "trainer_state.json",
        "config.json",
    ] {
        assert!(midway.join(file).exists(), "{file} missing");
    }
    // A different initial model: everything must come from the checkpoint.
    let mut resumed = build(2, config())
        .with_resume_from(&midway)
        .build()
        .expect("resumes");
    assert_eq!(resumed.global_step(), 2);
    let rest = resumed.train(&tasks).expect("training resumes");
    assert_eq!(rest.steps.len(), 2);
    for (a, b) in report.steps[2..].iter().zip(&rest.steps) {
        assert_eq!(a.reward, b.reward, "same rollouts after resuming");
        assert!((a.loss - b.loss).abs() < 1e-5, "{} vs {}", a.loss, b.loss);
    }
    for (model, (a, b)) in [
        (parameters(full.model()), parameters(resumed.model())),
        (parameters(full.critic()), parameters(resumed.critic())),
    ]
    .into_iter()
    .enumerate()
    {
        for (x, y) in a.iter().flatten().zip(b.iter().flatten()) {
            assert!((x - y).abs() < 1e-5, "model {model}: {x} vs {y}");
        }
    }
    let wrong_seed = build(
        2,
        PpoConfig {
            seed: 10,
            ..config()
        },
    )
    .with_resume_from(&midway)
    .build();
    assert!(wrong_seed.is_err_and(|e| e.to_string().contains("seed")));
}

#[test]
fn build_rejects_bad_settings() {
    let tokenizer = || tiny_tokenizer().expect("fixture tokenizer");
    let model = || tiny_qwen2::<B>(0, &Default::default());
    let no_reward = PpoTrainer::builder(model(), tokenizer()).build();
    assert!(no_reward.is_err_and(|e| e.to_string().contains("add_reward")));
    for (config, field) in [
        (
            PpoConfig {
                num_mini_batches: 9,
                prompts_per_step: 4,
                ..PpoConfig::default()
            },
            "num_mini_batches",
        ),
        (
            PpoConfig {
                lam: 1.5,
                ..PpoConfig::default()
            },
            "lam",
        ),
        (
            PpoConfig {
                kl_estimator: agent_rl_algos::KlEstimator::K2,
                ..PpoConfig::default()
            },
            "kl_estimator",
        ),
        (
            PpoConfig {
                kl_target: Some(0.0),
                ..PpoConfig::default()
            },
            "kl_target",
        ),
        (
            PpoConfig {
                missing_eos_penalty: Some(-1.0),
                ..PpoConfig::default()
            },
            "missing_eos_penalty",
        ),
    ] {
        let built = PpoTrainer::builder(model(), tokenizer())
            .with_config(config)
            .add_reward(chars_per_token())
            .build();
        assert!(
            built.is_err_and(|e| e.to_string().contains(field)),
            "{field} accepted"
        );
    }
}
