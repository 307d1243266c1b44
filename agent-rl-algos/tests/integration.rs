//! Integration tests of agent-rl-algos.
