//! Property tests that fail if the reward design leaks.
//!
//! (a) Under `ToolUseReward::default()`, every trajectory that fails the outcome scores strictly
//!     below every trajectory that succeeds, for random tasks and trajectories (including the
//!     adversarial extremes: a failure with perfect process scores, a success with every penalty).
//! (b) Adding N ≥ 1 valid-but-unneeded calls (to an offered tool the task does not need, or exact
//!     repeats of valid calls) never increases the score.
//! (c) `None` scores are left out of means and sums, never counted as 0.
//! (d) Weighted sums are linear in the weights.
//! (e) For a target that expects calls, omitting a required call, garbling it, or making no call
//!     at all scores below a well-formed (if wrong) attempt at it, which scores below the right
//!     episode, even when the omitting episode states the right answer.
//! (f) Padding the final turn with tokens never raises the score.

use agent_rl_core::{AssistantTurn, FinishReason, ToolCall, ToolSpec, Trajectory};
use agent_rl_rewards::matching::ExpectedCall;
use agent_rl_rewards::{
    EnvironmentRewardVerifier, ExpectedAnswer, Outcome, Reward, Sample, Target, ToolUseReward,
    WeightedSum, component_means, mean_score,
};
use proptest::prelude::*;
use serde_json::json;

use crate::support::{TableReward, indexed_trajectories, tool, turn};

const NEEDED_TOOLS: [&str; 3] = ["alpha", "beta", "gamma"];
/// Offered, valid, never expected.
const UNNEEDED_TOOL: &str = "delta";
const WORDS: [&str; 3] = ["red", "green", "blue"];

fn tools() -> Vec<ToolSpec> {
    NEEDED_TOOLS
        .iter()
        .chain([&UNNEEDED_TOOL])
        .map(|name| tool(name, &[("x", "integer"), ("y", "string")]))
        .collect()
}

/// How the task judges success.
#[derive(Debug, Clone, Copy)]
enum Judge {
    Calls,
    Answer,
    Verifier,
    AnswerAndCalls,
}

#[derive(Debug, Clone)]
struct Task {
    expected: Vec<(usize, i64, usize, bool)>, // tool, x, word, y optional
    judge: Judge,
}

impl Task {
    fn target(&self) -> Target {
        let calls = self.expected.iter().map(|&(tool, x, word, optional)| {
            let call = ExpectedCall::new(NEEDED_TOOLS[tool]).with_argument("x", [json!(x)]);
            if optional {
                call.with_optional_argument("y", [json!(WORDS[word])])
            } else {
                call.with_argument("y", [json!(WORDS[word])])
            }
        });
        let answer = ExpectedAnswer::new(["the answer is 42"]);
        match self.judge {
            Judge::Calls => Target::new().with_expected_calls(calls),
            Judge::Answer => Target::new().with_expected_answer(answer),
            Judge::Verifier => Target::new().with_verifier(EnvironmentRewardVerifier::default()),
            Judge::AnswerAndCalls => Target::new()
                .with_expected_calls(calls)
                .with_expected_answer(answer),
        }
    }

    fn right_calls(&self) -> Vec<ToolCall> {
        self.expected
            .iter()
            .map(|&(tool, x, word, _)| {
                ToolCall::new(NEEDED_TOOLS[tool], json!({"x": x, "y": WORDS[word]}))
            })
            .collect()
    }
}

fn task_strategy() -> impl Strategy<Value = Task> {
    (
        proptest::collection::vec((0..3_usize, 0..3_i64, 0..3_usize, any::<bool>()), 1..4),
        prop_oneof![
            Just(Judge::Calls),
            Just(Judge::Answer),
            Just(Judge::Verifier),
            Just(Judge::AnswerAndCalls)
        ],
    )
        .prop_map(|(mut expected, judge)| {
            // Distinct expected calls: a repeat of a call is then never needed.
            let mut seen = Vec::new();
            expected.retain(|&(tool, x, word, _)| {
                let fresh = !seen.contains(&(tool, x, word));
                seen.push((tool, x, word));
                fresh
            });
            Task { expected, judge }
        })
}

/// Random edits that turn the right episode into an arbitrary one.
#[derive(Debug, Clone)]
struct Edits {
    drop: Vec<bool>,
    wrong_value: Vec<bool>,
    rotate: usize,
    extra: Vec<u8>, // 0 = unneeded tool, 1 = hallucinated tool, 2 = wrong type, 3 = repeat
    malformed: usize,
    turns: usize,
    answer: u8, // 0 right, 1 wrong, 2 empty
    truncated: bool,
    tokens: usize,
    environment_reward: Option<bool>,
}

fn edits_strategy() -> impl Strategy<Value = Edits> {
    (
        proptest::collection::vec(prop::bool::weighted(0.2), 3),
        proptest::collection::vec(prop::bool::weighted(0.2), 3),
        0..3_usize,
        proptest::collection::vec(0..4_u8, 0..3),
        prop_oneof![3 => Just(0_usize), 1 => 1..3_usize],
        1..4_usize,
        prop_oneof![2 => Just(0_u8), 1 => Just(1_u8), 1 => Just(2_u8)],
        prop::bool::weighted(0.15),
        1..300_usize,
        prop_oneof![Just(None), Just(Some(false)), Just(Some(true))],
    )
        .prop_map(
            |(
                drop,
                wrong_value,
                rotate,
                extra,
                malformed,
                turns,
                answer,
                truncated,
                tokens,
                environment_reward,
            )| {
                Edits {
                    drop,
                    wrong_value,
                    rotate,
                    extra,
                    malformed,
                    turns,
                    answer,
                    truncated,
                    tokens,
                    environment_reward,
                }
            },
        )
}

fn build(task: &Task, edits: &Edits) -> Trajectory {
    let mut calls: Vec<ToolCall> = Vec::new();
    for (index, mut call) in task.right_calls().into_iter().enumerate() {
        if edits.drop[index] {
            continue;
        }
        if edits.wrong_value[index] {
            call.arguments["x"] = json!(99);
        }
        calls.push(call);
    }
    let rotate = edits.rotate % calls.len().max(1);
    calls.rotate_left(rotate);
    for kind in &edits.extra {
        calls.push(match kind {
            0 => ToolCall::new(UNNEEDED_TOOL, json!({"x": 1, "y": "red"})),
            1 => ToolCall::new("zeta", json!({})),
            2 => ToolCall::new("alpha", json!({"x": "one"})),
            _ => calls
                .first()
                .cloned()
                .unwrap_or_else(|| ToolCall::new(UNNEEDED_TOOL, json!({"x": 0, "y": "red"}))),
        });
    }
    let answer = ["the answer is 42", "no idea", ""][usize::from(edits.answer)];
    let per_turn = calls.len().div_ceil(edits.turns).max(1);
    let mut turns: Vec<AssistantTurn> = calls
        .chunks(per_turn)
        .map(|chunk| turn("", chunk.to_vec(), 0))
        .collect();
    turns.push(turn(answer, vec![], 0));
    let last = turns.len() - 1;
    turns[0].parsed.malformed = turn("", vec![], edits.malformed).parsed.malformed;
    turns[last].num_tokens = edits.tokens;
    if edits.truncated {
        turns[last].finish_reason = FinishReason::Length;
    }
    Trajectory {
        task_id: "t".into(),
        tools: tools(),
        turns,
        max_new_tokens: 256,
        environment_reward: edits
            .environment_reward
            .map(|pass| if pass { 1.0 } else { 0.0 }),
        ..Trajectory::default()
    }
}

/// A successful episode with the lowest process scores and every penalty that does not break
/// success: exact calls only where the calls are judged, otherwise nothing but junk calls.
fn worst_success(task: &Task) -> Trajectory {
    let judged_on_calls = matches!(task.judge, Judge::Calls | Judge::AnswerAndCalls);
    let calls = if judged_on_calls {
        task.right_calls()
    } else {
        let junk = [
            ToolCall::new("zeta", json!({})),
            ToolCall::new("alpha", json!({"x": "one"})),
        ];
        junk.iter().chain(junk.iter()).cloned().collect()
    };
    let mut turns = vec![
        turn("", calls, if judged_on_calls { 0 } else { 2 }),
        turn("the answer is 42", vec![], 0),
    ];
    for turn in &mut turns {
        turn.finish_reason = FinishReason::Length;
        turn.num_tokens = 10_000;
    }
    Trajectory {
        task_id: "t".into(),
        tools: tools(),
        turns,
        max_new_tokens: 256,
        environment_reward: Some(1.0),
        ..Trajectory::default()
    }
}

/// A failed episode with perfect format and argument scores and no penalty.
fn best_failure(task: &Task) -> Trajectory {
    let mut calls = task.right_calls();
    let answer = match task.judge {
        Judge::Calls => {
            calls.pop(); // one call short: arguments still high, outcome fails
            "the answer is 42"
        }
        _ => "no idea",
    };
    let turns = vec![turn("", calls, 0), turn(answer, vec![], 0)];
    Trajectory {
        task_id: "t".into(),
        tools: tools(),
        turns,
        max_new_tokens: 256,
        environment_reward: Some(0.0),
        ..Trajectory::default()
    }
}

fn score(reward: &ToolUseReward, trajectory: &Trajectory, target: &Target) -> f32 {
    reward
        .score(Sample::new(trajectory, target))
        .expect("scores")
        .score
        .expect("always applicable")
}

/// The right calls with call `index` changed as `how` says, then the right answer.
fn with_required_call(task: &Task, index: usize, how: Required) -> Trajectory {
    let mut calls = task.right_calls();
    let mut malformed = 0;
    match how {
        Required::Right => {}
        Required::Omitted => {
            calls.remove(index);
        }
        Required::Garbled => {
            calls.remove(index);
            malformed = 1;
        }
        Required::WrongValue => calls[index].arguments["x"] = json!(99),
        Required::NoCallAtAll => calls.clear(),
    }
    Trajectory {
        task_id: "t".into(),
        tools: tools(),
        turns: vec![
            turn("", calls, malformed),
            turn("the answer is 42", vec![], 0),
        ],
        max_new_tokens: 256,
        ..Trajectory::default()
    }
}

/// What [`with_required_call`] does to one required call.
#[derive(Debug, Clone, Copy)]
enum Required {
    Right,
    Omitted,
    Garbled,
    WrongValue,
    NoCallAtAll,
}

/// Inserts `extra` into the episode: into existing turns, or (for every fifth position) as a new
/// call-only turn before the final answer; text and token counts grow accordingly.
fn add_calls(trajectory: &Trajectory, extra: &[ToolCall], positions: &[usize]) -> Trajectory {
    let mut padded = trajectory.clone();
    for (call, position) in extra.iter().zip(positions.iter().cycle()) {
        let turn_count = padded.turns.len();
        if position % 5 == 4 {
            padded.turns.insert(
                turn_count.saturating_sub(1),
                turn("", vec![call.clone()], 0),
            );
            continue;
        }
        let turn = &mut padded.turns[position % turn_count];
        let at = position % (turn.parsed.tool_calls.len() + 1);
        turn.parsed.tool_calls.insert(at, call.clone());
        turn.text.push_str(&format!(
            "<tool_call>{}</tool_call>",
            json!({"name": call.name, "arguments": call.arguments})
        ));
        turn.num_tokens += 12;
    }
    padded
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    /// (a) failure < success, strictly, under the default recipe.
    #[test]
    fn failed_outcome_always_scores_below_success(
        task in task_strategy(),
        variants in proptest::collection::vec(edits_strategy(), 1..6),
    ) {
        let target = task.target();
        let reward = ToolUseReward::default();
        let outcome = Outcome::default();
        let mut trajectories: Vec<Trajectory> = variants.iter().map(|edits| build(&task, edits)).collect();
        trajectories.push(worst_success(&task));
        trajectories.push(best_failure(&task));
        let mut best_failed = f32::NEG_INFINITY;
        let mut worst_succeeded = f32::INFINITY;
        for trajectory in &trajectories {
            let success = outcome.succeeded(Sample::new(trajectory, &target)).expect("judged").expect("applicable");
            let value = score(&reward, trajectory, &target);
            if success { worst_succeeded = worst_succeeded.min(value) } else { best_failed = best_failed.max(value) }
        }
        // The adversarial extremes guarantee both sides are populated.
        prop_assert!(best_failed.is_finite() && worst_succeeded.is_finite());
        prop_assert!(best_failed < worst_succeeded, "failed {best_failed} >= succeeded {worst_succeeded}");
    }

    /// (b) padding with valid-but-unneeded calls never pays.
    #[test]
    fn unneeded_calls_never_increase_the_score(
        task in task_strategy(),
        edits in edits_strategy(),
        extra_kinds in proptest::collection::vec((any::<bool>(), 0..3_i64, 0..3_usize), 1..5),
        positions in proptest::collection::vec(0..16_usize, 1..5),
    ) {
        let target = task.target();
        let reward = ToolUseReward::default();
        let trajectories = [build(&task, &edits), worst_success(&task), best_failure(&task)];
        for trajectory in &trajectories {
            let tool_names = tools();
            let valid: Vec<ToolCall> = trajectory
                .tool_calls()
                .filter(|call| {
                    tool_names.iter().any(|tool| tool.name() == call.name)
                        && call.arguments.get("x").is_some_and(serde_json::Value::is_i64)
                        && call.arguments.get("y").is_some_and(serde_json::Value::is_string)
                })
                .cloned()
                .collect();
            let extra: Vec<ToolCall> = extra_kinds
                .iter()
                .map(|&(repeat, x, word)| match valid.first() {
                    Some(call) if repeat => call.clone(),
                    _ => ToolCall::new(UNNEEDED_TOOL, json!({"x": x, "y": WORDS[word]})),
                })
                .collect();
            let before = score(&reward, trajectory, &target);
            let after = score(&reward, &add_calls(trajectory, &extra, &positions), &target);
            // 1e-5 absorbs f64 summation order in the assignment only; any real gain is >= 0.1.
            prop_assert!(after <= before + 1e-5, "padding raised the score: {before} -> {after}");
        }
    }

    /// (e) skipping or garbling a required call never pays as much as a well-formed attempt.
    #[test]
    fn skipping_or_garbling_a_required_call_scores_below_attempting_it(
        task in task_strategy(),
        pick in 0..3_usize,
        with_answer in any::<bool>(),
    ) {
        let mut task = task;
        if !matches!(task.judge, Judge::Calls | Judge::AnswerAndCalls) {
            task.judge = if with_answer { Judge::AnswerAndCalls } else { Judge::Calls };
        }
        let target = task.target();
        let reward = ToolUseReward::default();
        let index = pick % task.expected.len();
        let value = |how| score(&reward, &with_required_call(&task, index, how), &target);
        let (right, attempt) = (value(Required::Right), value(Required::WrongValue));
        prop_assert!(attempt < right, "a wrong attempt {attempt} >= the right episode {right}");
        for how in [Required::Omitted, Required::Garbled, Required::NoCallAtAll] {
            let skipped = value(how);
            prop_assert!(skipped < attempt, "{how:?} scores {skipped} >= a wrong attempt {attempt}");
        }
    }

    /// (f) padding the final turn with tokens never pays.
    #[test]
    fn padding_tokens_never_increase_the_score(
        task in task_strategy(),
        edits in edits_strategy(),
        padding in 1..400_usize,
    ) {
        let target = task.target();
        let reward = ToolUseReward::default();
        let trajectory = build(&task, &edits);
        let mut padded = trajectory.clone();
        let last = padded.turns.len() - 1;
        padded.turns[last].num_tokens += padding;
        let (before, after) = (score(&reward, &trajectory, &target), score(&reward, &padded, &target));
        prop_assert!(after <= before, "padding raised the score: {before} -> {after}");
    }

    /// (c) `None` is left out of means and weighted sums.
    #[test]
    fn none_is_excluded_from_means_and_sums(
        scores in proptest::collection::vec(proptest::option::weighted(0.6, -10.0_f32..10.0), 1..12),
        other in proptest::collection::vec(-10.0_f32..10.0, 12),
    ) {
        let present: Vec<f32> = scores.iter().flatten().copied().collect();
        let expected_mean = (!present.is_empty()).then(|| present.iter().map(|&s| f64::from(s)).sum::<f64>() / present.len() as f64);
        match (mean_score(scores.iter().copied()), expected_mean) {
            (Some(found), Some(want)) => prop_assert!((f64::from(found) - want).abs() < 1e-4),
            (found, want) => prop_assert_eq!(found.is_some(), want.is_some()),
        }
        let trajectories = indexed_trajectories(scores.len());
        let target = Target::new();
        let samples: Vec<Sample<'_>> = trajectories.iter().map(|t| Sample::new(t, &target)).collect();
        let sparse = TableReward { name: "sparse".into(), scores: scores.clone() };
        let dense = TableReward { name: "dense".into(), scores: other.iter().map(|&s| Some(s)).collect() };
        let values = WeightedSum::new("sum").add(sparse, 2.0).add(dense, 1.0).score_batch(&samples).expect("scores");
        for (index, value) in values.iter().enumerate() {
            let want = 2.0 * scores[index].unwrap_or(0.0) + other[index];
            prop_assert!((value.score.expect("dense always applies") - want).abs() < 1e-4);
        }
        let alone = WeightedSum::new("alone").add(TableReward { name: "sparse".into(), scores: scores.clone() }, 3.0);
        for (value, raw) in alone.score_batch(&samples).expect("scores").iter().zip(&scores) {
            prop_assert_eq!(value.score.is_none(), raw.is_none());
        }
        let means = component_means(&values);
        let sparse_mean = means.iter().find(|mean| mean.name == "sparse").expect("logged");
        prop_assert_eq!(sparse_mean.count, present.len());
        prop_assert_eq!(sparse_mean.mean.is_some(), expected_mean.is_some());
        if let (Some(found), Some(want)) = (sparse_mean.mean, expected_mean) {
            prop_assert!((f64::from(found) - want).abs() < 1e-4);
        }
    }

    /// (d) weighted sums are linear in the weights.
    #[test]
    fn weighted_sum_is_linear_in_the_weights(
        a in proptest::collection::vec(proptest::option::weighted(0.8, -5.0_f32..5.0), 6),
        b in proptest::collection::vec(-5.0_f32..5.0, 6),
        w in (-3.0_f32..3.0, -3.0_f32..3.0),
        v in (-3.0_f32..3.0, -3.0_f32..3.0),
        scale in -3.0_f32..3.0,
    ) {
        let trajectories = indexed_trajectories(6);
        let target = Target::new();
        let samples: Vec<Sample<'_>> = trajectories.iter().map(|t| Sample::new(t, &target)).collect();
        let sum = |weights: (f32, f32)| -> Vec<f32> {
            WeightedSum::new("sum")
                .add(TableReward { name: "a".into(), scores: a.clone() }, weights.0)
                .add(TableReward { name: "b".into(), scores: b.iter().map(|&s| Some(s)).collect() }, weights.1)
                .score_batch(&samples)
                .expect("scores")
                .into_iter()
                .map(|value| value.score.expect("b always applies"))
                .collect()
        };
        let at_w = sum(w);
        let at_v = sum(v);
        let at_sum = sum((w.0 + v.0, w.1 + v.1));
        let at_scaled = sum((scale * w.0, scale * w.1));
        for index in 0..6 {
            let explicit = w.0 * a[index].unwrap_or(0.0) + w.1 * b[index];
            prop_assert!((at_w[index] - explicit).abs() < 1e-4);
            prop_assert!((at_sum[index] - (at_w[index] + at_v[index])).abs() < 1e-3);
            prop_assert!((at_scaled[index] - scale * at_w[index]).abs() < 1e-3);
        }
    }
}
