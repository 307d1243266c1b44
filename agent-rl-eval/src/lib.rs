//! # agent-rl-eval
//!
//! Benchmark adapters for agent-rl: [`bfcl`] (Berkeley Function Calling Leaderboard, AST
//! checker faithful to the official one) and [`tau`] (τ-bench retail and airline tool
//! environments with a simulated user). SWE-bench Verified is planned.
//!
//! Benchmark data is never embedded: every loader reads the upstream layout from a directory
//! the caller gives (the tests use `AGENT_RL_DATA`).
#![warn(missing_docs)]

pub mod bfcl;
pub mod error;
pub mod tau;

pub use error::{EvalError, Result};
