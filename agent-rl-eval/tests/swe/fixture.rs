//! A small SWE task family built in the test: a git repository `calc` whose `mean` divides by
//! `len(values) - 1` (a real bug), a test patch that adds a failing `unittest` test for it, an
//! environment spec that runs the standard library's `unittest` with the system `python3`, and a
//! scripted [`Policy`] that plays a fixed list of tool calls.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use agent_rl_core::{
    ChatRequest, Completion, CoreError, FinishReason, ParsedOutput, Policy, SamplingConfig,
    ToolCall,
};
use agent_rl_eval::swe::{
    EnvSpec, GradeConfig, LocalGrader, LogParser, RepoSource, SweInstance, SweTask,
};
use serde_json::{Value, json};

pub const STATS: &str = "\"\"\"Small statistics helpers.\"\"\"\n\n\n\
def mean(values):\n    \"\"\"Arithmetic mean of a non-empty sequence.\"\"\"\n    total = 0\n    \
for value in values:\n        total += value\n    return total / (len(values) - 1)\n\n\n\
def median(values):\n    \"\"\"Middle value (mean of the two middle ones for even sizes).\"\"\"\n    \
ordered = sorted(values)\n    middle = len(ordered) // 2\n    if len(ordered) % 2:\n        \
return ordered[middle]\n    return (ordered[middle - 1] + ordered[middle]) / 2\n";

const TESTS_BEFORE: &str = "import unittest\n\nfrom calc.stats import median\n\n\n\
class StatsTest(unittest.TestCase):\n    def test_median_odd(self):\n        \
self.assertEqual(median([3, 1, 2]), 2)\n\n    def test_median_even(self):\n        \
self.assertEqual(median([4, 1, 3, 2]), 2.5)\n";

const TESTS_AFTER: &str = "import unittest\n\nfrom calc.stats import mean, median\n\n\n\
class StatsTest(unittest.TestCase):\n    def test_median_odd(self):\n        \
self.assertEqual(median([3, 1, 2]), 2)\n\n    def test_median_even(self):\n        \
self.assertEqual(median([4, 1, 3, 2]), 2.5)\n\n    def test_mean(self):\n        \
self.assertEqual(mean([1, 2, 3, 4]), 2.5)\n        self.assertEqual(mean([5]), 5)\n";

/// The buggy line and its right and wrong fixes.
pub const BUG: &str = "return total / (len(values) - 1)";
pub const FIX: &str = "return total / len(values)";
pub const WRONG_FIX: &str = "return total // len(values)";

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .current_dir(dir)
        .args(["-c", "user.email=t@t.invalid", "-c", "user.name=t"])
        .args(args)
        .output()
        .expect("git runs");
    assert!(out.status.success(), "git {args:?}: {out:?}");
    String::from_utf8(out.stdout).expect("utf-8")
}

/// The repository, the instance and its source, in `dir`.
pub fn calc_task(dir: &Path) -> SweTask {
    let repo = dir.join("calc-repo");
    for (path, text) in [
        ("calc/__init__.py", ""),
        ("calc/stats.py", STATS),
        ("tests/__init__.py", ""),
        ("tests/test_stats.py", TESTS_BEFORE),
        ("README.md", "calc: statistics helpers\n"),
    ] {
        let file = repo.join(path);
        std::fs::create_dir_all(file.parent().expect("parent")).expect("mkdir");
        std::fs::write(file, text).expect("write");
    }
    git(&repo, &["init", "-q", "-b", "main"]);
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-q", "-m", "base"]);
    let base = git(&repo, &["rev-parse", "HEAD"]).trim().to_string();
    std::fs::write(repo.join("tests/test_stats.py"), TESTS_AFTER).expect("write");
    let test_patch = git(&repo, &["diff"]);
    git(&repo, &["checkout", "-q", "--", "."]);
    std::fs::write(repo.join("calc/stats.py"), STATS.replace(BUG, FIX)).expect("write");
    let gold = git(&repo, &["diff"]);
    git(&repo, &["checkout", "-q", "--", "."]);
    let instance = SweInstance {
        repo: "example/calc".into(),
        instance_id: "example__calc-1".into(),
        base_commit: base.clone(),
        patch: gold,
        test_patch,
        problem_statement: "mean() gives the wrong answer: mean([1, 2, 3, 4]) returns \
                            3.333 instead of 2.5, and mean([5]) raises ZeroDivisionError."
            .into(),
        hints_text: String::new(),
        version: "1.0".into(),
        fail_to_pass: vec!["test_mean (tests.test_stats.StatsTest)".into()],
        pass_to_pass: vec![
            "test_median_even (tests.test_stats.StatsTest)".into(),
            "test_median_odd (tests.test_stats.StatsTest)".into(),
        ],
        environment_setup_commit: base.clone(),
    };
    SweTask {
        instance,
        source: RepoSource {
            repository: repo,
            revision: base,
        },
    }
}

/// The grader for the family: system `python3 -m unittest -v`, no venv.
pub fn calc_grader(cache: PathBuf) -> Arc<LocalGrader> {
    let spec = EnvSpec {
        repo: "example/calc".into(),
        versions: vec!["1.0".into()],
        python: vec!["system".into()],
        pip_packages: Vec::new(),
        constraints: Vec::new(),
        install_extras: None,
        test_command: vec![
            "{python}".into(),
            "-m".into(),
            "unittest".into(),
            "-v".into(),
        ],
        log_parser: LogParser::Unittest,
    };
    let mut config = GradeConfig::new(cache);
    config.test_timeout_secs = 120;
    Arc::new(LocalGrader::new(vec![spec], config))
}

/// A call of `name` with `arguments`.
pub fn call(name: &str, arguments: Value) -> ParsedOutput {
    ParsedOutput {
        content: String::new(),
        tool_calls: vec![ToolCall::new(name, arguments)],
        malformed: Vec::new(),
    }
}

/// Plays `script`, one turn per request; once it is exhausted, views the README forever.
pub struct ScriptedPolicy {
    script: Vec<ParsedOutput>,
    next: usize,
    /// The requests it received.
    pub requests: Vec<ChatRequest>,
}

impl ScriptedPolicy {
    pub fn new(script: Vec<ParsedOutput>) -> Self {
        Self {
            script,
            next: 0,
            requests: Vec::new(),
        }
    }
}

impl Policy for ScriptedPolicy {
    fn generate(
        &mut self,
        requests: &[ChatRequest],
        _sampling: &SamplingConfig,
    ) -> Result<Vec<Completion>, CoreError> {
        self.requests.extend_from_slice(requests);
        Ok(requests
            .iter()
            .map(|_| {
                let parsed = self
                    .script
                    .get(self.next)
                    .cloned()
                    .unwrap_or_else(|| call("view", json!({"path": "README.md"})));
                self.next += 1;
                Completion {
                    token_ids: vec![1; 10],
                    logprobs: vec![0.0; 10],
                    text: String::new(),
                    parsed,
                    finish_reason: FinishReason::Stop,
                }
            })
            .collect())
    }
}
