//! Guards: per-episode penalties for the ways a policy farms tool-use rewards.
//!
//! Each guard counts events in an episode (calls beyond the expected count, duplicate calls,
//! hallucinated tools, invalid calls, an empty final answer, truncated turns) or measures its
//! length (a DAPO-style soft over-length penalty). Penalties grow with the count but are capped
//! per episode, and no guard ever pays for anything: a guard can only lower a score.

mod config;
mod overlong;
mod penalties;

pub use config::{GuardConfig, OverlongConfig};
pub use overlong::overlong_penalty;
pub use penalties::{GuardPenalties, Guards};
