//! The core `Environment` contract of τ-bench: fresh database per episode, the terminate tool
//! ends the episode with the original's reward (database + required outputs).

use agent_rl_core::{Action, EnvironmentFactory, Role, ToolCall};
use agent_rl_eval::tau::{Domain, ScriptedUser, TauEnvironmentFactory, TauSuite, UserSimulator};
use serde_json::json;

use super::faults::fixture_dir;

fn call(name: &str, args: serde_json::Value) -> Action {
    Action::ToolCall(ToolCall {
        id: Some("call_1".into()),
        ..ToolCall::new(name, args)
    })
}

#[test]
fn episodes_get_fresh_databases_and_terminate_with_reward() {
    let suite = TauSuite::load(&fixture_dir(), Domain::Retail, "test").expect("suite");
    let factory = TauEnvironmentFactory::new(&suite, || -> Box<dyn UserSimulator> {
        Box::new(ScriptedUser::new([
            "I want to return my mug.",
            "Yes, to the gift card.",
        ]))
    });
    let task = suite.task(1).expect("task 1");

    let mut env = factory.create();
    let opening = env.reset(&task).expect("reset");
    assert_eq!(opening.len(), 2);
    assert_eq!(
        (opening[0].role, opening[1].role),
        (Role::System, Role::User)
    );
    assert_eq!(opening[1].text(), "I want to return my mug.");
    let found = env
        .step(&call(
            "find_user_id_by_name_zip",
            json!({"first_name": "ana", "last_name": "LEE", "zip": "60001"}),
        ))
        .expect("step");
    assert_eq!(found.observation.text(), "ana_lee_1001");
    assert_eq!(found.observation.tool_call_id.as_deref(), Some("call_1"));
    assert!(!found.done && found.reward.is_none());
    let reply = env
        .step(&Action::Respond(
            "The refund of 12.5 goes to your gift card, ok?".into(),
        ))
        .expect("respond");
    assert_eq!(
        (reply.observation.role, reply.observation.text()),
        (Role::User, "Yes, to the gift card.")
    );
    let returned = env
        .step(&call(
            "return_delivered_order_items",
            json!({"order_id": "#W0000002", "item_ids": ["2000000001"], "payment_method_id": "gift_card_1001"}),
        ))
        .expect("return");
    assert!(
        returned
            .observation
            .text()
            .contains("\"status\": \"return requested\"")
    );
    let end = env
        .step(&call(
            "transfer_to_human_agents",
            json!({"summary": "done"}),
        ))
        .expect("transfer");
    assert!(end.done);
    assert_eq!(end.reward, Some(1.0));
    assert!(
        env.step(&Action::Respond("hello?".into())).is_err(),
        "no step after the end"
    );

    // A second episode starts from the untouched database: the order is still delivered.
    let mut env = factory.create();
    env.reset(&task).expect("reset");
    let order = env
        .step(&call("get_order_details", json!({"order_id": "#W0000002"})))
        .expect("step");
    assert!(
        order
            .observation
            .text()
            .contains("\"status\": \"delivered\"")
    );
    // Without the required output "12.5" said, the same database state earns 0.
    env.step(&call(
        "return_delivered_order_items",
        json!({"order_id": "#W0000002", "item_ids": ["2000000001"], "payment_method_id": "gift_card_1001"}),
    ))
    .expect("return");
    let end = env
        .step(&call(
            "transfer_to_human_agents",
            json!({"summary": "done"}),
        ))
        .expect("transfer");
    assert_eq!(end.reward, Some(0.0));
    assert_eq!(end.info["status"], "ok");
}

#[test]
fn customer_stop_token_ends_the_episode() {
    let suite = TauSuite::load(&fixture_dir(), Domain::Retail, "test").expect("suite");
    let mut env = suite.environment(Box::new(ScriptedUser::new(["Cancel #W0000001 please."])));
    use agent_rl_core::Environment;
    env.reset(&suite.task(0).expect("task 0")).expect("reset");
    env.step(&call(
        "cancel_pending_order",
        json!({"order_id": "#W0000001", "reason": "no longer needed"}),
    ))
    .expect("cancel");
    let end = env.step(&Action::Respond("Done.".into())).expect("respond");
    assert!(end.done && end.observation.text().contains("###STOP###"));
    assert_eq!(end.reward, Some(1.0));
    assert_eq!(env.stats().tool_calls, 1);
    assert_eq!(
        env.stats().reward.as_ref().map(|info| info.r_actions),
        Some(true)
    );
}

/// A chat policy that records its requests and answers from a list.
struct EchoPolicy {
    replies: Vec<&'static str>,
    seen: std::sync::Arc<std::sync::Mutex<Vec<agent_rl_core::ChatRequest>>>,
}

impl agent_rl_core::Policy for EchoPolicy {
    fn generate(
        &mut self,
        requests: &[agent_rl_core::ChatRequest],
        _: &agent_rl_core::SamplingConfig,
    ) -> Result<Vec<agent_rl_core::Completion>, agent_rl_core::CoreError> {
        if let Ok(mut seen) = self.seen.lock() {
            seen.extend_from_slice(requests);
        }
        let text = if self.replies.is_empty() {
            "###STOP###"
        } else {
            self.replies.remove(0)
        };
        Ok(vec![agent_rl_core::Completion {
            token_ids: Vec::new(),
            logprobs: Vec::new(),
            text: format!(" {text}\n"),
            parsed: agent_rl_core::ParsedOutput::default(),
            finish_reason: agent_rl_core::FinishReason::Stop,
        }])
    }
}

#[test]
fn llm_user_sees_the_agent_as_user_and_stops() {
    use agent_rl_eval::tau::LlmUser;
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let policy = EchoPolicy {
        replies: vec!["I need to cancel an order."],
        seen: seen.clone(),
    };
    let template = "Play a customer.\n\nInstruction: {instruction}\nRules: be brief.";
    let mut user = LlmUser::new(policy, template, agent_rl_core::SamplingConfig::default());
    assert_eq!(
        user.reset("Cancel #W1.").expect("reset"),
        "I need to cancel an order."
    );
    assert_eq!(user.step("Which order?").expect("step"), "###STOP###");
    let seen = seen.lock().expect("lock");
    let first = &seen[0].messages;
    assert_eq!(first[0].role, Role::System);
    assert_eq!(
        first[0].text(),
        "Play a customer.\n\nInstruction: Cancel #W1.\nRules: be brief."
    );
    assert_eq!(
        (first[1].role, first[1].text()),
        (Role::User, "Hi! How can I help you today?")
    );
    let second = &seen[1].messages;
    assert_eq!(
        (second[2].role, second[2].text()),
        (Role::Assistant, "I need to cancel an order.")
    );
    assert_eq!(
        (second[3].role, second[3].text()),
        (Role::User, "Which order?")
    );
}
