//! Run-file ergonomics of `agent-rl train`: `--set` overrides, the completion budget filled in
//! from one key, `--print-config` into a closed pipe, per-trainer help.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

fn agent_rl(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_agent-rl"))
        .args(args)
        .output()
        .unwrap()
}

fn run_file(dir: &Path, text: &str) -> PathBuf {
    let path = dir.join("run.toml");
    std::fs::write(&path, text).unwrap();
    path
}

/// The resolved config `--print-config` prints.
fn resolved(command: &str, path: &Path, extra: &[&str]) -> Value {
    let mut args = vec![
        "train",
        command,
        "--config",
        path.to_str().unwrap(),
        "--print-config",
    ];
    args.extend_from_slice(extra);
    let output = agent_rl(&args);
    assert!(
        output.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

const GRPO: &str = "[model]\ntiny = true\n[data]\ntoy = 8\n[grpo]\nmax_steps = 10\n\
                    max_completion_length = 24\n";

#[test]
fn set_overrides_run_file_keys_and_refuses_unknown_ones() {
    let dir = tempfile::tempdir().unwrap();
    let path = run_file(dir.path(), GRPO);
    let config = resolved(
        "grpo",
        &path,
        &[
            "--set",
            "grpo.max_steps=3",
            "--set",
            "grpo.sampling.temperature=0.5",
            "--set",
            "run.dir=elsewhere",
        ],
    );
    assert_eq!(config["grpo"]["max_steps"], 3);
    assert_eq!(config["grpo"]["sampling"]["temperature"], 0.5);
    assert_eq!(config["run"]["dir"], "elsewhere");
    let text = config.to_string();
    assert!(
        text.contains("\"adam_beta1\":0.9,"),
        "f32 at f32 precision: {text}"
    );

    for (assignment, wanted) in [
        ("grpo.max_stepz=3", "unknown field `max_stepz`"),
        ("grpo.max_steps=three", "grpo.max_steps=three"),
        ("grpo.max_steps", "expected KEY=VALUE"),
    ] {
        let output = agent_rl(&[
            "train",
            "grpo",
            "--config",
            path.to_str().unwrap(),
            "--print-config",
            "--set",
            assignment,
        ]);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{assignment}");
        assert!(
            stderr.contains(wanted) && stderr.contains("--set"),
            "{assignment}: {stderr}"
        );
    }
}

/// `[grpo] max_completion_length` alone sets the rollouts' `max_new_tokens`, and the other way
/// round; both set and different is still refused.
#[test]
fn the_completion_budget_comes_from_either_key() {
    let dir = tempfile::tempdir().unwrap();
    let config = resolved("grpo", &run_file(dir.path(), GRPO), &[]);
    assert_eq!(config["grpo"]["sampling"]["max_new_tokens"], 24);
    let only_tokens =
        "[model]\ntiny = true\n[data]\ntoy = 8\n[grpo.sampling]\nmax_new_tokens = 40\n";
    let config = resolved("grpo", &run_file(dir.path(), only_tokens), &[]);
    assert_eq!(config["grpo"]["max_completion_length"], 40);
    let output = agent_rl(&[
        "train",
        "grpo",
        "--config",
        run_file(dir.path(), GRPO).to_str().unwrap(),
        "--print-config",
        "--set",
        "grpo.sampling.max_new_tokens=8",
    ]);
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("max_new_tokens"));
}

/// `--print-config | head -1`: the reader goes away; the command still ends quietly with 0.
#[test]
fn print_config_into_a_closed_pipe_is_not_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = run_file(dir.path(), GRPO);
    let mut child = Command::new(env!("CARGO_BIN_EXE_agent-rl"))
        .args(["train", "grpo", "--config", path.to_str().unwrap()])
        .arg("--print-config")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    let status = child.wait().unwrap();
    assert!(status.success() && stderr.is_empty(), "{status}: {stderr}");
}

#[test]
fn each_trainer_names_its_own_example_and_whether_it_resumes() {
    for (command, example, resumes) in [
        ("sft", "sft_toy.toml", false),
        ("rm", "rm_toy.toml", false),
        ("ppo", "ppo_toy.toml", true),
        ("grpo", "grpo_toy.toml", true),
    ] {
        let output = agent_rl(&["train", command, "--help"]);
        let help = String::from_utf8_lossy(&output.stdout);
        assert!(help.contains(example), "{command}: {help}");
        assert_eq!(
            !help.contains("Not supported"),
            resumes,
            "{command}: {help}"
        );
        let example = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("examples/configs")
            .join(example);
        assert!(example.is_file(), "{}", example.display());
    }
    let help = agent_rl(&["chat-template", "--help"]);
    assert!(String::from_utf8_lossy(&help.stdout).contains("--messages <MESSAGES>"));
    let missing = agent_rl(&["chat-template", "--model", "."]);
    assert!(String::from_utf8_lossy(&missing.stderr).contains("--messages"));
}
