//! agent-rl-algos: see the crate README; work in progress (see the issues).
