//! Chat-template renderings and ids equal transformers' `apply_chat_template`.

use agent_rl_core::{ChatTokenizer, Message, ToolSpec};
use serde_json::Value;

use crate::common::{expected, fixture, ids};

fn check(dir: &str) {
    let tokenizer = ChatTokenizer::from_dir(&fixture(dir)).unwrap();
    let conversations: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(fixture("conversations.json")).unwrap())
            .unwrap();
    let expected = expected();
    let cases = expected["templates"].as_array().unwrap();
    assert_eq!(cases.len(), conversations.len() * 2);
    for case in cases {
        let conversation = conversations
            .iter()
            .find(|c| c["name"] == case["name"])
            .unwrap();
        let messages: Vec<Message> =
            serde_json::from_value(conversation["messages"].clone()).unwrap();
        let tools: Vec<ToolSpec> = conversation
            .get("tools")
            .map(|t| serde_json::from_value(t.clone()).unwrap())
            .unwrap_or_default();
        let add = case["add_generation_prompt"].as_bool().unwrap();
        let text = tokenizer
            .apply_chat_template(&messages, &tools, add)
            .unwrap();
        assert_eq!(
            text,
            case["text"].as_str().unwrap(),
            "{dir}: {} (gen prompt {add})",
            case["name"]
        );
        assert_eq!(
            tokenizer.encode(&text).unwrap(),
            ids(&case["ids"]),
            "{dir}: ids of {}",
            case["name"]
        );
    }
    assert_eq!(
        tokenizer.eos_ids,
        [expected["eos_id"].as_u64().unwrap() as u32]
    );
}

#[test]
fn template_from_chat_template_jinja_file() {
    check("tied_f32");
}

#[test]
fn template_from_tokenizer_config_key() {
    check("untied_f32");
}

#[test]
fn missing_tokenizer_file_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let err = ChatTokenizer::from_dir(dir.path()).unwrap_err();
    assert!(err.to_string().contains("tokenizer.json"), "{err}");
}
