//! One PPO step: rollouts, scores, the rollout's log-probabilities and values, KL-shaped
//! rewards, GAE, then the epochs of `update.rs`, the KL controller and the step's metrics.

use std::time::Instant;

use agent_rl_core::generation::token_logprobs;
use agent_rl_core::{AgentLoop, Episode, Qwen2ForCausalLm, Task};
use agent_rl_rewards::Target;
use burn::module::AutodiffModule;
use burn::tensor::Tensor;
use burn::tensor::backend::{AutodiffBackend, Backend};

use super::critic::token_values;
use super::metrics::PpoMetrics;
use super::rewards::{apply_missing_eos_penalty, kl_penalized_rewards, last_policy_token};
use super::trainer::PpoTrainer;
use super::update::UpdateStats;
use crate::error::Result;
use crate::gae::gae;
use crate::metrics::StepMetrics;
use crate::rollout::rows::TokenRows;
use crate::rollout::{EpisodeStats, ScoredBatch, loop_config, plan_micro_batches, task_successes};
use crate::whiten::masked_whiten;

/// A scored rollout batch laid out for the update: row-major `[episodes, width]` host arrays.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct RolloutBatch {
    /// The episodes as token rows.
    pub rows: TokenRows,
    /// Completion width of every row.
    pub width: usize,
    /// Policy tokens (the loss mask).
    pub mask: Vec<bool>,
    /// Log-probabilities at rollout time.
    pub old_logps: Vec<f32>,
    /// The critic's values at rollout time.
    pub values: Vec<f32>,
    /// Whitened GAE advantages.
    pub advantages: Vec<f32>,
    /// GAE returns (the value targets).
    pub returns: Vec<f32>,
}

fn host<B: Backend>(tensor: Tensor<B, 2>) -> Vec<f32> {
    tensor.into_data().iter::<f32>().collect()
}

/// Per-episode sums of a row-major `[n, width]` array, averaged over episodes.
fn mean_row_sum(values: &[f32], width: usize) -> f32 {
    let rows = values.len() / width.max(1);
    let total: f64 = values.iter().map(|&v| f64::from(v)).sum();
    (total / rows.max(1) as f64) as f32
}

impl<B: AutodiffBackend> PpoTrainer<B> {
    /// Runs one step on exactly `step_tasks` (each sampled `num_generations` times), returning
    /// the metrics and, per task, the outcome successes of its episodes.
    ///
    /// # Errors
    /// Rollout, reward, loss failures.
    pub fn train_step_on(
        &mut self,
        step_tasks: &[Task],
    ) -> Result<(StepMetrics, Vec<Vec<Option<bool>>>)> {
        let started = Instant::now();
        let config = self.config.clone();
        let targets = step_tasks
            .iter()
            .map(Target::from_task)
            .collect::<Result<Vec<_>, _>>()?;
        let policy = self.model().valid();
        let loop_config = loop_config(
            &config.sampling,
            config.seed,
            self.counters.global_step,
            config.max_tool_iterations,
            config.max_prompt_length,
            config.max_tool_calls_per_turn,
        );
        let episodes = AgentLoop::new(&policy, &self.tokenizer, self.parser.as_ref(), loop_config)
            .run(
                step_tasks,
                config.num_generations,
                self.environments.as_deref(),
            )?;
        let rollout_secs = started.elapsed().as_secs_f64();

        let trajectories: Vec<_> = episodes.iter().map(|e| &e.trajectory).collect();
        let episode_targets: Vec<_> = episodes.iter().map(|e| &targets[e.task_index]).collect();
        let scored = self.rewards.score(&trajectories, &episode_targets)?;
        let ended: Vec<bool> = episodes.iter().map(|e| !e.truncated).collect();
        let mut scores: Vec<f32> = scored.totals.iter().map(|t| t.unwrap_or(0.0)).collect();
        apply_missing_eos_penalty(&mut scores, &ended, config.missing_eos_penalty);

        let (batch, rollout_metrics) = self.prepare(&policy, &episodes, &scores)?;
        let stats = self.update(&batch)?;
        let learning_rate = config
            .optimizer
            .learning_rate_at(self.counters.global_step, config.max_steps);
        self.kl_controller
            .update(rollout_metrics.kl, episodes.len());
        self.counters.global_step += 1;
        let successes = task_successes(&episodes, &targets)?;
        let ppo = PpoMetrics {
            num_eos_tokens: ended.iter().filter(|&&e| e).count(),
            ..stats.finish(rollout_metrics)
        };
        let metrics = self.step_metrics(
            &episodes,
            &scored,
            ppo,
            &stats,
            learning_rate,
            started,
            rollout_secs,
        );
        Ok((metrics, successes))
    }

    /// Scores the rollout on the inner backend (old log-probabilities, reference log-probabilities,
    /// values, in micro-batches of rows) and turns the scores into advantages and returns.
    fn prepare(
        &self,
        policy: &Qwen2ForCausalLm<B::InnerBackend>,
        episodes: &[Episode],
        scores: &[f32],
    ) -> Result<(RolloutBatch, PpoMetrics)> {
        let config = &self.config;
        let pad_id = self
            .tokenizer
            .pad_id
            .or_else(|| self.tokenizer.eos_ids.first().copied())
            .unwrap_or(0);
        let members: Vec<&Episode> = episodes.iter().collect();
        let rows = TokenRows::new(&members, pad_id);
        let width = rows.completion_len;
        let n = episodes.len();
        let mut mask = vec![false; n * width];
        for (i, row) in rows.policy_tokens.iter().enumerate() {
            mask[i * width..i * width + row.len()].copy_from_slice(row);
        }
        let temperature = config.sampling.temperature;
        let base = (self.policy.lora.is_some()
            && self.policy.reference.is_none()
            && self.needs_reference())
        .then(|| policy.clone().without_adapters());
        let reference = self.policy.reference.as_ref().or(base.as_ref());
        let critic = self.critic().valid();
        let device = policy.device();
        let all: Vec<usize> = (0..n).collect();
        let chunks = config.num_mini_batches * config.optimizer.gradient_accumulation_steps;
        let (mut old_logps, mut ref_logps, mut values) = (Vec::new(), Vec::new(), Vec::new());
        for chunk in plan_micro_batches(&all, chunks) {
            let sub = rows.select(chunk);
            let ids = sub.ids_tensor::<B::InnerBackend>(&device);
            old_logps.extend(host(token_logprobs(
                policy,
                ids.clone(),
                &sub.attention,
                width,
                temperature,
            )));
            if let Some(reference) = reference {
                ref_logps.extend(host(token_logprobs(
                    reference,
                    ids.clone(),
                    &sub.attention,
                    width,
                    temperature,
                )));
            }
            values.extend(host(token_values(&critic, ids, &sub.attention, width)));
        }
        if reference.is_none() {
            ref_logps.clone_from(&old_logps); // no KL term: the penalty is 0
        }
        let score_index: Vec<usize> = rows
            .policy_tokens
            .iter()
            .map(|row| last_policy_token(row).unwrap_or(0))
            .collect();
        let kl_coef = self.kl_controller.value();
        let shaped = kl_penalized_rewards(
            &old_logps,
            &ref_logps,
            &mask,
            width,
            scores,
            &score_index,
            kl_coef,
            config.kl_estimator,
        )?;
        let enough = mask.iter().filter(|&&m| m).count() >= 2;
        let rewards = if config.whiten_rewards && enough {
            masked_whiten(&shaped.rewards, &mask, false)?
        } else {
            shaped.rewards.clone()
        };
        let out = gae(&rewards, &values, &mask, width, config.gamma, config.lam)?;
        let advantages = if enough {
            masked_whiten(&out.advantages, &mask, true)?
        } else {
            out.advantages
        };
        let neg_logps: Vec<f32> = old_logps
            .iter()
            .zip(&mask)
            .map(|(&l, &m)| if m { -l } else { 0.0 })
            .collect();
        let score_mean = scores.iter().sum::<f32>() / scores.len().max(1) as f32;
        let non_score = mean_row_sum(&shaped.non_score_reward, width);
        let metrics = PpoMetrics {
            kl: mean_row_sum(&shaped.kl, width),
            entropy: mean_row_sum(&neg_logps, width),
            non_score_reward: non_score,
            rlhf_reward: non_score + score_mean,
            scores: score_mean,
            kl_coef,
            ..PpoMetrics::default()
        };
        let batch = RolloutBatch {
            rows,
            width,
            mask,
            old_logps,
            values,
            advantages,
            returns: out.returns,
        };
        Ok((batch, metrics))
    }

    /// True when a KL reference is needed (`kl_coef > 0` or adaptive control).
    pub(super) fn needs_reference(&self) -> bool {
        self.config.kl_coef > 0.0 || self.config.kl_target.is_some()
    }

    #[expect(
        clippy::too_many_arguments,
        reason = "assembles the step's record from its parts"
    )]
    fn step_metrics(
        &mut self,
        episodes: &[Episode],
        scored: &ScoredBatch,
        ppo: PpoMetrics,
        stats: &UpdateStats,
        learning_rate: f64,
        started: Instant,
        rollout_secs: f64,
    ) -> StepMetrics {
        let totals: Vec<f32> = scored.totals.iter().flatten().copied().collect();
        let reward = if totals.is_empty() {
            f32::NAN
        } else {
            totals.iter().sum::<f32>() / totals.len() as f32
        };
        let reward_std = if totals.len() < 2 {
            0.0
        } else {
            let var = totals.iter().map(|t| (t - reward).powi(2)).sum::<f32>()
                / (totals.len() - 1) as f32;
            var.sqrt()
        };
        let episode_stats = EpisodeStats::of(episodes);
        self.counters.num_tokens += episode_stats.total_tokens;
        StepMetrics {
            step: self.counters.global_step,
            loss: stats.mean_loss(),
            grad_norm: stats.policy_grad_norm,
            learning_rate,
            reward,
            reward_std,
            rewards: scored.per_reward.clone(),
            entropy: Some(ppo.entropy_avg),
            completions: episode_stats.completions,
            tool_calls_per_episode: episode_stats.tool_calls_per_episode,
            tool_failure_frequency: episode_stats.tool_failure_frequency,
            num_tokens: self.counters.num_tokens,
            step_time_secs: started.elapsed().as_secs_f64(),
            rollout_time_secs: rollout_secs,
            tokens_per_sec: episode_stats.generated_tokens as f64 / rollout_secs.max(1e-9),
            ppo: Some(ppo),
            ..StepMetrics::default()
        }
    }
}
