//! # agent-rl-algos
//!
//! The training algorithms of agent-rl: the SFT, reward-model, PPO and GRPO trainers, their
//! configs, the pipeline that chains them in a run directory (evaluation between stages,
//! checkpoints, resume, metrics files), the memory planner, and the RL math they are built from.
//! It sits above `agent-rl-core` (model, generation, log-probabilities) and `agent-rl-rewards`, and
//! knows nothing of specific benchmarks.
//!
//! The math is pure functions and plain data, tested in isolation: group-relative advantages, the
//! GRPO loss for all of TRL's normalisations (checked against TRL 1.16 itself by a golden test),
//! KL estimators, global-norm gradient clipping, AdamW with PyTorch's defaults, learning-rate
//! schedules, a curriculum sampler and the step-metrics record.
//!
//! ```
//! use agent_rl_algos::{group_advantages, AdvantageScaling, GrpoConfig, GrpoLoss, GrpoLossInputs};
//! use burn::backend::{Autodiff, Flex};
//! use burn::tensor::Tensor;
//! type B = Autodiff<Flex>;
//!
//! let config = GrpoConfig { num_generations: 2, beta: 0.04, ..GrpoConfig::default() };
//! config.validate()?;
//! // Two completions of one prompt: the better one gets a positive advantage.
//! let advantages = group_advantages(&[1.0, 0.0], config.num_generations, config.scale_rewards)?;
//! let device = Default::default();
//! let logps = Tensor::<B, 2>::from_floats([[-1.0, -0.5], [-2.0, -0.1]], &device).require_grad();
//! let out = GrpoLoss::from_config(&config).forward(GrpoLossInputs {
//!     logps: logps.clone(),
//!     old_logps: None,
//!     ref_logps: Some(Tensor::from_floats([[-1.1, -0.5], [-2.0, -0.2]], &device)),
//!     advantages: Tensor::from_floats(advantages.as_slice(), &device),
//!     mask: Tensor::from_floats([[1.0, 1.0], [1.0, 0.0]], &device),
//!     num_items_in_batch: None,
//!     sampler_weights: None,
//! })?;
//! let grads = out.loss.backward();
//! let grad = logps.grad(&grads).expect("logps is tracked");
//! // Gradient descent raises the log-probs of the better completion.
//! assert!(grad.into_data().iter::<f32>().next().expect("non-empty") < 0.0);
//! assert!(out.metrics.kl.is_some());
//! # Ok::<(), agent_rl_algos::AlgoError>(())
//! ```
//!
//! | type / function | what it is |
//! |---|---|
//! | [`GrpoConfig`], [`SftConfig`], [`OptimizerConfig`] | serde configs with `Default` and `validate()` |
//! | [`group_advantages`], [`zero_variance_groups`] | GRPO advantages (TRL's std convention), dynamic-sampling filter |
//! | [`GrpoLoss`] | clipped GRPO/GSPO loss: grpo / bnpo / dr_grpo / dapo, clip-higher, two-sided δ, KL |
//! | [`per_token_kl`] | k1 / k2 / k3 KL estimators |
//! | [`gae`](fn@gae), [`masked_whiten`], [`kl_penalized_rewards`], [`KlController`] | PPO's advantages over masked (multi-turn) tokens, whitening, KL-shaped rewards, fixed / adaptive KL |
//! | [`PpoLoss`] | PPO's clipped policy and value losses, entropy bonus |
//! | [`clip_grad_norm`], [`init_adamw`], [`LrSchedule`] | PyTorch-equivalent optimisation |
//! | [`sync_reference_model`] | TR-DPO mix-up of the reference toward the policy |
//! | [`CurriculumSampler`] | difficulty levels, promotion, replay and new-scenario mixing |
//! | [`StepMetrics`], [`TrainObserver`] | per-step metrics with TRL names, observer hook |
//! | [`plan::plan_memory`], [`plan::MemoryPlanRequest`] | memory planner: bytes per component of a run, and whether it fits |
//! | [`PpoTrainer`], [`PpoConfig`] | PPO with a critic: KL-shaped rewards, GAE, epochs over minibatches, TRL's metric names |
//! | [`SftTrainer`], [`SftDataset`] | supervised fine-tuning: assistant-only masks, packing, accumulation |
//! | [`RewardTrainer`], [`PreferenceDataset`], [`RewardModelScorer`] | reward models: TRL preference data, Bradley–Terry loss, a learned reward for the reward stack |
//! | [`RolloutSource`], [`LocalRollouts`], [`truncated_importance_weights`] | where GRPO's episodes come from (the learner, or a server via the facade's `RemoteRollouts`) and the correction for a separate sampler |
//! | [`pipeline::Pipeline`] | the training run: stages, evaluation between them, run directory, resume |
//!
//! No cargo features: backends are chosen by the application (the root `agent-rl` package).
#![warn(missing_docs)]

pub mod advantages;
mod build_checks;
pub mod checkpoint_dir;
pub mod config;
pub mod curriculum;
pub mod error;
pub mod evaluate;
pub mod gae;
pub mod grpo;
pub mod kl;
pub mod kl_control;
pub mod loss;
pub mod metrics;
pub mod optim;
pub mod pipeline;
pub mod plan;
mod policy_state;
pub mod ppo;
pub mod reference;
pub mod reward_model;
pub mod rollout;
pub mod run_identity;
pub mod sft;
mod supervised;
pub mod toy;
pub mod trainer_state;
pub mod whiten;

pub use advantages::{
    AdvantageScaling, frac_reward_zero_std, group_advantages, group_advantages_with_missing,
    group_reward_std, informative_completions, zero_variance_groups,
};
pub use config::{
    GrpoConfig, MAX_COMPLETIONS_PER_STEP, MAX_SFT_BATCH_SIZE, OptimizerConfig, PpoConfig,
    RewardConfig, SftConfig,
};
pub use curriculum::{
    CurriculumConfig, CurriculumMetrics, CurriculumSampler, SampledTask, TaskSource,
};
pub use error::{AlgoError, Result};
pub use evaluate::{ToolUseScores, evaluate_tool_use};
pub use gae::{Gae, gae};
pub use grpo::{BestEvaluation, GrpoReport, GrpoTrainer, GrpoTrainerBuilder};
pub use kl::{KlEstimator, per_token_kl};
pub use kl_control::{AdaptiveKl, KlController};
pub use loss::{
    GrpoLoss, GrpoLossInputs, GrpoLossMetrics, GrpoLossOutput, ImportanceSamplingLevel, LossType,
    PpoLoss, PpoLossInputs, PpoLossMetrics, PpoLossOutput, SamplerMismatchMetrics, aggregate_loss,
    completion_loss_mask, log_importance_weights, masked_mean, truncated_importance_weights,
};
pub use metrics::{CompletionStats, MetricsHistory, RewardStats, StepMetrics, TrainObserver};
pub use optim::{LrSchedule, adamw_config, clip_grad_norm, init_adamw};
pub use ppo::{
    PpoMetrics, PpoReport, PpoTrainer, PpoTrainerBuilder, TokenRewards, apply_missing_eos_penalty,
    kl_penalized_rewards, last_policy_token,
};
pub use reference::sync_reference_model;
pub use reward_model::{PreferenceDataset, RewardModelScorer, RewardReport, RewardTrainer};
pub use rollout::{LocalRollouts, RolloutRequest, RolloutSetup, RolloutSource, TrainReport};
pub use sft::{SftDataset, SftReport, SftTrainer, SftTrainerBuilder};
pub use whiten::{masked_mean_var, masked_whiten};
