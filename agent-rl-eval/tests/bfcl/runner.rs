//! The runner with a stub policy, and the aggregation formulas.

use agent_rl_core::ContextFit;
use agent_rl_core::{
    ChatRequest, Completion, CoreError, FinishReason, HermesToolCallParser, Policy, SamplingConfig,
    ToolCallParser,
};
use agent_rl_eval::OverlongPrompt;
use agent_rl_eval::bfcl::{BfclReport, BfclRunConfig, BfclRunner, BfclVersion, Category, Verdict};

use super::checker::fixture;

/// Answers every request with a canned text chosen from the first tool's name.
struct CannedPolicy;

impl Policy for CannedPolicy {
    fn generate(
        &mut self,
        requests: &[ChatRequest],
        _: &SamplingConfig,
    ) -> Result<Vec<Completion>, CoreError> {
        Ok(requests
            .iter()
            .map(|request| {
                let tool = request.tools[0].function["name"].as_str().unwrap_or("").to_owned();
                let text = match tool.as_str() {
                    "walk.duration" => "<tool_call>\n{\"name\": \"walk.duration\", \"arguments\": {\"distance_km\": 3, \"speed_kmh\": 5}}\n</tool_call>".to_owned(),
                    "get_weather" if request.messages[0].content.as_deref().unwrap_or("").contains("Mona") => "Leonardo.".to_owned(),
                    "get_weather" => "[get_weather(city='Paris'), get_weather(city='Rome')]".to_owned(),
                    _ => "I don't know.".to_owned(),
                };
                Completion {
                    token_ids: Vec::new(),
                    logprobs: Vec::new(),
                    parsed: HermesToolCallParser::default().parse(&text),
                    text,
                    finish_reason: FinishReason::Stop,
                }
            })
            .collect())
    }
}

/// [`CannedPolicy`] behind a 100-token context in which the `walk.duration` prompt takes 90
/// tokens and the others 10; records the budget each request was generated with.
struct SmallContext {
    budgets: Vec<(String, usize)>,
}

fn first_tool(request: &ChatRequest) -> String {
    request.tools[0].function["name"]
        .as_str()
        .unwrap_or("")
        .to_owned()
}

impl Policy for SmallContext {
    fn generate(
        &mut self,
        requests: &[ChatRequest],
        sampling: &SamplingConfig,
    ) -> Result<Vec<Completion>, CoreError> {
        for request in requests {
            self.budgets
                .push((first_tool(request), sampling.max_new_tokens));
        }
        CannedPolicy.generate(requests, sampling)
    }

    fn context_fit(&self, request: &ChatRequest) -> Result<Option<ContextFit>, CoreError> {
        let prompt_tokens = if first_tool(request) == "walk.duration" {
            90
        } else {
            10
        };
        Ok(Some(ContextFit {
            prompt_tokens,
            context_tokens: 100,
        }))
    }
}

/// A prompt that does not fit with `max_new_tokens` fails its entry (naming the lengths) and is
/// not generated; under `Truncate` it is generated alone with the room the context leaves.
#[test]
fn overlong_prompts_are_skipped_or_given_the_room_left() {
    let dataset = fixture();
    let run_with = |overlong: OverlongPrompt| {
        let config = BfclRunConfig {
            categories: vec![Category::SimplePython],
            sampling: SamplingConfig {
                max_new_tokens: 20,
                temperature: 0.0,
                ..SamplingConfig::default()
            },
            overlong,
            ..BfclRunConfig::default()
        };
        let mut policy = SmallContext {
            budgets: Vec::new(),
        };
        let run = BfclRunner::new(&dataset, BfclVersion::V4, config)
            .run(&mut policy)
            .expect("run");
        (run, policy.budgets)
    };
    let (skipped, budgets) = run_with(OverlongPrompt::Skip);
    assert_eq!(skipped.report.failures.len(), 1);
    assert_eq!(skipped.report.failures[0].id, "simple_python_0");
    assert!(
        skipped.report.failures[0]
            .reason
            .contains("90 prompt tokens + max_new_tokens 20 exceed the model's context of 100"),
        "{:?}",
        skipped.report.failures
    );
    assert!(
        budgets
            .iter()
            .all(|(tool, tokens)| tool != "walk.duration" && *tokens == 20)
    );
    assert_eq!(skipped.verdicts.len(), 2, "the other entry is kept");
    assert!(!skipped.verdicts[0].valid);

    let (truncated, budgets) = run_with(OverlongPrompt::Truncate);
    assert!(truncated.report.failures.is_empty());
    assert!(
        budgets.contains(&("walk.duration".to_owned(), 10)),
        "{budgets:?}"
    );
    assert!(
        truncated.verdicts[0].valid,
        "the canned answer fits in the room left"
    );
}

#[test]
fn runner_generates_decodes_checks_and_reports() {
    let dataset = fixture();
    let mut ticks = Vec::new();
    let config = BfclRunConfig {
        batch_size: 3,
        ..BfclRunConfig::default()
    };
    let run = BfclRunner::new(&dataset, BfclVersion::V4, config)
        .with_progress(|done, total| ticks.push((done, total)))
        .run(&mut CannedPolicy)
        .expect("run");
    assert_eq!(run.results.len(), 8, "multi-turn is not sent to the model");
    assert_eq!(run.verdicts.len(), 9);
    assert_eq!(
        ticks.last(),
        Some(&(9, 9)),
        "every entry counts, multi-turn included"
    );
    let valid: Vec<&str> = run
        .verdicts
        .iter()
        .filter(|v| v.valid)
        .map(|v| v.id.as_str())
        .collect();
    assert_eq!(valid, ["simple_python_0", "parallel_0", "irrelevance_0"]);
    let report = &run.report;
    assert_eq!(report.unsupported, [Category::MultiTurnBase]);
    assert!((report.end_to_end_success - 3.0 / 8.0).abs() < 1e-12);
    let markdown = report.to_markdown();
    assert!(
        markdown.contains("| multi_turn_base | 1 | not supported yet |"),
        "{markdown}"
    );
    let limited = BfclRunConfig {
        limit: Some(1),
        categories: vec![Category::SimplePython],
        ..BfclRunConfig::default()
    };
    let run = BfclRunner::new(&dataset, BfclVersion::V4, limited)
        .run(&mut CannedPolicy)
        .expect("run");
    assert_eq!(run.verdicts.len(), 1);
}

fn verdicts(category: Category, correct: usize, total: usize) -> Vec<Verdict> {
    (0..total)
        .map(|i| Verdict {
            id: format!("{category}_{i}"),
            category,
            valid: i < correct,
            error_type: None,
            error: None,
            well_formed: true,
            argument_score: category.has_answers().then_some(1.0),
            supported: true,
        })
        .collect()
}

/// The v4 aggregates of a fixed mixed score table (two categories not run) equal what
/// bfcl-eval's own leaderboard code computes (`scripts/bfcl_aggregate_golden.py`).
#[test]
fn aggregates_equal_the_official_leaderboard_code() {
    let golden: serde_json::Value =
        serde_json::from_str(include_str!("../fixtures/bfcl/aggregate_v4.json")).unwrap();
    let mut all = Vec::new();
    for (name, counts) in golden["table"].as_object().unwrap() {
        let category = Category::from_name(name).unwrap();
        let count = |key: &str| counts[key].as_u64().unwrap() as usize;
        all.extend(verdicts(category, count("correct"), count("total")));
    }
    let missing = golden["missing"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(name, size)| {
            (
                Category::from_name(name).unwrap(),
                size.as_u64().unwrap() as usize,
            )
        })
        .collect();
    let report = BfclReport::with_dataset_counts(&all, BfclVersion::V4, &missing);
    for (field, ours) in [
        ("overall", report.overall),
        ("non_live_overall", report.non_live_overall),
        ("live_overall", report.live_overall),
        ("multi_turn_overall", report.multi_turn_overall),
    ] {
        let official = golden[field].as_f64().unwrap();
        assert!(
            (ours - official).abs() < 1e-12,
            "{field}: {ours} vs {official}"
        );
    }
}

#[test]
fn aggregates_follow_bfcl_formulas() {
    let mut all = Vec::new();
    all.extend(verdicts(Category::SimplePython, 3, 4)); // 0.75
    all.extend(verdicts(Category::SimpleJava, 1, 2)); // 0.5; javascript missing → 0
    all.extend(verdicts(Category::Multiple, 1, 1));
    all.extend(verdicts(Category::LiveSimple, 1, 2));
    all.extend(verdicts(Category::LiveMultiple, 8, 8));
    all.extend(verdicts(Category::Irrelevance, 1, 2));
    all.extend(verdicts(Category::LiveIrrelevance, 1, 1));
    let v4 = BfclReport::from_verdicts(&all, BfclVersion::V4);
    let simple_ast = (0.75 + 0.5 + 0.0) / 3.0;
    assert!((v4.non_live_overall - (simple_ast + 1.0) / 4.0).abs() < 1e-12);
    assert!((v4.live_overall - 9.0 / 10.0).abs() < 1e-12);
    assert!((v4.irrelevance_total - 0.75).abs() < 1e-12);
    let overall = 0.1 * v4.non_live_overall + 0.1 * v4.live_overall + 0.1 * 0.75;
    assert!((v4.overall - overall).abs() < 1e-12);
    // BFCL weighs a live category without results by its dataset size
    let counts = [(Category::LiveParallel, 10)].into_iter().collect();
    let with_counts = BfclReport::with_dataset_counts(&all, BfclVersion::V4, &counts);
    assert!((with_counts.live_overall - 9.0 / 20.0).abs() < 1e-12);
    let v3 = BfclReport::from_verdicts(&all, BfclVersion::V3);
    assert!((v3.non_live_overall - (simple_ast + 1.0 + 0.5) / 5.0).abs() < 1e-12);
    assert!((v3.live_overall - 10.0 / 11.0).abs() < 1e-12);
    assert!((v3.overall - (v3.live_overall + v3.non_live_overall) / 3.0).abs() < 1e-12);
}

#[test]
fn runner_renders_bfcl_tools_through_a_real_chat_template() {
    use std::sync::Arc;

    use agent_rl_core::{BurnPolicy, Qwen2Config, weights::random_model};
    use agent_rl_test_support::{tiny_config, tiny_tokenizer};

    type B = burn::backend::Flex;
    // BFCL prompts with their tool docs are longer than the tiny config's 512 positions
    let config = Qwen2Config {
        max_position_embeddings: 4096,
        ..tiny_config()
    };
    let model = random_model::<B>(&config, 0, 0.3, &Default::default()).expect("model");
    let mut policy = BurnPolicy::new(model, Arc::new(tiny_tokenizer().expect("tokenizer")));
    let dataset = fixture();
    let mut config = BfclRunConfig {
        limit: Some(1),
        ..BfclRunConfig::default()
    };
    config.sampling.max_new_tokens = 4;
    let run = BfclRunner::new(&dataset, BfclVersion::V4, config)
        .run(&mut policy)
        .expect("run");
    assert_eq!(run.results.len(), 7, "one per single-turn category");
    // a random tiny model writes no valid call: AST entries fail, the irrelevance one passes
    let valid: Vec<&str> = run
        .verdicts
        .iter()
        .filter(|v| v.valid)
        .map(|v| v.id.as_str())
        .collect();
    assert_eq!(valid, ["irrelevance_0"]);
}
