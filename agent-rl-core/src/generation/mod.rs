//! Generation: sampling settings, batched decoding with a KV cache, teacher-forced scoring.

mod config;
mod continuation;
mod generate;
mod logprobs;
mod rows;
mod sampler;
mod shared_prefix;
mod token_generator;

pub use config::{FinishReason, SamplingConfig};
pub use continuation::{Continued, generate_continuations};
pub use generate::{
    Generation, StopStringCheck, check_token_ids, generate_ids, generate_ids_with_stop,
};
pub use logprobs::{TokenScores, token_logprobs, token_scores, token_scores_checkpointed};
pub use rows::{GenerationRow, RowHooks, RowStopCheck, TokenSink, generate_rows};
pub use shared_prefix::UniqueRows;
pub(crate) use shared_prefix::index_tensor;
pub use token_generator::TokenGenerator;
