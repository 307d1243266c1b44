//! Applying patches to a workspace the way the official harness does: the model patch is tried
//! with `git apply`, `git apply --3way`, `git apply --reject`, then `patch --fuzz=5`, resetting
//! the tree between attempts; the test patch is applied with plain `git apply` on top.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::command::{cap_text, run_limited};
use super::workspace::Workspace;
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

const ATTEMPTS: [&[&str]; 4] = [
    &["git", "apply", "--verbose"],
    &["git", "apply", "--verbose", "--3way"],
    &["git", "apply", "--verbose", "--reject"],
    &["patch", "--batch", "--forward", "--fuzz=5", "-p1", "-i"],
];

/// Applies `patch` to a clean workspace with the harness's fallbacks.
///
/// # Errors
/// [`EvalError::Command`] when no attempt applies it (the reason holds the last attempt's
/// output), or when writing the patch file or resetting the tree fails.
pub fn apply_model_patch(workspace: &Workspace, patch: &str) -> Result<PatchApplied> {
    let file = write_patch(workspace, "model.diff", patch)?;
    let mut last = String::new();
    for (index, attempt) in ATTEMPTS.iter().enumerate() {
        let out = run(workspace.root(), attempt, &file)?;
        if out.0 {
            return Ok(if index == 3 {
                PatchApplied::Fuzzy
            } else {
                PatchApplied::GitApply
            });
        }
        last = out.1;
        workspace.reset()?;
    }
    let reverse = run(
        workspace.root(),
        &["git", "apply", "--check", "--reverse"],
        &file,
    )?;
    if reverse.0 {
        return Ok(PatchApplied::AlreadyApplied);
    }
    Err(EvalError::Command {
        command: "apply model patch".into(),
        reason: cap_text(&last, 2000),
    })
}

/// Applies `patch` with `git apply --verbose` on top of the current tree.
///
/// # Errors
/// [`EvalError::Command`] with git's output when it does not apply.
pub fn apply_patch(workspace: &Workspace, name: &str, patch: &str) -> Result<()> {
    let file = write_patch(workspace, name, patch)?;
    let (ok, output) = run(workspace.root(), ATTEMPTS[0], &file)?;
    if ok {
        Ok(())
    } else {
        Err(EvalError::Command {
            command: format!("git apply {name}"),
            reason: cap_text(&output, 2000),
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

fn write_patch(workspace: &Workspace, name: &str, patch: &str) -> Result<std::path::PathBuf> {
    let dir = workspace.scratch();
    let io = |source| EvalError::Io {
        path: dir.clone(),
        source,
    };
    std::fs::create_dir_all(&dir).map_err(io)?;
    let file = dir.join(name);
    let mut text = patch.to_string();
    if !text.ends_with('\n') {
        text.push('\n');
    }
    std::fs::write(&file, text).map_err(io)?;
    Ok(file)
}

fn run(root: &Path, argv: &[&str], file: &Path) -> Result<(bool, String)> {
    let mut command = Command::new(argv[0]);
    command.current_dir(root).args(&argv[1..]).arg(file);
    let out = run_limited(command, Duration::from_secs(120), 1 << 20)?;
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
