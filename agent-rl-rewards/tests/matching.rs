//! Table tests of the call-matching engine (BFCL semantics).

use agent_rl_core::ToolCall;
use agent_rl_rewards::matching::{
    ExpectedCall, MatchOptions, MismatchKind, ValueKind, ValuePattern, match_call, match_calls,
};
use serde_json::{Value, json};

/// (label, call, first mismatch as (path, kind) or `None` for an exact match)
type CallCase = (&'static str, ToolCall, Option<(&'static str, MismatchKind)>);
/// (label, calls, exact, score, unmatched actual, unmatched expected)
type ParallelCase = (
    &'static str,
    Vec<ToolCall>,
    bool,
    f64,
    Vec<usize>,
    Vec<usize>,
);

fn call(name: &str, arguments: Value) -> ToolCall {
    ToolCall::new(name, arguments)
}

fn weather() -> ExpectedCall {
    ExpectedCall::new("get_weather")
        .with_argument("city", [json!("San Francisco, CA"), json!("SF")])
        .with_optional_argument("unit", [json!("celsius")])
        .with_optional_argument("days", [json!(3.0)])
}

/// The kind of the first mismatch, or `None` for an exact match.
fn first_kind(actual: &ToolCall, expected: &ExpectedCall) -> Option<(String, MismatchKind)> {
    let result = match_call(actual, expected, &MatchOptions::bfcl());
    result
        .mismatches
        .first()
        .map(|m| (m.path.clone(), m.kind.clone()))
}

#[test]
fn single_call_table() {
    let cases: Vec<CallCase> = vec![
        (
            "exact",
            call("get_weather", json!({"city": "SF", "unit": "celsius"})),
            None,
        ),
        (
            "normalised string",
            call("get_weather", json!({"city": "san francisco ca"})),
            None,
        ),
        (
            "optional omitted",
            call("get_weather", json!({"city": "SF"})),
            None,
        ),
        (
            "optional given as empty",
            call("get_weather", json!({"city": "SF", "unit": ""})),
            None,
        ),
        (
            "int for float",
            call("get_weather", json!({"city": "SF", "days": 3})),
            None,
        ),
        (
            "float for int is a type error",
            call("get_weather", json!({"city": "SF", "days": "3"})),
            Some((
                "days",
                MismatchKind::WrongType {
                    expected: vec![ValueKind::Float],
                    found: ValueKind::String,
                },
            )),
        ),
        (
            "type mismatch",
            call("get_weather", json!({"city": 94103})),
            Some((
                "city",
                MismatchKind::WrongType {
                    expected: vec![ValueKind::String],
                    found: ValueKind::Integer,
                },
            )),
        ),
        (
            "wrong value",
            call("get_weather", json!({"city": "Paris"})),
            Some((
                "city",
                MismatchKind::WrongValue {
                    found: json!("Paris"),
                },
            )),
        ),
        (
            "wrong float value",
            call("get_weather", json!({"city": "SF", "days": 4})),
            Some(("days", MismatchKind::WrongValue { found: json!(4) })),
        ),
        (
            "extra argument",
            call("get_weather", json!({"city": "SF", "verbose": true})),
            Some(("verbose", MismatchKind::UnexpectedArgument)),
        ),
        (
            "missing required",
            call("get_weather", json!({"unit": "celsius"})),
            Some(("city", MismatchKind::MissingRequired)),
        ),
        (
            "wrong function",
            call("get_forecast", json!({"city": "SF"})),
            Some((
                "",
                MismatchKind::WrongFunction {
                    expected: "get_weather".into(),
                    found: "get_forecast".into(),
                },
            )),
        ),
        (
            "arguments not an object",
            call("get_weather", json!(["SF"])),
            Some((
                "",
                MismatchKind::ArgumentsNotObject {
                    found: ValueKind::Array,
                },
            )),
        ),
    ];
    for (label, actual, expected) in cases {
        let found = first_kind(&actual, &weather());
        let expected = expected.map(|(path, kind)| (path.to_owned(), kind));
        assert_eq!(found, expected, "case `{label}`");
    }
}

#[test]
fn strict_strings_and_int_float_options() {
    let strict = MatchOptions::strict();
    let result = match_call(
        &call("get_weather", json!({"city": "sf"})),
        &weather(),
        &strict,
    );
    assert!(!result.is_exact());
    let no_leniency = MatchOptions::bfcl().with_int_as_float(false);
    let result = match_call(
        &call("get_weather", json!({"city": "SF", "days": 3})),
        &weather(),
        &no_leniency,
    );
    assert!(matches!(
        result.mismatches[0].kind,
        MismatchKind::WrongType { .. }
    ));
}

#[test]
fn nested_lists_and_dicts_table() {
    let expected = ExpectedCall::from_bfcl(&json!({"book": {
        "guest": [{"name": ["Ann Lee"], "age": [30, ""]}],
        "rooms": [[{"kind": ["single"]}, {"kind": ["double", "twin"]}]],
        "dates": [["2024-01-01", "2024-01-02"]],
        "filters": [{"price": [[10, 20.5]]}],
    }}))
    .unwrap();
    let base = json!({
        "guest": {"name": "ann lee"},
        "rooms": [{"kind": "single"}, {"kind": "Twin"}],
        "dates": ["2024-01-01", "2024-01-02"],
        "filters": {"price": [10, 20.5]},
    });
    let with = |pointer: &str, value: Value| {
        let mut arguments = base.clone();
        *arguments.pointer_mut(pointer).unwrap() = value;
        call("book", arguments)
    };
    let cases: Vec<CallCase> = vec![
        ("all right", call("book", base.clone()), None),
        (
            "nested optional given",
            with("/guest", json!({"name": "Ann Lee", "age": 30})),
            None,
        ),
        (
            "int for float inside list",
            with("/filters/price/1", json!(20.5)),
            None,
        ),
        (
            "nested wrong value",
            with("/guest/name", json!("Bob")),
            Some((
                "guest.name",
                MismatchKind::WrongValue {
                    found: json!("Bob"),
                },
            )),
        ),
        (
            "nested unexpected field",
            with("/guest", json!({"name": "Ann Lee", "vip": true})),
            Some(("guest.vip", MismatchKind::UnexpectedArgument)),
        ),
        (
            "nested missing field",
            with("/guest", json!({"age": 30})),
            Some(("guest.name", MismatchKind::MissingRequired)),
        ),
        (
            "list of dicts element wrong",
            with("/rooms/1/kind", json!("suite")),
            Some((
                "rooms[1].kind",
                MismatchKind::WrongValue {
                    found: json!("suite"),
                },
            )),
        ),
        (
            "list length",
            with("/dates", json!(["2024-01-01"])),
            Some((
                "dates",
                MismatchKind::WrongLength {
                    expected: 2,
                    found: 1,
                },
            )),
        ),
        (
            "list order matters inside a value",
            with("/dates", json!(["2024-01-02", "2024-01-01"])),
            Some((
                "dates[0]",
                MismatchKind::WrongValue {
                    found: json!("2024-01-02"),
                },
            )),
        ),
        (
            "float for int inside list",
            with("/filters/price/0", json!(10.0)),
            Some((
                "filters.price[0]",
                MismatchKind::WrongType {
                    expected: vec![ValueKind::Integer],
                    found: ValueKind::Float,
                },
            )),
        ),
        (
            "dict where list expected",
            with("/rooms", json!({"kind": "single"})),
            Some((
                "rooms",
                MismatchKind::WrongType {
                    expected: vec![ValueKind::Array],
                    found: ValueKind::Object,
                },
            )),
        ),
    ];
    for (label, actual, want) in cases {
        let found = first_kind(&actual, &expected);
        assert_eq!(
            found,
            want.map(|(path, kind)| (path.to_owned(), kind)),
            "case `{label}`"
        );
    }
}

fn parallel_expected() -> Vec<ExpectedCall> {
    vec![
        ExpectedCall::new("weather")
            .with_argument("city", [json!("Paris")])
            .with_optional_argument("unit", [json!("c")]),
        ExpectedCall::new("weather")
            .with_argument("city", [json!("Rome")])
            .with_optional_argument("unit", [json!("c")]),
        ExpectedCall::new("time").with_argument("zone", [json!("CET")]),
    ]
}

#[test]
fn parallel_calls_table() {
    let options = MatchOptions::bfcl();
    let paris = call("weather", json!({"city": "Paris"}));
    let rome = call("weather", json!({"city": "Rome"}));
    let time = call("time", json!({"zone": "CET"}));
    let cases: Vec<ParallelCase> = vec![
        (
            "in order",
            vec![paris.clone(), rome.clone(), time.clone()],
            true,
            1.0,
            vec![],
            vec![],
        ),
        (
            "another order",
            vec![time.clone(), rome.clone(), paris.clone()],
            true,
            1.0,
            vec![],
            vec![],
        ),
        (
            "one call missing",
            vec![rome.clone(), paris.clone()],
            false,
            2.0 / 3.0,
            vec![],
            vec![2],
        ),
        (
            "one extra call",
            vec![paris.clone(), rome.clone(), time.clone(), time.clone()],
            false,
            0.75,
            vec![3],
            vec![],
        ),
        ("nothing called", vec![], false, 0.0, vec![], vec![0, 1, 2]),
        (
            "one wrong value",
            vec![
                paris.clone(),
                call("weather", json!({"city": "Roma"})),
                time.clone(),
            ],
            false,
            2.0 / 3.0,
            vec![],
            vec![],
        ),
    ];
    for (label, actual, exact, score, extra, missing) in cases {
        let result = match_calls(&actual, &parallel_expected(), &options);
        assert_eq!(result.is_exact(), exact, "case `{label}`");
        assert!(
            (result.score() - score).abs() < 1e-12,
            "case `{label}`: {}",
            result.score()
        );
        assert_eq!(result.unmatched_actual, extra, "case `{label}`");
        assert_eq!(result.unmatched_expected, missing, "case `{label}`");
    }
}

#[test]
fn wrong_call_is_paired_with_its_closest_expected_call() {
    let actual = [
        call("weather", json!({"city": "Roma", "unit": "c"})),
        call("weather", json!({"city": "Paris"})),
    ];
    let result = match_calls(&actual, &parallel_expected()[..2], &MatchOptions::bfcl());
    let wrong = result
        .pairs
        .iter()
        .find(|pair| !pair.result.is_exact())
        .unwrap();
    assert_eq!((wrong.actual, wrong.expected), (0, 1));
    assert_eq!(wrong.result.mismatches[0].path, "city");
}

#[test]
fn assignment_is_optimal_not_greedy() {
    // Greedy pairing of the first actual call with the first expected call it fully matches
    // would leave the second call unmatched; the optimal assignment gets both.
    let expected = [
        ExpectedCall::new("f").with_argument("a", [json!(1), json!(2)]),
        ExpectedCall::new("f").with_argument("a", [json!(1)]),
    ];
    let actual = [call("f", json!({"a": 1})), call("f", json!({"a": 2}))];
    let result = match_calls(&actual, &expected, &MatchOptions::bfcl());
    assert!(result.is_exact(), "{result:?}");
}

#[test]
fn partial_credit_is_the_fraction_of_argument_checks() {
    let expected = [ExpectedCall::new("f")
        .with_argument("a", [json!(1)])
        .with_argument("b", [json!(2)])
        .with_argument("c", [json!(3)])
        .with_optional_argument("d", [json!(4)])];
    let actual = [call("f", json!({"a": 1, "b": 0, "c": 3}))];
    let all_or_nothing = match_calls(&actual, &expected, &MatchOptions::bfcl());
    assert_eq!(all_or_nothing.score(), 0.0);
    let partial = match_calls(
        &actual,
        &expected,
        &MatchOptions::bfcl().with_partial_credit(true),
    );
    assert!((partial.score() - 0.75).abs() < 1e-12);
    // An unexpected argument is one more failed check.
    let actual = [call("f", json!({"a": 1, "b": 2, "c": 3, "e": 5}))];
    let partial = match_calls(
        &actual,
        &expected,
        &MatchOptions::bfcl().with_partial_credit(true),
    );
    assert!((partial.score() - 0.8).abs() < 1e-12);
}

#[test]
fn nothing_expected_nothing_called_is_a_match() {
    let result = match_calls(&[], &[], &MatchOptions::bfcl());
    assert!(result.is_exact());
    assert_eq!(result.score(), 1.0);
    let result = match_calls(&[call("f", json!({}))], &[], &MatchOptions::bfcl());
    assert!(!result.is_exact());
    assert_eq!(result.score(), 0.0);
}

#[test]
fn explicit_patterns_can_be_built_in_code() {
    let expected = ExpectedCall::new("f").with_patterns(
        "items",
        [ValuePattern::List(vec![
            ValuePattern::Literal(json!(1)),
            ValuePattern::Literal(json!("x")),
        ])],
    );
    assert!(
        match_call(
            &call("f", json!({"items": [1, "X"]})),
            &expected,
            &MatchOptions::bfcl()
        )
        .is_exact()
    );
}
