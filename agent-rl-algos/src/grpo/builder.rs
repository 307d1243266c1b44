//! [`GrpoTrainerBuilder`]: required inputs in `GrpoTrainer::builder`, options chained, `build`
//! validates.

use std::path::PathBuf;
use std::sync::Arc;

use agent_rl_core::lora::LoraConfig;
use agent_rl_core::{
    ChatTokenizer, EnvironmentFactory, HermesToolCallParser, Qwen2ForCausalLm, ToolCallParser,
};
use agent_rl_rewards::Reward;
use burn::tensor::backend::AutodiffBackend;

use super::trainer::GrpoTrainer;
use crate::build_checks::checkpointing_without_lora_dropout;
use crate::config::GrpoConfig;
use crate::error::{AlgoError, Result};
use crate::metrics::TrainObserver;
use crate::pipeline::Evaluator;
use crate::policy_state::PolicyState;
use crate::rollout::{Checkpointing, LocalRollouts, RewardStack, RolloutSetup, RolloutSource};
use crate::trainer_state::RunCounters;

/// Assembles a [`GrpoTrainer`].
///
/// ```
/// use agent_rl_algos::{GrpoConfig, GrpoTrainer, MetricsHistory};
/// use agent_rl_algos::toy::{toy_model_config, toy_tokenizer};
/// use agent_rl_core::weights::random_model;
/// use agent_rl_core::{Message, Task};
/// use agent_rl_rewards::ToolUseReward;
/// use burn::backend::{Autodiff, Flex};
/// type B = Autodiff<Flex>;
///
/// let config = GrpoConfig {
///     num_generations: 2,
///     prompts_per_step: 1,
///     max_steps: 1,
///     ..GrpoConfig::default()
/// }
/// .with_max_completion_length(4);
/// let mut trainer = GrpoTrainer::builder(random_model::<B>(&toy_model_config(), 0, 0.05, &Default::default())?, toy_tokenizer()?)
///     .with_config(config)
///     .add_reward(ToolUseReward::default())
///     .with_observer(MetricsHistory::default())
///     .build()?;
/// let task = Task { id: "t".into(), messages: vec![Message::user("hi")], ..Task::default() };
/// let report = trainer.train(&[task])?;
/// assert_eq!(report.global_step, 1);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct GrpoTrainerBuilder<B: AutodiffBackend> {
    policy: Qwen2ForCausalLm<B>,
    tokenizer: Arc<ChatTokenizer>,
    config: GrpoConfig,
    rewards: RewardStack,
    parser: Box<dyn ToolCallParser>,
    environments: Option<Box<dyn EnvironmentFactory>>,
    rollouts: Box<dyn RolloutSource<B::InnerBackend>>,
    observers: Vec<Box<dyn TrainObserver>>,
    checkpointing: Option<Checkpointing>,
    resume_from: Option<PathBuf>,
    lora: Option<LoraConfig>,
    evaluator: Option<Box<dyn Evaluator<B::InnerBackend>>>,
}

impl<B: AutodiffBackend> std::fmt::Debug for GrpoTrainerBuilder<B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GrpoTrainerBuilder")
            .field("config", &self.config)
            .field("rewards", &self.rewards)
            .field("lora", &self.lora)
            .finish_non_exhaustive()
    }
}

impl<B: AutodiffBackend> GrpoTrainerBuilder<B> {
    pub(super) fn new(policy: Qwen2ForCausalLm<B>, tokenizer: Arc<ChatTokenizer>) -> Self {
        Self {
            policy,
            tokenizer,
            config: GrpoConfig::default(),
            rewards: RewardStack::default(),
            parser: Box::new(HermesToolCallParser::default()),
            environments: None,
            rollouts: Box::new(LocalRollouts),
            observers: Vec::new(),
            checkpointing: None,
            resume_from: None,
            lora: None,
            evaluator: None,
        }
    }

    /// Trains LoRA adapters instead of every weight (`None`: every weight, the default): `build` freezes the policy's weights and
    /// adds fresh adapters (seeded from `config.seed`); the KL reference is then the policy
    /// with its adapters switched off (no second copy of the weights), and checkpoints hold the
    /// adapter in PEFT's layout instead of the full model.
    #[must_use]
    pub fn with_lora(mut self, lora: impl Into<Option<LoraConfig>>) -> Self {
        self.lora = lora.into();
        self
    }

    /// Sets the config (default: [`GrpoConfig::default`]).
    #[must_use]
    pub fn with_config(mut self, config: GrpoConfig) -> Self {
        self.config = config;
        self
    }

    /// Adds a reward function; its weight is the matching entry of `reward_weights` (1 when
    /// that list is empty).
    #[must_use]
    pub fn add_reward(mut self, reward: impl Reward + 'static) -> Self {
        self.rewards.push(Box::new(reward));
        self
    }

    /// Runs multi-turn episodes in environments from `factory` (default: single-turn, no
    /// environment).
    #[must_use]
    pub fn with_environment(mut self, factory: impl EnvironmentFactory + 'static) -> Self {
        self.environments = Some(Box::new(factory));
        self
    }

    /// Takes each generation step's episodes from `source` instead of running
    /// [`AgentLoop`](agent_rl_core::AgentLoop) on the learner ([`LocalRollouts`], the default) —
    /// e.g. `agent_rl::remote::RemoteRollouts`, which samples on an OpenAI-compatible server.
    /// A source that samples elsewhere receives the policy after every optimiser step (and
    /// before the first rollout), and the update corrects for the sampler with truncated
    /// importance sampling (`rollout_importance_sampling_cap`, logged as `sampling/*`).
    /// `build` asks the source to [`validate`](RolloutSource::validate) the setup.
    #[must_use]
    pub fn with_rollout_source(
        mut self,
        source: impl RolloutSource<B::InnerBackend> + 'static,
    ) -> Self {
        self.rollouts = Box::new(source);
        self
    }

    /// [`Self::with_rollout_source`] with a boxed source (the pipeline's).
    #[must_use]
    pub(crate) fn with_boxed_rollout_source(
        mut self,
        source: Box<dyn RolloutSource<B::InnerBackend>>,
    ) -> Self {
        self.rollouts = source;
        self
    }

    /// Sets the tool-call format of the model's output (default: Hermes / Qwen2.5).
    #[must_use]
    pub fn with_parser(mut self, parser: impl ToolCallParser + 'static) -> Self {
        self.parser = Box::new(parser);
        self
    }

    /// Adds an observer called after every generation step.
    #[must_use]
    pub fn with_observer(mut self, observer: impl TrainObserver + 'static) -> Self {
        self.observers.push(Box::new(observer));
        self
    }

    /// Writes a checkpoint to `dir/checkpoint-<step>` every `every_steps` optimiser steps and
    /// at the end of training.
    #[must_use]
    pub fn with_checkpointing(mut self, dir: impl Into<PathBuf>, every_steps: usize) -> Self {
        self.checkpointing = Some(Checkpointing {
            dir: dir.into(),
            every_steps,
        });
        self
    }

    /// Evaluates the policy with `evaluator` every `config.eval_steps` optimiser steps and at
    /// the last one (no evaluation while `eval_steps` is unset): the scores go into the step's
    /// metrics (`eval/*`) and the best-scoring model is kept (in `<checkpoint dir>/best_model`
    /// when checkpointing, else in memory; see [`GrpoTrainer::best_evaluation`]).
    #[must_use]
    pub fn with_evaluator(mut self, evaluator: impl Evaluator<B::InnerBackend> + 'static) -> Self {
        self.evaluator = Some(Box::new(evaluator));
        self
    }

    /// [`Self::with_evaluator`] for an evaluator already boxed (the pipeline's).
    #[must_use]
    pub fn with_boxed_evaluator(
        mut self,
        evaluator: Option<Box<dyn Evaluator<B::InnerBackend>>>,
    ) -> Self {
        self.evaluator = evaluator;
        self
    }

    /// Resumes from a checkpoint directory written by [`GrpoTrainer::save_checkpoint`]: model,
    /// reference model, optimizer state, step and task position replace the given ones. With
    /// LoRA the checkpoint's adapters go onto the given policy, which must be the run's base model.
    #[must_use]
    pub fn with_resume_from(mut self, dir: impl Into<PathBuf>) -> Self {
        self.resume_from = Some(dir.into());
        self
    }

    /// Validates the config and assembles the trainer.
    ///
    /// # Errors
    /// [`AlgoError::InvalidConfig`] for an invalid config, no reward, a `reward_weights` list
    /// of the wrong length, `every_steps == 0`, or a setup the rollout source refuses;
    /// checkpoint errors when resuming.
    pub fn build(mut self) -> Result<GrpoTrainer<B>> {
        self.config.validate()?;
        self.rewards.require_weighted(
            &self.config.reward_weights,
            "GrpoTrainerBuilder::add_reward",
        )?;
        Checkpointing::check(self.checkpointing.as_ref(), "optimiser steps")?;
        checkpointing_without_lora_dropout(self.config.gradient_checkpointing, self.lora.as_ref())?;
        self.rollouts.validate(RolloutSetup {
            lora: self.lora.as_ref(),
            multi_turn: self.environments.is_some(),
        })?;
        if self.lora.is_some() && self.config.sync_ref_model {
            return Err(AlgoError::config(
                "sync_ref_model",
                "is true with LoRA, whose reference is the base model with the adapters off; set \
                 sync_ref_model = false",
            ));
        }
        let policy = PolicyState::new(
            self.policy,
            self.lora,
            self.config.needs_reference_model(),
            &self.config.optimizer,
            self.config.seed,
        )?;
        let mut trainer = GrpoTrainer {
            config: self.config,
            policy,
            tokenizer: self.tokenizer,
            parser: self.parser,
            rewards: self.rewards,
            environments: self.environments,
            rollouts: self.rollouts,
            published_step: None,
            observers: self.observers,
            checkpointing: self.checkpointing,
            counters: RunCounters::default(),
            evaluator: self.evaluator,
            best: None,
            best_model: None,
        };
        if let Some(dir) = &self.resume_from {
            trainer.load_checkpoint(dir)?;
        }
        Ok(trainer)
    }
}
