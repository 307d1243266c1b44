//! The learning proof: GRPO raises a toy reward on the tiny model within seconds.

use agent_rl_algos::{GrpoConfig, GrpoTrainer, LossType, LrSchedule};
use agent_rl_test_support::{tiny_qwen2, tiny_tokenizer};

use super::common::{digit_share, prompts};
use crate::B;

#[test]
fn grpo_raises_the_digit_reward() {
    let mut config = GrpoConfig {
        num_generations: 8,
        prompts_per_step: 4,
        max_steps: 30,
        loss_type: LossType::Dapo,
        seed: 3,
        ..GrpoConfig::default()
    }
    .with_max_completion_length(8);
    config.optimizer.learning_rate = 3e-2;
    config.optimizer.lr_scheduler_type = LrSchedule::Constant;
    let started = std::time::Instant::now();
    let mut trainer = GrpoTrainer::builder(
        tiny_qwen2::<B>(11, &Default::default()),
        tiny_tokenizer().expect("fixture tokenizer"),
    )
    .with_config(config)
    .add_reward(digit_share())
    .build()
    .expect("valid trainer");
    let report = trainer.train(&prompts(8)).expect("training runs");
    let steps = report.steps.len();
    let first = report.mean_reward(0..5).expect("steps ran");
    let last = report.mean_reward(steps - 5..steps).expect("steps ran");
    let rewards: Vec<String> = report
        .steps
        .iter()
        .map(|m| format!("{:.3}", m.reward))
        .collect();
    eprintln!(
        "digit reward: first 5 steps {first:.3}, last 5 steps {last:.3}, {steps} steps in {:.1} s: {rewards:?}",
        started.elapsed().as_secs_f64()
    );
    assert!(report.steps.iter().all(|m| m.loss.is_finite()));
    assert!(
        last > first + 0.2 && last > 2.0 * first,
        "reward did not rise: first {first}, last {last}"
    );
}
