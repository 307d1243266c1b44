//! Hostile model answers: nesting deep enough to overflow a recursive parser is a per-entry
//! parse error, and result lines reach the caller as each entry finishes.

use agent_rl_core::{
    ChatRequest, Completion, CoreError, FinishReason, HermesToolCallParser, Policy, SamplingConfig,
    ToolCallParser,
};
use agent_rl_eval::bfcl::{
    BfclRunConfig, BfclRunner, BfclVersion, Category, INFERENCE_ERROR, MAX_NESTING_DEPTH,
    ResultLine, parse_expression,
};

use super::checker::fixture;

/// Stack of the thread the parsers run on: smaller than the main thread's, so that unbounded
/// recursion overflows it (aborting the test binary) instead of passing by luck.
const SMALL_STACK_BYTES: usize = 2 << 20;

/// Nesting far beyond any real answer (about 20 KB of text).
const HOSTILE_DEPTH: usize = 10_000;

fn on_small_stack<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new()
        .stack_size(SMALL_STACK_BYTES)
        .spawn(work)
        .unwrap()
        .join()
        .unwrap()
}

fn completion(text: String) -> Completion {
    Completion {
        token_ids: Vec::new(),
        logprobs: Vec::new(),
        parsed: HermesToolCallParser::default().parse(&text),
        text,
        finish_reason: FinishReason::Stop,
    }
}

/// Answers every request with `text`; fails from the `fail_at`-th call on.
struct ScriptedPolicy {
    text: String,
    calls: usize,
    fail_at: Option<usize>,
}

impl Policy for ScriptedPolicy {
    fn generate(
        &mut self,
        requests: &[ChatRequest],
        _: &SamplingConfig,
    ) -> Result<Vec<Completion>, CoreError> {
        self.calls += 1;
        if self.fail_at.is_some_and(|at| self.calls >= at) {
            return Err(CoreError::Remote {
                endpoint: "http://127.0.0.1:1/v1".into(),
                reason: "the endpoint went away".into(),
            });
        }
        Ok(requests
            .iter()
            .map(|_| completion(self.text.clone()))
            .collect())
    }
}

fn nested_call(depth: usize) -> String {
    format!(
        "[walk.duration(distance_km={}3{}, speed_kmh=5)]",
        "(".repeat(depth),
        ")".repeat(depth)
    )
}

#[test]
fn ten_thousand_nested_parens_are_a_per_entry_parse_error() {
    let verdicts = on_small_stack(|| {
        let dataset = fixture();
        let config = BfclRunConfig {
            categories: vec![Category::SimplePython],
            ..BfclRunConfig::default()
        };
        let mut policy = ScriptedPolicy {
            text: nested_call(HOSTILE_DEPTH),
            calls: 0,
            fail_at: None,
        };
        BfclRunner::new(&dataset, BfclVersion::V4, config)
            .run(&mut policy)
            .expect("a hostile answer fails its entry, not the run")
            .verdicts
    });
    assert!(!verdicts.is_empty());
    for verdict in &verdicts {
        assert!(!verdict.valid);
        let error = verdict.error.as_deref().unwrap_or("");
        assert!(
            error.contains("nested deeper than"),
            "{}: {error}",
            verdict.id
        );
    }
}

#[test]
fn every_recursive_form_is_bounded() {
    let depth = HOSTILE_DEPTH;
    let texts = [
        format!("{}1{}", "(".repeat(depth), ")".repeat(depth)),
        format!("{}1{}", "[".repeat(depth), "]".repeat(depth)),
        format!("{}1{}", "{".repeat(depth), "}".repeat(depth)),
        format!("{}1{}", "f(".repeat(depth), ")".repeat(depth)),
        format!("{}1", "-".repeat(depth)),
        format!("{}True", "not ".repeat(depth)),
        format!("2{}", "**2".repeat(depth)),
        format!("a{}", "[a".repeat(depth)) + &"]".repeat(depth),
        format!("{}", "{1: ".repeat(depth)) + "1" + &"}".repeat(depth),
    ];
    let errors = on_small_stack(move || {
        texts
            .iter()
            .map(|text| parse_expression(text).map(|_| ()))
            .collect::<Vec<_>>()
    });
    for error in errors {
        let error = error.expect_err("too deep");
        assert!(error.contains("nested deeper than"), "{error}");
    }
}

#[test]
fn nesting_within_the_limit_still_parses() {
    let depth = MAX_NESTING_DEPTH / 2;
    let text = format!("f(x={}1{})", "[".repeat(depth), "]".repeat(depth));
    assert!(on_small_stack(move || parse_expression(&text).is_ok()));
}

/// A batch whose generation fails (the endpoint went away) fails its entries only: they are
/// judged wrong with the reason, listed in the report's failures, and the lines of the entries
/// before them have reached the sink.
#[test]
fn a_failed_generation_fails_its_entries_and_keeps_the_others() {
    let dataset = fixture();
    let config = BfclRunConfig {
        categories: vec![Category::SimplePython],
        batch_size: 1,
        ..BfclRunConfig::default()
    };
    let mut policy = ScriptedPolicy {
        text: "[walk.duration(distance_km=3, speed_kmh=5)]".into(),
        calls: 0,
        fail_at: Some(2),
    };
    let mut saved: Vec<ResultLine> = Vec::new();
    let run = BfclRunner::new(&dataset, BfclVersion::V4, config)
        .with_result_sink(|line| {
            saved.push(line.clone());
            Ok(())
        })
        .run(&mut policy)
        .expect("a failed entry does not stop the run");
    let ids: Vec<&str> = saved.iter().map(|line| line.id.as_str()).collect();
    assert_eq!(ids, ["simple_python_0"]);
    let failed: Vec<&str> = run.report.failures.iter().map(|f| f.id.as_str()).collect();
    assert_eq!(failed, ["simple_python_1"]);
    assert!(
        run.report.failures[0]
            .reason
            .contains("the endpoint went away")
    );
    let verdict = &run.verdicts[1];
    assert!(!verdict.valid && verdict.supported);
    assert_eq!(verdict.error_type.as_deref(), Some(INFERENCE_ERROR));
}
