//! Agreement with the official checker on the golden vectors of `scripts/bfcl_golden.py`.

use std::collections::HashMap;

use agent_rl_eval::bfcl::{BfclDataset, CheckOptions, check_entry, decode_text};
use serde_json::Value;

const GOLDEN: &str = include_str!("../fixtures/bfcl/golden.jsonl");

#[test]
#[ignore = "needs the BFCL data: set AGENT_RL_DATA and pass --include-ignored (.ci/run does)"]
fn rust_checker_agrees_with_the_official_one_on_golden_vectors() {
    let dir = super::data_dir();
    let dataset = BfclDataset::load(&dir.join("v4")).expect("load v4");
    let index = dataset.index();
    let (mut total, mut verdict_agree, mut type_agree) = (0usize, 0usize, 0usize);
    let mut disagreements: HashMap<String, Vec<String>> = HashMap::new();
    for line in GOLDEN.lines() {
        let vector: Value = serde_json::from_str(line).expect("golden line");
        let id = vector["id"].as_str().expect("id");
        let entry = index.get(id).unwrap_or_else(|| panic!("no entry {id}"));
        let options = CheckOptions {
            underscore_to_dot: vector["underscore_to_dot"].as_bool().unwrap_or(false),
        };
        let decoded = match vector.get("text").and_then(Value::as_str) {
            Some(text) => decode_text(text, entry.category.language()),
            None => Ok(vector["output"].clone()),
        };
        let result = check_entry(entry, &decoded, options);
        let expected_valid = vector["valid"].as_bool().expect("valid");
        let expected_type = vector["error_type"].as_str();
        let actual_type = result
            .as_ref()
            .err()
            .map(|failure| failure.error_type.as_str());
        total += 1;
        verdict_agree += usize::from(result.is_ok() == expected_valid);
        type_agree += usize::from(actual_type == expected_type);
        if actual_type != expected_type {
            let key = format!(
                "{} {:?} vs official {:?}",
                vector["mutation"], actual_type, expected_type
            );
            disagreements.entry(key).or_default().push(format!(
                "{id}: {} {:?}",
                vector.get("text").unwrap_or(&vector["output"]),
                result.err().map(|f| f.message)
            ));
        }
    }
    let mut keys: Vec<_> = disagreements.keys().cloned().collect();
    keys.sort();
    for key in keys {
        let examples = &disagreements[&key];
        eprintln!("{} x{}: e.g. {}", key, examples.len(), examples[0]);
    }
    let verdict_rate = verdict_agree as f64 / total as f64;
    let type_rate = type_agree as f64 / total as f64;
    eprintln!(
        "golden vectors: {total}; verdict agreement {verdict_rate:.4}; error-type agreement {type_rate:.4}"
    );
    // Pinned: the official checker and ours agree on every vector, verdict and error type
    // (4,096 vectors, 2026-12-04). A disagreement that turns out to be the official checker's
    // quirk is listed here by id and mutation, with its cause, never absorbed by a rate.
    const KNOWN_DISAGREEMENTS: &[&str] = &[];
    let mut found: Vec<String> = disagreements.values().flatten().cloned().collect();
    found.sort();
    assert_eq!(total, GOLDEN.lines().count());
    assert!(
        found
            .iter()
            .all(|d| KNOWN_DISAGREEMENTS.iter().any(|k| d.starts_with(k))),
        "verdict agreement {verdict_rate}, error-type agreement {type_rate}; \
         disagreements beyond the pinned ones:\n{}",
        found.join("\n")
    );
}
