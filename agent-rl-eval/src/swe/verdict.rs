//! The harness's rules for "resolved", as pure functions over a parsed test log.
//!
//! A FAIL_TO_PASS test succeeds when it PASSED or XFAILed; a PASS_TO_PASS test also when it was
//! SKIPPED; a test absent from the log fails. Resolved = every test of both lists succeeded
//! (an empty list counts as all succeeded). A test run whose exit code is non-zero while no test
//! is FAILED or ERROR is not trusted (the harness rejects such logs against faked lines).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::log_parser::TestStatus;

/// Successes and failures of one list of tests.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct TestOutcomes {
    /// Tests that met their expectation.
    pub success: Vec<String>,
    /// Tests that did not (or are absent from the log).
    pub failure: Vec<String>,
}

impl TestOutcomes {
    /// True when no test failed.
    pub fn all_passed(&self) -> bool {
        self.failure.is_empty()
    }
}

/// The verdict on one test log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Verdict {
    /// Every FAIL_TO_PASS and PASS_TO_PASS test succeeded.
    pub resolved: bool,
    /// FAIL_TO_PASS outcomes.
    pub fail_to_pass: TestOutcomes,
    /// PASS_TO_PASS outcomes.
    pub pass_to_pass: TestOutcomes,
}

/// Applies the rules to `statuses` (see the module docs).
pub fn judge(
    statuses: &BTreeMap<String, TestStatus>,
    fail_to_pass: &[String],
    pass_to_pass: &[String],
) -> Verdict {
    let f2p = outcomes(statuses, fail_to_pass, false);
    let p2p = outcomes(statuses, pass_to_pass, true);
    Verdict {
        resolved: f2p.all_passed() && p2p.all_passed(),
        fail_to_pass: f2p,
        pass_to_pass: p2p,
    }
}

/// True when the log cannot be trusted: the test command failed but no test is marked failed.
pub fn exit_code_contradicts(statuses: &BTreeMap<String, TestStatus>, exit_code: i32) -> bool {
    exit_code != 0
        && !statuses
            .values()
            .any(|s| matches!(s, TestStatus::Failed | TestStatus::Error))
}

fn outcomes(
    statuses: &BTreeMap<String, TestStatus>,
    tests: &[String],
    skipped_ok: bool,
) -> TestOutcomes {
    let mut out = TestOutcomes::default();
    for test in tests {
        let ok = match statuses.get(test) {
            Some(TestStatus::Passed | TestStatus::Xfail) => true,
            Some(TestStatus::Skipped) => skipped_ok,
            Some(TestStatus::Failed | TestStatus::Error) | None => false,
        };
        if ok {
            out.success.push(test.clone());
        } else {
            out.failure.push(test.clone());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(entries: &[(&str, TestStatus)]) -> BTreeMap<String, TestStatus> {
        entries
            .iter()
            .map(|(k, v)| ((*k).to_string(), *v))
            .collect()
    }

    #[test]
    fn rules_per_list() {
        let statuses = map(&[
            ("f", TestStatus::Passed),
            ("x", TestStatus::Xfail),
            ("s", TestStatus::Skipped),
            ("e", TestStatus::Error),
        ]);
        let ids = |v: &[&str]| v.iter().map(|s| (*s).to_string()).collect::<Vec<_>>();
        let verdict = judge(&statuses, &ids(&["f", "x"]), &ids(&["s"]));
        assert!(verdict.resolved);
        let verdict = judge(&statuses, &ids(&["s"]), &[]);
        assert!(
            !verdict.resolved,
            "a skipped FAIL_TO_PASS test is a failure"
        );
        let verdict = judge(&statuses, &ids(&["f"]), &ids(&["e", "missing"]));
        assert!(!verdict.resolved);
        assert_eq!(verdict.pass_to_pass.failure, ["e", "missing"]);
        assert!(judge(&statuses, &[], &[]).resolved);
    }

    #[test]
    fn exit_code_must_agree_with_the_log() {
        let passing = map(&[("f", TestStatus::Passed)]);
        assert!(exit_code_contradicts(&passing, 1));
        assert!(!exit_code_contradicts(&passing, 0));
        assert!(!exit_code_contradicts(
            &map(&[("f", TestStatus::Failed)]),
            1
        ));
    }
}
