//! `agent-rl serve` as a process: its greedy answer equals `agent-rl generate --greedy`, its
//! log-probabilities equal `agent-rl logprobs`.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

use super::common::{fixture_model, ids};

fn cli_json(args: &[&str]) -> Value {
    let output = Command::new(env!("CARGO_BIN_EXE_agent-rl"))
        .args(args)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

/// Kills the server process when the test ends, whatever happens.
struct Child(std::process::Child);

impl Drop for Child {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn served_greedy_tokens_and_logprobs_equal_the_cli_commands() {
    let model = fixture_model();
    let model = model.to_str().unwrap();
    let mut child = Child(
        Command::new(env!("CARGO_BIN_EXE_agent-rl"))
            .args([
                "serve",
                "--model",
                model,
                "--port",
                "0",
                "--served-model-name",
                "tiny",
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let mut line = String::new();
    BufReader::new(child.0.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line.trim().rsplit(' ').next().unwrap().to_owned();
    assert!(url.starts_with("http://127.0.0.1:"), "{line}");
    let messages = json!([{"role": "user", "content": "Hi"}]);
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    let answer: Value = agent
        .post(format!("{url}/chat/completions"))
        .send_json(
            json!({"model": "tiny", "messages": messages, "temperature": 0,
            "max_tokens": 8, "logprobs": true}),
        )
        .unwrap()
        .body_mut()
        .read_json()
        .unwrap();
    let served = ids(&answer["choices"][0]["token_ids"]);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("messages.json");
    std::fs::write(&file, messages.to_string()).unwrap();
    let local = cli_json(&[
        "generate",
        "--model",
        model,
        "--messages",
        file.to_str().unwrap(),
        "--greedy",
        "--max-new-tokens",
        "8",
        "--json",
    ]);
    assert_eq!(served, ids(&local["token_ids"]));
    let prompt = ids(&answer["prompt_token_ids"]);
    let all: Vec<String> = prompt.iter().chain(&served).map(u32::to_string).collect();
    let scored = cli_json(&[
        "logprobs",
        "--model",
        model,
        "--ids",
        &all.join(","),
        "--json",
    ]);
    let positions = scored["positions"].as_array().unwrap();
    let entries = answer["choices"][0]["logprobs"]["content"]
        .as_array()
        .unwrap();
    for (step, entry) in entries.iter().enumerate() {
        let want = positions[prompt.len() - 1 + step]["next_token_logprob"]
            .as_f64()
            .unwrap();
        let got = entry["logprob"].as_f64().unwrap();
        assert!((got - want).abs() < 1e-4, "step {step}: {got} vs {want}");
    }
}
