//! The optimiser half of a GRPO generation step, in small pieces: planning the micro-batches
//! (`plan_micro_batches`), building their tensors, scoring the frozen reference, accumulating
//! the loss over micro-batches ([`LossTally`]) and one clipped AdamW step with the reference
//! sync. [`GrpoTrainer::update`] strings them together.

use agent_rl_core::generation::{
    TokenScores, token_logprobs, token_scores, token_scores_checkpointed,
};
use agent_rl_core::model::{CheckpointedLayers, backward_through};
use agent_rl_core::{Episode, Qwen2ForCausalLm};
use burn::module::AutodiffModule;
use burn::optim::{GradientsAccumulator, GradientsParams};
use burn::tensor::backend::{AutodiffBackend, Backend};
use burn::tensor::{Int, Tensor, TensorData};

use super::trainer::GrpoTrainer;
use crate::error::Result;
use crate::loss::{
    GrpoLoss, GrpoLossInputs, GrpoLossMetrics, SamplerMismatch, SamplerMismatchMetrics,
    completion_loss_mask, truncated_importance_weights,
};
use crate::optim::clipped_adamw_step;
use crate::reference::sync_reference_model;
use crate::rollout::plan_micro_batches;
use crate::rollout::rows::TokenRows;

/// One micro-batch, ready for the loss.
pub(super) struct MicroBatch<B: AutodiffBackend> {
    ids: Tensor<B, 2, Int>,
    inner_ids: Tensor<B::InnerBackend, 2, Int>,
    attention: Vec<Vec<bool>>,
    completion_len: usize,
    mask: Tensor<B, 2>,
    advantages: Tensor<B, 1>,
    old_logps: Option<Tensor<B, 2>>,
    ref_logps: Option<Tensor<B, 2>>,
    /// Truncated importance weights against a separate sampler (constants).
    sampler_weights: Option<Tensor<B, 2>>,
}

/// What the optimiser steps of one generation step produced.
#[derive(Debug, Default)]
pub(super) struct UpdateOutcome {
    pub loss: f32,
    pub grad_norm: Option<f32>,
    pub entropy: Option<f32>,
    pub loss_metrics: GrpoLossMetrics,
    pub sampler_mismatch: Option<SamplerMismatchMetrics>,
}

/// Loss, entropy and loss metrics summed over the micro-batches and iterations of one update.
#[derive(Debug, Default)]
pub(super) struct LossTally {
    loss_sum: f32,
    entropy_sum: f32,
    metrics: Vec<GrpoLossMetrics>,
}

impl LossTally {
    /// Adds one micro-batch's loss value and metrics.
    pub fn add_loss(&mut self, loss: f32, metrics: GrpoLossMetrics) {
        self.loss_sum += loss;
        self.metrics.push(metrics);
    }

    /// Adds the summed entropy of one micro-batch's completion tokens (first iteration only).
    pub fn add_entropy(&mut self, entropy_sum: f32) {
        self.entropy_sum += entropy_sum;
    }

    /// The outcome: the loss averaged over iterations (each iteration's micro-batch losses sum
    /// to the loss of the whole batch), the entropy per completion token, averaged metrics.
    pub fn finish(
        self,
        iterations: usize,
        active_tokens: f32,
        grad_norm: Option<f32>,
    ) -> UpdateOutcome {
        UpdateOutcome {
            loss: self.loss_sum / iterations.max(1) as f32,
            grad_norm,
            entropy: Some(self.entropy_sum / active_tokens.max(1.0)),
            loss_metrics: average_metrics(&self.metrics),
            sampler_mismatch: None,
        }
    }
}

/// Averages loss metrics over micro-batches and iterations (min / max for the extremes).
pub(super) fn average_metrics(all: &[GrpoLossMetrics]) -> GrpoLossMetrics {
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

/// The policy's token scores on `batch` and, with activation checkpointing, the layers the loss
/// is differentiated through.
type Scored<B> = (TokenScores<B>, Option<CheckpointedLayers<B>>);

/// The policy's token scores (log-probabilities and entropies, with gradients) on `batch`.
fn score<B: AutodiffBackend>(
    model: &Qwen2ForCausalLm<B>,
    batch: &MicroBatch<B>,
    temperature: f32,
    checkpointing: bool,
) -> Scored<B> {
    let (ids, mask, len) = (batch.ids.clone(), &batch.attention, batch.completion_len);
    if checkpointing {
        let (scores, layers) = token_scores_checkpointed(model, ids, mask, len, temperature);
        (scores, Some(layers))
    } else {
        (token_scores(model, ids, mask, len, temperature), None)
    }
}

/// The sampler's log-probabilities of `members`' completion tokens, right-padded with 0 to
/// `width`, row-major `[members, width]`.
fn sampler_logprobs(members: &[&Episode], width: usize) -> Vec<f32> {
    let mut out = Vec::with_capacity(members.len() * width);
    for episode in members {
        let row = &episode.logprobs[..episode.logprobs.len().min(width)];
        out.extend_from_slice(row);
        out.extend(std::iter::repeat_n(0.0, width - row.len()));
    }
    out
}

fn host_sum<B: Backend>(tensor: Tensor<B, 2>) -> f32 {
    tensor.sum().into_data().iter::<f32>().next().unwrap_or(0.0)
}

impl<B: AutodiffBackend> GrpoTrainer<B> {
    /// Builds the micro-batches and takes `iterations` optimiser steps.
    pub(super) fn update(
        &mut self,
        policy: &Qwen2ForCausalLm<B::InnerBackend>,
        episodes: &[Episode],
        advantages: &[f32],
        selected: &[usize],
        iterations: usize,
    ) -> Result<UpdateOutcome> {
        let plan = plan_micro_batches(selected, self.config.optimizer.gradient_accumulation_steps);
        let (mut micro, active_tokens, mismatch) =
            self.micro_batches(policy, episodes, advantages, &plan)?;
        let mut first_scores = self.score_reference(&mut micro);
        let mut loss_fn = GrpoLoss::from_config(&self.config);
        loss_fn.gradient_accumulation_steps = micro.len();
        let mut tally = LossTally::default();
        let mut grad_norm = None;
        for iteration in 0..iterations {
            let model = self.model();
            let mut accumulator = GradientsAccumulator::<Qwen2ForCausalLm<B>>::new();
            for batch in &micro {
                let (temperature, checkpointing) = (
                    self.config.sampling.temperature,
                    self.config.gradient_checkpointing,
                );
                let (scores, layers) = first_scores
                    .take()
                    .unwrap_or_else(|| score(model, batch, temperature, checkpointing));
                if iteration == 0 {
                    tally.add_entropy(host_sum(scores.entropies.detach() * batch.mask.clone()));
                }
                let out = loss_fn.forward(GrpoLossInputs {
                    logps: scores.logprobs,
                    old_logps: batch.old_logps.clone(),
                    ref_logps: batch.ref_logps.clone(),
                    advantages: batch.advantages.clone(),
                    mask: batch.mask.clone(),
                    num_items_in_batch: Some(active_tokens),
                    sampler_weights: batch.sampler_weights.clone(),
                })?;
                let loss = out.loss.clone().into_data().iter::<f32>().next();
                tally.add_loss(loss.unwrap_or(f32::NAN), out.metrics);
                let grads = backward_through(out.loss, layers, model);
                let grads = GradientsParams::from_grads(grads, model);
                accumulator.accumulate(model, grads);
            }
            grad_norm = Some(
                self.optimizer_step(accumulator.grads(), self.counters.global_step + iteration)?,
            );
        }
        let mut outcome = tally.finish(iterations, active_tokens, grad_norm);
        outcome.sampler_mismatch = mismatch.and_then(|m| m.metrics());
        Ok(outcome)
    }

    /// The cap of the sampler correction, when this trainer's rollouts come from another engine
    /// and the correction is on.
    fn sampler_correction_cap(&self) -> Option<f32> {
        self.rollouts
            .samples_elsewhere()
            .then_some(self.config.rollout_importance_sampling_cap)
            .flatten()
    }

    /// The tensors of each planned micro-batch (ids, masks, advantages, and the old policy's
    /// log-probabilities when `num_iterations > 1` or the sampler is corrected for), the
    /// number of completion tokens in the loss, and the sampler mismatch when corrected for.
    fn micro_batches(
        &self,
        policy: &Qwen2ForCausalLm<B::InnerBackend>,
        episodes: &[Episode],
        advantages: &[f32],
        plan: &[&[usize]],
    ) -> Result<(Vec<MicroBatch<B>>, f32, Option<SamplerMismatch>)> {
        let config = &self.config;
        let device = self.model().device();
        let pad_id = self
            .tokenizer
            .pad_id
            .or_else(|| self.tokenizer.eos_ids.first().copied())
            .unwrap_or(0);
        let temperature = config.sampling.temperature;
        let correction_cap = self.sampler_correction_cap();
        let mut mismatch = correction_cap.map(|_| SamplerMismatch::default());
        let mut micro = Vec::with_capacity(plan.len());
        let mut active_tokens = 0.0f32;
        for chunk in plan {
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
            let old_logps = (config.num_iterations > 1 || correction_cap.is_some()).then(|| {
                token_logprobs(
                    policy,
                    inner_ids.clone(),
                    &rows.attention,
                    width,
                    temperature,
                )
            });
            let sampler_weights = match (correction_cap, &old_logps, mismatch.as_mut()) {
                (Some(cap), Some(learner), Some(total)) => {
                    let sampler = sampler_logprobs(&members, width);
                    let correction = truncated_importance_weights(
                        &learner
                            .clone()
                            .into_data()
                            .iter::<f32>()
                            .collect::<Vec<_>>(),
                        &sampler,
                        &mask.clone().into_data().iter::<f32>().collect::<Vec<_>>(),
                        cap,
                    );
                    total.merge(&correction.mismatch);
                    Some(Tensor::<B, 2>::from_data(
                        TensorData::new(correction.weights, [members.len(), width]),
                        &device,
                    ))
                }
                _ => None,
            };
            micro.push(MicroBatch::<B> {
                ids: rows.ids_tensor::<B>(&device),
                inner_ids,
                attention: rows.attention,
                completion_len: width,
                mask,
                advantages: Tensor::from_floats(chunk_advantages.as_slice(), &device),
                old_logps: old_logps.map(Tensor::from_inner),
                ref_logps: None,
                sampler_weights,
            });
        }
        Ok((micro, active_tokens, mismatch))
    }

    /// Fills each micro-batch's reference log-probabilities (when there is a reference) and
    /// returns the policy's scores of the first micro-batch. The frozen reference scores every
    /// micro-batch as one rayon task while another runs the first policy forward: on a CPU
    /// backend part of either pass is single-threaded, so the two overlap instead of taking
    /// turns (on a rayon thread, the kernels' own parallel loops share the pool instead of
    /// queueing work from outside it).
    fn score_reference(&self, micro: &mut [MicroBatch<B>]) -> Option<Scored<B>> {
        let temperature = self.config.sampling.temperature;
        let checkpointing = self.config.gradient_checkpointing;
        // With LoRA the reference is the base: the policy with its adapters off (shared weights).
        let base = (self.policy.lora.is_some() && self.config.needs_reference_model())
            .then(|| self.model().valid().without_adapters());
        let reference = self.policy.reference.as_ref().or(base.as_ref());
        let policy = self.model();
        let (reference_logps, first_scores) = rayon::join(
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
            || {
                micro
                    .first()
                    .map(|batch| score(policy, batch, temperature, checkpointing))
            },
        );
        if let Some(reference_logps) = reference_logps {
            for (batch, logps) in micro.iter_mut().zip(reference_logps) {
                batch.ref_logps = Some(Tensor::from_inner(logps));
            }
        }
        first_scores
    }

    /// Clips `grads` to the global norm and, when the norm is finite, takes the AdamW step of
    /// optimiser step `step` and syncs the reference (TR-DPO) when due; returns the norm (a
    /// non-finite norm skips the step, as TRL does).
    fn optimizer_step(&mut self, grads: GradientsParams, step: usize) -> Result<f32> {
        let config = &self.config;
        let lr = config.optimizer.learning_rate_at(step, config.max_steps);
        let model = self
            .policy
            .model
            .take()
            .expect("the model is present outside optimiser steps");
        let (model, norm) = clipped_adamw_step(
            &mut self.policy.optimizer,
            model,
            grads,
            config.optimizer.max_grad_norm,
            lr,
        );
        self.policy.model = Some(model);
        if !norm.is_finite() {
            return Ok(norm);
        }
        let done = step + 1;
        if config.sync_ref_model
            && done.is_multiple_of(config.ref_model_sync_steps)
            && let Some(reference) = self.policy.reference.take()
        {
            self.policy.reference = Some(sync_reference_model(
                reference,
                &self.model().valid(),
                config.ref_model_mixup_alpha,
            )?);
        }
        Ok(norm)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tally_averages_over_iterations_and_tokens() {
        let mut tally = LossTally::default();
        let metrics = |kl: Option<f32>, low: f32, high: f32| GrpoLossMetrics {
            kl,
            clip_ratio_low_mean: low,
            clip_ratio_high_mean: high,
            clip_ratio_region_mean: 0.0,
            clip_ratio_low_min: low,
            clip_ratio_high_max: high,
        };
        // Two iterations of two micro-batches: each iteration's losses sum to the batch loss.
        tally.add_loss(0.25, metrics(Some(0.1), 0.0, 0.2));
        tally.add_loss(0.75, metrics(None, 0.1, 0.4));
        tally.add_loss(0.5, metrics(Some(0.3), 0.2, 0.0));
        tally.add_loss(0.5, metrics(None, 0.3, 0.6));
        tally.add_entropy(6.0);
        let out = tally.finish(2, 4.0, Some(1.5));
        assert!((out.loss - 1.0).abs() < 1e-6);
        assert_eq!(out.entropy, Some(1.5));
        assert_eq!(out.grad_norm, Some(1.5));
        let kl = out.loss_metrics.kl.expect("two micro-batches had a KL");
        assert!(
            (kl - 0.2).abs() < 1e-6,
            "KL averages the batches that have one: {kl}"
        );
        assert!((out.loss_metrics.clip_ratio_high_mean - 0.3).abs() < 1e-6);
        assert_eq!(out.loss_metrics.clip_ratio_low_min, 0.0);
        assert_eq!(out.loss_metrics.clip_ratio_high_max, 0.6);
    }

    #[test]
    fn no_micro_batches_give_default_metrics() {
        let out = LossTally::default().finish(1, 0.0, None);
        assert_eq!(out.loss, 0.0);
        assert_eq!(out.loss_metrics, GrpoLossMetrics::default());
    }
}
