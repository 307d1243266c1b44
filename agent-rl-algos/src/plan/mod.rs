//! The memory planner: how much device memory a training run needs, component by component, and
//! whether it fits.
//!
//! [`plan_memory`] takes a [`MemoryPlanRequest`] (model shape, method, LoRA, batch, lengths,
//! dtypes, checkpointing) and returns a [`MemoryPlan`]. The estimates follow what this crate's
//! trainers and `agent-rl-core`'s model keep alive (see [`estimate`] for every formula and where it
//! comes from), so they describe agent-rl's own peak, not a generic transformer's.
//!
//! ```
//! use agent_rl_algos::plan::{
//!     LoraPlan, MemoryPlanRequest, TrainMethod, WeightDtype, plan_memory, preset, parse_bytes,
//! };
//!
//! let request = MemoryPlanRequest {
//!     method: TrainMethod::Grpo,
//!     lora: Some(LoraPlan::all_linear(64)),
//!     weight_dtype: WeightDtype::Bf16,
//!     gradient_checkpointing: true,
//!     device_memory: Some(parse_bytes("80GB")?),
//!     ..MemoryPlanRequest::new(preset("qwen2.5-7b").expect("a preset"))
//! };
//! let plan = plan_memory(&request)?;
//! assert_eq!(plan.fits, Some(true));
//! # Ok::<(), agent_rl_algos::AlgoError>(())
//! ```

mod bytes;
pub mod estimate;
mod presets;
mod request;
mod shape;
#[cfg(test)]
mod tests;

pub use bytes::{format_bytes, parse_bytes};
pub use estimate::{MemoryBreakdown, MemoryPlan, plan_memory};
pub use presets::{PRESETS, preset};
pub use request::{
    LoraPlan, MAX_SEQUENCE_TOKENS, MAX_SEQUENCES_PER_STEP, MemoryPlanRequest, TargetModule,
    TrainMethod, WeightDtype,
};
pub use shape::ModelShape;
