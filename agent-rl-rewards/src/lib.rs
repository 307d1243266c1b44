//! # agent-rl-rewards
//!
//! Composable tool-use rewards (work in progress; see issue 3).
#![warn(missing_docs)]
#![cfg_attr(test, allow(clippy::unwrap_used))]

pub mod error;
pub mod matching;

pub use error::{Result, RewardError};
