//! The CLI's JSON output agrees with transformers' golden values on the tiny fixtures.

use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("agent-rl-core/tests/fixtures/qwen2_tiny")
}

fn run(args: &[&str]) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_agent-rl"))
        .args(args)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

fn expected() -> Value {
    serde_json::from_str(&std::fs::read_to_string(fixtures().join("expected.json")).unwrap())
        .unwrap()
}

#[test]
fn chat_template_prints_the_exact_rendering_and_ids() {
    let conversations: Vec<Value> = serde_json::from_str(
        &std::fs::read_to_string(fixtures().join("conversations.json")).unwrap(),
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let model = fixtures().join("tied_f32");
    for case in expected()["templates"].as_array().unwrap() {
        let conversation = conversations
            .iter()
            .find(|c| c["name"] == case["name"])
            .unwrap();
        let messages = dir.path().join("messages.json");
        std::fs::write(&messages, conversation["messages"].to_string()).unwrap();
        let mut args = vec![
            "chat-template",
            "--model",
            model.to_str().unwrap(),
            "--messages",
            messages.to_str().unwrap(),
        ];
        let tools = dir.path().join("tools.json");
        if let Some(t) = conversation.get("tools") {
            std::fs::write(&tools, t.to_string()).unwrap();
            args.extend(["--tools", tools.to_str().unwrap()]);
        }
        if case["add_generation_prompt"].as_bool().unwrap() {
            args.push("--add-generation-prompt");
        }
        assert_eq!(run(&args), case["text"].as_str().unwrap());
        args.push("--ids");
        let ids: Vec<u64> = run(&args)
            .trim()
            .split(',')
            .map(|s| s.parse().unwrap())
            .collect();
        let want: Vec<u64> = case["ids"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap())
            .collect();
        assert_eq!(ids, want);
    }
}

#[test]
fn logprobs_json_matches_transformers_logits() {
    let expected = expected();
    let ids: Vec<u64> = expected["prompt_ids"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    let ids_text = ids.iter().map(u64::to_string).collect::<Vec<_>>().join(",");
    let model = fixtures().join("untied_f32");
    let out: Value = serde_json::from_str(&run(&[
        "logprobs",
        "--model",
        model.to_str().unwrap(),
        "--ids",
        &ids_text,
        "--json",
    ]))
    .unwrap();
    let bytes = std::fs::read(fixtures().join("expected_untied_f32.safetensors")).unwrap();
    let file = safetensors::SafeTensors::deserialize(&bytes).unwrap();
    let logits: Vec<f32> = file
        .tensor("logits")
        .unwrap()
        .data()
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect();
    let positions = out["positions"].as_array().unwrap();
    assert_eq!(positions.len(), ids.len());
    let vocab = logits.len() / ids.len();
    for (t, position) in positions.iter().enumerate() {
        let row = &logits[t * vocab..(t + 1) * vocab];
        let max = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let lse = row.iter().map(|v| (v - max).exp()).sum::<f32>().ln() + max;
        assert_eq!(position["token_id"].as_u64().unwrap(), ids[t]);
        assert_eq!(
            position["argmax"].as_u64().unwrap() as usize,
            row.iter().position(|&v| v == max).unwrap()
        );
        assert!((position["logsumexp"].as_f64().unwrap() as f32 - lse).abs() < 1e-4);
        match ids.get(t + 1) {
            Some(&next) => {
                let want = row[next as usize] - lse;
                assert!(
                    (position["next_token_logprob"].as_f64().unwrap() as f32 - want).abs() < 1e-4
                );
            }
            None => assert!(position["next_token_logprob"].is_null()),
        }
    }
}

#[test]
fn generate_json_reproduces_transformers_greedy_ids() {
    let expected = expected();
    let row = &expected["batch_rows"][1];
    let ids_text = row
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.to_string())
        .collect::<Vec<_>>()
        .join(",");
    let model = fixtures().join("tied_f32");
    let out: Value = serde_json::from_str(&run(&[
        "generate",
        "--model",
        model.to_str().unwrap(),
        "--prompt-ids",
        &ids_text,
        "--greedy",
        "--ignore-eos",
        "--max-new-tokens",
        "12",
        "--json",
    ]))
    .unwrap();
    assert_eq!(
        out["token_ids"],
        expected["models"]["tied_f32"]["greedy_batch"][1]
    );
    assert_eq!(out["logprobs"].as_array().unwrap().len(), 12);
    assert_eq!(out["finish_reason"], "length");
    assert!(out["text"].is_string() && out["tool_calls"].is_array());
}

#[test]
fn bad_model_dir_fails_with_the_file_named() {
    let output = Command::new(env!("CARGO_BIN_EXE_agent-rl"))
        .args(["logprobs", "--model", "/nonexistent/model", "--ids", "1,2"])
        .output()
        .unwrap();
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("/nonexistent/model"));
}

#[test]
fn eval_bfcl_scores_a_result_file() {
    let data =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("agent-rl-eval/tests/fixtures/bfcl/data");
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("results.jsonl");
    let lines = [
        r#"{"id": "simple_python_0", "result": [{"walk_duration": {"distance_km": 3, "speed_kmh": 5}}]}"#,
        r#"{"id": "simple_python_1", "result": "[book_table(restaurant='Chez Anna', date='April 1, 2024')]"}"#,
        r#"{"id": "parallel_0", "result": "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Rome\"}}\n</tool_call>\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>"}"#,
        r#"{"id": "irrelevance_0", "result": "It was Leonardo da Vinci."}"#,
        r#"{"id": "multiple_0", "result": [{"math_square": "{\"x\": 7}"}]}"#,
    ];
    std::fs::write(&results, lines.join("\n") + "\n").unwrap();
    let verdicts = dir.path().join("verdicts.jsonl");
    let report = dir.path().join("report.json");
    let table = run(&[
        "eval",
        "bfcl",
        "--data",
        data.to_str().unwrap(),
        "--results",
        results.to_str().unwrap(),
        "--underscore-to-dot",
        "--verdicts",
        verdicts.to_str().unwrap(),
        "--report",
        report.to_str().unwrap(),
    ]);
    assert!(table.contains("| simple_python | 2 | 50.00 |"), "{table}");
    let verdicts: Vec<Value> = std::fs::read_to_string(&verdicts)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(
        Value::Array(verdicts),
        serde_json::json!([
            {"id": "simple_python_0", "valid": true, "error_type": null},
            {"id": "simple_python_1", "valid": false, "error_type": "simple_function_checker:missing_required"},
            {"id": "parallel_0", "valid": true, "error_type": null},
            {"id": "irrelevance_0", "valid": true, "error_type": null},
            {"id": "multiple_0", "valid": true, "error_type": null},
        ])
    );
    let report: Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert_eq!(report["version"], "v4");
    assert!((report["end_to_end_success"].as_f64().unwrap() - 0.8).abs() < 1e-12);
}

/// A `--long-context-data` file that cannot be read, or is not bfcl-eval's `long_context.py`,
/// stops `eval bfcl` with the flag and the file named.
#[test]
fn eval_bfcl_names_a_bad_long_context_file() {
    let data =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("agent-rl-eval/tests/fixtures/bfcl/data");
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("results.jsonl");
    std::fs::write(&results, "").unwrap();
    let not_it = dir.path().join("long_context.py");
    std::fs::write(&not_it, "WATCH_LIST_EXTENSION = ['A']\n").unwrap();
    for (file, wanted) in [
        (PathBuf::from("/nonexistent/long_context.py"), "cannot read"),
        (not_it.clone(), "_EXTENSION` is missing"),
    ] {
        let output = Command::new(env!("CARGO_BIN_EXE_agent-rl"))
            .args(["eval", "bfcl", "--data", data.to_str().unwrap()])
            .args(["--results", results.to_str().unwrap()])
            .args(["--verdicts", dir.path().join("v.jsonl").to_str().unwrap()])
            .args(["--long-context-data", file.to_str().unwrap()])
            .output()
            .unwrap();
        assert!(!output.status.success());
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains("--long-context-data")
                && stderr.contains(file.to_str().unwrap())
                && stderr.contains(wanted),
            "{stderr}"
        );
    }
}

/// `eval tau replay` on the hand-written fixture (or on `$AGENT_RL_DATA/tau_bench`, retail dev):
/// the exact output shape, every ground-truth trajectory rewarded 1.0, the terminate tool's
/// observation `null`.
#[test]
fn eval_tau_replay_writes_observations_and_rewards() {
    let (data, split) = match std::env::var_os("AGENT_RL_DATA") {
        Some(root) => (PathBuf::from(root).join("tau_bench"), "dev"),
        None => (
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("agent-rl-eval/tests/fixtures/tau"),
            "test",
        ),
    };
    assert!(
        data.is_dir(),
        "missing τ-bench data folder {}",
        data.display()
    );
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("replay.json");
    run(&[
        "eval",
        "tau",
        "replay",
        "--data",
        data.to_str().unwrap(),
        "--domain",
        "retail",
        "--split",
        split,
        "--out",
        out.to_str().unwrap(),
    ]);
    let report: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let tasks = report["tasks"].as_array().unwrap();
    assert!(!tasks.is_empty());
    for (index, task) in tasks.iter().enumerate() {
        let keys: Vec<&String> = task.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["task_index", "reward", "steps"]);
        assert_eq!(task["task_index"], index);
        assert_eq!(task["reward"], 1.0);
        for step in task["steps"].as_array().unwrap() {
            let keys: Vec<&String> = step.as_object().unwrap().keys().collect();
            assert_eq!(keys, ["name", "kwargs", "observation"]);
            let skipped = step["name"] == "transfer_to_human_agents";
            assert_eq!(step["observation"].is_null(), skipped);
        }
    }
}

/// `eval tau run` wiring with the tiny model as agent and customer: the customer's opening turn
/// is generated from the fixture prompt; the agent's prompt (wiki + tools) exceeds the tiny
/// model's 256 positions, which must fail those episodes (reward 0) with their ids on stderr;
/// the report is still written, and the command fails since nothing was evaluated.
#[test]
fn eval_tau_run_records_failed_episodes_and_reports() {
    let data = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("agent-rl-eval/tests/fixtures/tau");
    let dir = tempfile::tempdir().unwrap();
    let report_path = dir.path().join("report.json");
    let output = Command::new(env!("CARGO_BIN_EXE_agent-rl"))
        .args([
            "eval",
            "tau",
            "run",
            "--data",
            data.to_str().unwrap(),
            "--domain",
            "airline",
            "--model",
            fixtures().join("tied_f32").to_str().unwrap(),
            "--trials",
            "2",
            "--max-new-tokens",
            "4",
            "--report",
            report_path.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    assert!(
        stderr.contains("every one of the 2 episodes failed")
            && stderr.contains("task 0 trial 1: "),
        "{stderr}"
    );
    let markdown = String::from_utf8_lossy(&output.stdout);
    assert!(markdown.contains("| pass^2 | 0.0000 |"), "{markdown}");
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(&report_path).unwrap()).unwrap();
    assert_eq!(report["failed_episodes"], 2);
    assert_eq!(report["pass_hat_k"], serde_json::json!([0.0, 0.0]));
    for episode in report["episodes"].as_array().unwrap() {
        let messages = episode["messages"].as_array().unwrap();
        assert_eq!(
            messages.len(),
            2,
            "system + the simulated customer's opening"
        );
        assert!(
            episode["error"]
                .as_str()
                .unwrap()
                .contains("exceed the model's context of 256 tokens")
        );
    }
}

/// `eval swe run` and `eval swe grade` wiring on a one-file repository with a bug: the tiny
/// model's prompt overflows its 256 positions, so its episode fails with an empty patch (the
/// run goes on); grading that and the gold patch with a stdlib `unittest` spec gives
/// `empty_patch` and `resolved`.
#[test]
fn eval_swe_run_and_grade_write_predictions_and_the_report() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let repo = data.join("swebench/repos/example__one");
    std::fs::create_dir_all(&repo).unwrap();
    std::fs::write(
        repo.join("one.py"),
        "def double(x):\n    return x + x + 1\n",
    )
    .unwrap();
    let git = |args: &[&str]| {
        let out = Command::new("git")
            .current_dir(&repo)
            .args(["-c", "user.email=t@t.invalid", "-c", "user.name=t"])
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    git(&["init", "-q"]);
    git(&["add", "-A"]);
    git(&["commit", "-q", "-m", "base"]);
    let base = git(&["rev-parse", "HEAD"]).trim().to_string();
    let gold = "diff --git a/one.py b/one.py\n--- a/one.py\n+++ b/one.py\n@@ -1,2 +1,2 @@\n \
                def double(x):\n-    return x + x + 1\n+    return x + x\n";
    let test_patch = "diff --git a/test_one.py b/test_one.py\nnew file mode 100644\n\
                      --- /dev/null\n+++ b/test_one.py\n@@ -0,0 +1,6 @@\n+import unittest\n\
                      +from one import double\n+\n+class T(unittest.TestCase):\n\
                      +    def test_double(self):\n+        self.assertEqual(double(2), 4)\n";
    let instance = serde_json::json!({
        "repo": "example/one", "instance_id": "example__one-1", "base_commit": base,
        "patch": gold, "test_patch": test_patch, "problem_statement": "double(2) is 5",
        "version": "1.0", "FAIL_TO_PASS": "[\"test_double (test_one.T)\"]", "PASS_TO_PASS": "[]"
    });
    std::fs::write(
        data.join("swebench/verified_mini50.jsonl"),
        format!("{instance}\n"),
    )
    .unwrap();
    let specs = dir.path().join("specs.json");
    std::fs::write(
        &specs,
        serde_json::json!({"specs": [{"repo": "example/one", "versions": ["1.0"],
            "python": ["system"], "test_command": ["{python}", "-m", "unittest", "-v"],
            "log_parser": "unittest"}]})
        .to_string(),
    )
    .unwrap();
    let preds = dir.path().join("preds.jsonl");
    let (data_arg, preds_arg) = (data.to_str().unwrap(), preds.to_str().unwrap());
    let model = fixtures().join("tied_f32");
    let line = run(&[
        "eval",
        "swe",
        "run",
        "--model",
        model.to_str().unwrap(),
        "--data",
        data_arg,
        "--instances",
        "example__one-1",
        "--out",
        preds_arg,
        "--max-new-tokens",
        "4",
    ]);
    assert!(line.contains("1 instances, 0 non-empty patches"), "{line}");
    let written = std::fs::read_to_string(&preds).unwrap();
    let prediction: Value = serde_json::from_str(written.trim()).unwrap();
    assert_eq!(prediction["instance_id"], "example__one-1");
    assert_eq!(prediction["model_name_or_path"], "tied_f32");
    assert_eq!(prediction["model_patch"], "");
    let episodes = std::fs::read_to_string(dir.path().join("preds.episodes.jsonl")).unwrap();
    let episode: Value = serde_json::from_str(episodes.trim()).unwrap();
    assert_eq!(episode["finish_reason"], "policy_error", "{episode}");

    let grade = |predictions: &str| -> Value {
        let report = dir.path().join("report.json");
        let markdown = run(&[
            "eval",
            "swe",
            "grade",
            "--predictions",
            predictions,
            "--data",
            data_arg,
            "--report",
            report.to_str().unwrap(),
            "--env-specs",
            specs.to_str().unwrap(),
            "--cache-dir",
            dir.path().join("envs").to_str().unwrap(),
        ]);
        assert!(markdown.contains("| instances | 1 |"), "{markdown}");
        serde_json::from_str(&std::fs::read_to_string(report).unwrap()).unwrap()
    };
    let report = grade(preds_arg);
    assert_eq!(report["resolved_rate"], 0.0);
    assert_eq!(report["instances"][0]["status"], "empty_patch");
    assert_eq!(report["instances"][0]["finish_reason"], "policy_error");
    let gold_preds = dir.path().join("gold.jsonl");
    let gold_line = serde_json::json!({"instance_id": "example__one-1",
        "model_name_or_path": "gold", "model_patch": gold});
    std::fs::write(&gold_preds, format!("{gold_line}\n")).unwrap();
    let report = grade(gold_preds.to_str().unwrap());
    assert_eq!(report["resolved_rate"], 1.0, "{report}");
    assert_eq!(report["instances"][0]["resolved"], true);
    assert_eq!(report["instances"][0]["status"], "resolved");
}
