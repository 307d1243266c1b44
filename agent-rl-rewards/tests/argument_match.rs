//! Table tests of the `ArgumentMatch` reward.

use agent_rl_core::ToolCall;
use agent_rl_rewards::matching::{ExpectedCall, MatchOptions};
use agent_rl_rewards::{ArgumentMatch, Reward, RewardError, Sample, Target};
use serde_json::{Value, json};

use crate::support::{tool, trajectory, turn};

fn target() -> Target {
    Target::new()
        .add_expected_call(
            ExpectedCall::new("book")
                .with_argument("city", [json!("Paris")])
                .with_argument("nights", [json!(2)])
                .with_optional_argument("budget", [json!(120.0)])
                .with_optional_argument(
                    "prefs",
                    [json!({"floor": "high", "tags": ["quiet", "view"]})],
                ),
        )
        .add_expected_call(ExpectedCall::new("weather").with_argument("city", [json!("Paris")]))
}

fn tools() -> Vec<agent_rl_core::ToolSpec> {
    vec![
        tool("book", &[("city", "string"), ("nights", "integer")]),
        tool("weather", &[("city", "string")]),
        tool("other", &[]),
    ]
}

fn score(calls: Vec<ToolCall>, reward: &ArgumentMatch) -> Option<f32> {
    let trajectory = trajectory(tools(), vec![turn("", calls, 0)]);
    reward
        .score(Sample::new(&trajectory, &target()))
        .expect("scores")
        .score
}

fn book(arguments: Value) -> ToolCall {
    ToolCall::new("book", arguments)
}

fn weather() -> ToolCall {
    ToolCall::new("weather", json!({"city": "Paris"}))
}

#[test]
fn argument_match_table() {
    let all_or_nothing = ArgumentMatch::new(MatchOptions::bfcl());
    let partial = ArgumentMatch::default();
    // (case, calls, score without partial credit, score with partial credit)
    let cases: Vec<(&str, Vec<ToolCall>, f32, f32)> = vec![
        (
            "exact",
            vec![book(json!({"city": "Paris", "nights": 2})), weather()],
            1.0,
            1.0,
        ),
        (
            "type mismatch",
            vec![book(json!({"city": "Paris", "nights": "2"})), weather()],
            0.5,
            0.875,
        ),
        (
            "int where float expected",
            vec![
                book(json!({"city": "Paris", "nights": 2, "budget": 120})),
                weather(),
            ],
            1.0,
            1.0,
        ),
        (
            "float where int expected",
            vec![book(json!({"city": "Paris", "nights": 2.0})), weather()],
            0.5,
            0.875,
        ),
        (
            "optional omitted",
            vec![book(json!({"city": "paris", "nights": 2})), weather()],
            1.0,
            1.0,
        ),
        (
            "wrong value",
            vec![book(json!({"city": "Rome", "nights": 2})), weather()],
            0.5,
            0.875,
        ),
        (
            "extra argument",
            vec![
                book(json!({"city": "Paris", "nights": 2, "pets": true})),
                weather(),
            ],
            0.5,
            0.9,
        ),
        (
            "missing required",
            vec![book(json!({"city": "Paris"})), weather()],
            0.5,
            0.875,
        ),
        (
            "nested dict and list right",
            vec![
                book(
                    json!({"city": "Paris", "nights": 2, "prefs": {"floor": "High", "tags": ["quiet", "view"]}}),
                ),
                weather(),
            ],
            1.0,
            1.0,
        ),
        (
            "nested list wrong",
            vec![
                book(
                    json!({"city": "Paris", "nights": 2, "prefs": {"floor": "high", "tags": ["view", "quiet"]}}),
                ),
                weather(),
            ],
            0.5,
            0.875,
        ),
        (
            "nested dict extra key",
            vec![
                book(
                    json!({"city": "Paris", "nights": 2, "prefs": {"floor": "high", "tags": ["quiet", "view"], "x": 1}}),
                ),
                weather(),
            ],
            0.5,
            0.875,
        ),
        (
            "parallel calls in another order",
            vec![weather(), book(json!({"city": "Paris", "nights": 2}))],
            1.0,
            1.0,
        ),
        ("one call missing", vec![weather()], 0.5, 0.5),
        ("no call", vec![], 0.0, 0.0),
        (
            "wrong function",
            vec![ToolCall::new("other", json!({})), weather()],
            0.5,
            0.5,
        ),
        (
            "one extra call",
            vec![
                weather(),
                book(json!({"city": "Paris", "nights": 2})),
                ToolCall::new("other", json!({})),
            ],
            2.0 / 3.0,
            2.0 / 3.0,
        ),
        (
            "a repeated call earns nothing twice",
            vec![weather(), weather(), weather()],
            0.5,
            0.5,
        ),
    ];
    for (label, calls, strict_score, partial_score) in cases {
        let found = score(calls.clone(), &all_or_nothing).expect("applicable");
        assert!(
            (found - strict_score).abs() < 1e-6,
            "`{label}` all-or-nothing: {found} != {strict_score}"
        );
        let found = score(calls, &partial).expect("applicable");
        assert!(
            (found - partial_score).abs() < 1e-6,
            "`{label}` partial: {found} != {partial_score}"
        );
    }
}

#[test]
fn repeated_calls_count_as_extra_without_deduplication() {
    let reward = ArgumentMatch::new(MatchOptions::bfcl()).with_deduplicate(false);
    let found = score(vec![weather(), weather()], &reward).expect("applicable");
    assert!((found - 0.5).abs() < 1e-6);
}

#[test]
fn not_applicable_without_expected_calls() {
    let trajectory = trajectory(tools(), vec![turn("hi", vec![weather()], 0)]);
    let value = ArgumentMatch::default()
        .score(Sample::new(&trajectory, &Target::new()))
        .expect("scores");
    assert_eq!(value.score, None);
    assert_eq!(value.component("arguments"), Some(None));
}

#[test]
fn no_call_expected_and_none_made_is_right() {
    let trajectory = trajectory(tools(), vec![turn("I cannot help with that.", vec![], 0)]);
    let target = Target::new().with_expected_calls([]);
    let value = ArgumentMatch::default()
        .score(Sample::new(&trajectory, &target))
        .expect("scores");
    assert_eq!(value.score, Some(1.0));
}

#[test]
fn target_naming_an_unoffered_tool_is_an_error() {
    let trajectory = trajectory(
        vec![tool("weather", &[("city", "string")])],
        vec![turn("", vec![weather()], 0)],
    );
    let err = ArgumentMatch::default()
        .score(Sample::new(&trajectory, &target()))
        .expect_err("book not offered");
    assert!(
        matches!(err, RewardError::UnknownTool { ref tool, .. } if tool == "book"),
        "{err}"
    );
}
