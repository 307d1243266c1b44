//! One generation step of [`GrpoTrainer`]: rollouts, rewards, advantages, then the μ optimiser
//! steps of `update.rs`, and the step's metrics.

use std::time::Instant;

use agent_rl_core::{AgentLoop, AgentLoopConfig, Episode, SamplingConfig, Task};
use agent_rl_rewards::{Outcome, Sample, Target};
use burn::module::AutodiffModule;
use burn::tensor::backend::AutodiffBackend;

use super::task_order::TaskOrder;
use super::trainer::GrpoTrainer;
use super::update::UpdateOutcome;
use crate::advantages::{
    frac_reward_zero_std, group_advantages_with_missing, group_reward_std, informative_completions,
};
use crate::error::Result;
use crate::metrics::{CompletionStats, StepMetrics};

/// Mixes the run seed and the optimiser step into the sampler seed of a generation step.
fn step_seed(seed: u64, step: usize) -> u64 {
    let mut z = seed.wrapping_add((step as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

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
        if tasks.is_empty() {
            return Err(crate::AlgoError::input(
                "tasks",
                "is empty; give at least one task",
            ));
        }
        let picked = TaskOrder::new(self.config.seed, tasks.len())
            .take(self.tasks_drawn, self.config.prompts_per_step);
        self.tasks_drawn += self.config.prompts_per_step as u64;
        let step_tasks: Vec<Task> = picked.iter().map(|&i| tasks[i].clone()).collect();
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
        let loop_config = AgentLoopConfig {
            sampling: SamplingConfig {
                seed: step_seed(config.seed, self.global_step),
                ..config.sampling.clone()
            },
            max_tool_iterations: config.max_tool_iterations,
            max_prompt_length: config.max_prompt_length,
            max_tool_calls_per_turn: config.max_tool_calls_per_turn,
        };
        let episodes = AgentLoop::new(&policy, &self.tokenizer, self.parser.as_ref(), loop_config)
            .run(step_tasks, group_size, self.environments.as_deref())?;
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
            .min(config.max_steps.saturating_sub(self.global_step))
            .max(1);
        let outcome = if selected.is_empty() {
            UpdateOutcome::default()
        } else {
            self.update(&policy, &episodes, &advantages, &selected, iterations)?
        };
        let learning_rate = config
            .optimizer
            .learning_rate_at(self.global_step, config.max_steps);
        self.global_step += iterations;
        let mut successes = vec![Vec::with_capacity(group_size); step_tasks.len()];
        for episode in &episodes {
            let sample = Sample::new(&episode.trajectory, &targets[episode.task_index]);
            successes[episode.task_index].push(Outcome::default().succeeded(sample)?);
        }
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

    fn step_metrics(
        &mut self,
        episodes: &[Episode],
        scored: &super::reward_stack::ScoredBatch,
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
        let lengths: Vec<(usize, bool)> = episodes
            .iter()
            .map(|e| (e.policy_mask.len(), e.truncated))
            .collect();
        let (mut attempted, mut malformed) = (0usize, 0usize);
        for turn in episodes.iter().flat_map(|e| &e.trajectory.turns) {
            attempted += turn.parsed.attempted_calls();
            malformed += turn.parsed.malformed.len();
        }
        let generated: usize = episodes.iter().map(Episode::num_policy_tokens).sum();
        self.num_tokens += episodes
            .iter()
            .map(|e| e.token_ids.len() as u64)
            .sum::<u64>();
        let elapsed = started.elapsed().as_secs_f64();
        StepMetrics {
            step: self.global_step,
            loss: outcome.loss,
            grad_norm: outcome.grad_norm,
            learning_rate,
            reward,
            reward_std,
            rewards: scored.per_reward.clone(),
            frac_reward_zero_std: frac_reward_zero_std(&scored.totals, group_size).unwrap_or(0.0),
            loss_metrics: outcome.loss_metrics,
            entropy: outcome.entropy,
            completions: CompletionStats::from_lengths(&lengths),
            tool_calls_per_episode: attempted as f32 / episodes.len().max(1) as f32,
            tool_failure_frequency: (attempted > 0).then(|| malformed as f32 / attempted as f32),
            num_tokens: self.num_tokens,
            step_time_secs: elapsed,
            rollout_time_secs: rollout_secs,
            tokens_per_sec: generated as f64 / rollout_secs.max(1e-9),
            ..StepMetrics::default()
        }
    }
}
