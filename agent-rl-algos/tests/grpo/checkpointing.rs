//! GRPO with activation checkpointing takes the step the plain forward takes.

use agent_rl_algos::{GrpoConfig, GrpoTrainer};
use agent_rl_test_support::{tiny_qwen2, tiny_tokenizer};

use super::common::{chars_per_token, parameters, prompts};
use crate::B;

/// Loss, gradient norm and parameters after one generation step.
fn one_step(gradient_checkpointing: bool) -> (f32, f32, Vec<Vec<f32>>) {
    let mut config = GrpoConfig {
        num_generations: 4,
        prompts_per_step: 2,
        max_steps: 10,
        beta: 0.04,
        gradient_checkpointing,
        ..GrpoConfig::default()
    }
    .with_max_completion_length(6);
    config.optimizer.learning_rate = 1e-3;
    config.optimizer.gradient_accumulation_steps = 2;
    let model = tiny_qwen2::<B>(7, &Default::default());
    let mut trainer = GrpoTrainer::builder(model, tiny_tokenizer().expect("fixture tokenizer"))
        .with_config(config)
        .add_reward(chars_per_token())
        .build()
        .expect("valid trainer");
    let metrics = trainer.train_step(&prompts(2)).expect("step");
    let norm = metrics.grad_norm.expect("a gradient norm");
    (metrics.loss, norm, parameters(trainer.model()))
}

#[test]
fn checkpointed_step_matches_the_plain_step() {
    let (plain_loss, plain_norm, plain) = one_step(false);
    let (loss, norm, checkpointed) = one_step(true);
    assert!(
        loss.is_finite() && norm > 0.0,
        "loss {loss}, grad norm {norm}"
    );
    assert!(
        (loss - plain_loss).abs() <= 1e-5 * plain_loss.abs().max(1.0),
        "{loss} vs {plain_loss}"
    );
    assert!(
        (norm - plain_norm).abs() <= 1e-4 * plain_norm,
        "grad norm {norm} vs {plain_norm}"
    );
    for (i, (a, b)) in checkpointed.iter().zip(&plain).enumerate() {
        let worst = a
            .iter()
            .zip(b)
            .map(|(x, y)| (x - y).abs())
            .fold(0.0f32, f32::max);
        assert!(worst <= 1e-5, "parameter #{i} differs by {worst}");
    }
}

#[test]
fn checkpointing_with_lora_dropout_is_refused() {
    let config = GrpoConfig {
        gradient_checkpointing: true,
        ..GrpoConfig::default()
    };
    let lora = agent_rl_core::lora::LoraConfig {
        dropout: 0.1,
        ..agent_rl_core::lora::LoraConfig::default()
    };
    let built = GrpoTrainer::builder(
        tiny_qwen2::<B>(7, &Default::default()),
        tiny_tokenizer().expect("fixture tokenizer"),
    )
    .with_config(config)
    .with_lora(lora)
    .add_reward(chars_per_token())
    .build();
    let message = built.err().map(|e| e.to_string()).unwrap_or_default();
    assert!(message.contains("gradient_checkpointing"), "{message}");
}
