//! The prompting-format decoder against the official decoder's output on the texts of
//! `fixtures/bfcl/decoder.jsonl` (written by `scripts/bfcl_golden.py`; no benchmark data).

use agent_rl_eval::bfcl::decode_python_calls;
use serde_json::Value;

#[test]
fn python_decoder_matches_the_official_one() {
    let vectors = include_str!("../fixtures/bfcl/decoder.jsonl");
    let mut disagreements = Vec::new();
    for line in vectors.lines() {
        let vector: Value = serde_json::from_str(line).expect("vector");
        let text = vector["text"].as_str().expect("text");
        let expected = vector["decoded"].clone();
        let actual = decode_python_calls(text).map_or(Value::Null, Value::Array);
        if actual != expected {
            disagreements.push(format!("{text:?}: ours {actual}, official {expected}"));
        }
    }
    assert!(disagreements.is_empty(), "{}", disagreements.join("\n"));
}
