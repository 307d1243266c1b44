//! Policy-gradient losses on burn tensors: importance ratios, the clipped GRPO objective and its
//! normalisations, and PPO's clipped policy and value losses.

mod aggregate;
mod grpo;
mod importance;
mod mask;
mod metrics;
mod ppo;

pub use aggregate::{LossType, aggregate_loss, masked_mean};
pub use grpo::{GrpoLoss, GrpoLossInputs, GrpoLossOutput};
pub use importance::{ImportanceSamplingLevel, log_importance_weights};
pub use mask::completion_loss_mask;
pub use metrics::GrpoLossMetrics;
pub use ppo::{PpoLoss, PpoLossInputs, PpoLossMetrics, PpoLossOutput};
