//! `eval swe grade` from another working directory with relative `--data` and the default
//! relative `--cache-dir`: the gold patch resolves, patches faking a pass through
//! `sitecustomize.py` or `conftest.py` are `tampered`, and a run where every instance failed for
//! its environment exits non-zero.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::{Value, json};

const GOLD: &str = "diff --git a/one.py b/one.py\n--- a/one.py\n+++ b/one.py\n@@ -1,2 +1,2 @@\n \
                    def double(x):\n-    return x + x + 1\n+    return x + x\n";

/// A new file `path` holding a passing `unittest -v` log printer.
fn fake_pass(path: &str) -> String {
    let lines = [
        "import os, sys",
        "sys.stderr.write('test_double (test_one.T) ... ok\\n\\nRan 1 test\\n\\nOK\\n')",
        "os._exit(0)",
    ];
    let body: String = lines.iter().map(|line| format!("+{line}\n")).collect();
    format!(
        "diff --git a/{path} b/{path}\nnew file mode 100644\n--- /dev/null\n+++ b/{path}\n\
         @@ -0,0 +1,{} @@\n{body}",
        lines.len()
    )
}

/// `<dir>/data/swebench` with the one-file repository `example/one` and its instance, and
/// `<dir>/specs.json` running `unittest` with the interpreter `python`.
fn write_data(dir: &Path, python: &str) {
    let repo = dir.join("data/swebench/repos/example__one");
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
    let test_patch = "diff --git a/test_one.py b/test_one.py\nnew file mode 100644\n\
                      --- /dev/null\n+++ b/test_one.py\n@@ -0,0 +1,6 @@\n+import unittest\n\
                      +from one import double\n+\n+class T(unittest.TestCase):\n\
                      +    def test_double(self):\n+        self.assertEqual(double(2), 4)\n";
    let instance = json!({
        "repo": "example/one", "instance_id": "example__one-1", "base_commit": base,
        "patch": GOLD, "test_patch": test_patch, "problem_statement": "double(2) is 5",
        "version": "1.0", "FAIL_TO_PASS": "[\"test_double (test_one.T)\"]", "PASS_TO_PASS": "[]"
    });
    std::fs::write(
        dir.join("data/swebench/verified_mini50.jsonl"),
        format!("{instance}\n"),
    )
    .unwrap();
    let specs = json!({"specs": [{"repo": "example/one", "versions": ["1.0"],
        "python": [python], "test_command": ["{python}", "-m", "unittest", "-v"],
        "log_parser": "unittest"}]});
    std::fs::write(dir.join("specs.json"), specs.to_string()).unwrap();
}

/// Grades `patch` from `cwd` with paths relative to it; the output and the report.
fn grade(cwd: &Path, name: &str, patch: &str) -> (Output, Value) {
    let preds = cwd.join(format!("{name}.jsonl"));
    let line = json!({"instance_id": "example__one-1", "model_name_or_path": name,
        "model_patch": patch});
    std::fs::write(&preds, format!("{line}\n")).unwrap();
    let report = format!("{name}.report.json");
    let output = Command::new(env!("CARGO_BIN_EXE_agent-rl"))
        .current_dir(cwd)
        .env_remove("AGENT_RL_DATA")
        .args([
            "eval",
            "swe",
            "grade",
            "--data",
            "data",
            "--env-specs",
            "specs.json",
        ])
        .args([
            "--predictions",
            &format!("{name}.jsonl"),
            "--report",
            &report,
        ])
        .output()
        .unwrap();
    let report = std::fs::read_to_string(cwd.join(&report))
        .map(|text| serde_json::from_str(&text).unwrap())
        .unwrap_or(Value::Null);
    (output, report)
}

#[test]
fn eval_swe_grade_with_relative_paths_resolves_gold_and_refuses_faked_passes() {
    let dir = tempfile::tempdir().unwrap();
    write_data(dir.path(), "system");
    let (output, report) = grade(dir.path(), "gold", GOLD);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert_eq!(report["instances"][0]["status"], "resolved", "{report}");
    for hook in ["sitecustomize.py", "conftest.py"] {
        let (output, report) = grade(dir.path(), "fake", &fake_pass(hook));
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "{hook}: {stderr}");
        assert_eq!(
            report["instances"][0]["resolved"], false,
            "{hook}: {report}"
        );
        assert_eq!(
            report["instances"][0]["status"], "tampered",
            "{hook}: {report}"
        );
    }
}

#[test]
fn eval_swe_grade_exits_non_zero_when_every_instance_lacks_its_environment() {
    let dir = tempfile::tempdir().unwrap();
    write_data(dir.path(), "0.1");
    let (output, report) = grade(dir.path(), "gold", GOLD);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "{stderr}");
    assert!(stderr.contains("every graded instance"), "{stderr}");
    assert!(stderr.contains("python 0.1"), "{stderr}");
    assert_eq!(
        report["instances"][0]["status"], "install_failed",
        "{report}"
    );
}
