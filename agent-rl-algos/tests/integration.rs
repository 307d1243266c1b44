//! Integration tests of agent-rl-algos (one binary, see STYLE.md §6).
// Learning tests print their curves for the CI log.
#![allow(clippy::print_stderr)]

mod advantages_props;
mod config;
mod gae_props;
mod grpo;
mod grpo_golden;
mod loss_props;
mod optim;
mod ppo;
mod ppo_golden;
mod sft;
mod toy;

/// The CPU autodiff backend of the tests.
pub type B = burn::backend::Autodiff<burn::backend::Flex>;
