//! Integration tests of agent-rl-core, one binary (see STYLE.md §6).
#![allow(clippy::unwrap_used)]

mod checkpointing;
mod common;
mod continuation;
mod fused_model;
mod generate_rows;
mod generation;
mod golden_logits;
mod input_checks;
mod load_errors;
mod lora_golden;
mod lora_half_base;
mod lora_model;
mod malformed_inputs;
mod save_round_trip;
mod score_head;
mod smollm2_golden;
mod template_golden;
