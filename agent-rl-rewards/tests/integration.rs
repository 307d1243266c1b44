//! Integration tests of agent-rl-rewards (one binary; one module per topic).
#![allow(clippy::unwrap_used)]

mod matching;
