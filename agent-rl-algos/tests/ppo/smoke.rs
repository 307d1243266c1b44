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
            "policy/num_updates",
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

/// A trainer on the fixture model with `config()` changed by `change`.
fn trainer_with(change: impl FnOnce(&mut PpoConfig)) -> PpoTrainer<B> {
    let mut config = config();
    change(&mut config);
    PpoTrainer::builder(
        tiny_qwen2::<B>(5, &Default::default()),
        tiny_tokenizer().expect("fixture tokenizer"),
    )
    .with_config(config)
    .add_reward(chars_per_token())
    .build()
    .expect("valid trainer")
}

/// Whether any parameter differs between two snapshots.
fn moved(before: &[Vec<f32>], after: &[Vec<f32>]) -> bool {
    before.iter().zip(after).any(|(a, b)| a != b)
}

#[test]
fn target_kl_stops_the_policy_updates_once_the_minibatch_kl_passes_it() {
    let tasks = prompts(5);
    // Without a limit: 2 epochs × 2 minibatches = 4 policy steps per rollout batch.
    let mut free = trainer_with(|_| {});
    let unlimited = free.train_step(&tasks).expect("step").ppo.expect("ppo");
    assert_eq!(unlimited.policy_updates, 4);
    assert!(unlimited.approxkl_avg > 0.0, "{unlimited:?}");
    // A target far below what one step at lr 1e-3 moves: the first minibatch starts at the
    // rollout policy (KL 0) and steps; the second sees the moved policy and stops the rest.
    let mut stopped = trainer_with(|c| c.target_kl = Some(1e-9));
    let critic_before = parameters(stopped.critic());
    let limited = stopped.train_step(&tasks).expect("step").ppo.expect("ppo");
    assert_eq!(limited.policy_updates, 1, "{limited:?}");
    assert!(
        moved(&critic_before, &parameters(stopped.critic())),
        "the critic still trains"
    );
    // A target the updates never reach changes nothing.
    let mut loose = trainer_with(|c| c.target_kl = Some(1e6));
    let same = loose.train_step(&tasks).expect("step").ppo.expect("ppo");
    assert_eq!(same.policy_updates, 4);
    assert_eq!(parameters(loose.model()), parameters(free.model()));
}

#[test]
fn critic_warmup_trains_only_the_critic_for_its_steps() {
    let tasks = prompts(5);
    let mut trainer = trainer_with(|c| c.critic_warmup_steps = 1);
    let (policy_before, critic_before) =
        (parameters(trainer.model()), parameters(trainer.critic()));
    let warmup = trainer.train_step(&tasks).expect("step 1");
    assert_eq!(warmup.ppo.expect("ppo").policy_updates, 0);
    assert!(warmup.loss.is_finite());
    let policy_after_warmup = parameters(trainer.model());
    assert_eq!(
        policy_before, policy_after_warmup,
        "the policy is frozen during the warm-up"
    );
    assert!(moved(&critic_before, &parameters(trainer.critic())));
    let after = trainer.train_step(&tasks).expect("step 2");
    assert_eq!(after.ppo.expect("ppo").policy_updates, 4);
    assert!(moved(&policy_after_warmup, &parameters(trainer.model())));
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
        (
            PpoConfig {
                target_kl: Some(-0.01),
                ..PpoConfig::default()
            },
            "target_kl",
        ),
        (
            PpoConfig {
                critic_warmup_steps: 4,
                max_steps: 4,
                ..PpoConfig::default()
            },
            "critic_warmup_steps",
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
