//! The training pipeline: stages (SFT, reward model, GRPO, PPO) run in order with held-out
//! evaluation before, between and after them, recorded in a run directory that survives
//! interruption and resume. The `agent-rl` CLI, the `grpo_qwen` example and the learning tests
//! all run through [`Pipeline`]; the stage order lives in `runner.rs` alone.

mod evaluator;
mod metrics_log;
mod observer;
mod report;
mod reward_curve;
mod rl_run;
mod run_dir;
mod runner;
mod stage;
mod tasks;

pub use evaluator::{Evaluator, ToolUseEvaluator};
pub use metrics_log::MetricsLog;
pub use observer::PipelineObserver;
pub use report::{PipelineReport, StageReport};
pub use reward_curve::reward_svg;
pub use run_dir::{RunDirectory, SUMMARY_FILE, save_model_dir};
pub use runner::{Pipeline, PipelineBuilder};
pub use stage::{DatasetStage, GrpoStage, PpoStage, RewardModelStage, RlStage, SftStage, Stage};
pub use tasks::read_tasks;
