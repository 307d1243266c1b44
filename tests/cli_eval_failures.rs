//! The evaluators' failure policy: an item that fails (here a prompt too long for the model) is
//! reported with its id on stderr and in the report, the other items' results are kept, and the
//! command exits 0 unless `--strict` is given.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};

/// The tiny fixture model with a 4,096-position context, so that short prompts fit and a
/// padded one does not.
fn long_context_model(dir: &Path) -> PathBuf {
    let source = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("agent-rl-core/tests/fixtures/qwen2_tiny/tied_f32");
    let model = dir.join("model");
    std::fs::create_dir_all(&model).unwrap();
    for file in std::fs::read_dir(&source).unwrap() {
        let file = file.unwrap().path();
        std::fs::copy(&file, model.join(file.file_name().unwrap())).unwrap();
    }
    let mut config: Value =
        serde_json::from_str(&std::fs::read_to_string(model.join("config.json")).unwrap()).unwrap();
    config["max_position_embeddings"] = json!(4096);
    std::fs::write(model.join("config.json"), config.to_string()).unwrap();
    model
}

/// Text far longer than the context.
fn padding() -> String {
    "please read all of this carefully ".repeat(400)
}

/// Copies `file` (JSON Lines) from `from` to `to`, adding `extra` lines.
fn with_lines(from: &Path, to: &Path, extra: &[Value]) {
    let mut text = std::fs::read_to_string(from).unwrap();
    for line in extra {
        text.push_str(&format!("{line}\n"));
    }
    std::fs::write(to, text).unwrap();
}

fn agent_rl(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_agent-rl"))
        .args(args)
        .env_remove("AGENT_RL_DATA")
        .output()
        .unwrap()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn eval_bfcl_reports_an_overlong_entry_and_keeps_the_others() {
    let dir = tempfile::tempdir().unwrap();
    let model = long_context_model(dir.path());
    let fixture =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("agent-rl-eval/tests/fixtures/bfcl/data");
    let data = dir.path().join("bfcl");
    for folder in ["", "possible_answer"] {
        std::fs::create_dir_all(data.join(folder)).unwrap();
        for file in std::fs::read_dir(fixture.join(folder)).unwrap() {
            let file = file.unwrap().path();
            if file.is_file() {
                std::fs::copy(&file, data.join(folder).join(file.file_name().unwrap())).unwrap();
            }
        }
    }
    let file = "BFCL_v4_simple_python.json";
    let entry: Value = serde_json::from_str(
        std::fs::read_to_string(fixture.join(file))
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    let mut long = entry.clone();
    long["id"] = json!("simple_python_2");
    long["question"][0][0]["content"] = json!(padding());
    let mut answer: Value = serde_json::from_str(
        std::fs::read_to_string(fixture.join("possible_answer").join(file))
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    answer["id"] = json!("simple_python_2");
    with_lines(&fixture.join(file), &data.join(file), &[long]);
    with_lines(
        &fixture.join("possible_answer").join(file),
        &data.join("possible_answer").join(file),
        &[answer],
    );
    let report = dir.path().join("report.json");
    let args = [
        "eval",
        "bfcl",
        "--data",
        data.to_str().unwrap(),
        "--model",
        model.to_str().unwrap(),
        "--categories",
        "simple_python",
        "--max-new-tokens",
        "4",
        "--report",
        report.to_str().unwrap(),
    ];
    let output = agent_rl(&args);
    let text = stderr(&output);
    assert!(output.status.success(), "{text}");
    assert!(
        text.contains("1 of 3 entries failed") && text.contains("simple_python_2: "),
        "{text}"
    );
    assert!(
        text.contains("exceed the model's context of 4096 tokens"),
        "{text}"
    );
    assert!(
        text.contains("entries 3/3 ("),
        "progress lines off a terminal: {text}"
    );
    let table = String::from_utf8_lossy(&output.stdout);
    assert!(table.contains("| simple_python | 3 |"), "{table}");
    assert!(table.contains("| multi-turn overall | n/a |"), "{table}");
    let report: Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    let failures = report["failures"].as_array().unwrap();
    assert_eq!(failures.len(), 1);
    assert_eq!(failures[0]["id"], "simple_python_2");
    assert_eq!(report["categories"][0]["total"], 3);

    let strict = agent_rl(&[&args[..], &["--strict"]].concat());
    assert!(!strict.status.success());
    assert!(stderr(&strict).contains("1 of 3 entries failed (--strict)"));
}

#[test]
fn eval_bfcl_lists_the_valid_categories_on_a_typo() {
    let data =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("agent-rl-eval/tests/fixtures/bfcl/data");
    let output = agent_rl(&[
        "eval",
        "bfcl",
        "--data",
        data.to_str().unwrap(),
        "--model",
        "/nonexistent",
        "--categories",
        "simple_pyton",
    ]);
    let text = stderr(&output);
    assert!(!output.status.success());
    assert!(
        text.contains("unknown category `simple_pyton`")
            && text.contains("simple_python, simple_java"),
        "{text}"
    );
}

#[test]
fn eval_tau_run_reports_a_failed_episode_and_keeps_the_others() {
    let dir = tempfile::tempdir().unwrap();
    let model = long_context_model(dir.path());
    let fixture =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("agent-rl-eval/tests/fixtures/tau");
    let data = dir.path().join("tau");
    std::fs::create_dir_all(data.join("airline")).unwrap();
    std::fs::copy(
        fixture.join("user_simulator_prompt.txt"),
        data.join("user_simulator_prompt.txt"),
    )
    .unwrap();
    for file in std::fs::read_dir(fixture.join("airline")).unwrap() {
        let file = file.unwrap().path();
        std::fs::copy(&file, data.join("airline").join(file.file_name().unwrap())).unwrap();
    }
    // A second task whose instruction is too long for the simulated customer's prompt.
    let tasks_file = data.join("airline/tasks_test.json");
    let mut tasks: Value =
        serde_json::from_str(&std::fs::read_to_string(&tasks_file).unwrap()).unwrap();
    let mut long = tasks[0].clone();
    long["instruction"] = json!(padding());
    tasks.as_array_mut().unwrap().push(long);
    std::fs::write(&tasks_file, tasks.to_string()).unwrap();
    let report = dir.path().join("report.json");
    let args = [
        "eval",
        "tau",
        "run",
        "--data",
        data.to_str().unwrap(),
        "--domain",
        "airline",
        "--model",
        model.to_str().unwrap(),
        "--max-steps",
        "1",
        "--max-new-tokens",
        "4",
        "--report",
        report.to_str().unwrap(),
    ];
    let output = agent_rl(&args);
    let text = stderr(&output);
    assert!(output.status.success(), "{text}");
    assert!(
        text.contains("1 of 2 episodes failed") && text.contains("task 1 trial 0: "),
        "{text}"
    );
    let report: Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    let episodes = report["episodes"].as_array().unwrap();
    assert_eq!(episodes.len(), 2);
    let kept = episodes.iter().find(|e| e["task_id"] == 0).unwrap();
    assert!(kept["error"].is_null(), "{kept}");
    assert_eq!(kept["steps"], 1);

    let strict = agent_rl(&[&args[..], &["--strict"]].concat());
    assert!(!strict.status.success());
    assert!(stderr(&strict).contains("1 of 2 episodes failed (--strict)"));
}
