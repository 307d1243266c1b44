//! Integration tests of agent-rl-eval (one test binary; one module per benchmark).

mod bfcl;
mod tau;
