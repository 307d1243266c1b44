//! Generation: sampling settings, batched decoding with a KV cache, teacher-forced scoring.

mod config;
mod generate;
mod logprobs;
mod sampler;

pub use config::{FinishReason, SamplingConfig};
pub use generate::{Generation, StopStringCheck, generate_ids, generate_ids_with_stop};
pub use logprobs::{TokenScores, token_logprobs, token_scores};
