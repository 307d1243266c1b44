//! The test run's report: the grader reads test results from a file its own plugin writes, not
//! from the output of the run (which anything in the tree can print).
//!
//! The plugins (`data/swe_report/`) are written to a fresh directory outside the tree that the
//! sandbox keeps read-only, and put first on `PYTHONPATH`: for pytest, `-p
//! agent_rl_pytest_report` (loaded before any conftest); for `unittest`, `-m unittest` becomes
//! `-m agent_rl_unittest_report` (the same runner with a recording result). Each writes one line
//! per test in the words of the log format the spec names, then `#finished <exit status>`; the
//! report path (outside the tree, in the run's scratch directory) is passed in
//! `AGENT_RL_TEST_REPORT`, which the plugin removes from the environment.
//!
//! A report counts only when it ends with the `#finished` line and that status is the exit code
//! of the process: a run that printed a passing log and exited early has no report.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use tempfile::TempDir;

use super::graded_tree::{shell_quote, shell_words};
use super::log_parser::{LogParser, TestStatus};

const PYTEST_PLUGIN: (&str, &str) = (
    "agent_rl_pytest_report",
    include_str!("../../data/swe_report/agent_rl_pytest_report.py"),
);
const UNITTEST_RUNNER: (&str, &str) = (
    "agent_rl_unittest_report",
    include_str!("../../data/swe_report/agent_rl_unittest_report.py"),
);
const FINISHED: &str = "#finished ";

/// A prepared test run: its shell script and where its report will be.
#[derive(Debug)]
pub(super) struct ReportedRun {
    /// The script to run in the tree (sets the environment, then `exec`s the test command).
    pub(super) script: String,
    /// Where the plugin writes the report.
    pub(super) report: PathBuf,
    /// Holds the plugin; removed on drop.
    _plugins: TempDir,
}

/// The script that runs `test_command` (already expanded, test files appended) in `tree` with
/// the report plugin for `parser`; the report goes to `scratch`.
///
/// # Errors
/// The plugin directory cannot be written, or a `unittest` command does not run
/// `-m unittest` (the message says so).
pub(super) fn prepare(
    test_command: &[String],
    parser: LogParser,
    tree: &Path,
    scratch: &Path,
) -> Result<ReportedRun, String> {
    let plugins = tempfile::Builder::new()
        .prefix("agent-rl-swe-report-")
        .tempdir()
        .map_err(|error| format!("plugin directory: {error}"))?;
    let mut argv = test_command.to_vec();
    let (module, source) = match parser {
        LogParser::Pytest => {
            argv.extend(["-p".into(), PYTEST_PLUGIN.0.into()]);
            PYTEST_PLUGIN
        }
        LogParser::Unittest => {
            let at = argv
                .windows(2)
                .position(|pair| pair[0] == "-m" && pair[1] == "unittest")
                .ok_or("a unittest spec's test_command must run `-m unittest`")?;
            argv[at + 1] = UNITTEST_RUNNER.0.into();
            UNITTEST_RUNNER
        }
    };
    let file = plugins.path().join(format!("{module}.py"));
    std::fs::write(&file, source).map_err(|error| format!("{}: {error}", file.display()))?;
    let report = scratch.join("agent-rl-test-report.txt");
    let path_list = format!("{}:{}", plugins.path().display(), tree.display());
    let script = format!(
        "export PYTHONPATH={} PYTHONDONTWRITEBYTECODE=1 TMPDIR={} AGENT_RL_TEST_REPORT={}; exec {}",
        shell_quote(&path_list),
        shell_quote(&scratch.display().to_string()),
        shell_quote(&report.display().to_string()),
        shell_words(&argv)
    );
    Ok(ReportedRun {
        script,
        report,
        _plugins: plugins,
    })
}

/// The test statuses of a finished run's report, checked against the run's `exit_code`.
///
/// # Errors
/// Why the report does not count: missing, unfinished, or its status not the exit code.
pub(super) fn read(
    report: &Path,
    parser: LogParser,
    exit_code: Option<i32>,
) -> Result<BTreeMap<String, TestStatus>, String> {
    let text = std::fs::read_to_string(report)
        .map_err(|_| "the test run wrote no report (it ended before the runner did)".to_string())?;
    let mut lines: Vec<&str> = text.lines().collect();
    let finished = lines
        .pop()
        .and_then(|line| line.strip_prefix(FINISHED))
        .and_then(|status| status.trim().parse::<i32>().ok())
        .ok_or("the test report is unfinished (the run ended before the runner did)")?;
    if Some(finished) != exit_code {
        return Err(format!(
            "the test runner finished with status {finished} but the process exited with {}",
            exit_code.map_or("a signal".to_string(), |code| code.to_string())
        ));
    }
    if lines.iter().any(|line| line.starts_with(FINISHED)) {
        return Err("the test report was finished twice".to_string());
    }
    Ok(parser.parse(&lines.join("\n")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_report_counts_only_when_finished_with_the_exit_code() {
        let dir = tempfile::tempdir().expect("dir");
        let report = dir.path().join("r.txt");
        let parser = LogParser::Pytest;
        assert!(read(&report, parser, Some(0)).is_err(), "missing");
        std::fs::write(&report, "PASSED t.py::a\n").expect("write");
        assert!(read(&report, parser, Some(0)).is_err(), "unfinished");
        std::fs::write(&report, "PASSED t.py::a\nFAILED t.py::b\n#finished 1\n").expect("write");
        assert!(
            read(&report, parser, Some(0)).is_err(),
            "status is not the exit code"
        );
        let statuses = read(&report, parser, Some(1)).expect("counts");
        assert_eq!(statuses.get("t.py::b"), Some(&TestStatus::Failed));
        assert_eq!(statuses.len(), 2);
    }

    #[test]
    fn the_unittest_command_is_rewritten_and_others_refused() {
        let dir = tempfile::tempdir().expect("dir");
        let argv: Vec<String> = ["python3", "-m", "unittest", "-v", "t.py"]
            .map(String::from)
            .to_vec();
        let run = prepare(&argv, LogParser::Unittest, dir.path(), dir.path()).expect("prepared");
        assert!(
            run.script
                .contains("'-m' 'agent_rl_unittest_report' '-v' 't.py'")
        );
        let other = ["python3", "t.py"].map(String::from).to_vec();
        assert!(prepare(&other, LogParser::Unittest, dir.path(), dir.path()).is_err());
        let pytest = ["python3", "-m", "pytest", "t.py"]
            .map(String::from)
            .to_vec();
        let run = prepare(&pytest, LogParser::Pytest, dir.path(), dir.path()).expect("prepared");
        assert!(run.script.contains("'-p' 'agent_rl_pytest_report'"));
    }
}
