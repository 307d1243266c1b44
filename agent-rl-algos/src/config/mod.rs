//! Serialisable trainer configurations.

mod checks;
mod grpo;
mod optimizer;
mod ppo;
mod reward;
mod sft;

pub use grpo::{GrpoConfig, MAX_COMPLETIONS_PER_STEP};
pub use optimizer::OptimizerConfig;
pub use ppo::PpoConfig;
pub use reward::RewardConfig;
pub use sft::{MAX_SFT_BATCH_SIZE, SftConfig};
