//! Integration tests of agent-rl-eval (one test binary; one module per benchmark).
#![allow(clippy::unwrap_used)]

mod bfcl;
mod malformed_inputs;
mod swe;
mod tau;
