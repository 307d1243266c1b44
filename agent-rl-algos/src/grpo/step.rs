//! One generation step of [`GrpoTrainer`]: rollouts, rewards, advantages, then the μ optimiser
//! steps of `update.rs`, and the step's metrics.

use std::time::Instant;

use agent_rl_core::{Episode, Task};
use agent_rl_rewards::Target;
use burn::module::AutodiffModule;
use burn::tensor::backend::AutodiffBackend;

use super::trainer::GrpoTrainer;
use super::update::UpdateOutcome;
use crate::advantages::{
    frac_reward_zero_std, group_advantages_with_missing, group_reward_std, informative_completions,
};
use crate::error::Result;
use crate::metrics::StepMetrics;
use crate::rollout::{
    EpisodeStats, RolloutRequest, ScoredBatch, draw_tasks, loop_config, task_successes,
};

impl<B: AutodiffBackend> GrpoTrainer<B> {
    /// Runs one generation step: draws `prompts_per_step` tasks, rolls out, scores, and takes
    /// up to `num_iterations` optimiser steps (fewer when `max_steps` is reached first).
    ///
    /// With `filter_zero_variance_groups`, groups whose rewards are all equal are dropped before
    /// the update; when every group is dropped no update is made, but the optimiser steps still
    /// count, so a run always ends.
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

    /// Runs one generation step on exactly `step_tasks` (each sampled `num_generations` times),
    /// returning the metrics and, per task, the outcome successes of its episodes (`None` where
    /// the task's target judges no outcome). [`Self::train_step`] and curriculum training draw
    /// the tasks and call this.
    ///
    /// # Errors
    /// As [`Self::train_step`].
    pub fn train_step_on(
        &mut self,
        step_tasks: &[Task],
    ) -> Result<(StepMetrics, Vec<Vec<Option<bool>>>)> {
        let started = Instant::now();
        let config = self.config.clone();
        let group_size = config.num_generations;
        let targets = step_tasks
            .iter()
            .map(Target::from_task)
            .collect::<Result<Vec<_>, _>>()?;

        let policy = self.model().valid();
        self.publish_if_stale(&policy)?;
        let loop_config = loop_config(
            &config.sampling,
            config.seed,
            self.counters.global_step,
            config.max_tool_iterations,
            config.max_prompt_length,
            config.max_tool_calls_per_turn,
        );
        let episodes = self.rollouts.rollout(RolloutRequest {
            tasks: step_tasks,
            group_size,
            policy: &policy,
            tokenizer: &self.tokenizer,
            parser: self.parser.as_ref(),
            config: &loop_config,
            environments: self.environments.as_deref(),
        })?;
        let rollout_secs = started.elapsed().as_secs_f64();

        let trajectories: Vec<_> = episodes.iter().map(|e| &e.trajectory).collect();
        let episode_targets: Vec<_> = episodes.iter().map(|e| &targets[e.task_index]).collect();
        let scored = self.rewards.score(&trajectories, &episode_targets)?;
        let advantages =
            group_advantages_with_missing(&scored.totals, group_size, config.scale_rewards)?;
        let selected: Vec<usize> = if config.filter_zero_variance_groups {
            informative_completions(&scored.totals, group_size)?
        } else {
            (0..episodes.len()).collect()
        };
        let iterations = config
            .num_iterations
            .min(config.max_steps.saturating_sub(self.counters.global_step))
            .max(1);
        let outcome = if selected.is_empty() {
            UpdateOutcome::default()
        } else {
            self.update(&policy, &episodes, &advantages, &selected, iterations)?
        };
        let learning_rate = config
            .optimizer
            .learning_rate_at(self.counters.global_step, config.max_steps);
        self.counters.global_step += iterations;
        if !selected.is_empty() {
            let updated = self.model().valid();
            self.publish_if_stale(&updated)?;
        }
        let successes = task_successes(&episodes, &targets)?;
        let metrics = self.step_metrics(
            &episodes,
            &scored,
            outcome,
            learning_rate,
            started,
            rollout_secs,
        );
        Ok((metrics, successes))
    }

    /// Hands the rollout source the current policy when it samples elsewhere and has not
    /// received the weights of this optimiser step yet.
    fn publish_if_stale(
        &mut self,
        policy: &agent_rl_core::Qwen2ForCausalLm<B::InnerBackend>,
    ) -> Result<()> {
        if self.rollouts.samples_elsewhere()
            && self.published_step != Some(self.counters.global_step)
        {
            self.rollouts
                .publish(policy, self.policy.lora.as_ref(), self.counters.global_step)?;
            self.published_step = Some(self.counters.global_step);
        }
        Ok(())
    }

    fn step_metrics(
        &mut self,
        episodes: &[Episode],
        scored: &ScoredBatch,
        outcome: UpdateOutcome,
        learning_rate: f64,
        started: Instant,
        rollout_secs: f64,
    ) -> StepMetrics {
        let group_size = self.config.num_generations;
        let totals: Vec<f32> = scored.totals.iter().flatten().copied().collect();
        let reward = if totals.is_empty() {
            f32::NAN
        } else {
            totals.iter().sum::<f32>() / totals.len() as f32
        };
        let group_stds: Vec<f32> = group_reward_std(&scored.totals, group_size)
            .unwrap_or_default()
            .into_iter()
            .map(|s| s.unwrap_or(0.0))
            .collect();
        let reward_std = group_stds.iter().sum::<f32>() / group_stds.len().max(1) as f32;
        let stats = EpisodeStats::of(episodes);
        self.counters.num_tokens += stats.total_tokens;
        let elapsed = started.elapsed().as_secs_f64();
        StepMetrics {
            step: self.counters.global_step,
            loss: outcome.loss,
            grad_norm: outcome.grad_norm,
            learning_rate,
            reward,
            reward_std,
            rewards: scored.per_reward.clone(),
            frac_reward_zero_std: frac_reward_zero_std(&scored.totals, group_size).unwrap_or(0.0),
            loss_metrics: outcome.loss_metrics,
            sampler_mismatch: outcome.sampler_mismatch,
            entropy: outcome.entropy,
            completions: stats.completions,
            tool_calls_per_episode: stats.tool_calls_per_episode,
            tool_failure_frequency: stats.tool_failure_frequency,
            num_tokens: self.counters.num_tokens,
            step_time_secs: elapsed,
            rollout_time_secs: rollout_secs,
            tokens_per_sec: stats.generated_tokens as f64 / rollout_secs.max(1e-9),
            ..StepMetrics::default()
        }
    }
}
