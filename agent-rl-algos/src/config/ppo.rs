//! [`PpoConfig`]: every setting of a PPO run.

use agent_rl_core::SamplingConfig;
use serde::{Deserialize, Serialize};

use crate::config::{MAX_COMPLETIONS_PER_STEP, OptimizerConfig, checks};
use crate::error::{AlgoError, Result};
use crate::kl::KlEstimator;
use crate::kl_control::AdaptiveKl;
use crate::loss::PpoLoss;

/// Settings of a PPO run (Proximal Policy Optimization with a learned critic and a KL penalty to
/// the reference folded into the rewards, [Ouyang et al. 2022](https://arxiv.org/abs/2203.02155)).
///
/// Names and defaults follow TRL 1.12's `PPOConfig` where TRL has the setting (`num_ppo_epochs`,
/// `num_mini_batches`, `cliprange`, `cliprange_value`, `vf_coef`, `gamma`, `lam`, `kl_coef`,
/// `kl_estimator`, `whiten_rewards`, `missing_eos_penalty`, learning rate 3e-6, temperature 0.7).
/// Each step rolls out `num_generations` episodes of each of `prompts_per_step` tasks, scores
/// them, builds KL-shaped per-token rewards, GAE advantages and returns, and takes
/// `num_ppo_epochs × num_mini_batches` optimiser steps on the policy and on the critic.
///
/// ```
/// use agent_rl_algos::PpoConfig;
/// let config = PpoConfig { num_ppo_epochs: 2, kl_target: Some(6.0), ..PpoConfig::default() }
///     .with_max_completion_length(32);
/// config.validate()?;
/// # Ok::<(), agent_rl_algos::AlgoError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PpoConfig {
    /// Tasks per rollout batch. Default 8. Must be ≥ 1.
    pub prompts_per_step: usize,
    /// Episodes sampled per task (PPO needs no groups; > 1 only widens the batch). Default 1. ≥ 1.
    pub num_generations: usize,
    /// Rollout batches to train on (TRL's `num_total_batches`; each is one `global_step`).
    /// Default 100. Must be ≥ 1.
    pub max_steps: usize,
    /// Passes over each rollout batch. Default 4. Must be ≥ 1.
    pub num_ppo_epochs: usize,
    /// Minibatches per pass (one optimiser step each); must not exceed the episodes per batch.
    /// Default 1. Must be ≥ 1.
    pub num_mini_batches: usize,
    /// Policy clip range ε. Default 0.2. Range (0, 1).
    pub cliprange: f32,
    /// Value clip range around the rollout's values. Default 0.2. Must be > 0.
    pub cliprange_value: f32,
    /// Weight of the value loss. Default 0.1. Must be ≥ 0.
    pub vf_coef: f32,
    /// Weight of the entropy bonus (not in TRL). Default 0. Must be ≥ 0.
    pub entropy_coef: f32,
    /// Discount γ. Default 1. Range [0, 1].
    pub gamma: f32,
    /// GAE λ. Default 0.95. Range [0, 1].
    pub lam: f32,
    /// Initial KL coefficient β of the per-token penalty `−β·KL` in the rewards. Default 0.05. ≥ 0.
    pub kl_coef: f32,
    /// KL estimator of the penalty: `k1` or `k3` (TRL forbids `k2`). Default [`KlEstimator::K1`].
    pub kl_estimator: KlEstimator,
    /// Adaptive KL control: steer the per-sequence KL toward this target (Ziegler et al.); `None`
    /// = fixed `kl_coef` (default).
    pub kl_target: Option<f32>,
    /// Horizon (episodes) of the adaptive KL controller. Default 10,000. Must be > 0.
    pub kl_horizon: f32,
    /// Whiten the per-token rewards (scale only) before GAE. Default false.
    pub whiten_rewards: bool,
    /// Subtracted from the score of an episode that did not end with EOS (cut by the length
    /// budget); `None` = no penalty (default). Must be ≥ 0.
    pub missing_eos_penalty: Option<f32>,
    /// Left-truncate prompts to this many tokens; `None` = no truncation. Must be ≥ 1.
    pub max_prompt_length: Option<usize>,
    /// Completion budget in tokens. Default 53 (TRL's `response_length`). Must equal
    /// `sampling.max_new_tokens`; set both with [`PpoConfig::with_max_completion_length`].
    pub max_completion_length: usize,
    /// Approximate-KL early stop of the updates (SB3's `target_kl`, after OpenAI's
    /// baselines): before each minibatch's policy step, when the minibatch's approximate KL to
    /// the rollout policy (`policy/approxkl_avg`, `½ (logp − old_logp)²` per policy token)
    /// exceeds `1.5 × target_kl`, that step and every later policy step of this rollout batch
    /// are skipped (the critic keeps training on the remaining minibatches). The first
    /// minibatch starts at the rollout policy, so each batch takes at least one policy step.
    /// `None` = no limit (default, as TRL and SB3). Must be > 0 (typical 0.01–0.05).
    pub target_kl: Option<f32>,
    /// Critic warm-up (verl's `critic_warmup`): the first this many rollout batches train only
    /// the critic, on rollouts of the unchanged policy, so that the first policy updates use
    /// advantages from a critic fitted to the policy's returns rather than to the reward
    /// model's sequence scores. They count toward `max_steps`. Default 0 (none). Must be
    /// < `max_steps`.
    pub critic_warmup_steps: usize,
    /// Multi-turn rollouts: most tool-call rounds per episode. Default 8. ≥ 1.
    pub max_tool_iterations: usize,
    /// Multi-turn rollouts: execute at most this many tool calls per turn; `None` = all.
    pub max_tool_calls_per_turn: Option<usize>,
    /// Sampling settings of the rollouts (temperature 0.7, TRL's PPO default).
    pub sampling: SamplingConfig,
    /// Weight of each reward function, in the order added; empty = all 1.
    pub reward_weights: Vec<f32>,
    /// Policy optimiser and schedule (learning rate 3e-6, TRL's PPO default). The schedule runs
    /// over `max_steps` rollout batches. `gradient_accumulation_steps` splits each minibatch into
    /// micro-batches.
    pub optimizer: OptimizerConfig,
    /// The critic's learning rate; `None` = the policy's. The critic has its own AdamW with the
    /// policy's other optimiser settings.
    pub critic_learning_rate: Option<f64>,
    /// Seed of the run (sampling, task order, minibatch shuffling). Default 42.
    pub seed: u64,
}

impl Default for PpoConfig {
    fn default() -> Self {
        let max_completion_length = 53;
        Self {
            prompts_per_step: 8,
            num_generations: 1,
            max_steps: 100,
            num_ppo_epochs: 4,
            num_mini_batches: 1,
            cliprange: 0.2,
            cliprange_value: 0.2,
            vf_coef: 0.1,
            entropy_coef: 0.0,
            gamma: 1.0,
            lam: 0.95,
            kl_coef: 0.05,
            kl_estimator: KlEstimator::K1,
            kl_target: None,
            kl_horizon: 10_000.0,
            whiten_rewards: false,
            missing_eos_penalty: None,
            target_kl: None,
            critic_warmup_steps: 0,
            max_prompt_length: None,
            max_completion_length,
            max_tool_iterations: 8,
            max_tool_calls_per_turn: None,
            sampling: SamplingConfig {
                max_new_tokens: max_completion_length,
                temperature: 0.7,
                ..SamplingConfig::default()
            },
            reward_weights: Vec::new(),
            optimizer: OptimizerConfig {
                learning_rate: 3e-6,
                ..OptimizerConfig::default()
            },
            critic_learning_rate: None,
            seed: 42,
        }
    }
}

impl PpoConfig {
    /// Sets `max_completion_length` and `sampling.max_new_tokens` together.
    #[must_use]
    pub fn with_max_completion_length(mut self, tokens: usize) -> Self {
        self.max_completion_length = tokens;
        self.sampling.max_new_tokens = tokens;
        self
    }

    /// Episodes per rollout batch (`prompts_per_step × num_generations`).
    pub fn episodes_per_step(&self) -> usize {
        self.prompts_per_step.saturating_mul(self.num_generations)
    }

    /// The adaptive KL settings, when `kl_target` is set.
    pub fn adaptive_kl(&self) -> Option<AdaptiveKl> {
        self.kl_target.map(|target| AdaptiveKl {
            target,
            horizon: self.kl_horizon,
        })
    }

    /// The loss settings of this config.
    pub fn loss(&self) -> PpoLoss {
        PpoLoss {
            cliprange: self.cliprange,
            cliprange_value: self.cliprange_value,
            vf_coef: self.vf_coef,
            entropy_coef: self.entropy_coef,
        }
    }

    /// The critic's optimiser settings: the policy's with `critic_learning_rate` when set.
    pub fn critic_optimizer(&self) -> OptimizerConfig {
        OptimizerConfig {
            learning_rate: self
                .critic_learning_rate
                .unwrap_or(self.optimizer.learning_rate),
            ..self.optimizer.clone()
        }
    }

    /// Checks every field's range and the consistency between fields.
    ///
    /// # Errors
    /// [`AlgoError::InvalidConfig`] naming the first invalid field and how to fix it.
    pub fn validate(&self) -> Result<()> {
        let bad = |field: &str, reason: String| Err(AlgoError::config(field, reason));
        checks::at_least_one(&[
            ("prompts_per_step", self.prompts_per_step),
            ("num_generations", self.num_generations),
            ("max_steps", self.max_steps),
            ("num_ppo_epochs", self.num_ppo_epochs),
            ("num_mini_batches", self.num_mini_batches),
            ("max_completion_length", self.max_completion_length),
            ("max_tool_iterations", self.max_tool_iterations),
        ])?;
        let episodes = self.prompts_per_step.checked_mul(self.num_generations);
        if episodes.is_none_or(|n| n > MAX_COMPLETIONS_PER_STEP) {
            return bad(
                "prompts_per_step",
                format!(
                    "{} × num_generations {} episodes per step exceed the limit of \
                     {MAX_COMPLETIONS_PER_STEP}; lower one of them",
                    self.prompts_per_step, self.num_generations
                ),
            );
        }
        if self.num_mini_batches > self.episodes_per_step() {
            return bad(
                "num_mini_batches",
                format!(
                    "is {} but a rollout batch holds only {} episodes; set <= prompts_per_step × num_generations",
                    self.num_mini_batches,
                    self.episodes_per_step()
                ),
            );
        }
        checks::max_prompt_length(self.max_prompt_length)?;
        if !(self.cliprange > 0.0 && self.cliprange < 1.0) {
            return bad(
                "cliprange",
                format!("is {}; must be in (0, 1) (typical 0.2)", self.cliprange),
            );
        }
        for (field, value, strict) in [
            ("cliprange_value", self.cliprange_value, true),
            ("vf_coef", self.vf_coef, false),
            ("entropy_coef", self.entropy_coef, false),
            ("kl_coef", self.kl_coef, false),
            ("kl_horizon", self.kl_horizon, true),
        ] {
            let ok = value.is_finite() && if strict { value > 0.0 } else { value >= 0.0 };
            if !ok {
                let bound = if strict { "> 0" } else { ">= 0" };
                return bad(field, format!("is {value}; set a finite value {bound}"));
            }
        }
        for (field, value) in [("gamma", self.gamma), ("lam", self.lam)] {
            if !(0.0..=1.0).contains(&value) {
                return bad(field, format!("is {value}; must be in [0, 1]"));
            }
        }
        if self.kl_estimator == KlEstimator::K2 {
            return bad(
                "kl_estimator",
                "is k2; PPO's reward penalty takes k1 or k3 (as TRL), set one of them".into(),
            );
        }
        if let Some(target) = self.kl_target
            && !(target.is_finite() && target > 0.0)
        {
            return bad(
                "kl_target",
                format!("is {target}; set a value > 0, or null for a fixed kl_coef"),
            );
        }
        if let Some(target) = self.target_kl
            && !(target.is_finite() && target > 0.0)
        {
            return bad(
                "target_kl",
                format!("is {target}; set a value > 0 (typical 0.01-0.05), or null for no limit"),
            );
        }
        if self.critic_warmup_steps >= self.max_steps {
            return bad(
                "critic_warmup_steps",
                format!(
                    "is {} but max_steps is {}: the policy would never train; set < max_steps",
                    self.critic_warmup_steps, self.max_steps
                ),
            );
        }
        if let Some(penalty) = self.missing_eos_penalty
            && !(penalty.is_finite() && penalty >= 0.0)
        {
            return bad(
                "missing_eos_penalty",
                format!("is {penalty}; set a value >= 0 (it is subtracted), or null"),
            );
        }
        checks::rollout_sampling(
            &self.sampling,
            self.max_completion_length,
            "PpoConfig::with_max_completion_length",
            "is 0 (greedy): PPO's importance ratios need the sampling distribution; set > 0 (e.g. 0.7)",
        )?;
        checks::reward_weights(&self.reward_weights)?;
        if let Some(lr) = self.critic_learning_rate
            && !(lr.is_finite() && lr > 0.0)
        {
            return bad(
                "critic_learning_rate",
                format!("is {lr}; set a finite value > 0, or null"),
            );
        }
        self.optimizer.validate_with_prefix("optimizer.")
    }
}
