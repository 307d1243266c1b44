//! Atomic file replacement, the one implementation of the workspace (LoRA adapter files, the
//! run directory's JSON, metrics and reward curve): write a sibling temporary file, sync it, rename it over the target
//! and sync the directory, so a reader (or a resumed run) sees the old file or the new one,
//! never a torn mix.

use std::fs::File;
use std::io::Write;
use std::path::Path;

/// Replaces `path` with `bytes` atomically (same-directory temporary file + `rename`).
///
/// # Errors
/// The I/O error of the step that failed (create, write, sync, rename); the temporary file is
/// removed on failure and `path` keeps its previous content.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    replace_with(path, |temporary| {
        let mut file = File::create(temporary)?;
        file.write_all(bytes)
    })
}

/// Replaces `path` atomically with a file that `write` creates at the temporary path it is
/// given (for writers that stream to a path, such as safetensors' `serialize_to_file`); the
/// file is synced, renamed over `path` and the directory synced, as in [`write_atomic`].
///
/// # Errors
/// The error of `write` or of the sync or rename; the temporary file is removed on failure and
/// `path` keeps its previous content.
pub fn replace_with(
    path: &Path,
    write: impl FnOnce(&Path) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map_or_else(|| "file".into(), |n| n.to_string_lossy());
    let temporary = dir.join(format!(".{name}.tmp-{}", std::process::id()));
    let written = (|| {
        write(&temporary)?;
        File::open(&temporary)?.sync_all()?;
        std::fs::rename(&temporary, path)?;
        // The rename itself is durable once the directory entry is synced (best effort: some
        // file systems do not allow opening a directory).
        if let Ok(handle) = File::open(dir) {
            let _ = handle.sync_all();
        }
        Ok(())
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&temporary);
    }
    written
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_content_and_leaves_no_temporary() -> std::io::Result<()> {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("summary.json");
        write_atomic(&path, b"old")?;
        write_atomic(&path, b"new")?;
        assert_eq!(std::fs::read(&path)?, b"new");
        let names: Vec<_> = std::fs::read_dir(dir.path())?
            .filter_map(|e| e.ok())
            .collect();
        assert_eq!(names.len(), 1, "a temporary file was left behind");
        Ok(())
    }

    #[test]
    fn failure_keeps_the_old_file() -> std::io::Result<()> {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("missing-dir").join("x.json");
        assert!(write_atomic(&path, b"data").is_err());
        assert!(!path.exists());
        Ok(())
    }
}
