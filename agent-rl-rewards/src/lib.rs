//! agent-rl-rewards: see the crate README; work in progress (see the issues).
