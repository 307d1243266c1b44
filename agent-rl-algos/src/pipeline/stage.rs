//! The stages a [`Pipeline`](super::Pipeline) runs in order: supervised fine-tuning and GRPO
//! (PPO joins as a third variant), each with its trainer config and data.

use std::sync::Arc;

use agent_rl_core::lora::LoraConfig;
use agent_rl_core::{EnvironmentFactory, Task};
use agent_rl_rewards::Reward;

use crate::config::{GrpoConfig, SftConfig};
use crate::curriculum::CurriculumSampler;
use crate::error::{AlgoError, Result};
use crate::sft::SftDataset;

/// Supervised fine-tuning on conversations (behaviour cloning, loss on assistant tokens).
#[derive(Debug, Clone)]
pub struct SftStage {
    /// The trainer's settings.
    pub config: SftConfig,
    /// Training conversations.
    pub train: SftDataset,
    /// Conversations for the eval loss; `None` = the config's `eval_fraction` split of `train`.
    pub eval: Option<SftDataset>,
    /// Train LoRA adapters on the frozen model instead of every weight (`None`: every weight).
    pub lora: Option<LoraConfig>,
}

impl SftStage {
    /// SFT with `config` on `train` (eval split by `config.eval_fraction`).
    pub fn new(config: SftConfig, train: SftDataset) -> Self {
        Self {
            config,
            train,
            eval: None,
            lora: None,
        }
    }

    /// Trains LoRA adapters instead of every weight (see [`crate::sft::SftTrainerBuilder::with_lora`]).
    #[must_use]
    pub fn with_lora(mut self, lora: impl Into<Option<LoraConfig>>) -> Self {
        self.lora = lora.into();
        self
    }

    /// Measures the eval loss on `eval` instead of a split of the training rows.
    #[must_use]
    pub fn with_eval(mut self, eval: SftDataset) -> Self {
        self.eval = Some(eval);
        self
    }
}

/// GRPO on tasks with targets, with rewards and an optional multi-turn environment.
pub struct GrpoStage {
    /// The trainer's settings.
    pub config: GrpoConfig,
    /// Training tasks (`task.data["target"]` says what success is).
    pub tasks: Vec<Task>,
    pub(crate) rewards: Vec<Box<dyn Reward>>,
    pub(crate) environments: Option<Arc<dyn EnvironmentFactory>>,
    /// Optimiser steps between checkpoints in the run directory (`checkpoint-<step>/`; one is
    /// also written at the end); `None` = no checkpoints. Resuming needs checkpoints.
    pub checkpoint_every: Option<usize>,
    /// Train LoRA adapters on the frozen model instead of every weight (`None`: every weight).
    pub lora: Option<LoraConfig>,
    /// Draw each step's tasks from this curriculum instead of `tasks` (levels, replay, new
    /// scenarios); episode outcomes are recorded back so it promotes.
    pub curriculum: Option<CurriculumSampler<Task>>,
}

impl std::fmt::Debug for GrpoStage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GrpoStage")
            .field("config", &self.config)
            .field("tasks", &self.tasks.len())
            .field(
                "rewards",
                &self.rewards.iter().map(|r| r.name()).collect::<Vec<_>>(),
            )
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

impl GrpoStage {
    /// GRPO with `config` on `tasks` (add at least one reward).
    pub fn new(config: GrpoConfig, tasks: Vec<Task>) -> Self {
        Self {
            config,
            tasks,
            rewards: Vec::new(),
            environments: None,
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
}

/// One stage of a pipeline.
#[derive(Debug)]
#[non_exhaustive]
pub enum Stage {
    /// Supervised fine-tuning.
    Sft(SftStage),
    /// GRPO.
    Grpo(GrpoStage),
}

impl Stage {
    /// The stage's name in file names, summary keys and observer calls (`sft`, `grpo`).
    pub fn name(&self) -> &'static str {
        match self {
            Self::Sft(_) => "sft",
            Self::Grpo(_) => "grpo",
        }
    }

    /// Optimiser steps the stage will take, when known in advance (SFT by epochs: 0).
    pub fn total_steps(&self) -> usize {
        match self {
            Self::Sft(stage) => stage.config.max_steps.unwrap_or(0),
            Self::Grpo(stage) => stage.config.max_steps,
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
                if stage.tasks.is_empty() && stage.curriculum.is_none() {
                    return Err(AlgoError::input("grpo.tasks", "no training tasks"));
                }
                if stage.rewards.is_empty() {
                    return Err(AlgoError::input("grpo.rewards", "add at least one reward"));
                }
                if stage.checkpoint_every == Some(0) {
                    return Err(AlgoError::config(
                        "checkpoint_every",
                        "must be at least 1 (steps between checkpoints)",
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
