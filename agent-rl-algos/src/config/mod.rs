//! Serialisable trainer configurations.

mod grpo;
mod optimizer;
mod sft;

pub use grpo::GrpoConfig;
pub use optimizer::OptimizerConfig;
pub use sft::SftConfig;
