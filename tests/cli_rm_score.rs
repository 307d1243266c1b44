//! `agent-rl rm-score`: the CLI prints what the library's reward model scores (the library's
//! scores are checked against transformers in agent-rl-core/tests/score_head.rs), and bad input
//! is named.

use std::path::{Path, PathBuf};
use std::process::Command;

use agent_rl::backend::CpuBackend;
use agent_rl::core::weights::{LoadOptions, SaveOptions, load_pretrained};
use agent_rl::core::{ChatTokenizer, Message, Qwen2ForSequenceClassification};
use serde_json::{Value, json};

fn policy_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("agent-rl-core/tests/fixtures/qwen2_tiny/tied_f32")
}

/// A reward model on the tiny fixture's backbone with a seeded head, saved with its tokenizer.
fn reward_model_dir(dir: &Path) -> (Qwen2ForSequenceClassification<CpuBackend>, ChatTokenizer) {
    let tokenizer = ChatTokenizer::from_dir(&policy_dir()).unwrap();
    let (policy, _) =
        load_pretrained::<CpuBackend>(&policy_dir(), LoadOptions::default(), &Default::default())
            .unwrap();
    let model = Qwen2ForSequenceClassification::from_policy(policy, tokenizer.pad_id, 7);
    model.save_pretrained(dir, SaveOptions::default()).unwrap();
    tokenizer.save_to_dir(dir).unwrap();
    (model, tokenizer)
}

fn rm_score(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_agent-rl"))
        .arg("rm-score")
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn rm_score_prints_the_reward_models_score_of_each_conversation() {
    let dir = tempfile::tempdir().unwrap();
    let rm = dir.path().join("rm");
    let (model, tokenizer) = reward_model_dir(&rm);
    let mut printed = Vec::new();
    for reply in ["Sunny and mild.", "I cannot help with that."] {
        let messages = vec![
            Message::user("What is the weather in Oslo?"),
            Message::assistant(reply),
        ];
        let path = dir.path().join("messages.json");
        std::fs::write(&path, serde_json::to_string(&messages).unwrap()).unwrap();
        let output = rm_score(&[
            "--model",
            rm.to_str().unwrap(),
            "--messages",
            path.to_str().unwrap(),
            "--json",
        ]);
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let value: Value = serde_json::from_slice(&output.stdout).unwrap();
        let score = value["score"].as_f64().unwrap() as f32;
        let ids = tokenizer.encode_chat(&messages, &[], false).unwrap();
        let expected = model
            .score_ids(&[ids], None)
            .into_data()
            .to_vec::<f32>()
            .unwrap()[0];
        assert!(
            (score - expected).abs() <= 1e-5 * expected.abs().max(1.0),
            "{reply}: CLI {score}, library {expected}"
        );
        printed.push(score);
    }
    assert_ne!(
        printed[0], printed[1],
        "two replies, one score: the head is not read"
    );
}

#[test]
fn rm_score_names_a_policy_checkpoint_and_an_empty_conversation() {
    let dir = tempfile::tempdir().unwrap();
    let messages = dir.path().join("messages.json");
    std::fs::write(
        &messages,
        json!([{"role": "user", "content": "Hi"}]).to_string(),
    )
    .unwrap();
    // A causal LM directory has no score head.
    let output = rm_score(&[
        "--model",
        policy_dir().to_str().unwrap(),
        "--messages",
        messages.to_str().unwrap(),
    ]);
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("--model") && stderr.contains("reward model"),
        "{stderr}"
    );
    let rm = dir.path().join("rm");
    reward_model_dir(&rm);
    std::fs::write(&messages, "[]").unwrap();
    let output = rm_score(&[
        "--model",
        rm.to_str().unwrap(),
        "--messages",
        messages.to_str().unwrap(),
    ]);
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("--messages") && stderr.contains("empty"),
        "{stderr}"
    );
}
