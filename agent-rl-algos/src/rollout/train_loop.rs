//! The outer loop of an RL trainer (GRPO, PPO): steps until `max_steps`, observers after each
//! step, checkpoints every `every_steps` and at the end, and the report.

use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::error::{AlgoError, Result};
use crate::metrics::{StepMetrics, TrainObserver};

/// What a trainer's `train` call did.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct TrainReport {
    /// Metrics of every generation step run by this call, in order.
    pub steps: Vec<StepMetrics>,
    /// Steps done in total (resumed ones included) when the call returned.
    pub global_step: usize,
    /// Wall-clock seconds of the call.
    pub elapsed_secs: f64,
    /// Checkpoint directories written by this call.
    pub checkpoints: Vec<PathBuf>,
    /// GRPO with an evaluator and `eval_steps`: the best held-out evaluation of the run.
    #[serde(default)]
    pub best_evaluation: Option<crate::grpo::BestEvaluation>,
}

impl TrainReport {
    /// Mean of `reward` over the generation steps in `range` (indices into [`Self::steps`]);
    /// `None` for an empty range.
    pub fn mean_reward(&self, range: std::ops::Range<usize>) -> Option<f32> {
        let rewards: Vec<f32> = self.steps.get(range)?.iter().map(|m| m.reward).collect();
        (!rewards.is_empty()).then(|| rewards.iter().sum::<f32>() / rewards.len() as f32)
    }
}

/// Where and how often a trainer writes checkpoints.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Checkpointing {
    pub dir: PathBuf,
    pub every_steps: usize,
}

impl Checkpointing {
    /// Checks that checkpoints, when asked for, come every ≥ 1 `steps` (the trainer's unit of
    /// a step, e.g. "optimiser steps").
    pub(crate) fn check(checkpointing: Option<&Self>, steps: &str) -> Result<()> {
        if checkpointing.is_some_and(|c| c.every_steps == 0) {
            return Err(AlgoError::config(
                "checkpointing.every_steps",
                format!("is 0; set >= 1 {steps} between checkpoints"),
            ));
        }
        Ok(())
    }
}

/// What [`train_loop`] needs of a trainer.
pub(crate) trait LoopedTrainer {
    /// Steps done so far.
    fn global_step(&self) -> usize;
    /// Steps to reach.
    fn max_steps(&self) -> usize;
    /// The observers to call after each step and at the end.
    fn observers(&mut self) -> &mut Vec<Box<dyn TrainObserver>>;
    /// The checkpoint settings, if any.
    fn checkpointing(&self) -> Option<&Checkpointing>;
    /// Writes a checkpoint to `dir`.
    fn save_checkpoint(&self, dir: &Path) -> Result<()>;
}

/// Runs `step` until `max_steps` is reached, calling the observers after every step and writing
/// `checkpoint-<step>` directories when a multiple of `every_steps` is crossed and at the end.
pub(crate) fn train_loop<T: LoopedTrainer>(
    trainer: &mut T,
    mut step: impl FnMut(&mut T) -> Result<StepMetrics>,
) -> Result<TrainReport> {
    let started = Instant::now();
    let mut report = TrainReport::default();
    while trainer.global_step() < trainer.max_steps() {
        let before = trainer.global_step();
        let metrics = step(trainer)?;
        for observer in trainer.observers().iter_mut() {
            observer.on_step(&metrics);
        }
        report.steps.push(metrics);
        if let Some(checkpointing) = trainer.checkpointing().cloned() {
            let every = checkpointing.every_steps.max(1);
            let now = trainer.global_step();
            if before / every != now / every || now == trainer.max_steps() {
                let dir = checkpointing.dir.join(format!("checkpoint-{now}"));
                trainer.save_checkpoint(&dir)?;
                report.checkpoints.push(dir);
            }
        }
    }
    let last = report.steps.last();
    for observer in trainer.observers().iter_mut() {
        observer.on_train_end(last);
    }
    report.global_step = trainer.global_step();
    report.elapsed_secs = started.elapsed().as_secs_f64();
    Ok(report)
}
