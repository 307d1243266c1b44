//! The prompting-format decoders (Python, Java, JavaScript) against the official decoder's output on the texts of
//! `fixtures/bfcl/decoder.jsonl` (written by `scripts/bfcl_golden.py`; no benchmark data).

use agent_rl_eval::bfcl::{Language, decode_python_calls, decode_text};
use serde_json::Value;

#[test]
fn prompting_decoders_match_the_official_ones() {
    let vectors = include_str!("../fixtures/bfcl/decoder.jsonl");
    let mut disagreements = Vec::new();
    for line in vectors.lines() {
        let vector: Value = serde_json::from_str(line).expect("vector");
        let text = vector["text"].as_str().expect("text");
        let expected = vector["decoded"].clone();
        let actual = match vector.get("language").and_then(Value::as_str) {
            Some("java") => decode_text(text, Language::Java).unwrap_or(Value::Null),
            Some(_) => decode_text(text, Language::JavaScript).unwrap_or(Value::Null),
            None => decode_python_calls(text).map_or(Value::Null, Value::Array),
        };
        if actual != expected {
            disagreements.push(format!("{text:?}: ours {actual}, official {expected}"));
        }
    }
    assert!(disagreements.is_empty(), "{}", disagreements.join("\n"));
}
