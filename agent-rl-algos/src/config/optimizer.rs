//! Optimiser and learning-rate schedule settings shared by all trainers.

use serde::{Deserialize, Serialize};

use crate::error::{AlgoError, Result};
use crate::optim::LrSchedule;

/// AdamW, learning-rate schedule, gradient clipping and accumulation.
///
/// Defaults are PyTorch's / Hugging Face `TrainingArguments`' (AdamW betas 0.9/0.999, eps 1e-8, no weight
/// decay, linear decay without warmup, global-norm clipping at 1.0); the learning rate is set by the
/// trainer config that embeds this one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct OptimizerConfig {
    /// Peak learning rate (after warmup). Default 1e-6 (TRL's GRPO default). Must be finite and > 0.
    pub learning_rate: f64,
    /// AdamW β₁. Default 0.9. Range [0, 1).
    pub adam_beta1: f32,
    /// AdamW β₂. Default 0.999. Range [0, 1).
    pub adam_beta2: f32,
    /// AdamW ε. Default 1e-8 (PyTorch; burn's own default is 1e-5). Must be > 0.
    pub adam_epsilon: f32,
    /// Decoupled weight decay. Default 0 (PyTorch's AdamW uses 0.01, HF's Trainer 0). Must be ≥ 0.
    pub weight_decay: f32,
    /// Shape of the learning-rate schedule after warmup. Default [`LrSchedule::Linear`].
    pub lr_scheduler_type: LrSchedule,
    /// Linear warmup steps; when 0, `warmup_ratio` of the total steps is used. Default 0.
    pub warmup_steps: usize,
    /// Fraction of the total steps used for warmup when `warmup_steps == 0`. Default 0. Range [0, 1].
    pub warmup_ratio: f64,
    /// Clip gradients to this global L2 norm (PyTorch's `clip_grad_norm_`); `None` = no clipping.
    /// Default `Some(1.0)`. Must be finite and > 0.
    pub max_grad_norm: Option<f32>,
    /// Micro-batches whose gradients are summed before one optimiser step. Default 1. Must be ≥ 1.
    pub gradient_accumulation_steps: usize,
}

impl Default for OptimizerConfig {
    fn default() -> Self {
        Self {
            learning_rate: 1e-6,
            adam_beta1: 0.9,
            adam_beta2: 0.999,
            adam_epsilon: 1e-8,
            weight_decay: 0.0,
            lr_scheduler_type: LrSchedule::Linear,
            warmup_steps: 0,
            warmup_ratio: 0.0,
            max_grad_norm: Some(1.0),
            gradient_accumulation_steps: 1,
        }
    }
}

impl OptimizerConfig {
    /// Checks every field's range; `prefix` is prepended to field names in errors (e.g. `optimizer.`).
    ///
    /// # Errors
    /// [`AlgoError::InvalidConfig`] naming the first invalid field and how to fix it.
    pub fn validate_with_prefix(&self, prefix: &str) -> Result<()> {
        let bad = |field: &str, reason: String| {
            Err(AlgoError::config(format!("{prefix}{field}"), reason))
        };
        if !(self.learning_rate.is_finite() && self.learning_rate > 0.0) {
            return bad(
                "learning_rate",
                format!(
                    "is {}; set a finite value > 0 (e.g. 1e-6)",
                    self.learning_rate
                ),
            );
        }
        for (field, beta) in [
            ("adam_beta1", self.adam_beta1),
            ("adam_beta2", self.adam_beta2),
        ] {
            if !(0.0..1.0).contains(&beta) {
                return bad(
                    field,
                    format!("is {beta}; must be in [0, 1) (PyTorch default 0.9 / 0.999)"),
                );
            }
        }
        if !(self.adam_epsilon.is_finite() && self.adam_epsilon > 0.0) {
            return bad(
                "adam_epsilon",
                format!(
                    "is {}; must be > 0 (PyTorch default 1e-8)",
                    self.adam_epsilon
                ),
            );
        }
        if !(self.weight_decay.is_finite() && self.weight_decay >= 0.0) {
            return bad(
                "weight_decay",
                format!("is {}; must be finite and >= 0", self.weight_decay),
            );
        }
        if !(0.0..=1.0).contains(&self.warmup_ratio) {
            return bad(
                "warmup_ratio",
                format!("is {}; must be in [0, 1]", self.warmup_ratio),
            );
        }
        if let Some(norm) = self.max_grad_norm
            && !(norm.is_finite() && norm > 0.0)
        {
            return bad(
                "max_grad_norm",
                format!("is {norm}; set a value > 0, or null to disable clipping"),
            );
        }
        if self.gradient_accumulation_steps == 0 {
            return bad(
                "gradient_accumulation_steps",
                "is 0; must be >= 1 (1 = no accumulation)".into(),
            );
        }
        Ok(())
    }

    /// Checks every field's range (field names in errors carry no prefix).
    ///
    /// # Errors
    /// [`AlgoError::InvalidConfig`] naming the first invalid field.
    pub fn validate(&self) -> Result<()> {
        self.validate_with_prefix("")
    }

    /// Warmup steps for a run of `total_steps` optimiser steps (`warmup_steps`, else
    /// `ceil(warmup_ratio × total_steps)`, as Hugging Face's Trainer computes it).
    pub fn warmup_steps_for(&self, total_steps: usize) -> usize {
        if self.warmup_steps > 0 {
            self.warmup_steps
        } else {
            (self.warmup_ratio * total_steps as f64).ceil() as usize
        }
    }

    /// Learning rate of optimiser step `step` (0-based) in a run of `total_steps` steps.
    pub fn learning_rate_at(&self, step: usize, total_steps: usize) -> f64 {
        self.learning_rate
            * self
                .lr_scheduler_type
                .factor(step, self.warmup_steps_for(total_steps), total_steps)
    }
}
