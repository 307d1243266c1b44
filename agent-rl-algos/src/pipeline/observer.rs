//! [`PipelineObserver`]: progress of a pipeline run, for a console bar, a log or a dashboard.
//! Libraries never print; applications implement this (the `agent-rl` CLI draws progress bars).

use crate::evaluate::ToolUseScores;
use crate::metrics::StepMetrics;

/// Callbacks of a pipeline run; every method defaults to doing nothing.
pub trait PipelineObserver: Send {
    /// A stage starts: `total_steps` optimiser steps (0 when unknown), counting from
    /// `first_step` (non-zero when a resumed stage continues).
    fn stage_started(&mut self, _stage: &str, _total_steps: usize, _first_step: usize) {}

    /// One optimiser step of `stage` finished.
    fn step(&mut self, _stage: &str, _metrics: &StepMetrics) {}

    /// `stage` finished.
    fn stage_finished(&mut self, _stage: &str) {}

    /// The model was evaluated at `point` (`before`, `after_<stage>`, `after`).
    fn evaluated(&mut self, _point: &str, _scores: &ToolUseScores) {}

    /// A stage was skipped because the run resumes from a later stage's checkpoint.
    fn stage_skipped(&mut self, _stage: &str) {}
}

/// Observes nothing.
impl PipelineObserver for () {}
