//! The RLHF learning proof, run through the library's [`Pipeline`] as the CLI and the
//! `rlhf_toy` demo run it: an SFT warm-up, a reward model trained on synthetic preferences
//! ("the right call beats a wrong one", "a call beats a refusal", "the right call beats its
//! malformed rendering") from the warm-up model, then
//! PPO against that reward model alone. For every seed run (1, 2, 3), the reward model ranks
//! held-out pairs with > 90% accuracy, PPO raises the learned reward of its rollouts, and the
//! held-out tool-call format accuracy of the policy (judged by the rule-based checker, not the
//! reward model) does not collapse (it ends at most 0.05 below the warm-up's).
//!
//! Not proven: a rise of the held-out *exact-call* success. The reward model separates the right
//! tool from the wrong one and calls from refusals, but ranks a wrong argument value on a
//! held-out request at chance (a two-layer model does not learn to compare the call's value
//! with the request's on requests it never saw), so the learned reward PPO raises says little
//! about argument values: with the recipe below the held-out success stayed at 0.13, 0.00, 0.00
//! on seeds 1-3 (2026-12-05). Nor is a format *rise* asserted: seeds 2 and 3 start at 1.00, and
//! seed 1 stays at 0.55. The success figures are printed, not asserted; see issue 17. Held-out
//! requests never occur in training, neither in the tasks nor in the pairs (checked below).
//!
//! Tried 2026-12-06 and not adopted (issue 17): GRPO's gain setting — the warm-up imitates
//! a teacher that calls `get_time` on 70% of weather requests (`toy_biased_sft_dataset`, 300
//! steps), the pairs stay the true ones, held-out requests from `ToySplit::HeldOut`, a control
//! arm trained 30 more SFT steps of 32 rows. With this file's PPO settings and a 300-step reward
//! model, PPO raised held-out exact-call success 0.167 -> 0.367 and 0.300 -> 0.550 on seeds 2
//! and 3 (control 0.150, 0.300; weather requests 0.00 -> 0.60, 0.75) but not on seed 1 (0.117
//! -> 0.100, control 0.367), and the reward model ranked the unseen phrasings' pairs at 0.892,
//! 0.921, 0.896 (< 0.9). Other runs: a 150-step reward model, seed 1: 0.117 -> 0.217; PPO lr
//! 5e-4 with temperature 1.0 (RM 300 steps): 0.117 -> 0.067, 0.167 -> 0.217, 0.300 -> 0.517;
//! a 300-step reward model at lr 2e-3 on every training task: accuracy 0.900, 0.900, 0.913,
//! success 0.100, 0.467, 0.250; the same warm-up on `toy_rlhf_tasks`' split: accuracy 0.925, 0.921, 0.938 but no
//! held-out weather request fixed and seed 2's format 0.58 -> 0.43. No setting held on all three.
//!
//! The recipe that holds on seeds 1-3 (issue 17): the reward model also ranks each right call
//! above a malformed rendering of itself (`toy_preferences`' fourth pair) and trains 150 steps;
//! PPO runs at learning rate 3e-4 with `kl_coef` 0.1, three critic-only warm-up batches
//! (`critic_warmup_steps`) and the approximate-KL early stop (`target_kl` 0.01). Before it, seed 2
//! collapsed: at learning rate 1e-3 the policy left the reference within three steps and its
//! greedy calls became malformed JSON that the reward model, never shown one, scored like calls
//! (format 1.00 -> 0.00). What each recipe measured is in the README ("RLHF").

use std::collections::BTreeSet;
use std::sync::Arc;

use agent_rl_algos::pipeline::{Pipeline, PpoStage, RewardModelStage, SftStage, ToolUseEvaluator};
use agent_rl_algos::sft::TextOrMessages;
use agent_rl_algos::toy::{
    toy_model_config, toy_preferences, toy_request, toy_rlhf_tasks, toy_sft_dataset, toy_tokenizer,
};
use agent_rl_algos::{LrSchedule, OptimizerConfig, PpoConfig, RewardConfig, SftConfig};
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
/// model's held-out accuracy, that PPO raises the learned reward, and that the held-out format
/// does not collapse; prints what PPO changed.
fn rlhf_learns_tool_use(seed: u64) {
    let started = std::time::Instant::now();
    let config = Qwen2Config {
        max_position_embeddings: 512,
        ..toy_model_config()
    };
    let tokenizer = Arc::new(toy_tokenizer().expect("tokenizer"));
    let model = random_model::<B>(&config, seed, 0.05, &Default::default()).expect("model");
    let (train, held_out) = toy_rlhf_tasks(4000, HELD_OUT_TASKS, seed);
    let sft = SftConfig {
        max_steps: Some(100),
        batch_size: 16,
        eval_fraction: 0.0,
        seed,
        optimizer: OptimizerConfig {
            learning_rate: 1e-2,
            lr_scheduler_type: LrSchedule::Constant,
            warmup_steps: 5,
            ..OptimizerConfig::default()
        },
        ..SftConfig::default()
    };
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
        kl_coef: 0.1,
        target_kl: Some(0.01),
        critic_warmup_steps: 3,
        seed,
        ..PpoConfig::default()
    }
    .with_max_completion_length(64);
    ppo.optimizer.learning_rate = 3e-4;
    ppo.optimizer.lr_scheduler_type = LrSchedule::Constant;

    let evaluator = ToolUseEvaluator::new(held_out.clone(), 64).with_loop_config(AgentLoopConfig {
        sampling: SamplingConfig::greedy(64),
        max_tool_iterations: 1,
        ..AgentLoopConfig::default()
    });
    let run = Pipeline::builder(model, tokenizer)
        .add_stage(SftStage::new(sft, toy_sft_dataset(&train)))
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
    // to the last, and the held-out format (the rule-based checker's) does not collapse: it
    // ends no more than 0.05 below where the warm-up left it.
    assert!(
        last > first + MIN_LEARNED_REWARD_RISE,
        "seed {seed}: learned reward {first} -> {last}"
    );
    assert!(
        after.format_accuracy >= before.format_accuracy - MAX_FORMAT_DROP,
        "seed {seed}: held-out format {} -> {} (collapsed)",
        before.format_accuracy,
        after.format_accuracy
    );
}

/// The seeds the learning tests run (one test each).
const SEEDS: [u64; 3] = [1, 2, 3];
/// Training tasks whose preference pairs train the reward model (four pairs each).
const RM_TASKS: usize = 900;
/// The least rise of the learned reward (last quarter of the PPO steps over the first) asserted
/// on every seed; measured 1.41, 0.13, 0.14 on seeds 1-3 (2026-12-05).
const MIN_LEARNED_REWARD_RISE: f32 = 0.05;
/// The most the held-out format accuracy may fall under PPO (measured: no fall on seeds 1-3).
const MAX_FORMAT_DROP: f32 = 0.05;
/// Held-out tasks the policy is scored on (and whose preference pairs score the reward model).
const HELD_OUT_TASKS: usize = 60;
