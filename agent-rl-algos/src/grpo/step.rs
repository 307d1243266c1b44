//! One generation step of [`GrpoTrainer`]: rollouts, rewards, advantages, μ optimiser steps.

use std::time::Instant;

use agent_rl_core::generation::{token_logprobs, token_scores};
use agent_rl_core::{AgentLoop, AgentLoopConfig, Episode, Qwen2ForCausalLm, SamplingConfig, Task};
use agent_rl_rewards::{Outcome, Sample, Target};
use burn::module::AutodiffModule;
use burn::optim::{GradientsAccumulator, GradientsParams, Optimizer};
use burn::tensor::backend::AutodiffBackend;
use burn::tensor::{Int, Tensor};

use super::batch::TokenRows;
use super::task_order::TaskOrder;
use super::trainer::GrpoTrainer;
use crate::advantages::{
    frac_reward_zero_std, group_advantages_with_missing, group_reward_std, informative_completions,
};
use crate::error::Result;
use crate::loss::{GrpoLoss, GrpoLossInputs, GrpoLossMetrics, completion_loss_mask};
use crate::metrics::{CompletionStats, StepMetrics};
use crate::optim::clip_grad_norm;
use crate::reference::sync_reference_model;

/// One micro-batch, ready for the loss.
struct MicroBatch<B: AutodiffBackend> {
    ids: Tensor<B, 2, Int>,
    inner_ids: Tensor<B::InnerBackend, 2, Int>,
    attention: Vec<Vec<bool>>,
    completion_len: usize,
    mask: Tensor<B, 2>,
    advantages: Tensor<B, 1>,
    old_logps: Option<Tensor<B, 2>>,
    ref_logps: Option<Tensor<B, 2>>,
}

/// What the optimiser steps of one generation step produced.
#[derive(Default)]
struct UpdateOutcome {
    loss: f32,
    grad_norm: Option<f32>,
    entropy: Option<f32>,
    loss_metrics: GrpoLossMetrics,
}

/// Mixes the run seed and the optimiser step into the sampler seed of a generation step.
fn step_seed(seed: u64, step: usize) -> u64 {
    let mut z = seed.wrapping_add((step as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Averages loss metrics over micro-batches and iterations (min / max for the extremes).
fn average_metrics(all: &[GrpoLossMetrics]) -> GrpoLossMetrics {
    if all.is_empty() {
        return GrpoLossMetrics::default();
    }
    let n = all.len() as f32;
    let mean = |f: fn(&GrpoLossMetrics) -> f32| all.iter().map(f).sum::<f32>() / n;
    let kls: Vec<f32> = all.iter().filter_map(|m| m.kl).collect();
    GrpoLossMetrics {
        kl: (!kls.is_empty()).then(|| kls.iter().sum::<f32>() / kls.len() as f32),
        clip_ratio_low_mean: mean(|m| m.clip_ratio_low_mean),
        clip_ratio_high_mean: mean(|m| m.clip_ratio_high_mean),
        clip_ratio_region_mean: mean(|m| m.clip_ratio_region_mean),
        clip_ratio_low_min: all
            .iter()
            .map(|m| m.clip_ratio_low_min)
            .fold(f32::NAN, f32::min),
        clip_ratio_high_max: all
            .iter()
            .map(|m| m.clip_ratio_high_max)
            .fold(f32::NAN, f32::max),
    }
}

fn host_sum<B: burn::tensor::backend::Backend>(tensor: Tensor<B, 2>) -> f32 {
    tensor.sum().into_data().iter::<f32>().next().unwrap_or(0.0)
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

    /// Builds the micro-batches and takes `iterations` optimiser steps.
    fn update(
        &mut self,
        policy: &Qwen2ForCausalLm<B::InnerBackend>,
        episodes: &[Episode],
        advantages: &[f32],
        selected: &[usize],
        iterations: usize,
    ) -> Result<UpdateOutcome> {
        let config = &self.config;
        let device = self.model().device();
        let pad_id = self
            .tokenizer
            .pad_id
            .or_else(|| self.tokenizer.eos_ids.first().copied())
            .unwrap_or(0);
        let temperature = config.sampling.temperature;
        let chunks = config
            .optimizer
            .gradient_accumulation_steps
            .min(selected.len());
        let chunk_size = selected.len().div_ceil(chunks);
        let mut loss_fn = GrpoLoss::from_config(config);
        let mut micro = Vec::with_capacity(chunks);
        let mut active_tokens = 0.0f32;
        for chunk in selected.chunks(chunk_size) {
            let members: Vec<&Episode> = chunk.iter().map(|&i| &episodes[i]).collect();
            let rows = TokenRows::new(&members, pad_id);
            let width = rows.completion_len;
            let mask = completion_loss_mask::<B>(
                &rows.policy_tokens,
                &rows.truncated,
                config.mask_truncated_completions,
                width,
                &device,
            )?;
            active_tokens += host_sum(mask.clone());
            let chunk_advantages: Vec<f32> = chunk.iter().map(|&i| advantages[i]).collect();
            let inner_ids = rows.ids_tensor::<B::InnerBackend>(&device);
            let old_logps = (config.num_iterations > 1).then(|| {
                Tensor::from_inner(token_logprobs(
                    policy,
                    inner_ids.clone(),
                    &rows.attention,
                    width,
                    temperature,
                ))
            });
            micro.push(MicroBatch::<B> {
                ids: rows.ids_tensor::<B>(&device),
                inner_ids,
                attention: rows.attention,
                completion_len: width,
                mask,
                advantages: Tensor::from_floats(chunk_advantages.as_slice(), &device),
                old_logps,
                ref_logps: None,
            });
        }
        // The frozen reference scores every micro-batch as one rayon task while another runs
        // the first policy forward: on a CPU backend part of either pass is single-threaded, so
        // the two overlap instead of taking turns (on a rayon thread, the kernels' own parallel
        // loops share the pool instead of queueing work from outside it).
        let score = |model: &Qwen2ForCausalLm<B>, batch: &MicroBatch<B>| {
            token_scores(
                model,
                batch.ids.clone(),
                &batch.attention,
                batch.completion_len,
                temperature,
            )
        };
        let reference = self.reference.as_ref();
        let policy = self.model();
        let (reference_logps, mut first_scores) = rayon::join(
            || {
                reference.map(|reference| {
                    micro
                        .iter()
                        .map(|batch| {
                            token_logprobs(
                                reference,
                                batch.inner_ids.clone(),
                                &batch.attention,
                                batch.completion_len,
                                temperature,
                            )
                        })
                        .collect::<Vec<_>>()
                })
            },
            || micro.first().map(|batch| score(policy, batch)),
        );
        if let Some(reference_logps) = reference_logps {
            for (batch, logps) in micro.iter_mut().zip(reference_logps) {
                batch.ref_logps = Some(Tensor::from_inner(logps));
            }
        }
        loss_fn.gradient_accumulation_steps = micro.len();
        let max_norm = config.optimizer.max_grad_norm.unwrap_or(f32::INFINITY);
        let mut outcome = UpdateOutcome::default();
        let mut all_metrics = Vec::new();
        let (mut entropy_sum, mut loss_sum) = (0.0f32, 0.0f32);
        for iteration in 0..iterations {
            let model = self.model();
            let mut accumulator = GradientsAccumulator::<Qwen2ForCausalLm<B>>::new();
            for batch in &micro {
                let scores = first_scores.take().unwrap_or_else(|| score(model, batch));
                if iteration == 0 {
                    entropy_sum += host_sum(scores.entropies.detach() * batch.mask.clone());
                }
                let out = loss_fn.forward(GrpoLossInputs {
                    logps: scores.logprobs,
                    old_logps: batch.old_logps.clone(),
                    ref_logps: batch.ref_logps.clone(),
                    advantages: batch.advantages.clone(),
                    mask: batch.mask.clone(),
                    num_items_in_batch: Some(active_tokens),
                })?;
                loss_sum += out
                    .loss
                    .clone()
                    .into_data()
                    .iter::<f32>()
                    .next()
                    .unwrap_or(f32::NAN);
                all_metrics.push(out.metrics);
                let grads = GradientsParams::from_grads(out.loss.backward(), model);
                accumulator.accumulate(model, grads);
            }
            let (grads, norm) = clip_grad_norm(model, accumulator.grads(), max_norm);
            outcome.grad_norm = Some(norm);
            if norm.is_finite() {
                let step = self.global_step + iteration;
                let lr = config.optimizer.learning_rate_at(step, config.max_steps);
                let model = self
                    .model
                    .take()
                    .expect("the model is present outside optimiser steps");
                self.model = Some(self.optimizer.step(lr, model, grads));
                let done = step + 1;
                if config.sync_ref_model
                    && done.is_multiple_of(config.ref_model_sync_steps)
                    && let Some(reference) = self.reference.take()
                {
                    self.reference = Some(sync_reference_model(
                        reference,
                        &self.model().valid(),
                        config.ref_model_mixup_alpha,
                    )?);
                }
            }
        }
        outcome.loss = loss_sum / iterations as f32;
        outcome.entropy = Some(entropy_sum / active_tokens.max(1.0));
        outcome.loss_metrics = average_metrics(&all_metrics);
        Ok(outcome)
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
