//! Test logs → per-test status, read as the official harness reads them.
//!
//! - [`LogParser::Pytest`] (the harness's parser for sphinx and other pytest repos): colour codes
//!   and control characters are removed; a line that starts with a status word gives
//!   `<status> <id>` (for `FAILED`, `" - "` is first replaced by a space), so the id is the
//!   second whitespace-separated token — which is why some upstream ids are cut at a space
//!   inside a parameter bracket; a line that ends with a status word gives `<id> <status>`.
//! - [`LogParser::Unittest`]: `python -m unittest -v` lines `name (module.Class) ... ok`, ids
//!   written `name (module.Class)` as SWE-bench writes Django's (Python 3.11+ prints
//!   `module.Class.name` inside the brackets; the trailing `.name` is dropped).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// A test's outcome in a log.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum TestStatus {
    /// Passed.
    Passed,
    /// Failed an assertion.
    Failed,
    /// Skipped.
    Skipped,
    /// Errored (setup, collection, exception).
    Error,
    /// Expected failure.
    Xfail,
}

impl TestStatus {
    const ALL: [(&'static str, TestStatus); 5] = [
        ("FAILED", TestStatus::Failed),
        ("PASSED", TestStatus::Passed),
        ("SKIPPED", TestStatus::Skipped),
        ("ERROR", TestStatus::Error),
        ("XFAIL", TestStatus::Xfail),
    ];

    fn from_word(word: &str) -> Option<Self> {
        Self::ALL
            .iter()
            .find(|(name, _)| *name == word)
            .map(|&(_, status)| status)
    }
}

/// Which log format a repository's test runner writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LogParser {
    /// pytest with `-rA` (short summary of every test).
    Pytest,
    /// `python -m unittest -v`.
    Unittest,
}

impl LogParser {
    /// Parses `log` into test id → status (a later line for the same id wins).
    pub fn parse(self, log: &str) -> BTreeMap<String, TestStatus> {
        match self {
            Self::Pytest => parse_pytest(log),
            Self::Unittest => parse_unittest(log),
        }
    }
}

fn clean(line: &str) -> String {
    let no_colour = strip_colour_codes(line);
    no_colour
        .chars()
        .filter(|&c| !('\u{1}'..='\u{1f}').contains(&c))
        .collect()
}

/// Removes `[<digits>m` sequences (the ESC itself is a control character removed afterwards).
fn strip_colour_codes(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(at) = rest.find('[') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let digits = after.chars().take_while(char::is_ascii_digit).count();
        if digits > 0 && after[digits..].starts_with('m') {
            rest = &after[digits + 1..];
        } else {
            out.push('[');
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

fn parse_pytest(log: &str) -> BTreeMap<String, TestStatus> {
    let mut map = BTreeMap::new();
    for raw in log.split('\n') {
        let mut line = clean(raw);
        let leading = TestStatus::ALL
            .iter()
            .find(|(word, _)| line.starts_with(word));
        if let Some(&(_, status)) = leading {
            if status == TestStatus::Failed {
                line = line.replace(" - ", " ");
            }
            let mut tokens = line.split_whitespace();
            let first = tokens.next().unwrap_or_default();
            if let Some(id) = tokens.next() {
                // `FAILEDx id` still counts as FAILED upstream: the status is the prefix word.
                let status = TestStatus::from_word(first).unwrap_or(status);
                map.insert(id.to_string(), status);
            }
        } else if let Some(&(_, status)) = TestStatus::ALL
            .iter()
            .find(|(word, _)| line.ends_with(word))
        {
            let tokens: Vec<&str> = line.split_whitespace().collect();
            if tokens.len() >= 2 {
                let status = TestStatus::from_word(tokens[1]).unwrap_or(status);
                map.insert(tokens[0].to_string(), status);
            }
        }
    }
    map
}

fn parse_unittest(log: &str) -> BTreeMap<String, TestStatus> {
    let mut map = BTreeMap::new();
    for line in log.lines() {
        let Some((head, outcome)) = line.split_once(" ... ") else {
            continue;
        };
        let Some((name, rest)) = head.trim().split_once(" (") else {
            continue;
        };
        let Some(inner) = rest.strip_suffix(')') else {
            continue;
        };
        let class = inner
            .strip_suffix(name)
            .and_then(|c| c.strip_suffix('.'))
            .unwrap_or(inner);
        let outcome = outcome.trim();
        let status = if outcome == "ok" || outcome == "unexpected success" {
            TestStatus::Passed
        } else if outcome.starts_with("FAIL") {
            TestStatus::Failed
        } else if outcome.starts_with("ERROR") {
            TestStatus::Error
        } else if outcome.starts_with("skipped") {
            TestStatus::Skipped
        } else if outcome == "expected failure" {
            TestStatus::Xfail
        } else {
            continue;
        };
        map.insert(format!("{name} ({class})"), status);
    }
    map
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pytest_summary_lines() {
        let log = "\u{1b}[32mPASSED\u{1b}[0m tests/a.py::test_x\n\
                   FAILED tests/a.py::test_y - AssertionError: boom\n\
                   FAILED tests/a.py::test_p[(1, 2)] - x\n\
                   ERROR tests/a.py::test_z\nSKIPPED [1] tests/a.py:3: why\n\
                   tests/b.py::test_old PASSED\n";
        let map = LogParser::Pytest.parse(log);
        assert_eq!(map["tests/a.py::test_x"], TestStatus::Passed);
        assert_eq!(map["tests/a.py::test_y"], TestStatus::Failed);
        assert_eq!(map["tests/a.py::test_p[(1,"], TestStatus::Failed);
        assert_eq!(map["tests/a.py::test_z"], TestStatus::Error);
        assert_eq!(map["[1]"], TestStatus::Skipped);
        assert_eq!(map["tests/b.py::test_old"], TestStatus::Passed);
    }

    #[test]
    fn unittest_verbose_lines_old_and_new_python() {
        let log = "test_add (test_calc.CalcTest) ... ok\n\
                   test_sub (test_calc.CalcTest.test_sub) ... FAIL\n\
                   test_div (test_calc.CalcTest) ... ERROR\n\
                   test_big (test_calc.CalcTest) ... skipped 'slow'\nnoise ... ok?\n";
        let map = LogParser::Unittest.parse(log);
        assert_eq!(map["test_add (test_calc.CalcTest)"], TestStatus::Passed);
        assert_eq!(map["test_sub (test_calc.CalcTest)"], TestStatus::Failed);
        assert_eq!(map["test_div (test_calc.CalcTest)"], TestStatus::Error);
        assert_eq!(map["test_big (test_calc.CalcTest)"], TestStatus::Skipped);
        assert_eq!(map.len(), 4);
    }
}
