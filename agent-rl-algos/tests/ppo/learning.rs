//! The RLHF learning proof, run through the library's [`Pipeline`] as the CLI and the
//! `rlhf_toy` demo run it: an SFT warm-up, a reward model trained on synthetic preferences
//! ("the right call beats a wrong one", "a call beats a refusal", "the right call beats its
//! malformed rendering") from the warm-up model, then PPO against that reward model alone.
//!
//! The warm-up imitates a reluctant teacher (`toy_reluctant_sft_dataset`): it declines 70% of
//! the city (weather, time) requests with one fixed line and demonstrates every other request,
//! so the warm-up model refuses most held-out city requests under greedy decoding although it
//! has learned their calls — the over-cautious agent that "a call beats a refusal" preferences
//! are collected to fix. For every seed run (1, 2, 3): the reward model ranks held-out pairs
//! with > 90% accuracy; PPO raises the learned reward of its rollouts, the held-out format
//! accuracy (calls where the warm-up refused) and the held-out exact-call success (both judged
//! by the rule-based checker, which the policy never sees). Held-out requests never occur in
//! training, neither in the tasks nor in the pairs (checked below).
//!
//! What the gain is made of, and why it is small (0.05-0.12, 2026-12-06): refusals turned into
//! calls. On this split's held-out pairs the reward model ranks a call above a refusal and the
//! right tool above the wrong one every time, but the right argument value above a wrong one at
//! chance (11, 18 and 16 of 30 on seeds 1-3; README, "RLHF"); after PPO every held-out call
//! that fails has wrong argument values. So PPO gets the calls made, and their values are as
//! right as the warm-up knew how to make them. PPO's KL penalty (`kl_coef` 0.3) keeps them so:
//! with 0.1, and a teacher that declined every kind of request, PPO moved the argument values
//! the reward model cannot judge and seed 3's success fell 0.367 -> 0.133. The recipes tried,
//! on every seed, are in the README ("RLHF").

use std::collections::BTreeSet;
use std::sync::Arc;

use agent_rl_algos::pipeline::{Pipeline, PpoStage, RewardModelStage, SftStage, ToolUseEvaluator};
use agent_rl_algos::sft::TextOrMessages;
use agent_rl_algos::toy::{
    ToyKind, toy_model_config, toy_preferences, toy_reluctant_sft_dataset, toy_request,
    toy_rlhf_tasks, toy_tokenizer, toy_warmup_config,
};
use agent_rl_algos::{LrSchedule, OptimizerConfig, PpoConfig, RewardConfig};
use agent_rl_core::weights::random_model;
use agent_rl_core::{AgentLoopConfig, Qwen2Config, SamplingConfig};

use crate::B;

#[test]
fn held_out_requests_are_disjoint_from_training_tasks_and_pairs() {
    for seed in SEEDS {
        let (train, held_out) = toy_rlhf_tasks(4000, HELD_OUT_TASKS, seed);
        assert_eq!(held_out.len(), HELD_OUT_TASKS);
        let requests = |pairs: &agent_rl_algos::reward_model::PreferenceDataset| {
            let sides = pairs.pairs().iter().flat_map(|p| [&p.chosen, &p.rejected]);
            sides
                .map(|side| match side {
                    TextOrMessages::Messages(m) => m[0].text().to_owned(),
                    TextOrMessages::Text(t) => t.clone(),
                })
                .collect::<BTreeSet<String>>()
        };
        let trained = requests(&toy_preferences(&train[..RM_TASKS], seed));
        let tested = requests(&toy_preferences(&held_out, seed + 1000));
        // 900 training tasks hold about 300 distinct requests (the 18 city requests not held
        // out and ~280 distinct sums), the 60 held-out tasks about 25: both sets are far from
        // trivial, so their disjointness means something.
        assert!(
            trained.len() > 200 && tested.len() > 20,
            "{} training and {} held-out requests",
            trained.len(),
            tested.len()
        );
        assert!(trained.is_disjoint(&tested), "seed {seed}");
        for task in &held_out {
            assert!(train.iter().all(|t| toy_request(t) != toy_request(task)));
        }
        // Every kind of request is held out (weather, time, add).
        for tool in ["get_weather", "get_time", "add"] {
            assert!(held_out.iter().any(|t| t.data["call"]["name"] == tool));
        }
    }
}

#[test]
fn rlhf_seed_1_learns_a_reward_model_and_runs_ppo_against_it() {
    rlhf_learns_tool_use(1);
}

#[test]
fn rlhf_seed_2_learns_a_reward_model_and_runs_ppo_against_it() {
    rlhf_learns_tool_use(2);
}

#[test]
fn rlhf_seed_3_learns_a_reward_model_and_runs_ppo_against_it() {
    rlhf_learns_tool_use(3);
}

/// SFT → reward model → PPO with seed `seed` (model, data order, sampling); asserts the reward
/// model's held-out accuracy, that PPO raises the learned reward, the held-out format and the
/// held-out exact-call success; prints what PPO changed.
fn rlhf_learns_tool_use(seed: u64) {
    let started = std::time::Instant::now();
    let config = Qwen2Config {
        max_position_embeddings: 512,
        ..toy_model_config()
    };
    let tokenizer = Arc::new(toy_tokenizer().expect("tokenizer"));
    let model = random_model::<B>(&config, seed, 0.05, &Default::default()).expect("model");
    let (train, held_out) = toy_rlhf_tasks(4000, HELD_OUT_TASKS, seed);
    let sft = toy_warmup_config(WARMUP_STEPS, 16, seed);
    let reward_model = RewardConfig {
        max_steps: Some(150),
        batch_size: 16,
        seed,
        optimizer: OptimizerConfig {
            learning_rate: 1e-3,
            lr_scheduler_type: LrSchedule::Constant,
            warmup_steps: 10,
            ..OptimizerConfig::default()
        },
        ..RewardConfig::default()
    };
    let mut ppo = PpoConfig {
        prompts_per_step: 16,
        num_generations: 1,
        max_steps: 30,
        num_ppo_epochs: 2,
        num_mini_batches: 2,
        max_tool_iterations: 1,
        kl_coef: 0.3,
        target_kl: Some(0.01),
        critic_warmup_steps: 3,
        seed,
        ..PpoConfig::default()
    }
    .with_max_completion_length(64);
    ppo.optimizer.learning_rate = 6e-4;
    ppo.optimizer.lr_scheduler_type = LrSchedule::Constant;

    let evaluator = ToolUseEvaluator::new(held_out.clone(), 64).with_loop_config(AgentLoopConfig {
        sampling: SamplingConfig::greedy(64),
        max_tool_iterations: 1,
        ..AgentLoopConfig::default()
    });
    let run = Pipeline::builder(model, tokenizer)
        .add_stage(SftStage::new(
            sft,
            toy_reluctant_sft_dataset(&train, &ToyKind::CITY, REFUSAL, seed),
        ))
        .add_stage(
            RewardModelStage::new(reward_model, toy_preferences(&train[..RM_TASKS], seed))
                .with_eval(toy_preferences(&held_out, seed + 1000)),
        )
        .add_stage(PpoStage::new(ppo, train).with_learned_reward())
        .with_evaluator(evaluator)
        .build()
        .expect("pipeline")
        .run()
        .expect("pipeline runs");
    let accuracy = run.reward_model_accuracy().expect("reward model evaluated");
    let before = *run.score("after_sft").expect("scored after the warm-up");
    let after = *run.score("after").expect("scored after PPO");
    let report = run.ppo().expect("PPO ran");
    let steps = report.steps.len();
    let window = steps / 4;
    // The learned reward alone (`rewards/reward_model/mean`), not the step's total, so that a
    // rule reward summed with it can never stand in for its rise.
    let learned = |range: std::ops::Range<usize>| {
        let means: Vec<f32> = report.steps[range]
            .iter()
            .filter_map(|m| m.rewards.iter().find(|r| r.name == "reward_model"))
            .map(|r| r.mean)
            .collect();
        assert_eq!(
            means.len(),
            window,
            "the learned reward is logged at every step"
        );
        means.iter().sum::<f32>() / window as f32
    };
    let first = learned(0..window);
    let last = learned(steps - window..steps);
    eprintln!(
        "RLHF seed {seed}: reward model held-out accuracy {accuracy:.3}; learned reward \
         {first:.3} -> {last:.3}; held-out call success {:.3} -> {:.3} (format {:.3} -> {:.3}, \
         arguments {:.3} -> {:.3}); {:.0} s",
        before.success_rate,
        after.success_rate,
        before.format_accuracy,
        after.format_accuracy,
        before.argument_match,
        after.argument_match,
        started.elapsed().as_secs_f64()
    );

    assert!(report.steps.iter().all(|m| m.loss.is_finite()));
    assert!(
        report.steps[0]
            .to_json()
            .get("rewards/reward_model/mean")
            .is_some(),
        "the learned reward is logged"
    );
    assert!(
        accuracy > 0.9,
        "seed {seed}: reward-model held-out accuracy {accuracy}"
    );
    // PPO's learning, on every seed: the learned reward of the rollouts rises from the first
    // quarter of the steps (three of them critic warm-up, the policy still the warm-up model)
    // to the last; the held-out requests the warm-up refused get calls (the rule-based
    // checker's format accuracy rises), and the held-out exact-call success rises.
    assert!(
        last > first + MIN_LEARNED_REWARD_RISE,
        "seed {seed}: learned reward {first} -> {last}"
    );
    assert!(
        after.format_accuracy > before.format_accuracy + MIN_FORMAT_RISE,
        "seed {seed}: held-out format {} -> {}",
        before.format_accuracy,
        after.format_accuracy
    );
    assert!(
        after.success_rate > before.success_rate + MIN_SUCCESS_RISE,
        "seed {seed}: held-out exact-call success {} -> {}",
        before.success_rate,
        after.success_rate
    );
}

/// The seeds the learning tests run (one test each).
const SEEDS: [u64; 3] = [1, 2, 3];
/// Training tasks whose preference pairs train the reward model (four pairs each).
const RM_TASKS: usize = 900;
/// The least rise of the learned reward (last quarter of the PPO steps over the first) asserted
/// on every seed; measured 2.25, 2.81, 2.40 on seeds 1-3 (2026-12-06).
const MIN_LEARNED_REWARD_RISE: f32 = 1.0;
/// The least rise of the held-out format accuracy (a call in the template's format instead of
/// a refusal) asserted on every seed; measured 0.23, 0.57, 0.57 on seeds 1-3 (2026-12-06).
const MIN_FORMAT_RISE: f32 = 0.15;
/// The least rise of the held-out exact-call success asserted on every seed; measured 0.050,
/// 0.117, 0.100 on seeds 1-3 (2026-12-06): 3, 7 and 6 of the 60 held-out tasks.
const MIN_SUCCESS_RISE: f32 = 0.04;
/// The share of city (weather, time) requests the warm-up's teacher declines
/// (`toy_reluctant_sft_dataset`).
const REFUSAL: f32 = 0.7;
/// SFT steps of the warm-up (16 rows each).
const WARMUP_STEPS: usize = 300;
/// Held-out tasks the policy is scored on (and whose preference pairs score the reward model).
const HELD_OUT_TASKS: usize = 60;
