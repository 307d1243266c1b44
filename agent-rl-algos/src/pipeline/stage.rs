//! The stages a [`Pipeline`](super::Pipeline) runs in order: supervised fine-tuning,
//! reward-model training, GRPO and PPO, each with its trainer config and data.

use std::sync::Arc;

use agent_rl_core::lora::LoraConfig;
use agent_rl_core::{EnvironmentFactory, Task};
use agent_rl_rewards::Reward;

use crate::config::{GrpoConfig, PpoConfig, RewardConfig, SftConfig};
use crate::curriculum::CurriculumSampler;
use crate::error::{AlgoError, Result};
use crate::reward_model::PreferenceDataset;
use crate::sft::SftDataset;

/// A stage that trains on a fixed dataset: SFT on conversations ([`SftStage`]) or a reward
/// model on preference pairs ([`RewardModelStage`]). The two share this shape; the config and
/// the data differ.
#[derive(Debug, Clone)]
pub struct DatasetStage<C, D> {
    /// The trainer's settings.
    pub config: C,
    /// Training data.
    pub train: D,
    /// Data for the eval metrics; `None` = the config's `eval_fraction` split of `train`.
    pub eval: Option<D>,
    /// Train LoRA adapters on the frozen model instead of every weight (`None`: every weight;
    /// a reward model also trains its score head).
    pub lora: Option<LoraConfig>,
}

/// Supervised fine-tuning on conversations (behaviour cloning, loss on assistant tokens).
pub type SftStage = DatasetStage<SftConfig, SftDataset>;

/// Reward-model training on preference pairs, from the current policy (its backbone with a
/// fresh score head). The policy is left as it is; later stages with a learned reward
/// ([`RlStage::with_learned_reward`]) score with the trained model, and a run directory gets it
/// as `reward_model/` (Hugging Face's `Qwen2ForSequenceClassification` layout).
pub type RewardModelStage = DatasetStage<RewardConfig, PreferenceDataset>;

impl<C, D> DatasetStage<C, D> {
    /// Training with `config` on `train` (eval split by the config's `eval_fraction`).
    pub fn new(config: C, train: D) -> Self {
        Self {
            config,
            train,
            eval: None,
            lora: None,
        }
    }

    /// Trains LoRA adapters instead of every weight (see
    /// [`crate::sft::SftTrainerBuilder::with_lora`] and
    /// [`crate::reward_model::RewardTrainerBuilder::with_lora`]).
    #[must_use]
    pub fn with_lora(mut self, lora: impl Into<Option<LoraConfig>>) -> Self {
        self.lora = lora.into();
        self
    }

    /// Measures the eval metrics on `eval` instead of a split of the training data.
    #[must_use]
    pub fn with_eval(mut self, eval: D) -> Self {
        self.eval = Some(eval);
        self
    }
}

/// A reinforcement-learning stage on tasks with targets — GRPO ([`GrpoStage`]) or PPO
/// ([`PpoStage`]) — with rule rewards, optionally the reward model of an earlier
/// [`RewardModelStage`], and an optional multi-turn environment. The two algorithms share this
/// shape; only the config differs.
pub struct RlStage<C> {
    /// The trainer's settings.
    pub config: C,
    /// Training tasks (`task.data["target"]` says what success is).
    pub tasks: Vec<Task>,
    pub(crate) rewards: Vec<Box<dyn Reward>>,
    pub(crate) environments: Option<Arc<dyn EnvironmentFactory>>,
    /// Also scores episodes with the reward model trained by the pipeline's
    /// [`RewardModelStage`] (as a `LearnedReward` named `reward_model`, after the rule rewards
    /// in `reward_weights` order). Default `false`.
    pub learned_reward: bool,
    /// Optimiser steps between checkpoints in the run directory (`checkpoint-<step>/`; one is
    /// also written at the end); `None` = no checkpoints. Resuming needs checkpoints.
    pub checkpoint_every: Option<usize>,
    /// Train LoRA adapters on the frozen model instead of every weight (`None`: every weight).
    pub lora: Option<LoraConfig>,
    /// Draw each step's tasks from this curriculum instead of `tasks` (levels, replay, new
    /// scenarios); episode outcomes are recorded back so it promotes.
    pub curriculum: Option<CurriculumSampler<Task>>,
}

/// GRPO on tasks with targets.
pub type GrpoStage = RlStage<GrpoConfig>;

/// PPO on tasks with targets; the critic starts from the reward model when the stage uses it
/// ([`RlStage::with_learned_reward`], as TRL initialises it), otherwise from the policy.
pub type PpoStage = RlStage<PpoConfig>;

impl<C: std::fmt::Debug> std::fmt::Debug for RlStage<C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RlStage")
            .field("config", &self.config)
            .field("tasks", &self.tasks.len())
            .field(
                "rewards",
                &self.rewards.iter().map(|r| r.name()).collect::<Vec<_>>(),
            )
            .field("learned_reward", &self.learned_reward)
            .field("environments", &self.environments.is_some())
            .field("checkpoint_every", &self.checkpoint_every)
            .field("lora", &self.lora)
            .field(
                "curriculum",
                &self.curriculum.as_ref().map(|c| c.num_levels()),
            )
            .finish()
    }
}

impl<C> RlStage<C> {
    /// Training with `config` on `tasks` (add at least one reward, or the learned one).
    pub fn new(config: C, tasks: Vec<Task>) -> Self {
        Self {
            config,
            tasks,
            rewards: Vec::new(),
            environments: None,
            learned_reward: false,
            checkpoint_every: None,
            lora: None,
            curriculum: None,
        }
    }

    /// Draws the tasks from `sampler` (see [`crate::GrpoTrainer::train_curriculum`]); `tasks`
    /// may then be empty. A resumed run starts the sampler afresh at its first level.
    #[must_use]
    pub fn with_curriculum(mut self, sampler: CurriculumSampler<Task>) -> Self {
        self.curriculum = Some(sampler);
        self
    }

    /// Trains LoRA adapters instead of every weight; the KL reference is then the model with
    /// the adapters off (see [`crate::GrpoTrainerBuilder::with_lora`]).
    #[must_use]
    pub fn with_lora(mut self, lora: impl Into<Option<LoraConfig>>) -> Self {
        self.lora = lora.into();
        self
    }

    /// Adds a reward (summed with the others, weighted by `config.reward_weights`).
    #[must_use]
    pub fn add_reward(mut self, reward: impl Reward + 'static) -> Self {
        self.rewards.push(Box::new(reward));
        self
    }

    /// Also scores episodes with the pipeline's reward model (see [`Self::learned_reward`]).
    #[must_use]
    pub fn with_learned_reward(mut self) -> Self {
        self.learned_reward = true;
        self
    }

    /// Runs multi-turn episodes in environments from `factory`.
    #[must_use]
    pub fn with_environment(mut self, factory: Arc<dyn EnvironmentFactory>) -> Self {
        self.environments = Some(factory);
        self
    }

    /// Checkpoints every `steps` optimiser steps (and at the end) into the run directory.
    #[must_use]
    pub fn with_checkpoint_every(mut self, steps: usize) -> Self {
        self.checkpoint_every = Some(steps);
        self
    }

    /// Checks the inputs of the stage called `name` (the config is checked by its own
    /// `validate`).
    fn validate_inputs(&self, name: &str) -> Result<()> {
        if self.tasks.is_empty() && self.curriculum.is_none() {
            return Err(AlgoError::input(
                format!("{name}.tasks"),
                "no training tasks",
            ));
        }
        if self.rewards.is_empty() && !self.learned_reward {
            return Err(AlgoError::input(
                format!("{name}.rewards"),
                "add at least one reward (or the learned one)",
            ));
        }
        if self.checkpoint_every == Some(0) {
            return Err(AlgoError::config(
                "checkpoint_every",
                "must be at least 1 (steps between checkpoints)",
            ));
        }
        Ok(())
    }
}

/// One stage of a pipeline.
#[derive(Debug)]
#[non_exhaustive]
pub enum Stage {
    /// Supervised fine-tuning.
    Sft(SftStage),
    /// GRPO.
    Grpo(GrpoStage),
    /// Reward-model training (the policy is unchanged).
    RewardModel(RewardModelStage),
    /// PPO.
    Ppo(PpoStage),
}

impl Stage {
    /// The stage's name in file names, summary keys and observer calls (`sft`, `grpo`,
    /// `reward_model`, `ppo`).
    pub fn name(&self) -> &'static str {
        match self {
            Self::Sft(_) => "sft",
            Self::Grpo(_) => "grpo",
            Self::RewardModel(_) => "reward_model",
            Self::Ppo(_) => "ppo",
        }
    }

    /// Whether the stage trains the policy (a reward-model stage does not, so the pipeline does
    /// not evaluate the policy again after it).
    pub fn trains_policy(&self) -> bool {
        !matches!(self, Self::RewardModel(_))
    }

    /// Whether the stage scores with the pipeline's reward model.
    pub fn uses_learned_reward(&self) -> bool {
        match self {
            Self::Grpo(stage) => stage.learned_reward,
            Self::Ppo(stage) => stage.learned_reward,
            Self::Sft(_) | Self::RewardModel(_) => false,
        }
    }

    /// Optimiser steps between the stage's checkpoints (GRPO and PPO only).
    pub fn checkpoint_every(&self) -> Option<usize> {
        match self {
            Self::Grpo(stage) => stage.checkpoint_every,
            Self::Ppo(stage) => stage.checkpoint_every,
            Self::Sft(_) | Self::RewardModel(_) => None,
        }
    }

    /// Optimiser steps the stage will take, when known in advance (SFT by epochs: 0).
    pub fn total_steps(&self) -> usize {
        match self {
            Self::Sft(stage) => stage.config.max_steps.unwrap_or(0),
            Self::Grpo(stage) => stage.config.max_steps,
            Self::RewardModel(stage) => stage.config.max_steps.unwrap_or(0),
            Self::Ppo(stage) => stage.config.max_steps,
        }
    }

    /// Checks the stage's config and inputs.
    ///
    /// # Errors
    /// [`AlgoError::InvalidConfig`] / [`AlgoError::InvalidInput`] naming the field.
    pub fn validate(&self) -> Result<()> {
        match self {
            Self::Sft(stage) => {
                stage.config.validate()?;
                if stage.train.is_empty() {
                    return Err(AlgoError::input("sft.train", "no training conversations"));
                }
            }
            Self::Grpo(stage) => {
                stage.config.validate()?;
                stage.validate_inputs("grpo")?;
            }
            Self::Ppo(stage) => {
                stage.config.validate()?;
                stage.validate_inputs("ppo")?;
            }
            Self::RewardModel(stage) => {
                stage.config.validate()?;
                if stage.train.is_empty() {
                    return Err(AlgoError::input(
                        "reward_model.train",
                        "no preference pairs",
                    ));
                }
            }
        }
        Ok(())
    }
}

impl From<SftStage> for Stage {
    fn from(stage: SftStage) -> Self {
        Self::Sft(stage)
    }
}

impl From<GrpoStage> for Stage {
    fn from(stage: GrpoStage) -> Self {
        Self::Grpo(stage)
    }
}

impl From<RewardModelStage> for Stage {
    fn from(stage: RewardModelStage) -> Self {
        Self::RewardModel(stage)
    }
}

impl From<PpoStage> for Stage {
    fn from(stage: PpoStage) -> Self {
        Self::Ppo(stage)
    }
}
