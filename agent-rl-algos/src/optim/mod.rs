//! Optimiser helpers: AdamW with PyTorch's defaults, global-norm gradient clipping, learning-rate
//! schedules, and the clipped AdamW step trainers take.

mod adamw;
mod clip;
mod schedule;
mod step;

pub use adamw::{adamw_config, init_adamw};
pub use clip::clip_grad_norm;
pub use schedule::LrSchedule;
pub use step::clipped_adamw_step;
