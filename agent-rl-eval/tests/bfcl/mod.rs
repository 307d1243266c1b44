//! Tests of the BFCL adapter.
//!
//! The data tests print their figures (agreement, per-category replay accuracy, skips).
#![allow(clippy::print_stderr)]

mod checker;
mod decoder;
mod golden;
mod grpo_tiny;
mod replay;
mod results_file;
mod runner;
mod training;

use std::path::PathBuf;

/// The BFCL data folder under `AGENT_RL_DATA`, or `None` (with a note) when the variable is
/// unset. Panics when it is set but the folder is missing: CI must not skip silently.
pub fn data_dir() -> Option<PathBuf> {
    let Some(root) = std::env::var_os("AGENT_RL_DATA") else {
        eprintln!("AGENT_RL_DATA is not set: skipping the tests over the real BFCL data");
        return None;
    };
    let dir = PathBuf::from(root).join("bfcl");
    assert!(
        dir.is_dir(),
        "AGENT_RL_DATA is set but {} does not exist",
        dir.display()
    );
    Some(dir)
}
