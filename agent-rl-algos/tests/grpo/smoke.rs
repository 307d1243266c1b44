//! Smoke test: two generation steps with every option that adds work switched on.

use agent_rl_algos::{GrpoConfig, GrpoTrainer, MetricsHistory};
use agent_rl_test_support::{tiny_qwen2, tiny_tokenizer};

use super::common::{chars_per_token, digit_share, parameters, prompts};
use crate::B;

#[test]
fn two_steps_change_every_parameter_with_finite_loss() {
    let mut config = GrpoConfig {
        num_generations: 4,
        prompts_per_step: 2,
        max_steps: 100,
        num_iterations: 2,
        beta: 0.04,
        epsilon_high: Some(0.28),
        reward_weights: vec![1.0, 0.5],
        ..GrpoConfig::default()
    }
    .with_max_completion_length(6);
    config.optimizer.learning_rate = 1e-3;
    config.optimizer.gradient_accumulation_steps = 2;
    let model = tiny_qwen2::<B>(5, &Default::default());
    let before = parameters(&model);
    let mut trainer = GrpoTrainer::builder(model, tiny_tokenizer().expect("fixture tokenizer"))
        .with_config(config)
        .add_reward(chars_per_token())
        .add_reward(digit_share())
        .with_observer(MetricsHistory::default())
        .build()
        .expect("valid trainer");
    let tasks = prompts(3);
    let first = trainer.train_step(&tasks).expect("step 1");
    let second = trainer.train_step(&tasks).expect("step 2");
    assert_eq!(trainer.global_step(), 4, "two generation steps of μ = 2");
    for metrics in [&first, &second] {
        assert!(metrics.loss.is_finite(), "{metrics:?}");
        assert!(metrics.grad_norm.is_some_and(f32::is_finite));
        assert!(metrics.loss_metrics.kl.is_some_and(f32::is_finite));
        assert!(metrics.entropy.is_some_and(|e| e > 0.0));
        assert_eq!(metrics.rewards.len(), 2);
        let json = metrics.to_json();
        for key in [
            "reward",
            "rewards/chars_per_token/mean",
            "kl",
            "clip_ratio/region_mean",
        ] {
            assert!(json.get(key).is_some(), "missing {key}");
        }
    }
    assert!(
        second.loss_metrics.kl.is_some_and(|kl| kl > 0.0),
        "policy moved from the reference"
    );
    let after = parameters(trainer.model());
    assert_eq!(before.len(), after.len());
    for (i, (old, new)) in before.iter().zip(&after).enumerate() {
        assert!(
            old.iter().zip(new).any(|(a, b)| a != b),
            "parameter #{i} did not change"
        );
    }
}

#[test]
fn build_rejects_bad_settings() {
    let tokenizer = || tiny_tokenizer().expect("fixture tokenizer");
    let model = || tiny_qwen2::<B>(0, &Default::default());
    let no_reward = GrpoTrainer::builder(model(), tokenizer()).build();
    assert!(no_reward.is_err_and(|e| e.to_string().contains("add_reward")));
    let weights = GrpoTrainer::builder(model(), tokenizer())
        .with_config(GrpoConfig {
            reward_weights: vec![1.0, 2.0],
            ..GrpoConfig::default()
        })
        .add_reward(digit_share())
        .build();
    assert!(weights.is_err_and(|e| e.to_string().contains("reward_weights")));
    let groups = GrpoTrainer::builder(model(), tokenizer())
        .with_config(GrpoConfig {
            num_generations: 1,
            ..GrpoConfig::default()
        })
        .add_reward(digit_share())
        .build();
    assert!(groups.is_err_and(|e| e.to_string().contains("num_generations")));
}
