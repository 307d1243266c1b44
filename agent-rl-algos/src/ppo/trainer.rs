//! [`PpoTrainer`]: the state of a PPO run and its training loop.

use std::sync::Arc;

use agent_rl_core::{
    ChatTokenizer, EnvironmentFactory, Qwen2ForCausalLm, Qwen2ForSequenceClassification, Task,
    ToolCallParser,
};
use burn::optim::AdamW;
use burn::optim::adaptor::OptimizerAdaptor;
use burn::tensor::backend::AutodiffBackend;

use super::builder::PpoTrainerBuilder;
use crate::config::PpoConfig;
use crate::curriculum::CurriculumSampler;
use crate::error::Result;
use crate::kl_control::KlController;
use crate::metrics::{StepMetrics, TrainObserver};
use crate::policy_state::PolicyState;
use crate::rollout::{
    Checkpointing, LoopedTrainer, RewardStack, TrainReport, draw_tasks, train_loop,
};
use crate::trainer_state::RunCounters;

/// What a [`PpoTrainer::train`] call did.
pub type PpoReport = TrainReport;

/// The critic's optimiser.
pub(super) type CriticOptim<B> = OptimizerAdaptor<AdamW, Qwen2ForSequenceClassification<B>, B>;

/// Proximal Policy Optimization with a learned critic on the burn Qwen2 policy (TRL 1.12's
/// `PPOTrainer`, for agents).
///
/// Each step draws `prompts_per_step` tasks and runs `num_generations` episodes of each through
/// [`AgentLoop`](agent_rl_core::AgentLoop) on `model.valid()` (single-turn, or multi-turn with an
/// environment factory; tool-result tokens are masked out of everything below), scores them
/// with the reward stack (rule rewards, a [`LearnedReward`](agent_rl_rewards::LearnedReward), or
/// both), and on the inner backend computes the rollout's log-probabilities, the frozen
/// reference's and the critic's values. Rewards are `−β·KL` per policy token plus the sequence
/// score on the last policy token ([`kl_penalized_rewards`](crate::kl_penalized_rewards));
/// advantages come from masked [`gae`](fn@crate::gae) and are whitened; then `num_ppo_epochs`
/// passes over `num_mini_batches` shuffled minibatches each take one AdamW step on the policy
/// and one on the critic ([`PpoLoss`](crate::PpoLoss); global-norm clipping of each). β follows
/// the [`KlController`] (fixed or adaptive).
///
/// The critic is a [`Qwen2ForSequenceClassification`] (given with
/// [`PpoTrainerBuilder::with_critic`], e.g. the reward model, or by default a copy of the
/// policy with a fresh head). With LoRA the reference is the policy with its adapters off.
///
/// A run is a pure function of its seed: tasks, sampling and minibatch order derive from it and
/// the step counter.
pub struct PpoTrainer<B: AutodiffBackend> {
    pub(super) config: PpoConfig,
    /// The policy, its reference (kept only with a KL penalty and not training LoRA), the LoRA
    /// settings and the policy's AdamW.
    pub(super) policy: PolicyState<B>,
    /// `None` only inside an optimiser step.
    pub(super) critic: Option<Qwen2ForSequenceClassification<B>>,
    pub(super) critic_optimizer: CriticOptim<B>,
    pub(super) kl_controller: KlController,
    pub(super) tokenizer: Arc<ChatTokenizer>,
    pub(super) parser: Box<dyn ToolCallParser>,
    pub(super) rewards: RewardStack,
    pub(super) environments: Option<Box<dyn EnvironmentFactory>>,
    pub(super) observers: Vec<Box<dyn TrainObserver>>,
    pub(super) checkpointing: Option<Checkpointing>,
    /// The run's counters (`global_step` counts rollout batches).
    pub(super) counters: RunCounters,
}

impl<B: AutodiffBackend> std::fmt::Debug for PpoTrainer<B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PpoTrainer")
            .field("config", &self.config)
            .field("rewards", &self.rewards)
            .field("kl_controller", &self.kl_controller)
            .field("global_step", &self.counters.global_step)
            .finish_non_exhaustive()
    }
}

impl<B: AutodiffBackend> PpoTrainer<B> {
    /// Starts building a trainer for `policy` (on the autodiff backend) with its tokenizer.
    pub fn builder(
        policy: Qwen2ForCausalLm<B>,
        tokenizer: impl Into<Arc<ChatTokenizer>>,
    ) -> PpoTrainerBuilder<B> {
        PpoTrainerBuilder::new(policy, tokenizer.into())
    }

    /// The resolved config.
    pub fn config(&self) -> &PpoConfig {
        &self.config
    }

    /// Rollout batches done so far.
    pub fn global_step(&self) -> usize {
        self.counters.global_step
    }

    /// The current KL coefficient β.
    pub fn kl_coef(&self) -> f32 {
        self.kl_controller.value()
    }

    /// The policy being trained.
    ///
    /// # Panics
    /// Never: the model is only moved out for the duration of an optimiser step.
    pub fn model(&self) -> &Qwen2ForCausalLm<B> {
        self.policy.model()
    }

    /// The critic being trained.
    ///
    /// # Panics
    /// Never: the critic is only moved out for the duration of an optimiser step.
    pub fn critic(&self) -> &Qwen2ForSequenceClassification<B> {
        self.critic
            .as_ref()
            .expect("the critic is only taken inside an optimiser step")
    }

    /// The trained policy.
    ///
    /// # Panics
    /// Never (see [`Self::model`]).
    pub fn into_model(self) -> Qwen2ForCausalLm<B> {
        self.policy.into_model()
    }

    /// Draws the next `prompts_per_step` tasks of `tasks` (in the seed's order) and runs one
    /// step on them ([`Self::train_step_on`]).
    ///
    /// # Errors
    /// [`crate::AlgoError::InvalidInput`] for an empty task list; rollout, reward and loss
    /// failures.
    pub fn train_step(&mut self, tasks: &[Task]) -> Result<StepMetrics> {
        let step_tasks = draw_tasks(
            self.config.seed,
            tasks,
            &mut self.counters.tasks_drawn,
            self.config.prompts_per_step,
        )?;
        Ok(self.train_step_on(&step_tasks)?.0)
    }

    /// Trains on `tasks` until `max_steps` rollout batches are done, calling the observers after
    /// every step and writing checkpoints when configured.
    ///
    /// # Errors
    /// As [`Self::train_step`]; checkpoint failures.
    pub fn train(&mut self, tasks: &[Task]) -> Result<PpoReport> {
        if tasks.is_empty() {
            return Err(crate::AlgoError::input(
                "tasks",
                "is empty; give at least one task",
            ));
        }
        train_loop(self, |trainer| trainer.train_step(tasks))
    }

    /// Trains with tasks drawn from a curriculum (see
    /// [`GrpoTrainer::train_curriculum`](crate::GrpoTrainer::train_curriculum)).
    ///
    /// # Errors
    /// As [`Self::train`].
    pub fn train_curriculum(&mut self, sampler: &mut CurriculumSampler<Task>) -> Result<PpoReport> {
        train_loop(self, |trainer| {
            let sampled = sampler.sample(trainer.config.prompts_per_step);
            let tasks: Vec<Task> = sampled.iter().map(|s| s.task.clone()).collect();
            let (metrics, successes) = trainer.train_step_on(&tasks)?;
            for (drawn, outcomes) in sampled.iter().zip(successes) {
                for success in outcomes.into_iter().flatten() {
                    sampler.record(drawn.level, success);
                }
            }
            Ok(metrics)
        })
    }
}

impl<B: AutodiffBackend> LoopedTrainer for PpoTrainer<B> {
    fn global_step(&self) -> usize {
        self.counters.global_step
    }

    fn max_steps(&self) -> usize {
        self.config.max_steps
    }

    fn observers(&mut self) -> &mut Vec<Box<dyn TrainObserver>> {
        &mut self.observers
    }

    fn checkpointing(&self) -> Option<&Checkpointing> {
        self.checkpointing.as_ref()
    }

    fn save_checkpoint(&self, dir: &std::path::Path) -> Result<()> {
        PpoTrainer::save_checkpoint(self, dir)
    }
}
