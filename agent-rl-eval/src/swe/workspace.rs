//! A workspace: a fresh checkout of an instance's tree in a temporary directory, removed when
//! dropped. Trees come from a git repository or bundle (`sphinx-verified-mini.bundle` has one
//! branch per instance id).
//!
//! The host never runs git through the tree's own `.git`: the agent may rewrite it (a
//! `core.fsmonitor` command, a clean filter, hooks run by whoever calls git next). The host's git
//! steps ([`Workspace::git`], [`Workspace::diff`], [`Workspace::reset`]) use a private bare
//! repository beside the tree, outside the sandbox's writable mounts, with the tree as its work
//! tree; the tree's `.git` is a clone sharing its objects, for the agent's own use.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::command::{git, git_command, run_git};
use crate::{EvalError, Result};

/// Where an instance's tree comes from: a git repository or bundle and a revision in it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RepoSource {
    /// A git repository directory or a `.bundle` file.
    pub repository: PathBuf,
    /// Branch, tag or commit to check out (the instance id for the sphinx bundle).
    pub revision: String,
}

impl RepoSource {
    /// The sphinx bundle under a data directory (`<data>/swebench/repos/…`) at `instance_id`.
    pub fn sphinx_bundle(data_dir: &Path, instance_id: &str) -> Self {
        Self {
            repository: data_dir.join("swebench/repos/sphinx-verified-mini.bundle"),
            revision: instance_id.to_string(),
        }
    }
}

/// A checked-out tree in a temporary directory (deleted on drop).
#[derive(Debug)]
pub struct Workspace {
    // Removes the tree, the private repository and the scratch directory on drop.
    _dir: tempfile::TempDir,
    root: PathBuf,
    git_dir: PathBuf,
}

impl Workspace {
    /// Clones `source.repository` into the private repository, checks `source.revision` out
    /// into the tree with a clone of its own, and points the private repository at it.
    ///
    /// # Errors
    /// [`EvalError::Layout`] when the repository is missing; [`EvalError::Command`] when git
    /// fails (unknown revision, not a repository).
    pub fn checkout(source: &RepoSource) -> Result<Self> {
        if !source.repository.exists() {
            return Err(EvalError::Layout {
                path: source.repository.clone(),
                reason: "repository or bundle not found".into(),
            });
        }
        let dir = tempfile::Builder::new()
            .prefix("agent-rl-swe-")
            .tempdir()
            .map_err(|source_error| EvalError::Io {
                path: std::env::temp_dir(),
                source: source_error,
            })?;
        let base = dir.path().canonicalize().map_err(|error| EvalError::Io {
            path: dir.path().to_path_buf(),
            source: error,
        })?;
        let (private, root) = (base.join("git"), base.join("repo"));
        let repository = std::path::absolute(&source.repository)
            .unwrap_or_else(|_| source.repository.clone())
            .display()
            .to_string();
        let private_text = private.display().to_string();
        // Copies, not hard links: nothing done in the workspace reaches the source's objects.
        let clone = ["clone", "-q", "--bare", "--no-hardlinks"];
        git(&base, &[&clone[..], &[&repository, &private_text]].concat())?;
        let target = root.display().to_string();
        git(
            &base,
            &[
                "clone",
                "-q",
                "--shared",
                "--no-checkout",
                &private_text,
                &target,
            ],
        )?;
        git(&root, &["checkout", "-q", &source.revision])?;
        // A local identity, so that commits in the workspace never depend on the user's config.
        git(&root, &["config", "user.email", "agent@agent-rl.invalid"])?;
        git(&root, &["config", "user.name", "agent-rl"])?;
        let workspace = Self {
            _dir: dir,
            root,
            git_dir: private,
        };
        let commit = git(&workspace.root, &["rev-parse", "--verify", "-q", "HEAD"])?;
        workspace.git(&["update-ref", "--no-deref", "HEAD", commit.trim()])?;
        workspace.git(&["read-tree", "HEAD"])?;
        Ok(workspace)
    }

    /// The tree's root (canonical path).
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// A scratch directory beside the tree (inside the temporary directory, outside the tree).
    pub fn scratch(&self) -> PathBuf {
        self.root.with_file_name("scratch")
    }

    /// Runs git with `args` on the tree through the private repository (see the module docs):
    /// nothing the agent wrote in the tree's `.git` is read.
    ///
    /// # Errors
    /// [`EvalError::Command`] when git fails.
    pub fn git(&self, args: &[&str]) -> Result<String> {
        let mut command = git_command(&self.root);
        command
            .arg("--git-dir")
            .arg(&self.git_dir)
            .arg("--work-tree")
            .arg(&self.root)
            .args(args);
        run_git(command, args)
    }

    /// The changes against the checked-out revision, new files included, as a unified diff.
    ///
    /// # Errors
    /// [`EvalError::Command`] when git fails.
    pub fn diff(&self) -> Result<String> {
        self.git(&["add", "-A"])?;
        let diff = self.git(&[
            "diff",
            "--cached",
            "--no-color",
            "--no-ext-diff",
            "--no-textconv",
            "HEAD",
        ])?;
        self.git(&["reset", "-q"])?;
        Ok(diff)
    }

    /// Discards every change (tracked and untracked files) since the checkout.
    ///
    /// # Errors
    /// [`EvalError::Command`] when git fails.
    pub fn reset(&self) -> Result<()> {
        self.git(&["checkout", "-q", "--", "."])?;
        self.git(&["clean", "-fdq"])?;
        Ok(())
    }
}
