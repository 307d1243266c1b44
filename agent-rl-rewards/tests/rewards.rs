//! Tests of the format, outcome, guard, learned and combined rewards.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use agent_rl_core::{FinishReason, ToolCall, Trajectory};
use agent_rl_rewards::matching::ExpectedCall;
use agent_rl_rewards::{
    EnvironmentRewardVerifier, ExpectedAnswer, FnVerifier, GuardConfig, Guards, LearnedReward,
    NormalizedSum, Outcome, Reward, RewardError, RewardExt, Sample, Target, ToolCallFormat,
    ToolUseReward, WeightedSum, component_means,
};
use serde_json::json;

use crate::support::{TableReward, indexed_trajectories, tool, trajectory, turn};

fn weather(city: &str) -> ToolCall {
    ToolCall::new("weather", json!({"city": city}))
}

fn tools() -> Vec<agent_rl_core::ToolSpec> {
    vec![
        tool("weather", &[("city", "string")]),
        tool("time", &[("zone", "string")]),
    ]
}

fn score(reward: &dyn Reward, trajectory: &Trajectory, target: &Target) -> Option<f32> {
    reward
        .score(Sample::new(trajectory, target))
        .expect("scores")
        .score
}

#[test]
fn format_table() {
    // (case, calls, malformed fragments, score)
    let cases = [
        ("no call", vec![], 0, 1.0),
        (
            "valid calls",
            vec![
                weather("Paris"),
                ToolCall::new("time", json!({"zone": "CET"})),
            ],
            0,
            1.0,
        ),
        ("malformed fragment", vec![weather("Paris")], 1, 0.5),
        (
            "hallucinated tool",
            vec![ToolCall::new("stocks", json!({}))],
            0,
            0.5,
        ),
        (
            "missing required",
            vec![ToolCall::new("weather", json!({}))],
            0,
            0.5,
        ),
        (
            "wrong type",
            vec![ToolCall::new("weather", json!({"city": 3}))],
            0,
            0.5,
        ),
        (
            "arguments not an object",
            vec![ToolCall::new("weather", json!([1]))],
            0,
            0.5,
        ),
        (
            "three bad",
            vec![
                ToolCall::new("stocks", json!({})),
                ToolCall::new("weather", json!({})),
            ],
            1,
            0.25,
        ),
    ];
    for (label, calls, malformed, expected) in cases {
        let trajectory = trajectory(tools(), vec![turn("", calls, malformed)]);
        assert_eq!(
            score(&ToolCallFormat, &trajectory, &Target::new()),
            Some(expected),
            "case `{label}`"
        );
    }
}

#[test]
fn format_reports_broken_schemas_as_errors() {
    let mut broken = tool("weather", &[("city", "string")]);
    broken.function.insert(
        "parameters".into(),
        json!({"type": "object", "required": "city"}),
    );
    let trajectory = trajectory(vec![broken], vec![turn("", vec![weather("Paris")], 0)]);
    let err = ToolCallFormat
        .score(Sample::new(&trajectory, &Target::new()))
        .expect_err("broken schema");
    assert!(
        matches!(err, RewardError::InvalidSchema { ref tool, .. } if tool == "weather"),
        "{err}"
    );
}

#[test]
fn outcome_table() {
    let answer = Target::new().with_expected_answer(ExpectedAnswer::new(["18 degrees"]));
    let calls = Target::new()
        .add_expected_call(ExpectedCall::new("weather").with_argument("city", [json!("Paris")]));
    let verified = Target::new().with_verifier(EnvironmentRewardVerifier::default());
    let both = answer
        .clone()
        .with_verifier(EnvironmentRewardVerifier::default());
    let passed = |mut trajectory: Trajectory, reward: Option<f32>| {
        trajectory.environment_reward = reward;
        trajectory
    };
    let answered = |text: &str| {
        trajectory(
            tools(),
            vec![turn("", vec![weather("Paris")], 0), turn(text, vec![], 0)],
        )
    };
    let called = |calls: Vec<ToolCall>, malformed: usize| {
        trajectory(tools(), vec![turn("", calls, malformed)])
    };
    let cases = [
        (
            "right answer",
            answered("18 Degrees."),
            answer.clone(),
            Some(1.0),
        ),
        (
            "wrong answer",
            answered("20 degrees"),
            answer.clone(),
            Some(0.0),
        ),
        (
            "no turn",
            trajectory(tools(), vec![]),
            answer.clone(),
            Some(0.0),
        ),
        (
            "exact calls",
            called(vec![weather("paris")], 0),
            calls.clone(),
            Some(1.0),
        ),
        (
            "extra call",
            called(vec![weather("Paris"), weather("Rome")], 0),
            calls.clone(),
            Some(0.0),
        ),
        (
            "malformed extra",
            called(vec![weather("Paris")], 1),
            calls.clone(),
            Some(0.0),
        ),
        (
            "verifier passes",
            passed(answered("x"), Some(1.0)),
            verified.clone(),
            Some(1.0),
        ),
        (
            "verifier fails",
            passed(answered("x"), Some(0.0)),
            verified,
            Some(0.0),
        ),
        (
            "answer and verifier",
            passed(answered("18 degrees"), Some(1.0)),
            both.clone(),
            Some(1.0),
        ),
        (
            "answer right, verifier fails",
            passed(answered("18 degrees"), None),
            both,
            Some(0.0),
        ),
        ("nothing to judge", answered("x"), Target::new(), None),
    ];
    for (label, trajectory, target, expected) in cases {
        assert_eq!(
            score(&Outcome::default(), &trajectory, &target),
            expected,
            "case `{label}`"
        );
    }
}

#[test]
fn verifier_errors_propagate() {
    let target = Target::new().with_verifier(FnVerifier::new("db", |_: &Trajectory| {
        Err(RewardError::Scorer {
            name: "db".into(),
            reason: "database unreachable".into(),
        })
    }));
    let trajectory = trajectory(tools(), vec![turn("done", vec![], 0)]);
    let err = Outcome::default()
        .score(Sample::new(&trajectory, &target))
        .expect_err("verifier fails");
    assert!(err.to_string().contains("database unreachable"), "{err}");
}

#[test]
fn guards_table() {
    let expected_one = Target::new()
        .add_expected_call(ExpectedCall::new("weather").with_argument("city", [json!("Paris")]))
        .with_expected_answer(ExpectedAnswer::new(["sunny"]));
    let guards = Guards::new(
        GuardConfig::default()
            .with_overlong(None)
            .with_max_total_penalty(10.0),
    );
    let truncated = {
        let mut turn = turn("sunny", vec![], 0);
        turn.finish_reason = FinishReason::Length;
        turn
    };
    // (case, turns, component, penalty)
    let cases = vec![
        (
            "clean",
            vec![
                turn("", vec![weather("Paris")], 0),
                turn("sunny", vec![], 0),
            ],
            "guards",
            0.0,
        ),
        (
            "extra calls",
            vec![
                turn(
                    "",
                    vec![weather("Paris"), weather("Rome"), weather("Oslo")],
                    0,
                ),
                turn("sunny", vec![], 0),
            ],
            "guards/extra_calls",
            -0.2,
        ),
        (
            "duplicates",
            vec![
                turn("", vec![weather("Paris")], 0),
                turn("sunny", vec![weather("Paris")], 0),
            ],
            "guards/duplicate_calls",
            -0.1,
        ),
        (
            "hallucinated tool",
            vec![turn("sunny", vec![ToolCall::new("stocks", json!({}))], 0)],
            "guards/hallucinated_tools",
            -0.2,
        ),
        (
            "invalid calls",
            vec![turn("sunny", vec![ToolCall::new("weather", json!({}))], 1)],
            "guards/invalid_calls",
            -0.2,
        ),
        (
            "empty answer",
            vec![turn("", vec![weather("Paris")], 0)],
            "guards/empty_answer",
            -0.2,
        ),
        (
            "truncated",
            vec![truncated.clone(), truncated],
            "guards/truncated_turns",
            -0.4,
        ),
    ];
    for (label, turns, component, penalty) in cases {
        let trajectory = trajectory(tools(), turns);
        let value = guards
            .score(Sample::new(&trajectory, &expected_one))
            .expect("scores");
        let found = value
            .component(component)
            .flatten()
            .expect("component present");
        assert!(
            (found - penalty).abs() < 1e-6,
            "case `{label}`: {component} = {found}, want {penalty}"
        );
    }
}

/// Under a per-turn limit the agent loop executes only the first call of a turn (one
/// observation), but the guards audit every call the model emitted: dropped calls are penalised
/// exactly as if they had run.
#[test]
fn guards_count_calls_dropped_by_the_per_turn_limit() {
    let target = Target::new()
        .add_expected_call(ExpectedCall::new("weather").with_argument("city", [json!("Paris")]));
    let spray = || {
        turn(
            "",
            vec![weather("Paris"), ToolCall::new("stocks", json!({}))],
            1,
        )
    };
    let mut limited = spray();
    limited.observations = vec![agent_rl_core::Message::tool("weather", "sunny")];
    let mut unlimited = spray();
    unlimited.observations = vec![
        agent_rl_core::Message::tool("weather", "sunny"),
        agent_rl_core::Message::tool("stocks", "Unknown action stocks"),
    ];
    let guards = Guards::new(GuardConfig::default().with_overlong(None));
    let penalties = |first| {
        let trajectory = trajectory(tools(), vec![first, turn("sunny", vec![], 0)]);
        guards
            .penalties(Sample::new(&trajectory, &target))
            .expect("scores")
    };
    let dropped = penalties(limited);
    assert_eq!(dropped.extra_calls, Some(0.2)); // 3 attempts, 1 expected
    assert_eq!(dropped.hallucinated_tools, 0.2);
    assert_eq!(dropped.invalid_calls, 0.1);
    assert_eq!(dropped, penalties(unlimited));
}

#[test]
fn guard_total_is_capped_per_episode() {
    let calls: Vec<ToolCall> = (0..50)
        .map(|_| ToolCall::new("stocks", json!({})))
        .collect();
    let trajectory = trajectory(tools(), vec![turn("", calls, 20)]);
    let target = Target::new().with_expected_calls([]);
    let value = Guards::default()
        .score(Sample::new(&trajectory, &target))
        .expect("scores");
    assert_eq!(value.score, Some(-0.5));
}

#[test]
fn overlong_guard_uses_the_longest_turn() {
    let mut long = turn("x", vec![], 0);
    long.num_tokens = 240; // budget 256, buffer 64: (240 - 192) / 64 * 0.2 = 0.15
    let trajectory = trajectory(tools(), vec![turn("a", vec![], 0), long]);
    let value = Guards::default()
        .score(Sample::new(&trajectory, &Target::new()))
        .expect("scores");
    let found = value
        .component("guards/overlong")
        .flatten()
        .expect("on by default");
    assert!((found + 0.15).abs() < 1e-6, "{found}");
}

#[test]
fn tool_use_reward_reports_components_and_penalises_padding() {
    let target = Target::new()
        .add_expected_call(ExpectedCall::new("weather").with_argument("city", [json!("Paris")]));
    let reward = ToolUseReward::default();
    let clean = trajectory(tools(), vec![turn("", vec![weather("Paris")], 0)]);
    let value = reward.score(Sample::new(&clean, &target)).expect("scores");
    assert_eq!(value.score, Some(4.0));
    for name in [
        "tool_use",
        "format",
        "arguments",
        "outcome",
        "guards",
        "guards/extra_calls",
    ] {
        assert!(value.component(name).is_some(), "missing component {name}");
    }
    let padded = trajectory(
        tools(),
        vec![turn(
            "",
            vec![weather("Paris"), weather("Paris"), weather("Rome")],
            0,
        )],
    );
    let padded_score = reward
        .score(Sample::new(&padded, &target))
        .expect("scores")
        .score
        .expect("some");
    assert!(
        padded_score < 4.0 - 2.0,
        "padding must lose the outcome: {padded_score}"
    );
}

#[test]
fn learned_reward_scores_the_batch_in_one_call() {
    let calls = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&calls);
    let reward = LearnedReward::new("rm", move |batch: &[&Trajectory]| {
        counter.fetch_add(1, Ordering::SeqCst);
        Ok(batch
            .iter()
            .map(|t| t.task_id.parse::<f32>().expect("index") * 0.5)
            .collect())
    });
    let trajectories = indexed_trajectories(4);
    let target = Target::new();
    let samples: Vec<Sample<'_>> = trajectories
        .iter()
        .map(|t| Sample::new(t, &target))
        .collect();
    let values = reward.score_batch(&samples).expect("scores");
    let scores: Vec<Option<f32>> = values.iter().map(|value| value.score).collect();
    assert_eq!(scores, [Some(0.0), Some(0.5), Some(1.0), Some(1.5)]);
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    assert_eq!(values[1].component("rm"), Some(Some(0.5)));
    // As a trait object inside a combinator.
    let sum = WeightedSum::new("total").add(reward.clone(), 2.0);
    assert_eq!(
        sum.score_batch(&samples).expect("scores")[3].score,
        Some(3.0)
    );
}

#[test]
fn learned_reward_rejects_bad_scorer_output() {
    let trajectories = indexed_trajectories(2);
    let target = Target::new();
    let samples: Vec<Sample<'_>> = trajectories
        .iter()
        .map(|t| Sample::new(t, &target))
        .collect();
    let short = LearnedReward::new("short", |_: &[&Trajectory]| Ok(vec![1.0]));
    assert!(matches!(
        short.score_batch(&samples),
        Err(RewardError::BatchLength {
            expected: 2,
            found: 1,
            ..
        })
    ));
    let nan = LearnedReward::new("nan", |_: &[&Trajectory]| Ok(vec![1.0, f32::NAN]));
    assert!(matches!(
        nan.score_batch(&samples),
        Err(RewardError::NonFiniteScore { index: 1, .. })
    ));
}

#[test]
fn weighted_clipped_and_normalised_combinators() {
    let trajectories = indexed_trajectories(4);
    let target = Target::new();
    let samples: Vec<Sample<'_>> = trajectories
        .iter()
        .map(|t| Sample::new(t, &target))
        .collect();
    let table = |name: &str, scores: [Option<f32>; 4]| TableReward {
        name: name.into(),
        scores: scores.to_vec(),
    };

    let weighted = table("a", [Some(1.0), Some(-2.0), None, Some(4.0)]).weighted(0.5);
    let scores: Vec<_> = weighted
        .score_batch(&samples)
        .expect("scores")
        .into_iter()
        .map(|v| v.score)
        .collect();
    assert_eq!(scores, [Some(0.5), Some(-1.0), None, Some(2.0)]);

    let clipped = table("a", [Some(1.0), Some(-2.0), None, Some(4.0)])
        .clipped(-1.0, 1.0)
        .expect("valid range");
    let scores: Vec<_> = clipped
        .score_batch(&samples)
        .expect("scores")
        .into_iter()
        .map(|v| v.score)
        .collect();
    assert_eq!(scores, [Some(1.0), Some(-1.0), None, Some(1.0)]);
    assert!(table("a", [None; 4]).clipped(1.0, -1.0).is_err());

    // Two groups of two: "big" has a large spread, "small" a tiny one; after normalisation both
    // count equally.
    let normalized = NormalizedSum::new("norm", 2)
        .add(
            table("big", [Some(0.0), Some(100.0), Some(5.0), Some(5.0)]),
            1.0,
        )
        .add(table("small", [Some(0.2), Some(0.1), None, Some(0.3)]), 1.0);
    let values = normalized.score_batch(&samples).expect("scores");
    let scores: Vec<f32> = values.iter().map(|v| v.score.expect("some")).collect();
    assert!(
        scores[0].abs() < 1e-2 && scores[1].abs() < 1e-2,
        "opposite signs cancel: {scores:?}"
    );
    assert_eq!(
        (scores[2], scores[3]),
        (0.0, 0.0),
        "equal scores and a lone score normalise to 0"
    );
    // Components keep the raw scores for logging.
    assert_eq!(values[1].component("big"), Some(Some(100.0)));
    let err = normalized
        .score_batch(&samples[..3])
        .expect_err("3 is not whole groups of 2");
    assert!(matches!(
        err,
        RewardError::GroupSize {
            batch_size: 3,
            group_size: 2,
            ..
        }
    ));

    let means = component_means(&values);
    let small = means
        .iter()
        .find(|mean| mean.name == "small")
        .expect("small");
    assert_eq!(small.count, 3);
    assert!((small.mean.expect("some") - 0.2).abs() < 1e-6);
}

/// The holes of the old recipe, each closed: a reply without the expected call earned the full
/// format point (more than a malformed attempt at the call), and stating the right answer without
/// calling the tool, or after a hallucinated or malformed call, counted as a success.
#[test]
fn answering_without_the_expected_call_earns_neither_format_nor_outcome() {
    let target = Target::new()
        .add_expected_call(ExpectedCall::new("weather").with_argument("city", [json!("Paris")]))
        .with_expected_answer(ExpectedAnswer::new(["18 degrees"]));
    let answer = turn("18 degrees", vec![], 0);
    let no_call = trajectory(tools(), vec![answer.clone()]);
    let hallucinated = trajectory(
        tools(),
        vec![
            turn("", vec![ToolCall::new("forecast", json!({}))], 0),
            answer.clone(),
        ],
    );
    let malformed = trajectory(tools(), vec![turn("", vec![], 1), answer.clone()]);
    let right = trajectory(
        tools(),
        vec![turn("", vec![weather("Paris")], 0), answer.clone()],
    );
    assert_eq!(score(&ToolCallFormat, &no_call, &target), Some(0.0));
    assert_eq!(score(&ToolCallFormat, &hallucinated, &target), Some(0.0));
    assert_eq!(score(&ToolCallFormat, &malformed, &target), Some(0.5));
    assert_eq!(score(&ToolCallFormat, &right, &target), Some(1.0));
    for (label, episode) in [
        ("no call", &no_call),
        ("hallucinated", &hallucinated),
        ("malformed", &malformed),
    ] {
        assert_eq!(
            score(&Outcome::default(), episode, &target),
            Some(0.0),
            "{label}"
        );
        let answer_only = Outcome::default().with_answer_only(true);
        assert_eq!(
            score(&answer_only, episode, &target),
            Some(1.0),
            "{label}, answer only"
        );
    }
    assert_eq!(score(&Outcome::default(), &right, &target), Some(1.0));
    // Under the full recipe, not calling now scores below a malformed attempt at the call.
    let recipe = ToolUseReward::default();
    let (skip, garbled) = (
        score(&recipe, &no_call, &target),
        score(&recipe, &malformed, &target),
    );
    assert!(
        skip < garbled,
        "no call {skip:?} >= malformed attempt {garbled:?}"
    );
    // A target that expects no call still gives a reply without calls the full format point.
    let chat = Target::new().with_expected_answer(ExpectedAnswer::new(["18 degrees"]));
    assert_eq!(score(&ToolCallFormat, &no_call, &chat), Some(1.0));
}
