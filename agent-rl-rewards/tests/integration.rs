//! Integration tests of agent-rl-rewards (one binary; one module per topic).
#![allow(clippy::unwrap_used)]

mod argument_match;
mod matching;
mod properties;
mod rewards;
mod support;
