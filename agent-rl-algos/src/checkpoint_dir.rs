//! Crash-safe checkpoint directories.
//!
//! A checkpoint is written into a temporary sibling (`.checkpoint-<step>.partial/`), every file
//! and directory is synced to disk, a `manifest.json` listing each file's size and SHA-256 is
//! written last, and only then is the directory renamed to `checkpoint-<step>/`. A kill or a
//! full disk while writing therefore leaves at most a `.partial` directory (removed by the next
//! write of that step), never a half-written `checkpoint-<step>/`; and a checkpoint damaged
//! afterwards (a truncated or zeroed file) fails [`verify_checkpoint_dir`] with the file named.
//!
//! [`latest_complete_checkpoint`] finds what a resume should load: the newest checkpoint whose
//! manifest checks out, with the newer ones it skipped and why.
//!
//! ```
//! use agent_rl_algos::checkpoint_dir::{latest_complete_checkpoint, write_checkpoint_dir};
//!
//! let run = tempfile::tempdir()?;
//! write_checkpoint_dir(&run.path().join("checkpoint-2"), |tmp| {
//!     std::fs::write(tmp.join("weights.bin"), [1u8, 2, 3])
//!         .map_err(|e| agent_rl_algos::AlgoError::Checkpoint { path: tmp.into(), reason: e.to_string() })
//! })?;
//! std::fs::create_dir(run.path().join("checkpoint-3"))?; // interrupted by hand: no manifest
//! let found = latest_complete_checkpoint(run.path())?.expect("checkpoint-2 is complete");
//! assert_eq!(found.step, 2);
//! assert_eq!(found.skipped.len(), 1);
//! assert!(found.skipped[0].reason.contains("manifest.json"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::error::{AlgoError, Result};

/// The manifest's file name inside a checkpoint directory.
pub const MANIFEST_FILE: &str = "manifest.json";

/// Version of the manifest layout.
const MANIFEST_VERSION: u32 = 1;

/// What a complete checkpoint holds: every file (the manifest itself excepted) with its size and
/// SHA-256, written last.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckpointManifest {
    /// Layout version (1).
    pub format_version: u32,
    /// The files, sorted by path.
    pub files: Vec<ManifestEntry>,
}

/// One file of a [`CheckpointManifest`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ManifestEntry {
    /// Path relative to the checkpoint directory, `/`-separated.
    pub path: String,
    /// Size in bytes.
    pub bytes: u64,
    /// SHA-256 of the contents, lowercase hex.
    pub sha256: String,
}

/// A checkpoint directory passed over by [`latest_complete_checkpoint`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkippedCheckpoint {
    /// The directory.
    pub dir: PathBuf,
    /// Why it cannot be resumed from (the verification error).
    pub reason: String,
}

/// The checkpoint a resume should load, found by [`latest_complete_checkpoint`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompleteCheckpoint {
    /// `run_dir/checkpoint-<step>`.
    pub dir: PathBuf,
    /// Its step.
    pub step: usize,
    /// Newer checkpoint directories that are incomplete or damaged, newest first.
    pub skipped: Vec<SkippedCheckpoint>,
}

fn error(path: &Path, reason: impl std::fmt::Display) -> AlgoError {
    AlgoError::Checkpoint {
        path: path.to_owned(),
        reason: reason.to_string(),
    }
}

/// `.<name>.<suffix>` beside `dir`.
fn sibling(dir: &Path, suffix: &str) -> Result<PathBuf> {
    let name = dir
        .file_name()
        .and_then(|name| name.to_str())
        .ok_or_else(|| error(dir, "a checkpoint directory needs a UTF-8 file name"))?;
    Ok(dir.with_file_name(format!(".{name}.{suffix}")))
}

fn remove_dir_if_present(dir: &Path) -> Result<()> {
    match std::fs::remove_dir_all(dir) {
        Err(err) if err.kind() != std::io::ErrorKind::NotFound => Err(error(dir, err)),
        _ => Ok(()),
    }
}

/// Syncs a directory's entries to disk (a no-op where directories cannot be opened).
fn sync_dir(dir: &Path) -> Result<()> {
    #[cfg(unix)]
    File::open(dir)
        .and_then(|handle| handle.sync_all())
        .map_err(|err| error(dir, format!("cannot sync the directory: {err}")))?;
    #[cfg(not(unix))]
    let _ = dir;
    Ok(())
}

/// Every file under `dir` (relative, `/`-separated, sorted), the manifest excepted; syncs each
/// file and directory on the way when `sync` is set.
fn list_files(dir: &Path, sync: bool) -> Result<Vec<String>> {
    let mut files = Vec::new();
    let mut pending = vec![(dir.to_path_buf(), String::new())];
    while let Some((current, prefix)) = pending.pop() {
        let entries = std::fs::read_dir(&current).map_err(|err| error(&current, err))?;
        for entry in entries {
            let entry = entry.map_err(|err| error(&current, err))?;
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            let relative = format!("{prefix}{name}");
            let kind = entry.file_type().map_err(|err| error(&path, err))?;
            if kind.is_dir() {
                pending.push((path, format!("{relative}/")));
            } else if relative != MANIFEST_FILE {
                if sync {
                    File::open(&path)
                        .and_then(|file| file.sync_all())
                        .map_err(|err| error(&path, format!("cannot sync: {err}")))?;
                }
                files.push(relative);
            }
        }
        if sync {
            sync_dir(&current)?;
        }
    }
    files.sort();
    Ok(files)
}

/// Size and SHA-256 of a file, streamed.
fn hash_file(path: &Path) -> Result<(u64, String)> {
    let mut file = File::open(path).map_err(|err| error(path, err))?;
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; 1 << 20];
    let mut bytes = 0u64;
    loop {
        let read = file.read(&mut buffer).map_err(|err| error(path, err))?;
        if read == 0 {
            break;
        }
        hasher.update(&buffer[..read]);
        bytes += read as u64;
    }
    Ok((bytes, format!("{:x}", hasher.finalize())))
}

/// Writes a checkpoint directory crash-safely: `write` fills a temporary sibling, then every
/// file is synced, the manifest written and synced, and the directory renamed to `dir` (an
/// existing `dir` is replaced). On any error the temporary directory is removed and `dir` (and
/// every other checkpoint) is left as it was.
///
/// # Errors
/// [`AlgoError::Checkpoint`] naming the file or directory that could not be written, synced or
/// renamed (a full disk included), or whatever `write` returns.
pub fn write_checkpoint_dir(
    dir: &Path,
    write: impl FnOnce(&Path) -> Result<()>,
) -> Result<CheckpointManifest> {
    let partial = sibling(dir, "partial")?;
    remove_dir_if_present(&partial)?;
    if let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(|err| error(parent, err))?;
    }
    std::fs::create_dir(&partial).map_err(|err| error(&partial, err))?;
    let written = write(&partial).and_then(|()| seal(&partial, dir));
    if written.is_err() {
        let _ = std::fs::remove_dir_all(&partial);
    }
    written
}

/// Writes files into an existing directory that also holds other things (a trainer's
/// `output_dir`, with its config and `checkpoint-N/` subdirectories), so that no file is ever
/// seen half-written: `write` fills a complete checkpoint beside (see [`write_checkpoint_dir`]),
/// then each of its files, the manifest last, is renamed over its namesake in `dir`. A kill
/// between two renames leaves every file whole (some from the old save, some from the new),
/// and the manifest of the old save, so [`verify_checkpoint_dir`] reports the mix.
///
/// # Errors
/// As [`write_checkpoint_dir`], and [`AlgoError::Checkpoint`] naming a file that could not be
/// moved into `dir`.
pub fn write_files_into(
    dir: &Path,
    write: impl FnOnce(&Path) -> Result<()>,
) -> Result<CheckpointManifest> {
    std::fs::create_dir_all(dir).map_err(|err| error(dir, err))?;
    let staged = dir.join(".final-save");
    let manifest = write_checkpoint_dir(&staged, write)?;
    let paths = manifest.files.iter().map(|entry| entry.path.as_str());
    for relative in paths.chain(std::iter::once(MANIFEST_FILE)) {
        let (from, to) = (staged.join(relative), dir.join(relative));
        if let Some(parent) = to.parent() {
            std::fs::create_dir_all(parent).map_err(|err| error(parent, err))?;
        }
        std::fs::rename(&from, &to).map_err(|err| error(&to, err))?;
    }
    sync_dir(dir)?;
    remove_dir_if_present(&staged)?;
    Ok(manifest)
}

/// Syncs and lists `partial`, writes its manifest, renames it to `dir`.
fn seal(partial: &Path, dir: &Path) -> Result<CheckpointManifest> {
    let files = list_files(partial, true)?
        .into_iter()
        .map(|path| {
            let (bytes, sha256) = hash_file(&partial.join(&path))?;
            Ok(ManifestEntry {
                path,
                bytes,
                sha256,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let manifest = CheckpointManifest {
        format_version: MANIFEST_VERSION,
        files,
    };
    let manifest_path = partial.join(MANIFEST_FILE);
    let text = serde_json::to_string_pretty(&manifest).map_err(|err| error(&manifest_path, err))?;
    std::fs::write(&manifest_path, text)
        .and_then(|()| File::open(&manifest_path)?.sync_all())
        .map_err(|err| error(&manifest_path, err))?;
    sync_dir(partial)?;
    let replaced = sibling(dir, "replaced")?;
    remove_dir_if_present(&replaced)?;
    let had_old = dir.exists();
    if had_old {
        std::fs::rename(dir, &replaced).map_err(|err| error(dir, err))?;
    }
    std::fs::rename(partial, dir).map_err(|err| error(dir, err))?;
    if let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty()) {
        sync_dir(parent)?;
    }
    if had_old {
        remove_dir_if_present(&replaced)?;
    }
    Ok(manifest)
}

/// Checks a checkpoint directory against its manifest: every listed file present with its size
/// and SHA-256.
///
/// # Errors
/// [`AlgoError::Checkpoint`] naming the manifest (missing: the write did not finish, or the
/// directory predates manifests) or the first file that is missing, of another size or of other
/// contents.
pub fn verify_checkpoint_dir(dir: &Path) -> Result<CheckpointManifest> {
    let manifest_path = dir.join(MANIFEST_FILE);
    let text = std::fs::read_to_string(&manifest_path).map_err(|err| {
        error(
            &manifest_path,
            format!("{err}: the checkpoint is incomplete (its write did not finish)"),
        )
    })?;
    let manifest: CheckpointManifest =
        serde_json::from_str(&text).map_err(|err| error(&manifest_path, err))?;
    if manifest.format_version != MANIFEST_VERSION {
        return Err(error(
            &manifest_path,
            format!(
                "format_version {} is not {MANIFEST_VERSION}",
                manifest.format_version
            ),
        ));
    }
    for entry in &manifest.files {
        let inside = Path::new(&entry.path)
            .components()
            .all(|part| matches!(part, std::path::Component::Normal(_)));
        if !inside {
            return Err(error(
                &manifest_path,
                format!("lists `{}`, a path outside the checkpoint", entry.path),
            ));
        }
        let path = dir.join(&entry.path);
        let found = std::fs::metadata(&path)
            .map_err(|err| error(&path, format!("{err} (listed in {MANIFEST_FILE})")))?
            .len();
        if found != entry.bytes {
            return Err(error(
                &path,
                format!(
                    "has {found} bytes, the manifest records {}: the file is truncated or \
                     was overwritten",
                    entry.bytes
                ),
            ));
        }
        let (_, sha256) = hash_file(&path)?;
        if sha256 != entry.sha256 {
            return Err(error(
                &path,
                format!(
                    "SHA-256 {sha256} differs from the manifest's {}: the file is corrupt or \
                     was overwritten",
                    entry.sha256
                ),
            ));
        }
    }
    Ok(manifest)
}

/// The step of a `checkpoint-<step>` directory name.
fn checkpoint_step(name: &str) -> Option<usize> {
    let digits = name.strip_prefix("checkpoint-")?;
    digits
        .bytes()
        .all(|b| b.is_ascii_digit())
        .then(|| digits.parse().ok())
        .flatten()
}

/// The newest `run_dir/checkpoint-<step>/` that passes [`verify_checkpoint_dir`], with the newer
/// ones it passed over and why (an interrupted write, a damaged file); `Ok(None)` when `run_dir`
/// holds no `checkpoint-<step>/` directory at all. `.checkpoint-<step>.partial/` directories
/// (writes cut short) are never candidates.
///
/// # Errors
/// [`AlgoError::Checkpoint`] when `run_dir` cannot be read, or when it holds checkpoint
/// directories but none is complete (each named with its reason).
pub fn latest_complete_checkpoint(run_dir: &Path) -> Result<Option<CompleteCheckpoint>> {
    let entries = std::fs::read_dir(run_dir).map_err(|err| error(run_dir, err))?;
    let mut candidates: Vec<(usize, PathBuf)> = entries
        .filter_map(|entry| entry.ok())
        .filter_map(|entry| {
            let step = checkpoint_step(entry.file_name().to_str()?)?;
            entry.path().is_dir().then(|| (step, entry.path()))
        })
        .collect();
    if candidates.is_empty() {
        return Ok(None);
    }
    candidates.sort_by_key(|(step, _)| std::cmp::Reverse(*step));
    let mut skipped = Vec::new();
    for (step, dir) in candidates {
        match verify_checkpoint_dir(&dir) {
            Ok(_) => return Ok(Some(CompleteCheckpoint { dir, step, skipped })),
            Err(err) => skipped.push(SkippedCheckpoint {
                dir,
                reason: err.to_string(),
            }),
        }
    }
    let reasons: Vec<String> = skipped.iter().map(|s| s.reason.clone()).collect();
    Err(error(
        run_dir,
        format!("no complete checkpoint: {}", reasons.join("; ")),
    ))
}

#[cfg(test)]
mod tests {
    use super::{checkpoint_step, verify_checkpoint_dir, write_files_into};
    use crate::error::AlgoError;

    fn put(dir: &std::path::Path, name: &str, bytes: &[u8]) -> crate::error::Result<()> {
        std::fs::write(dir.join(name), bytes).map_err(|err| AlgoError::Checkpoint {
            path: dir.join(name),
            reason: err.to_string(),
        })
    }

    #[test]
    fn files_written_into_a_shared_directory_replace_only_their_namesakes() {
        let dir = tempfile::tempdir().expect("test file system");
        let out = dir.path();
        std::fs::write(out.join("sft_config.json"), "{}").expect("test file system");
        std::fs::create_dir(out.join("checkpoint-2")).expect("test file system");
        std::fs::write(out.join("model.safetensors"), "old weights").expect("test file system");
        write_files_into(out, |tmp| {
            put(tmp, "model.safetensors", b"new weights")?;
            put(tmp, "config.json", b"{\"a\": 1}")
        })
        .expect("test file system");
        assert_eq!(
            std::fs::read(out.join("model.safetensors")).expect("test file system"),
            b"new weights"
        );
        assert_eq!(
            std::fs::read(out.join("sft_config.json")).expect("test file system"),
            b"{}"
        );
        assert!(out.join("checkpoint-2").is_dir());
        assert!(!out.join(".final-save").exists());
        assert_eq!(
            verify_checkpoint_dir(out)
                .expect("test file system")
                .files
                .len(),
            2
        );
        // A failed save leaves the previous files untouched.
        let failed = write_files_into(out, |tmp| {
            put(tmp, "model.safetensors", b"torn")?;
            Err(AlgoError::input("save", "disk full"))
        });
        assert!(failed.is_err());
        assert_eq!(
            std::fs::read(out.join("model.safetensors")).expect("test file system"),
            b"new weights"
        );
        verify_checkpoint_dir(out).expect("test file system");
    }

    #[test]
    fn only_plain_step_names_are_checkpoints() {
        assert_eq!(checkpoint_step("checkpoint-12"), Some(12));
        for name in [
            "checkpoint-",
            "checkpoint-+3",
            "checkpoint-3.partial",
            ".checkpoint-3.partial",
            "final_model",
        ] {
            assert_eq!(checkpoint_step(name), None, "{name}");
        }
    }
}
