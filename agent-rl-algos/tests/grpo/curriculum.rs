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

/// The toy tiers as curriculum levels through the pipeline, with new scenarios mixed in: the
/// logged draws show the ratio, the logged levels show promotion on the threshold.
#[test]
fn toy_tiers_advance_on_the_threshold_and_new_scenarios_come_at_their_ratio() {
    use agent_rl_algos::SftConfig;
    use agent_rl_algos::pipeline::{GrpoStage, Pipeline, SftStage};
    use agent_rl_algos::toy::{
        ToySplit, ToyTier, call_only, toy_model_config, toy_sft_dataset, toy_split_tasks,
        toy_tier_tasks, toy_tokenizer, toy_warmup_config,
    };
    use agent_rl_core::weights::random_model;
    use agent_rl_rewards::ToolUseReward;

    const RATIO: f32 = 0.25;
    const THRESHOLD: f32 = 0.1;
    const WINDOW: usize = 8;
    let levels: Vec<Vec<Task>> = ToyTier::ALL
        .iter()
        .map(|&tier| call_only(toy_tier_tasks(tier, ToySplit::Train, 300, 5)))
        .collect();
    let config = CurriculumConfig {
        window: WINDOW,
        promote_threshold: THRESHOLD,
        replay_ratio: 0.2,
        new_scenario_ratio: RATIO,
        seed: 5,
    };
    let mut sampler = CurriculumSampler::new(levels.clone(), config).expect("sampler");
    // New scenarios: requests in the held-out phrasings, arriving mid-run in a real job.
    let new_scenarios = call_only(toy_split_tasks(ToySplit::HeldOut, 30, 9));
    sampler.add_new_scenarios(new_scenarios.iter().cloned());
    // A warm-up on the first tier, so that its episodes (judged on the call) sometimes succeed.
    let warmup = toy_warmup_config(100, 16, SftConfig::default().seed);
    let grpo = GrpoConfig {
        num_generations: 2,
        prompts_per_step: 8,
        max_steps: 10,
        seed: 5,
        ..GrpoConfig::default()
    }
    .with_max_completion_length(64);
    let run = tempfile::tempdir().expect("temp dir");
    let model =
        random_model::<B>(&toy_model_config(), 5, 0.05, &Default::default()).expect("model");
    Pipeline::builder(model, toy_tokenizer().expect("tokenizer"))
        .add_stage(SftStage::new(warmup, toy_sft_dataset(&levels[0])))
        .add_stage(
            GrpoStage::new(grpo, Vec::new())
                .with_curriculum(sampler)
                .add_reward(ToolUseReward::default()),
        )
        .with_run_dir(run.path())
        .build()
        .expect("pipeline")
        .run()
        .expect("runs");
    let log = std::fs::read_to_string(run.path().join("grpo_metrics.jsonl")).expect("metrics");
    let rows: Vec<serde_json::Value> = log
        .lines()
        .map(|line| serde_json::from_str(line).expect("json"))
        .collect();
    assert_eq!(rows.len(), 10);
    let value = |row: &serde_json::Value, key: &str| row[key].as_f64().expect(key);
    let (mut new, mut total, mut previous_level) = (0.0, 0.0, 0.0);
    for row in &rows {
        let level = value(row, "curriculum/level");
        let draws = ["current", "replay", "new_scenario"]
            .map(|source| value(row, &format!("curriculum/draws/{source}")));
        assert_eq!(draws.iter().sum::<f64>(), 8.0, "every draw is logged once");
        if previous_level == 0.0 {
            assert_eq!(draws[1], 0.0, "no easier level to replay at level 0");
        }
        assert!(level >= previous_level, "levels never go back");
        // A full window below the last level is always under the threshold: reaching it
        // promotes on the spot.
        if value(row, "curriculum/window_episodes") == WINDOW as f64 && level < 2.0 {
            assert!(
                value(row, "curriculum/window_success") < f64::from(THRESHOLD),
                "{row}"
            );
        }
        previous_level = level;
        new += draws[2];
        total += 8.0;
    }
    assert!(
        previous_level >= 1.0,
        "the warmed-up model passed tier 0:\n{log}"
    );
    // 80 draws at ratio 0.25: within three binomial standard deviations (±11.6 draws).
    let expected = f64::from(RATIO) * total;
    let sd = (total * f64::from(RATIO) * (1.0 - f64::from(RATIO))).sqrt();
    assert!(
        (new - expected).abs() <= 3.0 * sd,
        "{new} new-scenario draws of {total}, expected {expected} ± {:.1}",
        3.0 * sd
    );
}
