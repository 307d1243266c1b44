//! agent-rl-eval: see the crate README; work in progress (see the issues).
