//! Policy-gradient losses on burn tensors: importance ratios, the clipped GRPO objective and its
//! normalisations, PPO's clipped policy and value losses, and the truncated importance weights
//! that correct for a separate rollout engine.

mod aggregate;
mod grpo;
mod importance;
mod mask;
mod metrics;
mod ppo;
mod sampler_correction;

pub use aggregate::{LossType, aggregate_loss, masked_mean};
pub use grpo::{GrpoLoss, GrpoLossInputs, GrpoLossOutput};
pub use importance::{ImportanceSamplingLevel, log_importance_weights};
pub use mask::completion_loss_mask;
pub use metrics::GrpoLossMetrics;
pub use ppo::{PpoLoss, PpoLossInputs, PpoLossMetrics, PpoLossOutput};
pub use sampler_correction::{
    SamplerCorrection, SamplerMismatch, SamplerMismatchMetrics, truncated_importance_weights,
};
