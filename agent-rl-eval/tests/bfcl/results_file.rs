//! Result files that would skew the score are refused: duplicate ids, no results at all.

use std::path::PathBuf;

use agent_rl_eval::EvalError;
use agent_rl_eval::bfcl::{BfclDataset, CheckOptions, read_results, score_results_file};

fn dataset() -> BfclDataset {
    BfclDataset::load(&PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/bfcl/data"))
        .expect("fixture loads")
}

#[test]
fn duplicate_ids_are_refused_naming_the_id_and_both_lines() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("results.jsonl");
    let lines = [
        r#"{"id": "simple_python_0", "result": "[]"}"#,
        r#"{"id": "irrelevance_0", "result": "no call"}"#,
        "",
        r#"{"id": "simple_python_0", "result": "[]"}"#,
    ];
    std::fs::write(&path, lines.join("\n")).unwrap();
    match score_results_file(&dataset(), &path, CheckOptions::default()) {
        Err(err @ EvalError::Record { line: 4, .. }) => {
            let text = err.to_string();
            assert!(
                text.contains("\"simple_python_0\"")
                    && text.contains("line 1")
                    && text.contains("results.jsonl:4"),
                "{text}"
            );
        }
        other => panic!("expected a Record error on line 4, got {other:?}"),
    }
}

#[test]
fn a_file_without_results_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in [("empty.jsonl", ""), ("blank.jsonl", "\n  \n\n")] {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        let err = read_results(&path).expect_err("no results");
        let text = err.to_string();
        assert!(text.contains(name) && text.contains("no results"), "{text}");
    }
}
