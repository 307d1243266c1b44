//! What agent-rl's benchmark programs share: the benchmarked model shapes, the plain-template
//! tokenizer, flag values, medians, the process's memory figures and the tuned `main`.
//!
//! The programs are this crate's binaries (`src/bin/`), run as
//! `cargo run --release -p agent-rl-bench --bin bench_grpo -- --help`; the book's benchmarks page
//! lists them with their figures. This crate is not published and no library crate depends on it.
#![warn(missing_docs)]

mod flags;
mod lcg;
mod proc_status;
mod process;
mod shapes;
mod stats;
mod tokenizer;

pub use flags::{NotPositive, OnOff, positive};
pub use lcg::Lcg;
pub use proc_status::{peak_rss_bytes, rss_bytes};
pub use process::run_tuned;
pub use shapes::{bench_config, qwen05_layers_config};
pub use stats::{mean_sd, median};
pub use tokenizer::plain_toy_tokenizer;

/// The global allocator [`tuned_main!`] installs (`agent_rl::host_allocator`).
pub use agent_rl::host_allocator::HostAllocator;

/// The `anyhow` the mains [`tuned_main!`] writes return.
#[doc(hidden)]
pub use anyhow;

/// Writes the program's `main` as the CLI's: mimalloc (purging off) as the global allocator, and
/// `$run` (a `fn() -> anyhow::Result<()>`) driven from a worker of the compute pool
/// ([`run_tuned`]), so that peak memory and step times are those the CLI would see.
///
/// ```
/// fn run_main() -> anyhow::Result<()> {
///     Ok(())
/// }
///
/// agent_rl_bench::tuned_main!(run_main);
/// ```
#[macro_export]
macro_rules! tuned_main {
    ($run:path) => {
        /// mimalloc with purging off (`agent_rl::host_allocator`): stable peak memory from run
        /// to run.
        #[global_allocator]
        static ALLOCATOR: $crate::HostAllocator = $crate::HostAllocator;

        fn main() -> $crate::anyhow::Result<()> {
            $crate::run_tuned($run)
        }
    };
}
