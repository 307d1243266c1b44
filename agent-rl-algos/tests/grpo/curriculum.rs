//! Curriculum training: episode outcomes flow back into the sampler, which promotes.

use agent_rl_algos::{CurriculumConfig, CurriculumSampler, GrpoConfig, GrpoTrainer};
use agent_rl_core::{Message, Task};
use agent_rl_test_support::{tiny_qwen2, tiny_tokenizer};
use serde_json::json;

use super::common::chars_per_token;
use crate::B;

fn level(name: &str, target: serde_json::Value) -> Vec<Task> {
    (0..3)
        .map(|i| Task {
            id: format!("{name}-{i}"),
            messages: vec![Message::user(format!("{name} {i}"))],
            data: json!({ "target": target }),
            ..Task::default()
        })
        .collect()
}

#[test]
fn outcomes_are_recorded_and_the_sampler_promotes() {
    // Level 0 needs no call (an untrained model succeeds by not calling); level 1 needs a call
    // to a tool nobody offers (never succeeds): the run must promote once and stay.
    let easy = level("easy", json!({"expected_calls": []}));
    let hard = level(
        "hard",
        json!({"expected_calls": [{"name": "f", "arguments": {}}]}),
    );
    let config = CurriculumConfig {
        window: 8,
        promote_threshold: 0.75,
        replay_ratio: 0.0,
        new_scenario_ratio: 0.0,
        seed: 3,
    };
    let mut sampler = CurriculumSampler::new(vec![easy, hard], config).expect("valid sampler");
    let grpo = GrpoConfig {
        num_generations: 4,
        prompts_per_step: 2,
        max_steps: 3,
        seed: 1,
        ..GrpoConfig::default()
    }
    .with_max_completion_length(6);
    let mut trainer = GrpoTrainer::builder(
        tiny_qwen2::<B>(2, &Default::default()),
        tiny_tokenizer().expect("tokenizer"),
    )
    .with_config(grpo)
    .add_reward(chars_per_token())
    .build()
    .expect("trainer");
    let report = trainer.train_curriculum(&mut sampler).expect("trains");
    assert_eq!(report.global_step, 3);
    assert_eq!(
        sampler.level(),
        1,
        "8 successful easy episodes promote to level 1"
    );
    assert_eq!(
        sampler.success_rate(),
        Some(0.0),
        "hard episodes were recorded as failures"
    );
}
