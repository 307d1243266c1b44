//! Which run a run directory and its checkpoints belong to.
//!
//! A fresh run claims its directory ([`claim_fresh_run_dir`]): it refuses a directory that
//! holds another run's checkpoints, metrics or models unless told to overwrite them (then they
//! are removed, and only they: a run directory may sit among the user's own files), and writes
//! a new random id to `run_id`. Every checkpoint's `trainer_state.json` records the id of the
//! directory it was written into, and a resume refuses a checkpoint whose id is not the
//! directory's: an old run's `checkpoint-40/` left beside a new run
//! can no longer be continued as if it were the new run's.
//!
//! ```
//! use agent_rl_algos::run_identity::{claim_fresh_run_dir, read_run_id};
//!
//! let dir = tempfile::tempdir()?;
//! let first = claim_fresh_run_dir(dir.path(), false)?;
//! std::fs::create_dir(dir.path().join("checkpoint-40"))?;
//! assert!(claim_fresh_run_dir(dir.path(), false).is_err()); // another run's checkpoint
//! let second = claim_fresh_run_dir(dir.path(), true)?; // --overwrite clears it
//! assert_ne!(first, second);
//! assert!(!dir.path().join("checkpoint-40").exists());
//! assert_eq!(read_run_id(dir.path())?, Some(second));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::path::{Path, PathBuf};

use agent_rl_core::atomic::write_atomic;

use crate::error::{AlgoError, Result};

/// The file in a run directory holding the run's id.
pub const RUN_ID_FILE: &str = "run_id";

/// Names a run writes into its directory that mark it as used (besides `checkpoint-<step>/`
/// and `<stage>_metrics.*`).
const RUN_MARKERS: [&str; 5] = [
    RUN_ID_FILE,
    "summary.json",
    "final_model",
    "reward_model",
    "sft_model",
];

/// Names a run writes that are removed with its other files on overwrite but do not by
/// themselves mark a directory as used (a lone `config.json` may be the user's own).
const RUN_EXTRAS: [&str; 3] = ["config.json", "config.resumed.json", "reward_curve.svg"];

fn io_error(path: &Path, source: std::io::Error) -> AlgoError {
    AlgoError::RunDirectory {
        path: path.to_owned(),
        source,
    }
}

/// A fresh random run id (128 bits, hex).
pub fn new_run_id() -> String {
    format!("{:032x}", rand::random::<u128>())
}

/// The id in `run_dir/run_id`; `None` when the directory has none (a run directory written
/// before ids, or one a trainer used on its own).
///
/// # Errors
/// [`AlgoError::RunDirectory`] when the file exists but cannot be read.
pub fn read_run_id(run_dir: &Path) -> Result<Option<String>> {
    let path = run_dir.join(RUN_ID_FILE);
    match std::fs::read_to_string(&path) {
        Ok(text) => Ok(Some(text.trim().to_owned())),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(io_error(&path, source)),
    }
}

/// Whether `name` is a file or directory a run writes into its run directory.
fn is_run_file(name: &str, with_extras: bool) -> bool {
    let step = name.strip_prefix("checkpoint-");
    step.is_some_and(|digits| !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
        || name.starts_with(".checkpoint-")
        || name.ends_with("_metrics.jsonl")
        || name.ends_with("_metrics.csv")
        || RUN_MARKERS.contains(&name)
        || RUN_MARKERS
            .iter()
            .any(|marker| name.starts_with(&format!(".{marker}.")))
        || (with_extras && RUN_EXTRAS.contains(&name))
}

/// The entries of `dir` a run wrote (with `with_extras`, also those that do not mark a run).
fn run_files(dir: &Path, with_extras: bool) -> Result<Vec<PathBuf>> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(|source| io_error(dir, source))? {
        let entry = entry.map_err(|source| io_error(dir, source))?;
        if entry
            .file_name()
            .to_str()
            .is_some_and(|name| is_run_file(name, with_extras))
        {
            found.push(entry.path());
        }
    }
    found.sort();
    Ok(found)
}

/// Starts a fresh run in `dir` (created if needed) and returns its new id, written to
/// `dir/run_id`. A directory holding another run's checkpoints, metrics, summary or models is
/// refused unless `overwrite` is set; then exactly those files (and the run's config and reward
/// curve) are removed first.
///
/// # Errors
/// [`AlgoError::InvalidInput`] (field `run_dir`) naming what an earlier run left, when
/// `overwrite` is not set; [`AlgoError::RunDirectory`] for a directory or file that cannot be
/// created, read or removed.
pub fn claim_fresh_run_dir(dir: &Path, overwrite: bool) -> Result<String> {
    std::fs::create_dir_all(dir).map_err(|source| io_error(dir, source))?;
    let used = run_files(dir, false)?;
    if !used.is_empty() && !overwrite {
        let names: Vec<String> = used
            .iter()
            .take(4)
            .filter_map(|path| path.file_name().map(|n| n.to_string_lossy().into_owned()))
            .collect();
        let more = used.len().saturating_sub(names.len());
        let more = if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        };
        return Err(AlgoError::input(
            "run_dir",
            format!(
                "{} holds another run ({}{more}): resume it, pass --overwrite to clear it, or \
                 choose another directory",
                dir.display(),
                names.join(", ")
            ),
        ));
    }
    if overwrite {
        for path in run_files(dir, true)? {
            let removed = if path.is_dir() && !path.is_symlink() {
                std::fs::remove_dir_all(&path)
            } else {
                std::fs::remove_file(&path)
            };
            removed.map_err(|source| io_error(&path, source))?;
        }
    }
    let id = new_run_id();
    let path = dir.join(RUN_ID_FILE);
    write_atomic(&path, format!("{id}\n").as_bytes()).map_err(|source| io_error(&path, source))?;
    Ok(id)
}

/// The run id a checkpoint written into `checkpoint_dir` records: its run directory's (the
/// parent's), if it has one.
///
/// # Errors
/// As [`read_run_id`].
pub(crate) fn run_id_for_checkpoint(checkpoint_dir: &Path) -> Result<Option<String>> {
    match checkpoint_dir.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => read_run_id(parent),
        _ => read_run_id(Path::new(".")),
    }
}

/// Checks that the checkpoint in `checkpoint_dir`, whose state file `state_path` records
/// `recorded`, belongs to the run of its directory: when the directory has a run id, the
/// checkpoint must carry the same one.
///
/// # Errors
/// [`AlgoError::Checkpoint`] naming the state file, for a checkpoint of another run (or one
/// without an id in a directory that has one).
pub(crate) fn check_checkpoint_run(
    checkpoint_dir: &Path,
    state_path: &Path,
    recorded: Option<&str>,
) -> Result<()> {
    let Some(expected) = run_id_for_checkpoint(checkpoint_dir)? else {
        return Ok(());
    };
    if recorded == Some(expected.as_str()) {
        return Ok(());
    }
    Err(AlgoError::Checkpoint {
        path: state_path.to_owned(),
        reason: format!(
            "belongs to run {}, not to run {expected} of its directory: it is another run's \
             checkpoint (start afresh with --overwrite, or resume the run that wrote it)",
            recorded.unwrap_or("(none recorded)")
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::is_run_file;

    #[test]
    fn only_run_outputs_count_as_a_used_directory() {
        for name in [
            "checkpoint-40",
            ".checkpoint-3.partial",
            "grpo_metrics.jsonl",
            "sft_metrics.csv",
            "run_id",
            "final_model",
            ".final_model.partial",
            "summary.json",
        ] {
            assert!(is_run_file(name, false), "{name}");
        }
        for name in [
            "config.json",
            "notes.txt",
            "checkpoint-",
            "checkpoint-x",
            "data",
        ] {
            assert!(!is_run_file(name, false), "{name}");
        }
        assert!(is_run_file("config.json", true));
    }
}
