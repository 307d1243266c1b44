//! agent-rl's research studies on the toy tool-use task, and what they share.
//!
//! The studies are this crate's binaries (`src/bin/`): `grpo_gain` (GRPO against more SFT from
//! one warm-up), `grpo_k` (GRPO's group size K at a fixed completion budget) and `rm_pair_kinds`
//! (a reward model's held-out accuracy by kind of preference pair). Each runs as
//! `cargo run --release -p agent-rl-experiments --bin NAME -- --help`; their write-ups are in the
//! book's experiments section. They measure learning, not speed, so they live apart from the
//! benchmarks (`agent-rl-bench`), whose tuned `main` and summaries they reuse. Not published.
#![warn(missing_docs)]

mod arm;
mod warmup;

pub use arm::{GrpoArm, grpo, score};
pub use warmup::sft;
