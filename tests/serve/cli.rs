//! `agent-rl serve` as a process: its greedy answer equals `agent-rl generate --greedy`, its
//! log-probabilities equal `agent-rl logprobs`; `agent-rl train grpo` with a `[rollouts]`
//! section samples on it.

use std::process::Command;

use serde_json::{Value, json};

use super::common::{fixture_model, ids, serve};

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

#[test]
fn served_greedy_tokens_and_logprobs_equal_the_cli_commands() {
    let model = fixture_model();
    let model = model.to_str().unwrap();
    let (_child, url) = serve(model, &[]);
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

/// A run file's `[rollouts]` section reaches the trainer: `train grpo` samples on the served
/// base model, publishes its adapter there and logs the importance sampling against it.
#[test]
fn train_grpo_with_rollouts_section_samples_on_the_server() {
    let model = fixture_model();
    let model = model.to_str().unwrap();
    let (_child, url) = serve(model, &["--allow-runtime-lora"]);
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    let publish = dir.path().join("published");
    let file = dir.path().join("grpo.toml");
    std::fs::write(
        &file,
        format!(
            "[model]\npath = {model:?}\n[data]\ntoy = 4\nenvironment = \"none\"\n\
             [run]\ndir = {:?}\n[lora]\nr = 4\nalpha = 8.0\n\
             [grpo]\nnum_generations = 2\nprompts_per_step = 2\nmax_steps = 2\n\
             max_completion_length = 8\nmax_prompt_length = 200\n\
             [grpo.sampling]\nmax_new_tokens = 8\n\
             [rollouts]\nbase_url = {url:?}\nmodel = \"tiny\"\npublish_dir = {:?}\n\
             adapter_name = \"cli-policy\"\nmax_concurrency = 1\n",
            run.to_str().unwrap(),
            publish.to_str().unwrap(),
        ),
    )
    .unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_agent-rl"))
        .args(["train", "grpo", "--config", file.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let metrics = std::fs::read_to_string(run.join("grpo_metrics.jsonl")).unwrap();
    let steps: Vec<Value> = metrics
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(steps.len(), 2, "{metrics}");
    for step in &steps {
        let ratio = step["sampling/importance_sampling_ratio/mean"]
            .as_f64()
            .unwrap_or_else(|| panic!("no importance sampling ratio logged: {step}"));
        assert!(ratio.is_finite() && ratio > 0.0, "{step}");
    }
    assert!(
        publish.join("cli-policy/adapter_config.json").is_file(),
        "the adapter is published under the configured name"
    );
}
