//! The RLHF learning proof, run through the library's [`Pipeline`] as the CLI and the
//! `rlhf_toy` demo run it: an SFT warm-up, a reward model trained on synthetic preferences
//! ("the right call beats a wrong one", "a call beats a refusal", "the right call beats its
//! malformed rendering") from the warm-up model, then PPO against that reward model alone.
//!
//! The warm-up imitates a reluctant teacher (`toy_reluctant_sft_dataset`): it declines 70% of
//! the city (weather, time) requests with one fixed line and demonstrates every other request,
//! so the warm-up model refuses most held-out city requests under greedy decoding although it
//! has learned their calls — the over-cautious agent that "a call beats a refusal" preferences
//! are collected to fix. For every seed run (1, 2, 3): the reward model ranks the held-out
//! pairs a reply alone decides (a call over a refusal, the right call over its malformed
//! rendering) with > 90% accuracy; PPO raises the learned reward of its rollouts, the held-out
//! format accuracy (calls where the warm-up refused) and the share of held-out city requests
//! answered with the right tool, and loses no exact call the warm-up made (all judged by the
//! rule-based checker, which the policy never sees). Held-out requests never occur in
//! training, neither in the tasks nor in the pairs (checked below).
//!
//! What is not asserted, and why: a rise of the exact-call success. The 60 held-out tasks hold
//! only four distinct city requests (one phrasing per kind, twelve cities, the rest trained),
//! each repeated 5-11 times, and about 25 `add` requests; the warm-up copies hardly any unseen
//! argument (on seeds 2 and 3 none: its `add` calls carry the same few operands whatever the
//! request, its city calls name a trained city), and the reward model ranks argument values at
//! chance. So the exact-call
//! success moves in blocks of one distinct request, by luck: on 2026-12-07 a change that only
//! reordered one float sum turned seeds 2 and 3 from 0.000 -> 0.117 into 0.000 -> 0.000
//! (README, "RLHF"). PPO's KL penalty (`kl_coef` 0.3) keeps the warm-up's argument values:
//! with 0.1, and a teacher that declined every kind of request, PPO moved them and seed 3's
//! success fell 0.367 -> 0.133 — which the no-loss assertion would catch.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::{Arc, Mutex};

use agent_rl_algos::pipeline::{
    Evaluator, Pipeline, PpoStage, RewardModelStage, SftStage, ToolUseEvaluator,
};
use agent_rl_algos::sft::TextOrMessages;
use agent_rl_algos::toy::{
    ToyCallBreakdown, ToyKind, ToyPairKind, toy_call_breakdown, toy_model_config,
    toy_pair_outcomes, toy_preferences, toy_reluctant_sft_dataset, toy_request, toy_rlhf_tasks,
    toy_tokenizer, toy_warmup_config,
};
use agent_rl_algos::{
    LrSchedule, OptimizerConfig, PpoConfig, PreferenceDataset, RewardConfig, RewardModelScorer,
    ToolUseScores,
};
use agent_rl_core::weights::{LoadOptions, random_model};
use agent_rl_core::{
    AgentLoopConfig, ChatTokenizer, Qwen2Config, Qwen2ForCausalLm, Qwen2ForSequenceClassification,
    SamplingConfig, Task,
};

use crate::B;

/// The backend the evaluator and the reward model's scorer run on (no autodiff).
type Inner = <B as burn::tensor::backend::AutodiffBackend>::InnerBackend;

#[test]
fn held_out_requests_are_disjoint_from_training_tasks_and_pairs() {
    for seed in SEEDS {
        let (train, held_out) = toy_rlhf_tasks(4000, HELD_OUT_TASKS, seed);
        assert_eq!(held_out.len(), HELD_OUT_TASKS);
        let requests = |pairs: &PreferenceDataset| {
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
/// model's held-out accuracy on the kinds of pair a reply alone decides, that PPO raises the
/// learned reward, the held-out format and the right tool on city requests, and that it loses
/// no exact call; prints what PPO changed.
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
    let breakdowns = Arc::new(Mutex::new(Vec::new()));
    let run_dir = tempfile::tempdir().expect("run directory");
    let held_out_pairs = toy_preferences(&held_out, seed + 1000);
    let run = Pipeline::builder(model, Arc::clone(&tokenizer))
        .add_stage(SftStage::new(
            sft,
            toy_reluctant_sft_dataset(&train, &ToyKind::CITY, REFUSAL, seed),
        ))
        .add_stage(
            RewardModelStage::new(reward_model, toy_preferences(&train[..RM_TASKS], seed))
                .with_eval(held_out_pairs.clone()),
        )
        .add_stage(PpoStage::new(ppo, train).with_learned_reward())
        .with_evaluator(WithBreakdown {
            scores: evaluator,
            tasks: held_out.clone(),
            breakdowns: Arc::clone(&breakdowns),
        })
        .with_run_dir(run_dir.path())
        .build()
        .expect("pipeline")
        .run()
        .expect("pipeline runs");
    let accuracy = run.reward_model_accuracy().expect("reward model evaluated");
    let before = *run.score("after_sft").expect("scored after the warm-up");
    let after = *run.score("after").expect("scored after PPO");
    // Evaluation points: before, after the warm-up, after PPO (the reward-model stage leaves
    // the policy as it was and is not scored).
    let breakdowns = breakdowns.lock().expect("breakdowns").clone();
    assert_eq!(breakdowns.len(), 3, "one breakdown per evaluation point");
    let city_tool = |b: &ToyCallBreakdown| {
        let right = b.weather.right_tool + b.time.right_tool;
        right as f32 / (b.weather.requests + b.time.requests).max(1) as f32
    };
    let (city_before, city_after) = (city_tool(&breakdowns[1]), city_tool(&breakdowns[2]));
    let kinds = pair_kind_accuracy(run_dir.path(), &tokenizer, &held_out_pairs);
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
    let kind_line: Vec<String> = kinds
        .iter()
        .map(|(kind, (right, all))| format!("{} {right}/{all}", kind.name()))
        .collect();
    eprintln!(
        "RLHF seed {seed}: reward model held-out accuracy {accuracy:.3} ({}); learned reward \
         {first:.3} -> {last:.3}; held-out call success {:.3} -> {:.3} (format {:.3} -> {:.3}, \
         arguments {:.3} -> {:.3}, right tool on city requests {city_before:.3} -> \
         {city_after:.3}); {:.0} s",
        kind_line.join(", "),
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
    // The reward model, on held-out pairs, ranks what PPO's gain rests on: a call over a
    // refusal (whether the call is right or wrong) and the right call over its malformed
    // rendering. The pairs that need the request read (the wrong tool, a wrong argument
    // value) are printed, not asserted: argument values are ranked at chance (module docs).
    for kind in [
        ToyPairKind::RightOverRefusal,
        ToyPairKind::WrongOverRefusal,
        ToyPairKind::Malformed,
    ] {
        let (right, all) = kinds[&kind];
        assert!(
            right as f32 >= MIN_KIND_ACCURACY * all as f32 && all > 0,
            "seed {seed}: reward model ranks {right} of {all} held-out {} pairs right",
            kind.name()
        );
    }
    // PPO's learning, on every seed: the learned reward of the rollouts rises from the first
    // quarter of the steps (three of them critic warm-up, the policy still the warm-up model)
    // to the last; the held-out requests the warm-up refused get calls (the rule-based
    // checker's format accuracy rises) that name the right tool (city requests, where the
    // refusals were), and no held-out exact call of the warm-up is lost.
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
        city_after > city_before + MIN_FORMAT_RISE,
        "seed {seed}: right tool on held-out city requests {city_before} -> {city_after}"
    );
    assert!(
        after.success_rate >= before.success_rate,
        "seed {seed}: held-out exact-call success fell {} -> {}",
        before.success_rate,
        after.success_rate
    );
}

/// The held-out pairs the reward model saved in `run_dir` ranks right, by kind: `(right, all)`.
fn pair_kind_accuracy(
    run_dir: &Path,
    tokenizer: &Arc<ChatTokenizer>,
    pairs: &PreferenceDataset,
) -> BTreeMap<ToyPairKind, (usize, usize)> {
    let (model, _) = Qwen2ForSequenceClassification::<Inner>::from_pretrained(
        &run_dir.join("reward_model"),
        LoadOptions::default(),
        &Default::default(),
    )
    .expect("the run directory holds the reward model");
    let scorer = RewardModelScorer::new(model, Arc::clone(tokenizer)).expect("scorer");
    let mut kinds = BTreeMap::new();
    for (kind, right) in toy_pair_outcomes(&scorer, pairs).expect("pairs scored") {
        let entry = kinds.entry(kind).or_insert((0, 0));
        entry.0 += usize::from(right);
        entry.1 += 1;
    }
    kinds
}

/// The held-out evaluation, plus the toy breakdown of the first calls (tool and arguments by
/// kind of request) at every evaluation point.
struct WithBreakdown {
    scores: ToolUseEvaluator,
    tasks: Vec<Task>,
    breakdowns: Arc<Mutex<Vec<ToyCallBreakdown>>>,
}

impl Evaluator<Inner> for WithBreakdown {
    fn evaluate(
        &mut self,
        model: &Qwen2ForCausalLm<Inner>,
        tokenizer: &Arc<ChatTokenizer>,
    ) -> agent_rl_algos::Result<ToolUseScores> {
        let breakdown = toy_call_breakdown(model, tokenizer, &self.tasks, 64)?;
        self.breakdowns.lock().expect("breakdowns").push(breakdown);
        self.scores.evaluate(model, tokenizer)
    }
}

/// The seeds the learning tests run (one test each).
const SEEDS: [u64; 3] = [1, 2, 3];
/// Training tasks whose preference pairs train the reward model (four pairs each).
const RM_TASKS: usize = 900;
/// The least rise of the learned reward (last quarter of the PPO steps over the first) asserted
/// on every seed; measured 2.99, 2.08, 2.24 on seeds 1-3 (2026-12-07).
const MIN_LEARNED_REWARD_RISE: f32 = 1.0;
/// The least rise of the held-out format accuracy (a call in the template's format instead of
/// a refusal), and of the share of held-out city requests whose first call names the right
/// tool, asserted on every seed; measured 0.27, 0.57, 0.53 and 0.48, 1.00, 1.00 on seeds 1-3
/// (2026-12-07).
const MIN_FORMAT_RISE: f32 = 0.15;
/// The least share of held-out pairs of each kind a reply alone decides (a right or a wrong
/// call over a refusal, the right call over its malformed rendering) the reward model must rank
/// right on every seed; measured 60/60 on every seed and kind except seed 3's malformed pairs,
/// 56/60 (2026-12-07). Chance is one half.
const MIN_KIND_ACCURACY: f32 = 0.9;
/// The share of city (weather, time) requests the warm-up's teacher declines
/// (`toy_reluctant_sft_dataset`).
const REFUSAL: f32 = 0.7;
/// SFT steps of the warm-up (16 rows each).
const WARMUP_STEPS: usize = 300;
/// Held-out tasks the policy is scored on (and whose preference pairs score the reward model).
const HELD_OUT_TASKS: usize = 60;
