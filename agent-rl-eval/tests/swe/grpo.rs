//! One GRPO step on the `calc` family with `SweEnvironmentFactory`: each rollout gets a fresh
//! workspace, tool calls run in it, and the reward is the local grader's verdict on the episode
//! (`resolved_reward`); the tiny random model never submits a fix, so the grader scores its
//! episodes as empty patches (0). That a submitted fix earns 1 is checked on the environment
//! directly.

use std::sync::{Arc, Mutex};

use agent_rl_algos::toy::{toy_model_config, toy_tokenizer};
use agent_rl_algos::{GrpoConfig, GrpoTrainer};
use agent_rl_core::weights::random_model;
use agent_rl_core::{Action, EnvironmentFactory, ToolCall};
use agent_rl_eval::swe::{SweEnvConfig, SweEnvironmentFactory, resolved_reward};
use agent_rl_rewards::{FnReward, Reward, Sample};
use burn::backend::{Autodiff, Flex};
use serde_json::json;

use super::fixture::{BUG, FIX, calc_grader, calc_task};

type Train = Autodiff<Flex>;

#[test]
fn the_environment_rewards_a_resolved_patch_with_one() {
    let dir = tempfile::tempdir().unwrap();
    let task = calc_task(dir.path()).to_task("Fix the bug.");
    let factory = SweEnvironmentFactory {
        config: SweEnvConfig::default(),
        grader: Some(calc_grader(dir.path().join("envs"))),
    };
    for (replacement, reward) in [(FIX, 1.0), (BUG, 0.0)] {
        let mut env = factory.create();
        env.reset(&task).unwrap();
        let edit = ToolCall::new(
            "str_replace",
            json!({"path": "calc/stats.py", "old_str": BUG, "new_str": replacement}),
        );
        let outcome = env.step(&Action::ToolCall(edit)).unwrap();
        assert!(!outcome.done);
        let outcome = env
            .step(&Action::ToolCall(ToolCall::new("submit", json!({}))))
            .unwrap();
        assert!(outcome.done);
        assert_eq!(outcome.reward, Some(reward), "{replacement}");
    }
}

#[test]
fn one_grpo_step_on_the_family_completes_with_grader_rewards() {
    let dir = tempfile::tempdir().unwrap();
    let task = calc_task(dir.path()).to_task("Fix the bug; call submit when done.");
    let factory = SweEnvironmentFactory {
        config: SweEnvConfig {
            max_steps: 2,
            ..SweEnvConfig::default()
        },
        grader: Some(calc_grader(dir.path().join("envs"))),
    };
    let seen: Arc<Mutex<Vec<Option<f32>>>> = Arc::default();
    let record = Arc::clone(&seen);
    let reward = resolved_reward();
    let observed = FnReward::new("swe_resolved_seen", move |sample: Sample<'_>| {
        let value = reward.score(sample).ok()?.score;
        record
            .lock()
            .ok()?
            .push(sample.trajectory.environment_reward);
        value
    });
    let config = GrpoConfig {
        num_generations: 2,
        prompts_per_step: 1,
        max_steps: 1,
        max_tool_iterations: 2,
        ..GrpoConfig::default()
    }
    .with_max_completion_length(24);
    let model = random_model::<Train>(&toy_model_config(), 7, 0.05, &Default::default()).unwrap();
    let mut trainer = GrpoTrainer::builder(model, toy_tokenizer().unwrap())
        .with_config(config)
        .add_reward(observed)
        .with_environment(factory)
        .build()
        .unwrap();
    let report = trainer.train(std::slice::from_ref(&task)).unwrap();
    assert_eq!(report.steps.len(), 1);
    let step = &report.steps[0];
    assert!(step.loss.is_finite(), "{step:?}");
    assert_eq!(step.reward, 0.0, "a random model resolves nothing");
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 2, "one reward per rollout");
    assert!(
        seen.iter().all(|reward| matches!(reward, None | Some(0.0))),
        "{seen:?}"
    );
}
