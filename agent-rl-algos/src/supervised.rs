//! What the supervised trainers (SFT, reward model) share: the step schedule over shuffled
//! micro-batches, the run's config file, checkpoint timing and the per-step bookkeeping.

use std::path::{Path, PathBuf};
use std::time::Instant;

use agent_rl_core::CoreError;
use agent_rl_core::atomic::write_atomic;
use burn::prelude::*;
use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

use crate::checkpoint_dir::write_checkpoint_dir;
use crate::error::{AlgoError, Result};
use crate::metrics::{StepMetrics, TrainObserver};

/// The first value of `tensor` (NaN when empty).
pub(crate) fn scalar<B: Backend>(tensor: Tensor<B, 1>) -> f64 {
    tensor.into_data().iter::<f64>().next().unwrap_or(f64::NAN)
}

/// The optimiser steps of a supervised run over `items` training items: each epoch shuffles
/// the items, cuts them into micro-batches of `batch_size` and groups `accumulation`
/// micro-batches into one step; the run takes `max_steps`, else `num_train_epochs` epochs.
#[derive(Debug, Clone)]
pub(crate) struct Schedule {
    items: usize,
    batch_size: usize,
    accumulation: usize,
    seed: u64,
    /// Optimiser steps of the run.
    pub total_steps: usize,
    eval_steps: Option<usize>,
    save_steps: Option<usize>,
}

/// The settings a [`Schedule`] reads from a supervised config.
pub(crate) struct ScheduleSettings {
    pub batch_size: usize,
    pub gradient_accumulation_steps: usize,
    pub num_train_epochs: usize,
    pub max_steps: Option<usize>,
    pub eval_steps: Option<usize>,
    pub save_steps: Option<usize>,
    pub seed: u64,
}

/// The [`ScheduleSettings`] of a supervised config (`SftConfig`, `RewardConfig`: both carry
/// these fields under the same names).
macro_rules! schedule_settings {
    ($config:expr) => {
        $crate::supervised::ScheduleSettings {
            batch_size: $config.batch_size,
            gradient_accumulation_steps: $config.optimizer.gradient_accumulation_steps,
            num_train_epochs: $config.num_train_epochs,
            max_steps: $config.max_steps,
            eval_steps: $config.eval_steps,
            save_steps: $config.save_steps,
            seed: $config.seed,
        }
    };
}
pub(crate) use schedule_settings;

impl Schedule {
    /// The schedule of `settings` over `items` items.
    pub fn new(items: usize, settings: ScheduleSettings) -> Self {
        let accumulation = settings.gradient_accumulation_steps;
        let steps_per_epoch = items.div_ceil(settings.batch_size).div_ceil(accumulation);
        Self {
            items,
            batch_size: settings.batch_size,
            accumulation,
            seed: settings.seed,
            total_steps: settings
                .max_steps
                .unwrap_or(settings.num_train_epochs * steps_per_epoch),
            eval_steps: settings.eval_steps,
            save_steps: settings.save_steps,
        }
    }

    /// Calls `step` with the micro-batches (item indices) of every optimiser step in turn,
    /// until [`Self::total_steps`] have run.
    ///
    /// # Errors
    /// The first error of `step`.
    pub fn run(&self, mut step: impl FnMut(&[&[usize]]) -> Result<()>) -> Result<()> {
        let mut rng = ChaCha8Rng::seed_from_u64(self.seed);
        let mut order: Vec<usize> = (0..self.items).collect();
        let mut done = 0;
        while done < self.total_steps {
            order.shuffle(&mut rng);
            let micro_batches: Vec<&[usize]> = order.chunks(self.batch_size).collect();
            for group in micro_batches.chunks(self.accumulation) {
                if done >= self.total_steps {
                    break;
                }
                step(group)?;
                done += 1;
            }
        }
        Ok(())
    }

    /// True after the last step.
    pub fn is_last(&self, steps_done: usize) -> bool {
        steps_done == self.total_steps
    }

    /// True when the run evaluates after `steps_done` steps: every `eval_steps` and at the end.
    pub fn eval_due(&self, steps_done: usize) -> bool {
        self.is_last(steps_done)
            || self
                .eval_steps
                .is_some_and(|n| steps_done.is_multiple_of(n))
    }

    /// Writes `dir/checkpoint-<steps_done>` with `save` every `save_steps`, adding it to
    /// `written`.
    ///
    /// # Errors
    /// As [`write_checkpoint_dir`].
    pub fn checkpoint(
        &self,
        dir: &Path,
        steps_done: usize,
        written: &mut Vec<PathBuf>,
        save: impl FnOnce(&Path) -> Result<()>,
    ) -> Result<()> {
        if self
            .save_steps
            .is_some_and(|n| steps_done.is_multiple_of(n))
        {
            let path = dir.join(format!("checkpoint-{steps_done}"));
            write_checkpoint_dir(&path, save)?;
            written.push(path);
        }
        Ok(())
    }
}

/// Writes `config` as pretty JSON to `dir/file_name`, creating `dir`.
///
/// # Errors
/// [`AlgoError::Core`] naming the path that cannot be written.
pub(crate) fn write_run_config(dir: &Path, file_name: &str, config: &impl Serialize) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(|source| io_error(dir, source))?;
    let path = dir.join(file_name);
    let json = serde_json::to_string_pretty(config)
        .map_err(|err| AlgoError::input("config", err.to_string()))?;
    write_atomic(&path, json.as_bytes()).map_err(|source| io_error(&path, source))
}

fn io_error(path: &Path, source: std::io::Error) -> AlgoError {
    AlgoError::Core(CoreError::Write {
        path: path.to_owned(),
        source,
    })
}

/// Ends a step: times it from `started`, shows it to the observer and keeps it in `history`.
pub(crate) fn record_step(
    mut metrics: StepMetrics,
    started: Instant,
    observer: &mut Option<Box<dyn TrainObserver>>,
    history: &mut Vec<StepMetrics>,
) {
    metrics.step_time_secs = started.elapsed().as_secs_f64();
    if let Some(observer) = observer.as_mut() {
        observer.on_step(&metrics);
    }
    history.push(metrics);
}
