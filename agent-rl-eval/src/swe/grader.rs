//! The local grader: decides "resolved" as the official harness does, without Docker — a fresh
//! checkout, the spec's cached venv (built before the patch is applied: the only step that runs
//! unsandboxed, with the network), the model patch (with the harness's fallbacks), the test
//! files reset and the test patch applied, the test files run, the harness's own test report
//! read per test, and the verdict rules of [`super::verdict`].
//!
//! Integrity: a patch that touches test infrastructure ([`super::tamper`]) is graded
//! [`GradeStatus::Tampered`], checked on the paths the patch names before it is applied and on
//! what actually changed in the tree after; every command on the patched tree runs in the
//! agent's sandbox ([`super::graded_tree`]); results come from the report the harness's plugin
//! writes outside the tree (`test_report`), never from the run's output.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::command::cap_text;
use super::env_spec::{EnvSpec, spec_for};
use super::graded_tree::GradedTree;
use super::instance::SweInstance;
use super::patch::{apply_model_patch, apply_patch, patched_files};
use super::sandbox::SandboxMode;
use super::tamper::{Tampering, check_patch, check_path};
use super::test_report;
use super::test_temp::test_temp_dir;
use super::tree_snapshot::TreeSnapshot;
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
    /// The patch touches test infrastructure (start-up hooks, conftest, runner config, the
    /// test patch's files, git metadata; see [`super::tamper`]); never resolved.
    Tampered,
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
    /// The sandbox of every command on the patched tree. Default [`SandboxMode::Auto`] (as the
    /// agent's); with `Off`, or `Auto` where user namespaces are unavailable, the patch's code
    /// runs on the host and only the tampering checks stand.
    #[serde(default)]
    pub sandbox: SandboxMode,
}

impl GradeConfig {
    /// Defaults with venvs cached under `cache_dir`.
    pub fn new(cache_dir: impl Into<PathBuf>) -> Self {
        Self {
            cache_dir: cache_dir.into(),
            test_timeout_secs: 1800,
            install_timeout_secs: 1800,
            log_dir: None,
            sandbox: SandboxMode::Auto,
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
    /// A grader over the environment `specs` (e.g. [`super::env_spec::builtin_specs`]); the
    /// config's relative paths are made absolute against the current directory now, since
    /// installs and tests run in other directories.
    pub fn new(specs: Vec<EnvSpec>, mut config: GradeConfig) -> Self {
        config.cache_dir = absolute(&config.cache_dir);
        config.log_dir = config.log_dir.as_deref().map(absolute);
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
        let source = RepoSource {
            repository: absolute(&source.repository),
            revision: source.revision.clone(),
        };
        let workspace = match Workspace::checkout(&source) {
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
        let test_files = patched_files(&instance.test_patch);
        let root = workspace.root().to_path_buf();
        let in_checkout = |path: &str| root.join(path).exists();
        if let Some(tampering) = check_patch(model_patch, &test_files, &in_checkout) {
            return tampered(id, &tampering);
        }
        let tree = GradedTree::new(workspace.root(), self.config.sandbox);
        let snapshot = |when: &str| {
            TreeSnapshot::take(workspace.root()).map_err(|error| {
                let detail = Some(format!("listing the tree {when} the patch: {error}"));
                InstanceGrade::early(id, GradeStatus::Error, detail)
            })
        };
        let before = match snapshot("before") {
            Ok(before) => before,
            Err(grade) => return grade,
        };
        if let Err(error) = apply_model_patch(&tree, &workspace.scratch(), model_patch) {
            return InstanceGrade::early(id, GradeStatus::PatchFailed, Some(error.to_string()));
        }
        let after = match snapshot("after") {
            Ok(after) => after,
            Err(grade) => return grade,
        };
        let existed = |path: &str| before.contains(path);
        let changed = before.changed(&after);
        if let Some(tampering) = changed
            .iter()
            .find_map(|path| check_path(path, &test_files, &existed))
        {
            return tampered(id, &tampering);
        }
        self.run_tests(instance, spec, &workspace, &tree, &python)
    }

    fn run_tests(
        &self,
        instance: &SweInstance,
        spec: &EnvSpec,
        workspace: &Workspace,
        tree: &GradedTree,
        python: &Path,
    ) -> InstanceGrade {
        let id = instance.instance_id.as_str();
        let files: Vec<String> = patched_files(&instance.test_patch)
            .into_iter()
            .filter(|file| !NON_TEST_ENDINGS.iter().any(|end| file.ends_with(end)))
            .collect();
        // The test files as they were at the base commit, then the test patch.
        let scratch = workspace.scratch();
        if let Err(error) = apply_patch(tree, &scratch, "test.diff", &instance.test_patch, &files) {
            let detail = Some(format!("test patch: {error}"));
            return InstanceGrade::early(id, GradeStatus::Error, detail);
        }
        let python_text = python.display().to_string();
        let mut argv: Vec<String> = spec
            .test_command
            .iter()
            .map(|arg| arg.replace("{python}", &python_text))
            .collect();
        if argv.is_empty() {
            let detail = Some("the spec's test_command is empty".to_string());
            return InstanceGrade::early(id, GradeStatus::Error, detail);
        }
        argv.extend(files.iter().cloned());
        // Kept until the run ends; removed with its files afterwards.
        let temp = match test_temp_dir(workspace.root(), &self.config.cache_dir) {
            Ok(temp) => temp,
            Err(error) => {
                let detail = Some(format!("temporary directory for the tests: {error}"));
                return InstanceGrade::early(id, GradeStatus::Error, detail);
            }
        };
        let test_scratch = temp
            .as_ref()
            .map_or(scratch, |temp| temp.path().to_path_buf());
        let run = match test_report::prepare(&argv, spec.log_parser, tree.root(), &test_scratch) {
            Ok(run) => run,
            Err(reason) => return InstanceGrade::early(id, GradeStatus::Error, Some(reason)),
        };
        let timeout = Duration::from_secs(self.config.test_timeout_secs);
        let out = match tree.run(&run.script, &test_scratch, timeout, 16 << 20) {
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
        let failed = |status, detail: String| {
            let mut grade = InstanceGrade::early(id, status, Some(detail));
            grade.test_secs = test_secs;
            grade
        };
        if out.timed_out {
            let detail = format!("tests ran past {}s", self.config.test_timeout_secs);
            return failed(GradeStatus::Timeout, detail);
        }
        let statuses = match test_report::read(&run.report, spec.log_parser, out.exit_code) {
            Ok(statuses) => statuses,
            Err(reason) => {
                let detail = format!("{reason}: {}", cap_text(&out.output, 1500));
                return failed(GradeStatus::Error, detail);
            }
        };
        let unusable = if statuses.is_empty() {
            Some("no test results in the report")
        } else if exit_code_contradicts(&statuses, out.exit_code.unwrap_or(-1)) {
            Some("the test command failed but no test is marked failed")
        } else {
            None
        };
        if let Some(reason) = unusable {
            let detail = format!("{reason}: {}", cap_text(&out.output, 1500));
            return failed(GradeStatus::Error, detail);
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

/// The grade of a patch that touches test infrastructure.
fn tampered(id: &str, tampering: &Tampering) -> InstanceGrade {
    InstanceGrade::early(id, GradeStatus::Tampered, Some(tampering.to_string()))
}

/// `path` made absolute against the current directory (unchanged when that fails).
fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_config_paths_are_made_absolute() {
        let mut config = GradeConfig::new("swe-envs");
        config.log_dir = Some(PathBuf::from("logs"));
        let grader = LocalGrader::new(Vec::new(), config);
        let cwd = std::env::current_dir().expect("working directory");
        assert_eq!(grader.config.cache_dir, cwd.join("swe-envs"));
        assert_eq!(grader.config.log_dir, Some(cwd.join("logs")));
    }
}
