//! What a patch actually changed in a tree, found without asking git (whose config the patch
//! may have touched): the tree's entries (type, size, mode, modification time, link target)
//! are listed before and after, links never followed.

use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// Files under `.git` that applying a patch (`git apply --3way`) may rewrite.
const GIT_BOOKKEEPING: [&str; 6] = [
    "index",
    "objects",
    "logs",
    "ORIG_HEAD",
    "rr-cache",
    "MERGE_",
];

#[derive(Debug, Clone, PartialEq, Eq)]
struct Entry {
    kind: u32,
    len: u64,
    mtime_ns: i128,
    link: Option<PathBuf>,
}

/// The entries of a tree at one moment (paths relative to its root, `/`-separated).
#[derive(Debug, Clone, Default)]
pub struct TreeSnapshot {
    entries: BTreeMap<String, Entry>,
}

impl TreeSnapshot {
    /// Lists `root` (links are recorded, not followed; `.git/objects` is skipped).
    ///
    /// # Errors
    /// A directory or entry that cannot be read.
    pub fn take(root: &Path) -> std::io::Result<Self> {
        let mut snapshot = Self::default();
        let mut pending = vec![(root.to_path_buf(), String::new())];
        while let Some((dir, prefix)) = pending.pop() {
            for entry in std::fs::read_dir(&dir)? {
                let entry = entry?;
                let name = entry.file_name().to_string_lossy().into_owned();
                let relative = if prefix.is_empty() {
                    name
                } else {
                    format!("{prefix}/{name}")
                };
                let meta = std::fs::symlink_metadata(entry.path())?;
                let link = meta
                    .file_type()
                    .is_symlink()
                    .then(|| std::fs::read_link(entry.path()))
                    .transpose()?;
                if meta.is_dir() && relative != ".git/objects" {
                    pending.push((entry.path(), relative.clone()));
                }
                let mtime_ns =
                    i128::from(meta.mtime()) * 1_000_000_000 + i128::from(meta.mtime_nsec());
                snapshot.entries.insert(
                    relative,
                    Entry {
                        kind: meta.mode(),
                        len: if meta.is_dir() { 0 } else { meta.len() },
                        mtime_ns: if meta.is_dir() { 0 } else { mtime_ns },
                        link,
                    },
                );
            }
        }
        Ok(snapshot)
    }

    /// True when `path` was in the tree.
    pub fn contains(&self, path: &str) -> bool {
        self.entries.contains_key(path)
    }

    /// Paths added, removed or changed from `self` to `after` (git's own bookkeeping under
    /// `.git` left out).
    pub fn changed(&self, after: &Self) -> Vec<String> {
        let mut changed: Vec<String> = after
            .entries
            .iter()
            .filter(|(path, entry)| self.entries.get(*path) != Some(entry))
            .map(|(path, _)| path.clone())
            .chain(
                self.entries
                    .keys()
                    .filter(|path| !after.entries.contains_key(*path))
                    .cloned(),
            )
            .filter(|path| !is_git_bookkeeping(path))
            .collect();
        changed.sort();
        changed.dedup();
        changed
    }
}

fn is_git_bookkeeping(path: &str) -> bool {
    path.strip_prefix(".git/")
        .is_some_and(|rest| GIT_BOOKKEEPING.iter().any(|name| rest.starts_with(name)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn added_changed_removed_and_linked_paths_are_found() {
        let dir = tempfile::tempdir().expect("dir");
        let root = dir.path();
        std::fs::create_dir_all(root.join("a/.git")).expect("mkdir");
        std::fs::create_dir_all(root.join(".git/objects")).expect("mkdir");
        std::fs::write(root.join("a/keep.py"), "x").expect("write");
        std::fs::write(root.join("a/edit.py"), "x").expect("write");
        std::fs::write(root.join("gone.py"), "x").expect("write");
        std::fs::write(root.join(".git/index"), "x").expect("write");
        let before = TreeSnapshot::take(root).expect("snapshot");
        std::fs::write(root.join("a/edit.py"), "xy").expect("write");
        std::fs::remove_file(root.join("gone.py")).expect("rm");
        std::fs::write(root.join(".git/index"), "xy").expect("write");
        std::fs::write(root.join(".git/objects/o"), "o").expect("write");
        std::fs::write(root.join(".git/config"), "[core]").expect("write");
        std::os::unix::fs::symlink("/etc", root.join("a/link")).expect("link");
        let after = TreeSnapshot::take(root).expect("snapshot");
        assert_eq!(
            before.changed(&after),
            [".git/config", "a/edit.py", "a/link", "gone.py"]
        );
        assert!(before.contains("a/keep.py") && !before.contains("a/link"));
    }
}
