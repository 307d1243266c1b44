//! Patches that reach into the test run instead of fixing the code: a model patch that touches
//! any of these paths is graded `tampered`, never `resolved`.
//!
//! The rule, applied to every path the patch names (all header forms: `diff --git`, `---`/`+++`,
//! `***`, `Index:`, `rename`/`copy` lines, with and without their first component) and again to
//! every path that actually changed in the tree once the patch is in:
//!
//! - a path outside the tree (absolute, or with a `..` component);
//! - anything under a `.git` directory (the repository's config, hooks and attributes);
//! - any component named `sitecustomize`, `usercustomize` or `conftest`, whatever its extension
//!   (`.py`, a sourceless `.pyc`, an extension module, a package directory): the interpreter
//!   imports the first two at start-up and pytest the third before any test;
//! - a `.pth` file (site path configuration, which may run code);
//! - a test runner's config file anywhere in the tree: `pytest.ini`, `.pytest.ini`,
//!   `pytest.toml`, `tox.ini`, `setup.cfg`, `pyproject.toml` (whole files, not only their
//!   `[tool.pytest]` sections: `addopts = -p <module>` loads any module as a plugin), and
//!   `.python-version` (which picks pyenv's interpreter);
//! - a file of the instance's test patch (the grader overwrites them, but editing them is an
//!   attempt on the verdict);
//! - a new top-level module or package at the tree's root (`x.py`, `x.pyc`, `x.so`,
//!   `x/__init__.py` where none was): the root comes first on `sys.path`, so it could shadow the
//!   test runner, the harness's report plugin or the standard library.
//!
//! What remains: code the patch legitimately changes (the package under test) is imported by the
//! tests and runs in their process, where it could still rewrite the runner in memory; the
//! sandbox keeps it from the host and the report check (`test_report`) from a faked
//! log, but not from an in-process forgery aimed at this harness.

use std::path::{Component, Path};

/// Why a path of a model patch is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tampering {
    /// The path, as the patch or the tree names it.
    pub path: String,
    /// What it would reach.
    pub reason: &'static str,
}

impl std::fmt::Display for Tampering {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the patch touches `{}`: {}", self.path, self.reason)
    }
}

const HOOK_STEMS: [&str; 3] = ["sitecustomize", "usercustomize", "conftest"];
const RUNNER_CONFIGS: [&str; 7] = [
    ".python-version",
    "pytest.ini",
    ".pytest.ini",
    "pytest.toml",
    "tox.ini",
    "setup.cfg",
    "pyproject.toml",
];
const MODULE_ENDINGS: [&str; 5] = [".py", ".pyc", ".pyo", ".so", ".pyd"];

/// Every path `patch` names in a header, as written (prefixes and timestamps not removed).
pub fn named_paths(patch: &str) -> Vec<String> {
    let mut paths = Vec::new();
    for line in patch.lines() {
        if let Some(rest) = line.strip_prefix("diff --git ") {
            // `a/x b/y`; names with spaces split ambiguously, so keep both readings.
            paths.extend(rest.split(' ').map(str::to_string));
            if let Some((left, right)) = rest.split_once(" b/") {
                paths.push(left.to_string());
                paths.push(format!("b/{right}"));
            }
            continue;
        }
        let named = [
            "--- ",
            "+++ ",
            "*** ",
            "Index: ",
            "rename from ",
            "rename to ",
            "copy from ",
            "copy to ",
        ]
        .iter()
        .find_map(|prefix| line.strip_prefix(prefix));
        if let Some(name) = named {
            let name = name.split('\t').next().unwrap_or(name).trim();
            let name = name.trim_matches('"');
            if !name.is_empty() && name != "/dev/null" {
                paths.push(name.to_string());
            }
        }
    }
    paths
}

/// The first path of `patch` that tampers (see the module docs), read as `git` and `patch -p1`
/// would read it and as written; `exists(path)` says whether a path exists in the clean tree.
pub fn check_patch(
    patch: &str,
    test_files: &[String],
    exists: &dyn Fn(&str) -> bool,
) -> Option<Tampering> {
    named_paths(patch).iter().find_map(|raw| {
        let stripped = raw.split_once('/').map(|(_, rest)| rest);
        std::iter::once(raw.as_str())
            .chain(stripped)
            .find_map(|path| check_path(path, test_files, exists))
    })
}

/// Whether changing `path` (relative to the tree's root) tampers; `exists` as for
/// [`check_patch`].
pub fn check_path(
    path: &str,
    test_files: &[String],
    exists: &dyn Fn(&str) -> bool,
) -> Option<Tampering> {
    let refuse = |reason| {
        Some(Tampering {
            path: path.to_string(),
            reason,
        })
    };
    let parsed = Path::new(path);
    let mut names = Vec::new();
    for component in parsed.components() {
        match component {
            Component::Normal(name) => names.push(name.to_string_lossy().to_string()),
            Component::CurDir => {}
            _ => return refuse("it names a path outside the repository"),
        }
    }
    if names.iter().any(|name| name.eq_ignore_ascii_case(".git")) {
        return refuse("it changes the repository's git metadata (config, hooks, attributes)");
    }
    let stem = |name: &str| name.split('.').next().unwrap_or(name).to_ascii_lowercase();
    if names
        .iter()
        .any(|name| HOOK_STEMS.contains(&stem(name).as_str()))
    {
        return refuse("the interpreter or pytest runs it before any test (start-up hook)");
    }
    let file = names.last()?;
    if file.to_ascii_lowercase().ends_with(".pth") {
        return refuse("a site path-configuration file may run code at start-up");
    }
    if RUNNER_CONFIGS.contains(&file.as_str()) {
        return refuse("it configures the test runner or its interpreter");
    }
    let joined = names.join("/");
    if test_files.iter().any(|test| *test == joined) {
        return refuse("it is a test file the instance's test patch owns");
    }
    let module_file = names.len() == 1 && MODULE_ENDINGS.iter().any(|end| file.ends_with(end));
    let package_init = names.len() == 2 && stem(file) == "__init__";
    let new_module = (module_file && !exists(&joined))
        || (package_init && !exists(&format!("{}/__init__.py", names[0])));
    if new_module {
        return refuse(
            "a new top-level module could shadow the test runner or the standard library",
        );
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(path: &str) -> Option<&'static str> {
        let exists = |path: &str| path == "setup.py" || path == "calc/__init__.py";
        check_path(path, &["tests/test_a.py".to_string()], &exists).map(|t| t.reason)
    }

    #[test]
    fn test_infrastructure_is_refused_and_source_is_not() {
        for path in [
            "sitecustomize.py",
            "lib/usercustomize.pyc",
            "tests/conftest.py",
            "conftest/__init__.py",
            "x/evil.pth",
            "pytest.ini",
            "doc/tox.ini",
            "setup.cfg",
            "pyproject.toml",
            "tests/test_a.py",
            ".git/config",
            "sub/.git/hooks/post-checkout",
            "../outside.py",
            "/etc/passwd",
            "pytest.py",
            "unittest/__init__.py",
        ] {
            assert!(check(path).is_some(), "{path} passed");
        }
        for path in [
            "calc/stats.py",
            "calc/__init__.py",
            "setup.py",
            "tests/test_b.py",
            "doc/conf.txt",
            "README.md",
        ] {
            assert_eq!(check(path), None, "{path}");
        }
    }

    #[test]
    fn every_header_form_is_read() {
        let exists = |_: &str| true;
        let git =
            "diff --git a/calc/x.py b/conftest.py\nrename from calc/x.py\nrename to conftest.py\n";
        assert!(check_patch(git, &[], &exists).is_some());
        let plain = "--- calc/x.py\t2020-01-01\n+++ .git/config\t2020-01-01\n@@ -1 +1 @@\n";
        assert!(check_patch(plain, &[], &exists).is_some());
        let context = "*** a/calc/x.py\n--- b/tests/sitecustomize.py\n";
        assert!(check_patch(context, &[], &exists).is_some());
        let fine = "diff --git a/calc/x.py b/calc/x.py\n--- a/calc/x.py\n+++ b/calc/x.py\n";
        assert_eq!(check_patch(fine, &[], &exists), None);
    }
}
