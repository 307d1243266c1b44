//! # agent-rl-eval
//!
//! Benchmark adapters for agent-rl: [`bfcl`] (Berkeley Function Calling Leaderboard, AST
//! checker faithful to the official one) and [`tau`] (τ-bench retail and airline tool
//! environments with a simulated user) and [`swe`] (SWE-bench Verified: predictions, the
//! official harness bridge, a local grader, an agent scaffold and its RL environment).
//!
//! Benchmark data is never embedded: every loader reads the upstream layout from a directory
//! the caller gives (the tests use `AGENT_RL_DATA`).
#![warn(missing_docs)]

mod batch;
pub mod bfcl;
pub mod error;
pub mod failure;
pub mod swe;
pub mod tau;

pub use error::{EvalError, Result};
pub use failure::{ItemFailure, OverlongPrompt};
