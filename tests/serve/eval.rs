//! The evaluators against `agent-rl serve` as a process: `eval bfcl --endpoint` reports what
//! `eval bfcl --model` reports on the same model, `eval tau run --user-endpoint` plays the
//! customer through the server, and `--model` with `--endpoint` is refused.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

use super::common::fixture_model;

/// Kills the server process when the test ends, whatever happens.
pub struct Server {
    child: std::process::Child,
    /// Base URL up to `/v1`.
    pub url: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `agent-rl serve --model DIR` on a free loopback port, serving it as `tiny`.
pub fn serve(model: &Path) -> Server {
    let mut child = Command::new(env!("CARGO_BIN_EXE_agent-rl"))
        .args(["serve", "--model", model.to_str().unwrap(), "--port", "0"])
        .args(["--served-model-name", "tiny"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line.trim().rsplit(' ').next().unwrap().to_owned();
    let server = Server { child, url };
    assert!(server.url.starts_with("http://127.0.0.1:"), "{line}");
    server
}

/// Runs the CLI; its stdout, or a failure with its stderr.
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

/// The committed tiny snapshot with a 2048-token context (its rotary embedding has no
/// trained length; the byte-level fixture tokenizer needs room for BFCL's tool schemas).
fn long_context_model(dir: &Path) -> PathBuf {
    let model = dir.join("tiny");
    std::fs::create_dir(&model).unwrap();
    for entry in std::fs::read_dir(fixture_model()).unwrap() {
        let path = entry.unwrap().path();
        std::fs::copy(&path, model.join(path.file_name().unwrap())).unwrap();
    }
    let mut config: Value =
        serde_json::from_str(&std::fs::read_to_string(model.join("config.json")).unwrap()).unwrap();
    config["max_position_embeddings"] = 2048.into();
    std::fs::write(model.join("config.json"), config.to_string()).unwrap();
    model
}

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("agent-rl-eval/tests/fixtures")
}

#[test]
fn eval_bfcl_on_an_endpoint_reports_what_the_local_model_reports() {
    let dir = tempfile::tempdir().unwrap();
    let model = long_context_model(dir.path());
    let server = serve(&model);
    let data = fixtures().join("bfcl/data");
    let bfcl = |source: &[&str], name: &str| {
        let report = dir.path().join(format!("{name}.json"));
        let results = dir.path().join(format!("{name}.jsonl"));
        let mut args = vec!["eval", "bfcl", "--data", data.to_str().unwrap()];
        args.extend_from_slice(source);
        // One request per generation, locally and on the server: no padding to tell apart.
        args.extend([
            "--batch-size",
            "1",
            "--limit",
            "1",
            "--max-new-tokens",
            "12",
            "--report",
            report.to_str().unwrap(),
            "--save-results",
            results.to_str().unwrap(),
        ]);
        let table = run(&args);
        let report: Value =
            serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
        (table, report, std::fs::read_to_string(&results).unwrap())
    };
    let model = model.to_str().unwrap();
    let local = bfcl(&["--model", model], "local");
    let remote = bfcl(
        &[
            "--endpoint",
            &server.url,
            "--endpoint-model",
            "tiny",
            "--tokenizer",
            model,
        ],
        "remote",
    );
    assert!(
        !local.1["categories"].as_array().unwrap().is_empty(),
        "{}",
        local.0
    );
    assert_eq!(
        remote, local,
        "with the tokenizer: same table, report and outputs"
    );
    // Without the tokenizer the server's text is used as it comes: the verdicts still agree.
    let plain = bfcl(
        &["--endpoint", &server.url, "--endpoint-model", "tiny"],
        "plain",
    );
    assert_eq!(plain.1, local.1);
}

/// The tiny agent's prompt overflows its 256 positions, so each episode fails after the
/// customer's opening turn — which the server generates, greedily equal to the local customer;
/// with the agent on the endpoint too (`--endpoint`), the server refuses the agent's prompt and
/// the episode fails the same way. Every episode failing, the command exits non-zero.
#[test]
fn eval_tau_run_with_the_customer_on_an_endpoint() {
    let dir = tempfile::tempdir().unwrap();
    let server = serve(&fixture_model());
    let data = fixtures().join("tau");
    let model = fixture_model();
    let tau = |agent: &[&str], customer: &[&str], name: &str| {
        let report = dir.path().join(format!("{name}.json"));
        let mut args = vec!["eval", "tau", "run", "--data", data.to_str().unwrap()];
        args.extend(["--domain", "airline"]);
        args.extend_from_slice(agent);
        args.extend(["--task-ids", "0", "--max-new-tokens", "6"]);
        args.extend([
            "--user-temperature",
            "0",
            "--report",
            report.to_str().unwrap(),
        ]);
        args.extend_from_slice(customer);
        let output = Command::new(env!("CARGO_BIN_EXE_agent-rl"))
            .args(&args)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{args:?}");
        assert!(
            stderr.contains("every one of the 1 episodes failed")
                && stderr.contains("task 0 trial 0: "),
            "{args:?}: {stderr}"
        );
        let report: Value =
            serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
        report
    };
    let local_agent = ["--model", model.to_str().unwrap()];
    let local = tau(&local_agent, &[], "local");
    let remote = tau(
        &local_agent,
        &[
            "--user-endpoint",
            &server.url,
            "--user-model",
            "tiny",
            "--tokenizer",
            model.to_str().unwrap(),
        ],
        "remote",
    );
    let both = tau(
        &[
            "--endpoint",
            &server.url,
            "--endpoint-model",
            "tiny",
            "--tokenizer",
            model.to_str().unwrap(),
        ],
        &[],
        "both",
    );
    for report in [&remote, &both] {
        let episodes = report["episodes"].as_array().unwrap();
        assert_eq!(episodes.len(), 1);
        let messages = episodes[0]["messages"].as_array().unwrap();
        assert_eq!(messages.len(), 2, "system + the customer's opening");
        assert_eq!(
            messages[1], local["episodes"][0]["messages"][1],
            "the served customer's greedy opening equals the local one"
        );
    }
    assert!(both["episodes"][0]["error"].is_string(), "{both}");
}

#[test]
fn model_and_endpoint_together_are_refused() {
    for args in [
        &[
            "eval",
            "bfcl",
            "--data",
            ".",
            "--model",
            "m",
            "--endpoint",
            "http://x/v1",
        ][..],
        &[
            "eval",
            "swe",
            "run",
            "--data",
            ".",
            "--out",
            "o",
            "--model",
            "m",
            "--endpoint",
            "http://x/v1",
        ],
    ] {
        let output = Command::new(env!("CARGO_BIN_EXE_agent-rl"))
            .args(args)
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains("cannot be used with"), "{stderr}");
    }
    let output = Command::new(env!("CARGO_BIN_EXE_agent-rl"))
        .args(["eval", "tau", "run", "--data", ".", "--domain", "retail"])
        .args(["--model", "m", "--user-endpoint", "http://x/v1"])
        .output()
        .unwrap();
    assert_eq!(
        output.status.code(),
        Some(2),
        "--user-endpoint needs --user-model"
    );
}
