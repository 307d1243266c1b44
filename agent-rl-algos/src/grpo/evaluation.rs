//! Held-out evaluation during GRPO training: every `eval_steps` optimiser steps (and at the
//! last one) the trainer's evaluator scores the policy, the scores join the step's metrics,
//! and the best-scoring model is kept.

use std::path::PathBuf;

use burn::module::AutodiffModule;
use burn::tensor::backend::AutodiffBackend;
use serde::{Deserialize, Serialize};

use super::trainer::GrpoTrainer;
use crate::error::Result;
use crate::evaluate::ToolUseScores;
use crate::metrics::StepMetrics;
use crate::pipeline::save_model_dir;

/// The directory, under the checkpoint directory, that holds the best model (Hugging Face
/// layout, with the tokenizer).
pub const BEST_MODEL_DIR: &str = "best_model";

/// The best held-out evaluation of a run: highest success rate, the earlier step on a tie.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BestEvaluation {
    /// The optimiser step evaluated.
    pub step: usize,
    /// Its scores.
    pub scores: ToolUseScores,
    /// Where the model of that step was saved (`<checkpoint dir>/best_model`), when the
    /// trainer checkpoints; otherwise it is kept in memory ([`GrpoTrainer::best_model`]).
    pub dir: Option<PathBuf>,
}

impl<B: AutodiffBackend> GrpoTrainer<B> {
    /// Evaluates after the step that produced `metrics` when it is due (`eval_steps`, or the
    /// last step), recording the scores in `metrics` and keeping the model when it is the best
    /// so far.
    pub(super) fn evaluate_if_due(&mut self, metrics: &mut StepMetrics) -> Result<()> {
        let Some(every) = self.config.eval_steps else {
            return Ok(());
        };
        let step = self.counters.global_step;
        if self.evaluator.is_none()
            || (!step.is_multiple_of(every) && step != self.config.max_steps)
        {
            return Ok(());
        }
        let model = self.model().valid();
        let Some(evaluator) = self.evaluator.as_mut() else {
            return Ok(());
        };
        let scores = evaluator.evaluate(&model, &self.tokenizer)?;
        metrics.held_out = Some(scores);
        let better = self
            .best
            .as_ref()
            .is_none_or(|best| scores.success_rate > best.scores.success_rate);
        if better {
            let dir = match &self.checkpointing {
                Some(checkpointing) => {
                    let dir = checkpointing.dir.join(BEST_MODEL_DIR);
                    save_model_dir(&dir, &model, &self.tokenizer)?;
                    self.best_model = None;
                    Some(dir)
                }
                None => {
                    self.best_model = Some(model);
                    None
                }
            };
            self.best = Some(BestEvaluation { step, scores, dir });
        }
        Ok(())
    }

    /// The best held-out evaluation so far (`None` without an evaluator and `eval_steps`).
    pub fn best_evaluation(&self) -> Option<&BestEvaluation> {
        self.best.as_ref()
    }

    /// The best-scoring model, when it is kept in memory (no checkpoint directory; otherwise
    /// it is in [`BestEvaluation::dir`]).
    pub fn best_model(&self) -> Option<&agent_rl_core::Qwen2ForCausalLm<B::InnerBackend>> {
        self.best_model.as_ref()
    }
}
