//! `agent-rl serve` and the remote policy, driven over real HTTP on loopback ports.

mod chat;
mod cli;
mod client;
mod common;
mod errors;
mod eval;
mod lora;
mod rollouts;
mod security;
mod soak;
mod stream;
mod weights;
