//! Applying patches to a workspace the way the official harness does: the model patch is tried
//! with `git apply`, `git apply --3way`, `git apply --reject`, then `patch --fuzz=5`, resetting
//! the tree between attempts; the test patch is applied with plain `git apply` on top. Every
//! attempt and reset runs in the grader's sandbox ([`super::graded_tree`]), since the patch
//! may already have changed the tree's git config.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::command::cap_text;
use super::graded_tree::{GradedTree, SAFE_GIT, shell_quote};
use crate::{EvalError, Result};

/// How a model patch got in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PatchApplied {
    /// `git apply` (with or without `--3way` / `--reject`) applied it.
    GitApply,
    /// GNU `patch` with fuzz applied it.
    Fuzzy,
    /// It did not apply, but its reverse does: the tree already has it.
    AlreadyApplied,
}

const ATTEMPTS: [&str; 4] = [
    "apply --verbose",
    "apply --verbose --3way",
    "apply --verbose --reject",
    "patch --batch --forward --fuzz=5 -p1 -i",
];

/// Limit of one attempt (or reset).
const STEP_TIMEOUT: Duration = Duration::from_secs(120);

/// Applies `patch` to the clean tree with the harness's fallbacks; the patch file is written
/// to `scratch` (outside the tree).
///
/// # Errors
/// [`EvalError::Command`] when no attempt applies it (the reason holds the last attempt's
/// output), or when writing the patch file or resetting the tree fails.
pub fn apply_model_patch(tree: &GradedTree, scratch: &Path, patch: &str) -> Result<PatchApplied> {
    let file = write_patch(scratch, "model.diff", patch)?;
    let mut last = String::new();
    for (index, attempt) in ATTEMPTS.iter().enumerate() {
        let (ok, output) = run(tree, scratch, attempt, &file)?;
        if ok {
            return Ok(if index == 3 {
                PatchApplied::Fuzzy
            } else {
                PatchApplied::GitApply
            });
        }
        last = output;
        reset(tree, scratch)?;
    }
    let (reverse, _) = run(tree, scratch, "apply --check --reverse", &file)?;
    if reverse {
        return Ok(PatchApplied::AlreadyApplied);
    }
    Err(EvalError::Command {
        command: "apply model patch".into(),
        reason: cap_text(&last, 2000),
    })
}

/// Restores `files` to the checked-out revision, then applies `patch` with
/// `git apply --verbose` on top of the tree.
///
/// # Errors
/// [`EvalError::Command`] with git's output when it does not apply.
pub fn apply_patch(
    tree: &GradedTree,
    scratch: &Path,
    name: &str,
    patch: &str,
    restore: &[String],
) -> Result<()> {
    let file = write_patch(scratch, name, patch)?;
    let mut script = String::new();
    for path in restore {
        // A file the model deleted or never had is fine to skip.
        script.push_str(&format!(
            "{SAFE_GIT} checkout -q HEAD -- {} 2>/dev/null; ",
            shell_quote(path)
        ));
    }
    script.push_str(&format!(
        "{SAFE_GIT} apply --verbose {}",
        shell_quote(&file.display().to_string())
    ));
    let out = tree.run(&script, scratch, STEP_TIMEOUT, 1 << 20)?;
    if out.success() {
        Ok(())
    } else {
        Err(EvalError::Command {
            command: format!("git apply {name}"),
            reason: cap_text(&out.output, 2000),
        })
    }
}

/// The files a patch touches (`b/` side of each `diff --git` header).
pub fn patched_files(patch: &str) -> Vec<String> {
    patch
        .lines()
        .filter_map(|line| line.strip_prefix("diff --git a/"))
        .filter_map(|rest| rest.split_once(" b/").map(|(_, b)| b.to_string()))
        .collect()
}

/// Discards every change (tracked and untracked files) since the checkout.
fn reset(tree: &GradedTree, scratch: &Path) -> Result<()> {
    let script = format!("{SAFE_GIT} checkout -q -- . && {SAFE_GIT} clean -fdq");
    let out = tree.run(&script, scratch, STEP_TIMEOUT, 1 << 20)?;
    if out.success() {
        Ok(())
    } else {
        Err(EvalError::Command {
            command: "reset the tree".into(),
            reason: cap_text(&out.output, 2000),
        })
    }
}

fn write_patch(dir: &Path, name: &str, patch: &str) -> Result<PathBuf> {
    let io = |source| EvalError::Io {
        path: dir.to_path_buf(),
        source,
    };
    std::fs::create_dir_all(dir).map_err(io)?;
    let file = dir.join(name);
    let mut text = patch.to_string();
    if !text.ends_with('\n') {
        text.push('\n');
    }
    std::fs::write(&file, text).map_err(io)?;
    Ok(file)
}

fn run(tree: &GradedTree, scratch: &Path, attempt: &str, file: &Path) -> Result<(bool, String)> {
    let program = if attempt.starts_with("patch") {
        String::new()
    } else {
        format!("{SAFE_GIT} ")
    };
    let script = format!(
        "{program}{attempt} {}",
        shell_quote(&file.display().to_string())
    );
    let out = tree.run(&script, scratch, STEP_TIMEOUT, 1 << 20)?;
    Ok((out.success(), out.output))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_patched_files() {
        let patch = "diff --git a/src/x.py b/src/x.py\n--- a/src/x.py\n+++ b/src/x.py\n\
                     diff --git a/tests/t.py b/tests/t.py\n";
        assert_eq!(patched_files(patch), ["src/x.py", "tests/t.py"]);
    }
}
