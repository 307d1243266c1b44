//! Test environments as data: per (repository, version) the interpreter, pins, install and
//! test command ([`EnvSpec`]); the built-in table is `agent-rl-eval/data/swe_env_specs.json`.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde::{Deserialize, Serialize};

use super::log_parser::LogParser;
use crate::{EvalError, Result};

/// How to build and run one repository version's tests.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EnvSpec {
    /// `owner/name`.
    pub repo: String,
    /// Version keys this spec serves.
    pub versions: Vec<String>,
    /// Interpreter versions in order of preference (`"3.9"` → `python3.9`, or a pyenv
    /// install); `"system"` = `python3` on `PATH`. The first one found is used.
    pub python: Vec<String>,
    /// Packages installed into the venv first.
    #[serde(default)]
    pub pip_packages: Vec<String>,
    /// pip constraints applied when the checkout is installed.
    #[serde(default)]
    pub constraints: Vec<String>,
    /// Install the checkout with these extras (`"test"` → `pip install '<tree>[test]'`);
    /// `None` with no `pip_packages` = no venv (the interpreter runs the tree as is).
    #[serde(default)]
    pub install_extras: Option<String>,
    /// The test command; `{python}` is replaced by the interpreter, the test files are
    /// appended; it runs in the tree with `PYTHONPATH` set to the tree.
    pub test_command: Vec<String>,
    /// How the command's log is read.
    pub log_parser: LogParser,
}

impl EnvSpec {
    /// True when the spec needs a virtual environment (it installs something).
    pub fn needs_venv(&self) -> bool {
        self.install_extras.is_some() || !self.pip_packages.is_empty()
    }

    /// The first available interpreter of [`EnvSpec::python`].
    ///
    /// # Errors
    /// [`EvalError::MissingTool`] listing the versions tried.
    pub fn interpreter(&self) -> Result<PathBuf> {
        self.python
            .iter()
            .find_map(|version| find_python(version))
            .ok_or_else(|| EvalError::MissingTool {
                tool: format!("python {}", self.python.join(" or ")),
                reason: format!(
                    "needed for {} {}; install one (pyenv or the system package)",
                    self.repo,
                    self.versions.join("/")
                ),
            })
    }
}

/// The built-in specs (`data/swe_env_specs.json`).
///
/// # Panics
/// Never for the committed file (a unit test parses it).
pub fn builtin_specs() -> Vec<EnvSpec> {
    #[derive(Deserialize)]
    struct File {
        specs: Vec<EnvSpec>,
    }
    let text = include_str!("../../data/swe_env_specs.json");
    serde_json::from_str::<File>(text)
        .map(|file| file.specs)
        .expect("the committed env spec table parses (checked by a unit test)")
}

/// Reads a spec table (`{"specs": [...]}`) from a file.
///
/// # Errors
/// [`EvalError::Io`] or [`EvalError::Record`] naming the file and the bad field.
pub fn load_specs(path: &Path) -> Result<Vec<EnvSpec>> {
    #[derive(Deserialize)]
    struct File {
        specs: Vec<EnvSpec>,
    }
    let text = std::fs::read_to_string(path).map_err(|source| EvalError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    serde_json::from_str::<File>(&text)
        .map(|file| file.specs)
        .map_err(|error| EvalError::Record {
            path: path.to_path_buf(),
            line: error.line(),
            reason: error.to_string(),
        })
}

/// The spec for `repo` at `version`.
///
/// # Errors
/// [`EvalError::InvalidConfig`] (field `version`) when no spec covers it.
pub fn spec_for<'a>(specs: &'a [EnvSpec], repo: &str, version: &str) -> Result<&'a EnvSpec> {
    specs
        .iter()
        .find(|spec| spec.repo == repo && spec.versions.iter().any(|v| v == version))
        .ok_or_else(|| EvalError::InvalidConfig {
            field: "version".into(),
            reason: format!("no environment spec for {repo} {version}; add one to the table"),
        })
}

fn runs(path: &Path) -> bool {
    Command::new(path)
        .arg("--version")
        .output()
        .is_ok_and(|out| out.status.success())
}

fn find_python(version: &str) -> Option<PathBuf> {
    if version == "system" {
        let path = PathBuf::from("python3");
        return runs(&path).then_some(path);
    }
    let name = PathBuf::from(format!("python{version}"));
    if runs(&name) {
        return Some(name);
    }
    let home = std::env::var_os("PYENV_ROOT")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".pyenv")))?;
    let mut installs: Vec<PathBuf> = std::fs::read_dir(home.join("versions"))
        .ok()?
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .filter(|path| {
            path.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n == version || n.starts_with(&format!("{version}.")))
        })
        .collect();
    installs.sort();
    installs
        .into_iter()
        .rev()
        .map(|dir| dir.join("bin").join(format!("python{version}")))
        .find(|path| runs(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_builtin_table_covers_the_sphinx_versions() {
        let specs = builtin_specs();
        for version in ["3.1", "3.5", "4.0", "4.3", "5.0", "5.2", "7.2"] {
            let spec = spec_for(&specs, "sphinx-doc/sphinx", version).expect("covered");
            assert!(spec.needs_venv());
        }
        let error = spec_for(&specs, "django/django", "3.0").expect_err("no django");
        assert!(error.to_string().contains("django/django 3.0"));
    }
}
