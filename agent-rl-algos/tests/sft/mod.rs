//! Supervised fine-tuning: masks, packing, training.

mod common;
mod masking;
mod training;
