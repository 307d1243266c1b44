//! [`GrpoConfig`]: every setting of a GRPO run.

use agent_rl_core::SamplingConfig;
use serde::{Deserialize, Serialize};

use crate::advantages::AdvantageScaling;
use crate::config::{OptimizerConfig, checks};
use crate::error::{AlgoError, Result};
use crate::kl::KlEstimator;
use crate::loss::{ImportanceSamplingLevel, LossType};

/// The most completions one GRPO step may sample (`prompts_per_step × num_generations`): the
/// rollouts, their token rows and scores are all held in memory at once, and 65,536 is already
/// 64× TRL's largest published recipes.
pub const MAX_COMPLETIONS_PER_STEP: usize = 1 << 16;

/// Settings of a GRPO run (Group Relative Policy Optimization, [DeepSeekMath](https://arxiv.org/abs/2402.03300)).
///
/// Field names and defaults follow TRL's `GRPOConfig` (1.16) where TRL has the setting, so a TRL
/// recipe carries over. Each step samples `num_generations` completions for each of
/// `prompts_per_step` prompts, scores them, turns rewards into group-relative advantages and takes
/// `num_iterations` optimiser passes over the batch.
///
/// ```
/// use agent_rl_algos::{GrpoConfig, LossType};
/// let config = GrpoConfig { loss_type: LossType::Grpo, beta: 0.04, ..GrpoConfig::default() }
///     .with_max_completion_length(64);
/// config.validate()?;
/// # Ok::<(), agent_rl_algos::AlgoError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct GrpoConfig {
    /// Completions sampled per prompt (the group size K). Default 8. Must be ≥ 2: advantages are
    /// relative to the group.
    pub num_generations: usize,
    /// Prompts per optimiser step; the batch holds `prompts_per_step × num_generations` completions.
    /// Default 8. Must be ≥ 1.
    pub prompts_per_step: usize,
    /// Optimiser steps to run. Default 100. Must be ≥ 1.
    pub max_steps: usize,
    /// μ: optimisation passes over each generated batch, reusing the rollouts with their stored
    /// old log-probabilities (importance ratios then differ from 1). Default 1. Must be ≥ 1.
    pub num_iterations: usize,
    /// How per-token losses are normalised. Default [`LossType::Dapo`] (TRL's default).
    pub loss_type: LossType,
    /// Importance ratio per token (GRPO) or per sequence ([GSPO](https://arxiv.org/abs/2507.18071)).
    /// Default [`ImportanceSamplingLevel::Token`].
    pub importance_sampling_level: ImportanceSamplingLevel,
    /// KL coefficient β. `0` = no KL term and no reference model is kept. Default 0. Must be ≥ 0.
    pub beta: f32,
    /// Estimator of the per-token KL to the reference model. Default [`KlEstimator::K3`] (TRL's only one).
    pub kl_estimator: KlEstimator,
    /// Multiply the per-token KL by the importance ratio π/π_old (TRL's `use_bias_correction_kl`,
    /// default true there and here). Only matters when `beta > 0` and `num_iterations > 1`.
    pub use_bias_correction_kl: bool,
    /// Lower clip range ε: ratios below `1 − ε` are clipped. Default 0.2. Range (0, 1).
    pub epsilon: f32,
    /// Upper clip range; ratios above `1 + epsilon_high` are clipped. `None` = `epsilon`.
    /// DAPO's clip-higher ([arXiv:2503.14476](https://arxiv.org/abs/2503.14476)) uses 0.28. Must be > 0.
    pub epsilon_high: Option<f32>,
    /// Two-sided clipping ([arXiv:2505.22617](https://arxiv.org/abs/2505.22617)): the unclipped ratio
    /// is capped at `delta`. `None` = off. Must be > 1 (recommended > 1 + `epsilon_high`).
    pub delta: Option<f32>,
    /// How advantages are scaled by the reward standard deviation. Default [`AdvantageScaling::Group`].
    pub scale_rewards: AdvantageScaling,
    /// Exclude completions cut off by `max_completion_length` from the loss (DAPO). Default false.
    pub mask_truncated_completions: bool,
    /// Drop groups whose rewards are all equal (zero advantage, no signal) before the update — DAPO's
    /// dynamic sampling without resampling. Default false.
    pub filter_zero_variance_groups: bool,
    /// Left-truncate prompts to this many tokens; `None` = no truncation. Default `None`. Must be ≥ 1.
    pub max_prompt_length: Option<usize>,
    /// Completion budget in tokens (also the `dr_grpo` normaliser). Default 256. Must equal
    /// `sampling.max_new_tokens`; set both with [`GrpoConfig::with_max_completion_length`].
    pub max_completion_length: usize,
    /// Multi-turn rollouts: most tool-call rounds per episode before it is stopped. Default 8. ≥ 1.
    pub max_tool_iterations: usize,
    /// Multi-turn rollouts: execute at most this many tool calls per assistant turn; `None` = all
    /// (default). `Some(1)` reproduces τ-bench's original agent loop.
    pub max_tool_calls_per_turn: Option<usize>,
    /// Sampling settings of the rollouts (temperature 1 by default: GRPO needs diverse samples).
    pub sampling: SamplingConfig,
    /// Weight of each reward function, in the order they are added; empty = all 1. Default empty.
    pub reward_weights: Vec<f32>,
    /// Periodically move the reference model toward the policy (TR-DPO, [arXiv:2404.09656](https://arxiv.org/abs/2404.09656)).
    /// Needs `beta > 0`. Default false.
    pub sync_ref_model: bool,
    /// Mix-up α of the reference sync: `ref ← α·policy + (1 − α)·ref`. Default 0.6. Range [0, 1].
    pub ref_model_mixup_alpha: f32,
    /// Steps between reference syncs. Default 512. Must be ≥ 1.
    pub ref_model_sync_steps: usize,
    /// Optimiser and schedule. Default: [`OptimizerConfig::default`] (learning rate 1e-6).
    pub optimizer: OptimizerConfig,
    /// Seed of the run (sampling, shuffling, curriculum). Default 42.
    pub seed: u64,
    /// Activation checkpointing in the policy's training forward: keep only each decoder
    /// layer's input and re-run the layer in the backward pass (less memory, one more forward
    /// of the layers per micro-batch; same gradients). Rows then run their whole sequence
    /// (a group does not share its prompt's forward). Default false.
    pub gradient_checkpointing: bool,
    /// Optimiser steps between held-out evaluations during training (TRL's `eval_steps`), when
    /// the trainer has an evaluator; the last step is always evaluated. The scores are logged
    /// with the step's metrics (`eval/format_accuracy`, `eval/argument_match`,
    /// `eval/success_rate`) and the best-scoring model is kept. Default `None` (no evaluation
    /// during training). Must be ≥ 1 when set.
    pub eval_steps: Option<usize>,
    /// Cap of the truncated importance sampling that corrects for a separate rollout engine
    /// (an inference server, see `GrpoTrainerBuilder::with_rollout_source`): each policy token's
    /// loss is weighted by `min(exp(log π_learner − log π_sampler), cap)`, with the learner's
    /// log-probabilities recomputed before the update (TRL's `vllm_importance_sampling_cap`,
    /// token truncation; [Yao et al. 2025](https://fengyao.notion.site/off-policy-rl)). Unused
    /// when rollouts run on the learner itself (the default). Default `Some(2.0)`; `None` = no
    /// correction. Must be finite and > 0.
    pub rollout_importance_sampling_cap: Option<f32>,
}

impl Default for GrpoConfig {
    fn default() -> Self {
        let max_completion_length = 256;
        Self {
            num_generations: 8,
            prompts_per_step: 8,
            max_steps: 100,
            num_iterations: 1,
            loss_type: LossType::Dapo,
            importance_sampling_level: ImportanceSamplingLevel::Token,
            beta: 0.0,
            kl_estimator: KlEstimator::K3,
            use_bias_correction_kl: true,
            epsilon: 0.2,
            epsilon_high: None,
            delta: None,
            scale_rewards: AdvantageScaling::Group,
            mask_truncated_completions: false,
            filter_zero_variance_groups: false,
            max_prompt_length: None,
            max_completion_length,
            max_tool_iterations: 8,
            max_tool_calls_per_turn: None,
            sampling: SamplingConfig {
                max_new_tokens: max_completion_length,
                ..SamplingConfig::default()
            },
            reward_weights: Vec::new(),
            sync_ref_model: false,
            ref_model_mixup_alpha: 0.6,
            ref_model_sync_steps: 512,
            optimizer: OptimizerConfig::default(),
            seed: 42,
            gradient_checkpointing: false,
            eval_steps: None,
            rollout_importance_sampling_cap: Some(2.0),
        }
    }
}

impl GrpoConfig {
    /// Sets `max_completion_length` and `sampling.max_new_tokens` together.
    #[must_use]
    pub fn with_max_completion_length(mut self, tokens: usize) -> Self {
        self.max_completion_length = tokens;
        self.sampling.max_new_tokens = tokens;
        self
    }

    /// The upper clip range actually used: `epsilon_high`, else `epsilon`.
    pub fn effective_epsilon_high(&self) -> f32 {
        self.epsilon_high.unwrap_or(self.epsilon)
    }

    /// Completions per optimiser step (`prompts_per_step × num_generations`).
    pub fn completions_per_step(&self) -> usize {
        self.prompts_per_step.saturating_mul(self.num_generations)
    }

    /// True when a frozen reference model must be kept (`beta != 0`).
    pub fn needs_reference_model(&self) -> bool {
        self.beta != 0.0
    }

    /// Checks every field's range and the consistency between fields.
    ///
    /// # Errors
    /// [`AlgoError::InvalidConfig`] naming the first invalid field and how to fix it.
    pub fn validate(&self) -> Result<()> {
        let bad = |field: &str, reason: String| Err(AlgoError::config(field, reason));
        if self.eval_steps == Some(0) {
            return bad(
                "eval_steps",
                "is 0; set >= 1 optimiser steps between evaluations, or leave it unset".into(),
            );
        }
        if self.num_generations < 2 {
            return bad(
                "num_generations",
                format!(
                    "is {}; set >= 2: advantages compare completions within a group",
                    self.num_generations
                ),
            );
        }
        let completions = self.prompts_per_step.checked_mul(self.num_generations);
        if completions.is_none_or(|count| count > MAX_COMPLETIONS_PER_STEP) {
            return bad(
                "num_generations",
                format!(
                    "{} × prompts_per_step {} completions per step exceed the limit of \
                     {MAX_COMPLETIONS_PER_STEP} held in memory at once; lower num_generations or \
                     prompts_per_step",
                    self.num_generations, self.prompts_per_step
                ),
            );
        }
        checks::at_least_one(&[
            ("prompts_per_step", self.prompts_per_step),
            ("max_steps", self.max_steps),
            ("num_iterations", self.num_iterations),
            ("max_completion_length", self.max_completion_length),
            ("max_tool_iterations", self.max_tool_iterations),
            ("ref_model_sync_steps", self.ref_model_sync_steps),
        ])?;
        checks::max_prompt_length(self.max_prompt_length)?;
        if !(self.beta.is_finite() && self.beta >= 0.0) {
            return bad(
                "beta",
                format!("is {}; set a finite value >= 0 (0 = no KL term)", self.beta),
            );
        }
        if !(self.epsilon > 0.0 && self.epsilon < 1.0) {
            return bad(
                "epsilon",
                format!("is {}; must be in (0, 1) (typical 0.2)", self.epsilon),
            );
        }
        if let Some(high) = self.epsilon_high
            && !(high.is_finite() && high > 0.0)
        {
            return bad(
                "epsilon_high",
                format!("is {high}; set a value > 0 (DAPO uses 0.28) or null"),
            );
        }
        if let Some(delta) = self.delta
            && !(delta.is_finite() && delta > 1.0)
        {
            return bad(
                "delta",
                format!(
                    "is {delta}; set a value > 1 + epsilon_high (= {}), or null to disable two-sided clipping",
                    1.0 + self.effective_epsilon_high()
                ),
            );
        }
        checks::rollout_sampling(
            &self.sampling,
            self.max_completion_length,
            "GrpoConfig::with_max_completion_length",
            "is 0 (greedy): all completions of a group would be identical; set > 0 (e.g. 1.0)",
        )?;
        if let Some(cap) = self.rollout_importance_sampling_cap
            && !(cap.is_finite() && cap > 0.0)
        {
            return bad(
                "rollout_importance_sampling_cap",
                format!(
                    "is {cap}; set a finite value > 0 (TRL uses 2.0), or null for no correction"
                ),
            );
        }
        checks::reward_weights(&self.reward_weights)?;
        if self.sync_ref_model && !self.needs_reference_model() {
            return bad(
                "sync_ref_model",
                "is true but beta is 0, so no reference model is kept; set beta > 0 or sync_ref_model = false"
                    .into(),
            );
        }
        if !(0.0..=1.0).contains(&self.ref_model_mixup_alpha) {
            return bad(
                "ref_model_mixup_alpha",
                format!(
                    "is {}; must be in [0, 1] (TR-DPO uses 0.6)",
                    self.ref_model_mixup_alpha
                ),
            );
        }
        self.optimizer.validate_with_prefix("optimizer.")
    }
}
