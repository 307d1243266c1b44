//! [`PpoTrainerBuilder`]: required inputs in `PpoTrainer::builder`, options chained, `build`
//! validates — the same shape as [`GrpoTrainerBuilder`](crate::GrpoTrainerBuilder).

use std::path::PathBuf;
use std::sync::Arc;

use agent_rl_core::lora::LoraConfig;
use agent_rl_core::{
    ChatTokenizer, EnvironmentFactory, HermesToolCallParser, Qwen2ForCausalLm,
    Qwen2ForSequenceClassification, ToolCallParser,
};
use agent_rl_rewards::Reward;
use burn::tensor::backend::AutodiffBackend;

use super::critic::critic_from_policy;
use super::trainer::PpoTrainer;
use crate::config::PpoConfig;
use crate::error::{AlgoError, Result};
use crate::kl_control::KlController;
use crate::metrics::TrainObserver;
use crate::optim::init_adamw;
use crate::policy_state::PolicyState;
use crate::rollout::{Checkpointing, RewardStack};
use crate::trainer_state::RunCounters;

/// Assembles a [`PpoTrainer`].
///
/// ```
/// use agent_rl_algos::{MetricsHistory, PpoConfig, PpoTrainer};
/// use agent_rl_algos::toy::{toy_model_config, toy_tokenizer};
/// use agent_rl_core::weights::random_model;
/// use agent_rl_core::{Message, Task};
/// use agent_rl_rewards::ToolUseReward;
/// use burn::backend::{Autodiff, Flex};
/// type B = Autodiff<Flex>;
///
/// let config = PpoConfig { prompts_per_step: 2, max_steps: 1, num_ppo_epochs: 1, ..PpoConfig::default() }
///     .with_max_completion_length(4);
/// let policy = random_model::<B>(&toy_model_config(), 0, 0.05, &Default::default())?;
/// let mut trainer = PpoTrainer::builder(policy, toy_tokenizer()?)
///     .with_config(config)
///     .add_reward(ToolUseReward::default())
///     .with_observer(MetricsHistory::default())
///     .build()?;
/// let task = Task { id: "t".into(), messages: vec![Message::user("hi")], ..Task::default() };
/// let report = trainer.train(&[task])?;
/// assert_eq!(report.global_step, 1);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct PpoTrainerBuilder<B: AutodiffBackend> {
    policy: Qwen2ForCausalLm<B>,
    tokenizer: Arc<ChatTokenizer>,
    config: PpoConfig,
    critic: Option<Qwen2ForSequenceClassification<B>>,
    rewards: RewardStack,
    parser: Box<dyn ToolCallParser>,
    environments: Option<Box<dyn EnvironmentFactory>>,
    observers: Vec<Box<dyn TrainObserver>>,
    checkpointing: Option<Checkpointing>,
    resume_from: Option<PathBuf>,
    lora: Option<LoraConfig>,
}

impl<B: AutodiffBackend> std::fmt::Debug for PpoTrainerBuilder<B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PpoTrainerBuilder")
            .field("config", &self.config)
            .field("rewards", &self.rewards)
            .field("critic", &self.critic.is_some())
            .field("lora", &self.lora)
            .finish_non_exhaustive()
    }
}

impl<B: AutodiffBackend> PpoTrainerBuilder<B> {
    pub(super) fn new(policy: Qwen2ForCausalLm<B>, tokenizer: Arc<ChatTokenizer>) -> Self {
        Self {
            policy,
            tokenizer,
            config: PpoConfig::default(),
            critic: None,
            rewards: RewardStack::default(),
            parser: Box::new(HermesToolCallParser::default()),
            environments: None,
            observers: Vec::new(),
            checkpointing: None,
            resume_from: None,
            lora: None,
        }
    }

    /// Sets the config (default: [`PpoConfig::default`]).
    #[must_use]
    pub fn with_config(mut self, config: PpoConfig) -> Self {
        self.config = config;
        self
    }

    /// Uses `critic` as the value model (e.g. the reward model, as TRL's examples initialise it);
    /// default: a copy of the policy with a fresh score head seeded from `config.seed`.
    #[must_use]
    pub fn with_critic(mut self, critic: Qwen2ForSequenceClassification<B>) -> Self {
        self.critic = Some(critic);
        self
    }

    /// Trains LoRA adapters on the policy instead of every weight (`None`: every weight): the
    /// KL reference is then the policy with its adapters off, and checkpoints hold the adapter.
    /// The critic is trained in full.
    #[must_use]
    pub fn with_lora(mut self, lora: impl Into<Option<LoraConfig>>) -> Self {
        self.lora = lora.into();
        self
    }

    /// Adds a reward function (the sequence score is the weighted sum, `reward_weights`).
    #[must_use]
    pub fn add_reward(mut self, reward: impl Reward + 'static) -> Self {
        self.rewards.push(Box::new(reward));
        self
    }

    /// Runs multi-turn episodes in environments from `factory` (default: single-turn).
    #[must_use]
    pub fn with_environment(mut self, factory: impl EnvironmentFactory + 'static) -> Self {
        self.environments = Some(Box::new(factory));
        self
    }

    /// Sets the tool-call format of the model's output (default: Hermes / Qwen2.5).
    #[must_use]
    pub fn with_parser(mut self, parser: impl ToolCallParser + 'static) -> Self {
        self.parser = Box::new(parser);
        self
    }

    /// Adds an observer called after every step.
    #[must_use]
    pub fn with_observer(mut self, observer: impl TrainObserver + 'static) -> Self {
        self.observers.push(Box::new(observer));
        self
    }

    /// Writes a checkpoint to `dir/checkpoint-<step>` every `every_steps` rollout batches and at
    /// the end of training.
    #[must_use]
    pub fn with_checkpointing(mut self, dir: impl Into<PathBuf>, every_steps: usize) -> Self {
        self.checkpointing = Some(Checkpointing {
            dir: dir.into(),
            every_steps,
        });
        self
    }

    /// Resumes from a checkpoint directory written by [`PpoTrainer::save_checkpoint`].
    #[must_use]
    pub fn with_resume_from(mut self, dir: impl Into<PathBuf>) -> Self {
        self.resume_from = Some(dir.into());
        self
    }

    /// Validates the config and assembles the trainer.
    ///
    /// # Errors
    /// [`AlgoError::InvalidConfig`] for an invalid config, no reward, a `reward_weights` list of
    /// the wrong length, `every_steps == 0`, or a critic whose backbone differs from the
    /// policy's in vocabulary; checkpoint errors when resuming.
    pub fn build(mut self) -> Result<PpoTrainer<B>> {
        self.config.validate()?;
        self.rewards
            .require_weighted(&self.config.reward_weights, "PpoTrainerBuilder::add_reward")?;
        Checkpointing::check(self.checkpointing.as_ref(), "rollout batches")?;
        let pad_id = self.tokenizer.pad_id;
        let critic = match self.critic {
            Some(critic) => {
                let (found, expected) = (critic.config().vocab_size, self.policy.config.vocab_size);
                if found != expected {
                    return Err(AlgoError::config(
                        "critic",
                        format!(
                            "has vocab_size {found}, the policy {expected}: the critic reads the \
                             policy's token ids; give a critic built on the same tokenizer"
                        ),
                    ));
                }
                critic
            }
            None => critic_from_policy(&self.policy, pad_id, self.config.seed),
        };
        let needs_reference = self.config.kl_coef > 0.0 || self.config.kl_target.is_some();
        let policy = PolicyState::new(
            self.policy,
            self.lora,
            needs_reference,
            &self.config.optimizer,
            self.config.seed,
        )?;
        let kl_controller = KlController::new(self.config.kl_coef, self.config.adaptive_kl())?;
        let mut trainer = PpoTrainer {
            critic_optimizer: init_adamw(&self.config.critic_optimizer()),
            kl_controller,
            config: self.config,
            policy,
            critic: Some(critic),
            tokenizer: self.tokenizer,
            parser: self.parser,
            rewards: self.rewards,
            environments: self.environments,
            observers: self.observers,
            checkpointing: self.checkpointing,
            counters: RunCounters::default(),
        };
        if let Some(dir) = &self.resume_from {
            trainer.load_checkpoint(dir)?;
        }
        Ok(trainer)
    }
}
