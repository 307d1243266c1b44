//! The local grader: decides "resolved" as the official harness does, without Docker — a fresh
//! checkout, the spec's cached venv, the model patch (with the harness's fallbacks), the test
//! files reset and the test patch applied, the test files run, the log parsed per test, and the
//! verdict rules of [`super::verdict`].

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::command::{cap_text, git, run_limited};
use super::env_spec::{EnvSpec, spec_for};
use super::instance::SweInstance;
use super::patch::{apply_model_patch, apply_patch, patched_files};
use super::test_temp::test_temp_dir;
use super::venv::prepare_python;
use super::verdict::{TestOutcomes, exit_code_contradicts, judge};
use super::workspace::{RepoSource, Workspace};

/// Test-patch files with these endings are data, not test modules to run.
const NON_TEST_ENDINGS: [&str; 11] = [
    ".json", ".png", "csv", ".txt", ".md", ".jpg", ".jpeg", ".pkl", ".yml", ".yaml", ".toml",
];

/// How an instance's grading ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GradeStatus {
    /// Every FAIL_TO_PASS and PASS_TO_PASS test succeeded.
    Resolved,
    /// The tests ran; some did not meet their expectation.
    Unresolved,
    /// The model patch did not apply.
    PatchFailed,
    /// The test environment could not be built.
    InstallFailed,
    /// The test run passed its time limit.
    Timeout,
    /// The prediction has no patch.
    EmptyPatch,
    /// Anything else that left no usable test log (checkout, test patch, unreadable log).
    Error,
}

/// The result of grading one prediction.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InstanceGrade {
    /// The instance.
    pub instance_id: String,
    /// True only for [`GradeStatus::Resolved`].
    pub resolved: bool,
    /// How grading ended.
    pub status: GradeStatus,
    /// FAIL_TO_PASS outcomes (empty unless the tests ran).
    pub fail_to_pass: TestOutcomes,
    /// PASS_TO_PASS outcomes (empty unless the tests ran).
    pub pass_to_pass: TestOutcomes,
    /// Why it was not graded normally (patch, install, log errors).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// Seconds the test command ran.
    pub test_secs: f64,
}

impl InstanceGrade {
    fn early(instance_id: &str, status: GradeStatus, detail: Option<String>) -> Self {
        Self {
            instance_id: instance_id.to_string(),
            resolved: false,
            status,
            fail_to_pass: TestOutcomes::default(),
            pass_to_pass: TestOutcomes::default(),
            detail,
            test_secs: 0.0,
        }
    }
}

/// Settings of the [`LocalGrader`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GradeConfig {
    /// Where the venvs are cached.
    pub cache_dir: PathBuf,
    /// Limit of one test run in seconds. Default 1800 (the harness's default).
    pub test_timeout_secs: u64,
    /// Limit of one venv install in seconds. Default 1800.
    pub install_timeout_secs: u64,
    /// When set, each instance's test log is written to `<log_dir>/<instance_id>.log`.
    pub log_dir: Option<PathBuf>,
}

impl GradeConfig {
    /// Defaults with venvs cached under `cache_dir`.
    pub fn new(cache_dir: impl Into<PathBuf>) -> Self {
        Self {
            cache_dir: cache_dir.into(),
            test_timeout_secs: 1800,
            install_timeout_secs: 1800,
            log_dir: None,
        }
    }
}

/// Grades predictions locally (see the module docs).
#[derive(Debug, Clone)]
pub struct LocalGrader {
    specs: Vec<EnvSpec>,
    config: GradeConfig,
}

impl LocalGrader {
    /// A grader over the environment `specs` (e.g. [`super::env_spec::builtin_specs`]).
    pub fn new(specs: Vec<EnvSpec>, config: GradeConfig) -> Self {
        Self { specs, config }
    }

    /// Grades `model_patch` for `instance`, on a fresh checkout of `source`.
    ///
    /// Never fails: every problem is a [`GradeStatus`] with a `detail`.
    pub fn grade(
        &self,
        instance: &SweInstance,
        source: &RepoSource,
        model_patch: &str,
    ) -> InstanceGrade {
        let id = instance.instance_id.as_str();
        if model_patch.trim().is_empty() {
            return InstanceGrade::early(id, GradeStatus::EmptyPatch, None);
        }
        let spec = match spec_for(&self.specs, &instance.repo, &instance.version) {
            Ok(spec) => spec,
            Err(error) => {
                return InstanceGrade::early(id, GradeStatus::Error, Some(error.to_string()));
            }
        };
        let workspace = match Workspace::checkout(source) {
            Ok(workspace) => workspace,
            Err(error) => {
                return InstanceGrade::early(id, GradeStatus::Error, Some(error.to_string()));
            }
        };
        let install_timeout = Duration::from_secs(self.config.install_timeout_secs);
        let python = match prepare_python(
            spec,
            &self.config.cache_dir,
            workspace.root(),
            install_timeout,
        ) {
            Ok(python) => python,
            Err(error) => {
                let detail = Some(error.to_string());
                return InstanceGrade::early(id, GradeStatus::InstallFailed, detail);
            }
        };
        if let Err(error) = apply_model_patch(&workspace, model_patch) {
            return InstanceGrade::early(id, GradeStatus::PatchFailed, Some(error.to_string()));
        }
        self.run_tests(instance, spec, &workspace, &python)
    }

    fn run_tests(
        &self,
        instance: &SweInstance,
        spec: &EnvSpec,
        workspace: &Workspace,
        python: &Path,
    ) -> InstanceGrade {
        let id = instance.instance_id.as_str();
        let files: Vec<String> = patched_files(&instance.test_patch)
            .into_iter()
            .filter(|file| !NON_TEST_ENDINGS.iter().any(|end| file.ends_with(end)))
            .collect();
        // The test files as they were at the base commit (the model may have edited them).
        for file in &files {
            let _ = git(workspace.root(), &["checkout", "-q", "HEAD", "--", file]);
        }
        if let Err(error) = apply_patch(workspace, "test.diff", &instance.test_patch) {
            let detail = Some(format!("test patch: {error}"));
            return InstanceGrade::early(id, GradeStatus::Error, detail);
        }
        let python_text = python.display().to_string();
        let mut argv = spec
            .test_command
            .iter()
            .map(|arg| arg.replace("{python}", &python_text));
        let Some(program) = argv.next() else {
            let detail = Some("the spec's test_command is empty".to_string());
            return InstanceGrade::early(id, GradeStatus::Error, detail);
        };
        // Kept until the run ends; removed with its files afterwards.
        let temp = match test_temp_dir(workspace.root(), &self.config.cache_dir) {
            Ok(temp) => temp,
            Err(error) => {
                let detail = Some(format!("temporary directory for the tests: {error}"));
                return InstanceGrade::early(id, GradeStatus::Error, detail);
            }
        };
        let mut command = Command::new(program);
        command
            .args(argv)
            .args(&files)
            .current_dir(workspace.root())
            .env("PYTHONPATH", workspace.root())
            .env("PYTHONDONTWRITEBYTECODE", "1");
        if let Some(temp) = &temp {
            command.env("TMPDIR", temp.path());
        }
        let timeout = Duration::from_secs(self.config.test_timeout_secs);
        let out = match run_limited(command, timeout, 16 << 20) {
            Ok(out) => out,
            Err(error) => {
                return InstanceGrade::early(id, GradeStatus::Error, Some(error.to_string()));
            }
        };
        if let Some(dir) = &self.config.log_dir {
            let _ = std::fs::create_dir_all(dir);
            let _ = std::fs::write(dir.join(format!("{id}.log")), &out.output);
        }
        let test_secs = out.elapsed.as_secs_f64();
        if out.timed_out {
            let detail = Some(format!("tests ran past {}s", self.config.test_timeout_secs));
            let mut grade = InstanceGrade::early(id, GradeStatus::Timeout, detail);
            grade.test_secs = test_secs;
            return grade;
        }
        let statuses = spec.log_parser.parse(&out.output);
        let unusable = if statuses.is_empty() {
            Some("no test results in the log")
        } else if exit_code_contradicts(&statuses, out.exit_code.unwrap_or(-1)) {
            Some("the test command failed but no test is marked failed")
        } else {
            None
        };
        if let Some(reason) = unusable {
            let detail = Some(format!("{reason}: {}", cap_text(&out.output, 1500)));
            let mut grade = InstanceGrade::early(id, GradeStatus::Error, detail);
            grade.test_secs = test_secs;
            return grade;
        }
        let verdict = judge(&statuses, &instance.fail_to_pass, &instance.pass_to_pass);
        InstanceGrade {
            instance_id: id.to_string(),
            resolved: verdict.resolved,
            status: if verdict.resolved {
                GradeStatus::Resolved
            } else {
                GradeStatus::Unresolved
            },
            fail_to_pass: verdict.fail_to_pass,
            pass_to_pass: verdict.pass_to_pass,
            detail: None,
            test_secs,
        }
    }
}
