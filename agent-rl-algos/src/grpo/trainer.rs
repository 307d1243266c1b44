//! [`GrpoTrainer`]: the state of a GRPO run and its training loop.

use std::sync::Arc;

use agent_rl_core::lora::LoraConfig;
use agent_rl_core::{ChatTokenizer, EnvironmentFactory, Qwen2ForCausalLm, Task, ToolCallParser};
use burn::tensor::backend::AutodiffBackend;

use super::builder::GrpoTrainerBuilder;
use super::evaluation::BestEvaluation;
use crate::config::GrpoConfig;
use crate::curriculum::{CurriculumMetrics, CurriculumSampler};
use crate::error::{AlgoError, Result};
use crate::metrics::{StepMetrics, TrainObserver};
use crate::pipeline::Evaluator;
use crate::policy_state::PolicyState;
use crate::rollout::{
    Checkpointing, LoopedTrainer, RewardStack, RolloutSource, TrainReport, train_loop,
};
use crate::trainer_state::RunCounters;

/// What a [`GrpoTrainer::train`] call did (the report every RL trainer returns).
pub type GrpoReport = TrainReport;

/// Group Relative Policy Optimization on the burn Qwen2 policy (TRL's `GRPOTrainer`).
///
/// Each generation step draws `prompts_per_step` tasks, runs `num_generations` episodes of each
/// through [`AgentLoop`](agent_rl_core::AgentLoop) on `model.valid()` (single-turn, or
/// multi-turn with an environment factory) — or through another [`RolloutSource`] such as an
/// inference server ([`GrpoTrainerBuilder::with_rollout_source`]) — scores them with the
/// reward stack, turns the totals into group-relative advantages and takes `num_iterations`
/// AdamW steps on the clipped GRPO loss (global-norm clipping, learning-rate schedule),
/// reporting [`StepMetrics`] to the observers. Old log-probabilities are the detached current
/// ones when `num_iterations == 1` (ratio 1, as TRL) and are recomputed once on the inner
/// backend otherwise, and whenever the episodes were sampled elsewhere (they then also give the
/// truncated importance weights against the sampler, `rollout_importance_sampling_cap`); reference
/// log-probabilities come from a frozen copy of the initial policy on the inner backend, kept
/// only when `beta > 0` — or, with LoRA ([`GrpoTrainerBuilder::with_lora`]), from the policy
/// with its adapters switched off, which shares the frozen weights instead of copying them.
///
/// A run is a pure function of its seed: tasks come from [`TaskOrder`](super::TaskOrder), the
/// sampler of optimiser step `s` is seeded from `(seed, s)`, so a resumed run continues exactly
/// as the uninterrupted one.
///
/// Build one with [`GrpoTrainer::builder`]; see the crate docs for an example.
pub struct GrpoTrainer<B: AutodiffBackend> {
    pub(super) config: GrpoConfig,
    /// The policy, its reference (kept only when `beta > 0` and not training LoRA), the LoRA
    /// settings and the policy's AdamW.
    pub(super) policy: PolicyState<B>,
    pub(super) tokenizer: Arc<ChatTokenizer>,
    pub(super) parser: Box<dyn ToolCallParser>,
    pub(super) rewards: RewardStack,
    pub(super) environments: Option<Box<dyn EnvironmentFactory>>,
    /// Where episodes come from (default: the learner through `AgentLoop`).
    pub(super) rollouts: Box<dyn RolloutSource<B::InnerBackend>>,
    /// The optimiser step whose policy the rollout source last received (sources that sample
    /// elsewhere only).
    pub(super) published_step: Option<usize>,
    pub(super) observers: Vec<Box<dyn TrainObserver>>,
    pub(super) checkpointing: Option<Checkpointing>,
    /// The run's counters (`global_step` counts optimiser steps).
    pub(super) counters: RunCounters,
    /// Scores the policy every `eval_steps` optimiser steps.
    pub(super) evaluator: Option<Box<dyn Evaluator<B::InnerBackend>>>,
    /// The best evaluation so far.
    pub(super) best: Option<BestEvaluation>,
    /// The best model, when kept in memory (no checkpoint directory).
    pub(super) best_model: Option<Qwen2ForCausalLm<B::InnerBackend>>,
}

impl<B: AutodiffBackend> std::fmt::Debug for GrpoTrainer<B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GrpoTrainer")
            .field("config", &self.config)
            .field("rewards", &self.rewards)
            .field("global_step", &self.counters.global_step)
            .finish_non_exhaustive()
    }
}

impl<B: AutodiffBackend> GrpoTrainer<B> {
    /// Starts building a trainer for `policy` (on the autodiff backend) with its tokenizer.
    pub fn builder(
        policy: Qwen2ForCausalLm<B>,
        tokenizer: impl Into<Arc<ChatTokenizer>>,
    ) -> GrpoTrainerBuilder<B> {
        GrpoTrainerBuilder::new(policy, tokenizer.into())
    }

    /// The resolved config.
    pub fn config(&self) -> &GrpoConfig {
        &self.config
    }

    /// The LoRA settings when training adapters, `None` for full fine-tuning.
    pub fn lora(&self) -> Option<&LoraConfig> {
        self.policy.lora.as_ref()
    }

    /// Optimiser steps done so far.
    pub fn global_step(&self) -> usize {
        self.counters.global_step
    }

    /// The policy being trained.
    ///
    /// # Panics
    /// Never: the model is only moved out for the duration of an optimiser step.
    pub fn model(&self) -> &Qwen2ForCausalLm<B> {
        self.policy.model()
    }

    /// The trained policy.
    ///
    /// # Panics
    /// Never (see [`Self::model`]).
    pub fn into_model(self) -> Qwen2ForCausalLm<B> {
        self.policy.into_model()
    }

    /// Trains on `tasks` until `max_steps` optimiser steps are done (continuing from a resumed
    /// step), calling the observers after every generation step and writing checkpoints when
    /// configured.
    ///
    /// # Errors
    /// [`AlgoError::InvalidInput`] for an empty task list; rollout, reward, loss and checkpoint
    /// failures.
    pub fn train(&mut self, tasks: &[Task]) -> Result<GrpoReport> {
        if tasks.is_empty() {
            return Err(AlgoError::input(
                "tasks",
                "is empty; give at least one task",
            ));
        }
        self.train_loop(|trainer| trainer.train_step(tasks))
    }

    /// Trains with tasks drawn from a curriculum: each step samples `prompts_per_step` tasks
    /// from `sampler` (current level, replay of easier levels, injected new scenarios), and
    /// every episode's outcome success is recorded back, so the sampler promotes to the next
    /// difficulty level once the current one is mastered. Inject new scenarios between calls
    /// with [`CurriculumSampler::add_new_scenarios`] (distribution shift).
    ///
    /// # Errors
    /// As [`Self::train`].
    pub fn train_curriculum(
        &mut self,
        sampler: &mut CurriculumSampler<Task>,
    ) -> Result<GrpoReport> {
        self.train_loop(|trainer| {
            let sampled = sampler.sample(trainer.config.prompts_per_step);
            let tasks: Vec<Task> = sampled.iter().map(|s| s.task.clone()).collect();
            let (mut metrics, successes) = trainer.train_step_on(&tasks)?;
            for (drawn, outcomes) in sampled.iter().zip(successes) {
                for success in outcomes.into_iter().flatten() {
                    sampler.record(drawn.level, success);
                }
            }
            metrics.curriculum = Some(CurriculumMetrics::of(&sampled, sampler));
            Ok(metrics)
        })
    }

    fn train_loop(
        &mut self,
        mut step: impl FnMut(&mut Self) -> Result<StepMetrics>,
    ) -> Result<GrpoReport> {
        let mut report = train_loop(self, |trainer| {
            let mut metrics = step(trainer)?;
            trainer.evaluate_if_due(&mut metrics)?;
            Ok(metrics)
        })?;
        report.best_evaluation = self.best.clone();
        Ok(report)
    }

    /// Hands the evaluator back (the pipeline lends its own for the stage).
    pub(crate) fn take_evaluator(&mut self) -> Option<Box<dyn Evaluator<B::InnerBackend>>> {
        self.evaluator.take()
    }
}

impl<B: AutodiffBackend> LoopedTrainer for GrpoTrainer<B> {
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
        GrpoTrainer::save_checkpoint(self, dir)
    }
}
