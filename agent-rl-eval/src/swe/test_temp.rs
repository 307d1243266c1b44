//! The temporary directory of a test run, placed as the official harness's images place it.
//!
//! The harness's images keep the repository at `/testbed` and the tests' temporary files under
//! `/tmp`: two paths with different first components. Some tests depend on that. docutils'
//! `relative_path`, which `.. include::` uses, returns a path relative to the working directory
//! when the target shares its first component with it and an absolute path otherwise, and
//! sphinx turns only absolute paths into document names; so with both the checkout and
//! pytest's temporary directory under `/tmp`, `test_include_source_read_event` of
//! `sphinx-doc__sphinx-11510` reports the document `../pytest-of-root/…/baz/baz` instead of
//! `baz/baz` and fails with the gold patch. The grader therefore points `TMPDIR` of the test
//! run at a fresh directory whose first component differs from the checkout's.

use std::ffi::OsStr;
use std::path::{Component, Path, PathBuf};

use tempfile::TempDir;

/// The first named component of `path` (`tmp` for `/tmp/x`).
fn first_component(path: &Path) -> Option<&OsStr> {
    path.components().find_map(|component| match component {
        Component::Normal(name) => Some(name),
        _ => None,
    })
}

/// The first of `candidates` whose first component differs from `workspace`'s.
fn pick(workspace: &Path, candidates: &[PathBuf]) -> Option<PathBuf> {
    let taken = first_component(workspace);
    candidates
        .iter()
        .find(|candidate| first_component(candidate) != taken)
        .cloned()
}

/// A fresh directory for the temporary files of the tests run in `workspace`, under the first
/// of `<cache_dir>/tmp`, `/var/tmp` and the system's temporary directory whose first path
/// component differs from the workspace's (see the module docs); `None` when every candidate
/// shares it (the run then keeps the inherited `TMPDIR`).
///
/// # Errors
/// The directory could not be created.
pub(super) fn test_temp_dir(
    workspace: &Path,
    cache_dir: &Path,
) -> std::io::Result<Option<TempDir>> {
    let cache_tmp = std::path::absolute(cache_dir.join("tmp"))?;
    let candidates = [cache_tmp, PathBuf::from("/var/tmp"), std::env::temp_dir()];
    let canonical: Vec<PathBuf> = candidates
        .iter()
        .map(|dir| dir.canonicalize().unwrap_or_else(|_| dir.clone()))
        .collect();
    let Some(root) = pick(workspace, &canonical) else {
        return Ok(None);
    };
    std::fs::create_dir_all(&root)?;
    tempfile::Builder::new()
        .prefix("agent-rl-swe-tests-")
        .tempdir_in(root)
        .map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_candidate_outside_the_workspace_top_directory_is_picked() {
        let workspace = Path::new("/tmp/agent-rl-swe-x/repo");
        let candidates = [
            PathBuf::from("/tmp/cache/tmp"),
            PathBuf::from("/var/tmp"),
            PathBuf::from("/tmp"),
        ];
        assert_eq!(
            pick(workspace, &candidates),
            Some(PathBuf::from("/var/tmp"))
        );
        let workspace = Path::new("/home/u/work/repo");
        assert_eq!(
            pick(workspace, &candidates),
            Some(PathBuf::from("/tmp/cache/tmp"))
        );
        assert_eq!(pick(Path::new("/tmp/a"), &[PathBuf::from("/tmp/b")]), None);
    }

    #[test]
    fn the_made_directory_is_outside_the_workspace_top_directory() {
        let workspace = tempfile::tempdir().expect("workspace");
        let cache = tempfile::tempdir().expect("cache");
        // Both under the system's temporary directory: `/var/tmp` is the way out.
        let dir = test_temp_dir(workspace.path(), cache.path())
            .expect("temp dir")
            .expect("a directory outside the workspace's top directory");
        assert!(dir.path().is_dir());
        assert_ne!(
            first_component(dir.path()),
            first_component(&workspace.path().canonicalize().expect("canonical"))
        );
    }
}
