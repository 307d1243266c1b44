//! Serialisable trainer configurations.

mod grpo;
mod optimizer;
mod ppo;
mod sft;

pub use grpo::{GrpoConfig, MAX_COMPLETIONS_PER_STEP};
pub use optimizer::OptimizerConfig;
pub use ppo::PpoConfig;
pub use sft::{MAX_SFT_BATCH_SIZE, SftConfig};
