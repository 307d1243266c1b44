//! Tests of the BFCL adapter.
//!
//! The data tests print their figures (agreement, per-category replay accuracy, skips).
#![allow(clippy::print_stderr)]

mod checker;
mod decoder;
mod environment;
mod golden;
mod grpo_tiny;
mod multi_turn;
mod nesting_limits;
mod replay;
mod results_file;
mod runner;
mod training;

use std::path::PathBuf;

/// The BFCL data folder under `AGENT_RL_DATA`. The tests that read it are `#[ignore]`d, so a
/// plain `cargo test` reports them as ignored; run with `--include-ignored` they fail loudly
/// when the data is missing instead of passing without testing anything.
pub fn data_dir() -> PathBuf {
    let root = std::env::var_os("AGENT_RL_DATA")
        .expect("AGENT_RL_DATA must name the benchmark data folder (e.g. ../shared/data)");
    let dir = PathBuf::from(root).join("bfcl");
    assert!(
        dir.is_dir(),
        "AGENT_RL_DATA is set but {} does not exist",
        dir.display()
    );
    dir
}
