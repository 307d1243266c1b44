//! agent-rl
