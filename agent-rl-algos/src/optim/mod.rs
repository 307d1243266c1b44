//! Optimiser helpers: AdamW with PyTorch's defaults, global-norm gradient clipping, learning-rate
//! schedules.

mod adamw;
mod clip;
mod schedule;

pub use adamw::{adamw_config, init_adamw};
pub use clip::clip_grad_norm;
pub use schedule::LrSchedule;
