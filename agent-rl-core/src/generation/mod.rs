//! Generation: sampling settings, batched decoding with a KV cache, teacher-forced scoring.

mod config;

pub use config::{FinishReason, SamplingConfig};
