//! Integration tests of the `agent-rl` facade and CLI, one binary.
#![allow(clippy::unwrap_used)]

mod cli;
mod cli_config;
mod cli_crash;
mod cli_dry_run;
mod cli_eval_failures;
mod cli_lora;
mod cli_plan;
mod cli_reliability;
mod cli_rm_score;
mod cli_swe_grade;
mod cli_train;
#[cfg(feature = "serve")]
mod serve;
