//! End to end: a scripted agent and scripted customers through the runner on one retail and
//! one airline task of the hand-written fixture; the reported metrics are checked exactly.

use agent_rl_core::tool_calls::MalformedToolCall;
use agent_rl_core::{ChatRequest, Role};
use agent_rl_core::{
    Completion, CoreError, FinishReason, ParsedOutput, Policy, SamplingConfig, ToolCall,
};
use agent_rl_eval::tau::{Domain, ScriptedUser, TauRunConfig, TauSuite, UserSimulator, run_tau};
use serde_json::{Value, json};

use super::faults::fixture_dir;

enum Turn {
    Call(&'static str, Value),
    Say(&'static str),
    /// Several well-formed calls and some malformed ones in one turn.
    Calls(Vec<(&'static str, Value)>, usize),
}

/// Plays a fixed script per conversation, chosen by the customer's opening message.
struct ScriptedAgent {
    scripts: Vec<(&'static str, Vec<Turn>)>,
}

impl Policy for ScriptedAgent {
    fn generate(
        &mut self,
        requests: &[ChatRequest],
        _: &SamplingConfig,
    ) -> Result<Vec<Completion>, CoreError> {
        requests
            .iter()
            .map(|request| {
                let opening = request
                    .messages
                    .iter()
                    .find(|m| m.role == Role::User)
                    .map(|m| m.text())
                    .unwrap_or("");
                let step = request
                    .messages
                    .iter()
                    .filter(|m| m.role == Role::Assistant)
                    .count();
                let (_, script) = self
                    .scripts
                    .iter()
                    .find(|(key, _)| opening.contains(key))
                    .expect("script");
                let parsed = match script.get(step) {
                    Some(Turn::Call(name, args)) => ParsedOutput {
                        content: String::new(),
                        tool_calls: vec![ToolCall::new(*name, args.clone())],
                        malformed: Vec::new(),
                    },
                    Some(Turn::Calls(calls, malformed)) => ParsedOutput {
                        content: String::new(),
                        tool_calls: calls
                            .iter()
                            .map(|(name, args)| ToolCall::new(*name, args.clone()))
                            .collect(),
                        malformed: (0..*malformed)
                            .map(|_| MalformedToolCall {
                                raw: "{\"name\": \"get_order_details\", ".into(),
                                reason: "invalid JSON".into(),
                            })
                            .collect(),
                    },
                    Some(Turn::Say(text)) => ParsedOutput {
                        content: (*text).to_owned(),
                        ..ParsedOutput::default()
                    },
                    None => ParsedOutput {
                        content: "…".into(),
                        ..ParsedOutput::default()
                    },
                };
                Ok(Completion {
                    token_ids: Vec::new(),
                    logprobs: Vec::new(),
                    text: parsed.content.clone(),
                    parsed,
                    finish_reason: FinishReason::Stop,
                })
            })
            .collect()
    }
}

fn close(actual: f64, expected: f64) -> bool {
    (actual - expected).abs() < 1e-9
}

#[test]
fn retail_episode_through_runner_reports_metrics() {
    let suite = TauSuite::load(&fixture_dir(), Domain::Retail, "test").expect("retail suite");
    let mut agent = ScriptedAgent {
        scripts: vec![(
            "cancel my mug order",
            vec![
                Turn::Call("lookup_customer", json!({"email": "ana.lee@example.com"})),
                Turn::Call(
                    "find_user_id_by_email",
                    json!({"email": "ana.lee@example.com"}),
                ),
                Turn::Call("get_order_details", json!({"order_id": "#W0000001"})),
                Turn::Say("Order #W0000001 is pending. Cancel it because you no longer need it?"),
                Turn::Call(
                    "cancel_pending_order",
                    json!({"order_id": "#W0000001", "reason": "no longer needed"}),
                ),
                Turn::Say("Cancelled; 12.5 is back on your gift card."),
            ],
        )],
    };
    let make_user = |_: usize, _: usize| -> Box<dyn UserSimulator> {
        Box::new(ScriptedUser::new([
            "Hi, I'm Ana Lee (ana.lee@example.com). Please cancel my mug order #W0000001.",
            "Yes please.",
            "###STOP###",
        ]))
    };
    let config = TauRunConfig {
        task_ids: Some(vec![0]),
        ..TauRunConfig::default()
    };
    let report = run_tau(&suite, &mut agent, &make_user, &config, &mut |_, _| {}).expect("run");
    assert_eq!(report.tasks, 1);
    assert!(close(report.average_reward, 1.0), "{:#?}", report.episodes);
    assert_eq!(report.pass_hat_k, vec![1.0]);
    assert!(close(report.average_attempted_tool_calls, 4.0));
    assert!(close(report.average_executed_tool_calls, 4.0));
    assert_eq!(report.dropped_tool_calls, 0);
    assert!(close(report.hallucinated_tool_call_rate, 0.25));
    // system + first user + 6 agent turns × (assistant + observation)
    assert!(close(report.average_conversation_length, 14.0));
    let markdown = report.to_markdown();
    assert!(markdown.contains("| pass^1 | 1.0000 | |"), "{markdown}");
    assert!(
        markdown.contains(
            "| hallucinated tool-call rate | 0.2500 | (calls to unknown tools + calls whose \
             arguments fail the tool schema + malformed calls) / attempted calls |"
        ),
        "{markdown}"
    );
}

#[test]
fn airline_episodes_through_runner_report_pass_hat_k() {
    let suite = TauSuite::load(&fixture_dir(), Domain::Airline, "test").expect("airline suite");
    let good = vec![
        Turn::Call(
            "get_reservation_details",
            json!({"reservation_id": "ABC123"}),
        ),
        Turn::Call(
            "update_reservation_baggages",
            json!({"reservation_id": "ABC123", "total_baggages": 2, "nonfree_baggages": 1, "payment_id": "gift_card_2002"}),
        ),
        Turn::Say("Done: one more bag, it cost $50."),
    ];
    let bad = vec![
        Turn::Call(
            "get_reservation_details",
            json!({"reservation_id": "ABC123"}),
        ),
        Turn::Call(
            "update_reservation_baggages",
            json!({"reservation_id": "ABC123", "total_baggages": 2, "nonfree_baggages": "1", "payment_id": "gift_card_2002"}),
        ),
        Turn::Say("Done: one more bag, it cost $50."),
    ];
    let mut agent = ScriptedAgent {
        scripts: vec![("(first try)", good), ("(second try)", bad)],
    };
    let make_user = |_: usize, trial: usize| -> Box<dyn UserSimulator> {
        let opening = if trial == 0 {
            "Add a bag to ABC123 (first try)"
        } else {
            "Add a bag to ABC123 (second try)"
        };
        Box::new(ScriptedUser::new([opening, "###STOP###"]))
    };
    let config = TauRunConfig {
        trials: 2,
        batch_size: 2,
        ..TauRunConfig::default()
    };
    let mut calls = Vec::new();
    let report = run_tau(
        &suite,
        &mut agent,
        &make_user,
        &config,
        &mut |done, total| calls.push((done, total)),
    )
    .expect("run");
    assert_eq!(calls, vec![(1, 2), (2, 2)]);
    assert_eq!((report.tasks, report.trials), (1, 2));
    assert!(close(report.average_reward, 0.5), "{:#?}", report.episodes);
    assert_eq!(report.pass_hat_k, vec![0.5, 0.0]);
    assert!(close(report.average_attempted_tool_calls, 2.0));
    assert!(close(report.average_executed_tool_calls, 2.0));
    assert!(close(report.hallucinated_tool_call_rate, 0.25));
    assert!(close(report.average_conversation_length, 8.0));
    let bad_episode = report
        .episodes
        .iter()
        .find(|e| e.trial == 1)
        .expect("trial 1");
    assert_eq!(bad_episode.stats.raised_calls, 1);
    assert!(
        bad_episode.messages[5]
            .text()
            .starts_with("Error: unsupported operand type(s) for -")
    );
}

/// One turn with a valid call, a call to an unknown tool and a malformed call, run with the
/// original's limit of one executed call per turn and without a limit.
fn run_spray(limit: Option<usize>) -> agent_rl_eval::tau::TauReport {
    let suite = TauSuite::load(&fixture_dir(), Domain::Retail, "test").expect("retail suite");
    let mut agent = ScriptedAgent {
        scripts: vec![(
            "cancel my mug order",
            vec![
                Turn::Calls(
                    vec![
                        (
                            "find_user_id_by_email",
                            json!({"email": "ana.lee@example.com"}),
                        ),
                        ("lookup_customer", json!({"email": "ana.lee@example.com"})),
                    ],
                    1,
                ),
                Turn::Say("Sorry, I cannot do that."),
            ],
        )],
    };
    let make_user = |_: usize, _: usize| -> Box<dyn UserSimulator> {
        Box::new(ScriptedUser::new([
            "Hi, I'm Ana Lee (ana.lee@example.com). Please cancel my mug order #W0000001.",
            "###STOP###",
        ]))
    };
    let config = TauRunConfig {
        task_ids: Some(vec![0]),
        max_tool_calls_per_turn: limit,
        ..TauRunConfig::default()
    };
    run_tau(&suite, &mut agent, &make_user, &config, &mut |_, _| {}).expect("run")
}

#[test]
fn calls_beyond_the_per_turn_limit_are_counted_as_attempted_and_dropped() {
    let report = run_spray(Some(1));
    let episode = &report.episodes[0];
    assert_eq!(episode.calls.attempted_tool_calls, 3);
    assert_eq!(episode.calls.executed_tool_calls, 1);
    assert_eq!(episode.calls.dropped_tool_calls, 2);
    assert_eq!(episode.calls.unknown_tool_calls, 1);
    assert_eq!(episode.calls.malformed_calls, 1);
    // the unknown tool was never run: the environment saw only the valid call
    assert_eq!(episode.stats.tool_calls, 1);
    assert_eq!(episode.stats.unknown_tool_calls, 0);
    assert!(close(report.hallucinated_tool_call_rate, 2.0 / 3.0));
    assert!(close(report.average_attempted_tool_calls, 3.0));
    assert!(close(report.average_executed_tool_calls, 1.0));
    assert_eq!(report.dropped_tool_calls, 2);
    // the conversation keeps only the executed call, as the original agent does
    let calls = &episode.messages[2].tool_calls;
    assert_eq!(calls.len(), 1, "{:#?}", episode.messages);
    let json = serde_json::to_value(&report).expect("json");
    assert_eq!(json["average_attempted_tool_calls"], json!(3.0));
    assert_eq!(json["average_executed_tool_calls"], json!(1.0));
    assert_eq!(json["dropped_tool_calls"], json!(2));
    assert!(json["definitions"]["hallucinated_tool_call_rate"].is_string());
    let first = &json["episodes"][0];
    assert_eq!(
        (
            &first["attempted_tool_calls"],
            &first["executed_tool_calls"],
            &first["dropped_tool_calls"]
        ),
        (&json!(3), &json!(1), &json!(2))
    );
    let back: agent_rl_eval::tau::TauReport = serde_json::from_value(json).expect("round trip");
    assert_eq!(back, report);
}

#[test]
fn without_a_limit_every_well_formed_call_is_executed() {
    let report = run_spray(None);
    let episode = &report.episodes[0];
    assert_eq!(episode.calls.attempted_tool_calls, 3);
    assert_eq!(episode.calls.executed_tool_calls, 2);
    // the malformed call cannot run: it is the one call not executed
    assert_eq!(episode.calls.dropped_tool_calls, 1);
    // the unknown tool's failure now comes from executing it
    assert_eq!(episode.stats.tool_calls, 2);
    assert_eq!(episode.stats.unknown_tool_calls, 1);
    assert_eq!(episode.calls.unknown_tool_calls, 1);
    assert_eq!(episode.calls.malformed_calls, 1);
    assert!(close(report.hallucinated_tool_call_rate, 2.0 / 3.0));
    // assistant message with both calls, then one tool message per executed call
    assert_eq!(episode.messages[2].tool_calls.len(), 2);
    assert!(
        episode.messages[3].text().contains("ana_lee"),
        "{:#?}",
        episode.messages
    );
    assert!(
        episode.messages[4]
            .text()
            .starts_with("Unknown action lookup_customer")
    );
}

#[test]
fn zero_calls_per_turn_is_refused_with_the_field_named() {
    let config = TauRunConfig {
        max_tool_calls_per_turn: Some(0),
        ..TauRunConfig::default()
    };
    let error = config.validate().expect_err("refused").to_string();
    assert!(error.contains("max_tool_calls_per_turn"), "{error}");
}
