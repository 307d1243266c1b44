//! Supervised fine-tuning: masks, packing, training.

mod common;
mod lora;
mod masking;
mod training;
