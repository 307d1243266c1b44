//! End to end: a scripted agent and scripted customers through the runner on one retail and
//! one airline task of the hand-written fixture; the reported metrics are checked exactly.

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
    assert!(close(report.average_tool_calls, 4.0));
    assert!(close(report.hallucinated_tool_call_rate, 0.25));
    // system + first user + 6 agent turns × (assistant + observation)
    assert!(close(report.average_conversation_length, 14.0));
    assert!(report.to_markdown().contains("| pass^1 | 1.0000 |"));
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
    assert!(close(report.average_tool_calls, 2.0));
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
