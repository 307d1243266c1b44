//! A workspace: a fresh checkout of an instance's tree in a temporary directory, removed when
//! dropped. Trees come from a git repository or bundle (`sphinx-verified-mini.bundle` has one
//! branch per instance id).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::command::git;
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
    dir: tempfile::TempDir,
    root: PathBuf,
}

impl Workspace {
    /// Clones `source.repository` without checkout and checks out `source.revision`.
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
        let root = dir.path().join("repo");
        let repository = source.repository.display().to_string();
        let target = root.display().to_string();
        git(
            dir.path(),
            &["clone", "-q", "--no-checkout", &repository, &target],
        )?;
        git(&root, &["checkout", "-q", &source.revision])?;
        // A local identity, so that commits in the workspace never depend on the user's config.
        git(&root, &["config", "user.email", "agent@agent-rl.invalid"])?;
        git(&root, &["config", "user.name", "agent-rl"])?;
        let root = root.canonicalize().map_err(|error| EvalError::Io {
            path: root.clone(),
            source: error,
        })?;
        Ok(Self { dir, root })
    }

    /// The tree's root (canonical path).
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// A scratch directory beside the tree (inside the temporary directory, outside the tree).
    pub fn scratch(&self) -> PathBuf {
        self.dir.path().join("scratch")
    }

    /// The changes against the checked-out revision, new files included, as a unified diff.
    ///
    /// # Errors
    /// [`EvalError::Command`] when git fails.
    pub fn diff(&self) -> Result<String> {
        git(&self.root, &["add", "-A"])?;
        let diff = git(&self.root, &["diff", "--cached", "--no-color", "HEAD"])?;
        git(&self.root, &["reset", "-q"])?;
        Ok(diff)
    }

    /// Discards every change (tracked and untracked files) since the checkout.
    ///
    /// # Errors
    /// [`EvalError::Command`] when git fails.
    pub fn reset(&self) -> Result<()> {
        git(&self.root, &["checkout", "-q", "--", "."])?;
        git(&self.root, &["clean", "-fdq"])?;
        Ok(())
    }
}
