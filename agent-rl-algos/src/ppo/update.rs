//! The optimisation half of a PPO step: `num_ppo_epochs` passes over shuffled minibatches,
//! each micro-batched, one AdamW step on the policy and one on the critic per minibatch —
//! except during the critic warm-up (`critic_warmup_steps`) and after the approximate-KL early
//! stop (`target_kl`), when only the critic steps.

use agent_rl_core::generation::token_scores;
use burn::optim::{GradientsAccumulator, GradientsParams};
use burn::tensor::backend::AutodiffBackend;
use burn::tensor::{Tensor, TensorData};
use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;

use super::critic::token_values;
use super::metrics::PpoMetrics;
use super::step::RolloutBatch;
use super::trainer::PpoTrainer;
use crate::error::Result;
use crate::loss::{PpoLossInputs, PpoLossMetrics};
use crate::optim::clipped_adamw_step;
use crate::rollout::{plan_micro_batches, step_seed};

/// Loss metrics of every minibatch of every epoch, and the last gradient norms.
#[derive(Debug, Default)]
pub(super) struct UpdateStats {
    /// Per minibatch: the loss (summed over its micro-batches) and the averaged metrics.
    minibatches: Vec<(f32, PpoLossMetrics)>,
    /// The policy's gradient norm before clipping, last minibatch.
    pub policy_grad_norm: Option<f32>,
    /// The critic's gradient norm before clipping, last minibatch.
    pub critic_grad_norm: Option<f32>,
    /// Optimiser steps taken on the policy.
    pub policy_updates: usize,
}

/// Factor of `target_kl` past which the policy's updates stop (SB3's and OpenAI baselines').
const TARGET_KL_MARGIN: f32 = 1.5;

/// Whether a minibatch whose approximate KL to the rollout policy is `approxkl` stops the
/// policy's updates under `target_kl` (`None`: never). A non-finite KL stops them.
pub(super) fn exceeds_target_kl(approxkl: f32, target_kl: Option<f32>) -> bool {
    target_kl.is_some_and(|target| approxkl.is_nan() || approxkl > TARGET_KL_MARGIN * target)
}

impl UpdateStats {
    /// Mean total loss over the minibatches (0 when there were none).
    pub fn mean_loss(&self) -> f32 {
        let n = self.minibatches.len().max(1) as f32;
        self.minibatches.iter().map(|(loss, _)| loss).sum::<f32>() / n
    }

    /// The averaged optimisation metrics (TRL averages over epochs × minibatches ×
    /// micro-batches) on top of the rollout's own.
    pub fn finish(&self, rollout: PpoMetrics) -> PpoMetrics {
        let n = self.minibatches.len().max(1) as f32;
        let mean = |f: fn(&PpoLossMetrics) -> f32| {
            self.minibatches.iter().map(|(_, m)| f(m)).sum::<f32>() / n
        };
        let ratio = mean(|m| m.ratio);
        let ratio_var = if self.minibatches.len() < 2 {
            0.0
        } else {
            self.minibatches
                .iter()
                .map(|(_, m)| (m.ratio - ratio).powi(2))
                .sum::<f32>()
                / (n - 1.0)
        };
        PpoMetrics {
            approxkl_avg: mean(|m| m.approxkl),
            clipfrac_avg: mean(|m| m.clipfrac),
            policy_loss_avg: mean(|m| m.policy_loss),
            value_loss_avg: mean(|m| m.value_loss),
            value_clipfrac_avg: mean(|m| m.value_clipfrac),
            entropy_avg: mean(|m| m.entropy.unwrap_or(0.0)),
            ratio,
            ratio_var,
            critic_grad_norm: self.critic_grad_norm,
            policy_updates: self.policy_updates,
            ..rollout
        }
    }
}

/// Averages the metrics of a minibatch's micro-batches.
fn average(all: &[PpoLossMetrics]) -> PpoLossMetrics {
    let n = all.len().max(1) as f32;
    let mean = |f: fn(&PpoLossMetrics) -> f32| all.iter().map(f).sum::<f32>() / n;
    PpoLossMetrics {
        policy_loss: mean(|m| m.policy_loss),
        value_loss: mean(|m| m.value_loss),
        approxkl: mean(|m| m.approxkl),
        clipfrac: mean(|m| m.clipfrac),
        value_clipfrac: mean(|m| m.value_clipfrac),
        ratio: mean(|m| m.ratio),
        entropy: Some(mean(|m| m.entropy.unwrap_or(0.0))),
    }
}

/// The `[rows.len(), width]` slice of a row-major host array as a tensor.
fn gather<B: AutodiffBackend>(
    values: &[f32],
    rows: &[usize],
    width: usize,
    device: &B::Device,
) -> Tensor<B, 2> {
    let data: Vec<f32> = rows
        .iter()
        .flat_map(|&r| values[r * width..(r + 1) * width].iter().copied())
        .collect();
    Tensor::from_data(TensorData::new(data, [rows.len(), width]), device)
}

impl<B: AutodiffBackend> PpoTrainer<B> {
    /// Runs the epochs over `batch`.
    pub(super) fn update(&mut self, batch: &RolloutBatch) -> Result<UpdateStats> {
        let config = self.config.clone();
        let n = batch.rows.ids.len();
        let mut stats = UpdateStats::default();
        if n == 0 {
            return Ok(stats);
        }
        let device = self.model().device();
        let width = batch.width;
        let mask: Vec<f32> = batch.mask.iter().map(|&m| f32::from(u8::from(m))).collect();
        let loss_fn = config.loss();
        let minibatch_size = n.div_ceil(config.num_mini_batches);
        let lr = config
            .optimizer
            .learning_rate_at(self.counters.global_step, config.max_steps);
        let critic_optimizer = config.critic_optimizer();
        let critic_lr =
            critic_optimizer.learning_rate_at(self.counters.global_step, config.max_steps);
        let mut rng = ChaCha8Rng::seed_from_u64(step_seed(config.seed, self.counters.global_step));
        // The policy steps unless the critic is warming up; the KL early stop ends its steps.
        let mut policy_steps = self.counters.global_step >= config.critic_warmup_steps;
        for _epoch in 0..config.num_ppo_epochs {
            let mut order: Vec<usize> = (0..n).collect();
            order.shuffle(&mut rng);
            for minibatch in order.chunks(minibatch_size) {
                let micro =
                    plan_micro_batches(minibatch, config.optimizer.gradient_accumulation_steps);
                let scale = 1.0 / micro.len() as f32;
                let mut policy_grads = GradientsAccumulator::new();
                let mut critic_grads = GradientsAccumulator::new();
                let (mut loss_sum, mut metrics) = (0.0f32, Vec::with_capacity(micro.len()));
                for chunk in micro {
                    let sub = batch.rows.select(chunk);
                    let ids = sub.ids_tensor::<B>(&device);
                    let (policy, critic) = (self.model(), self.critic());
                    let mut scores = token_scores(
                        policy,
                        ids.clone(),
                        &sub.attention,
                        width,
                        config.sampling.temperature,
                    );
                    if !policy_steps {
                        // Critic-only minibatch: no gradient through the policy.
                        scores.logprobs = scores.logprobs.detach();
                        scores.entropies = scores.entropies.detach();
                    }
                    let values = token_values(critic, ids, &sub.attention, width);
                    let chunk_mask = gather::<B>(&mask, chunk, width, &device);
                    let out = loss_fn.forward(PpoLossInputs {
                        logps: scores.logprobs,
                        old_logps: gather(&batch.old_logps, chunk, width, &device),
                        advantages: gather(&batch.advantages, chunk, width, &device),
                        mask: chunk_mask.clone(),
                        values,
                        old_values: gather(&batch.values, chunk, width, &device),
                        returns: gather(&batch.returns, chunk, width, &device),
                        value_mask: chunk_mask,
                        entropies: Some(scores.entropies),
                    })?;
                    let loss = out.loss.mul_scalar(scale);
                    loss_sum += loss
                        .clone()
                        .into_data()
                        .iter::<f32>()
                        .next()
                        .unwrap_or(f32::NAN);
                    metrics.push(out.metrics);
                    let mut grads = loss.backward();
                    policy_grads
                        .accumulate(policy, GradientsParams::from_module(&mut grads, policy));
                    critic_grads
                        .accumulate(critic, GradientsParams::from_module(&mut grads, critic));
                }
                let averaged = average(&metrics);
                stats.minibatches.push((loss_sum, averaged));
                if policy_steps && exceeds_target_kl(averaged.approxkl, config.target_kl) {
                    policy_steps = false;
                }
                let max_norm = config.optimizer.max_grad_norm;
                if policy_steps {
                    let model = self
                        .policy
                        .model
                        .take()
                        .expect("the model is present outside optimiser steps");
                    let (model, norm) = clipped_adamw_step(
                        &mut self.policy.optimizer,
                        model,
                        policy_grads.grads(),
                        max_norm,
                        lr,
                    );
                    self.policy.model = Some(model);
                    stats.policy_grad_norm = Some(norm);
                    stats.policy_updates += 1;
                }
                let critic = self
                    .critic
                    .take()
                    .expect("the critic is present outside optimiser steps");
                let (critic, norm) = clipped_adamw_step(
                    &mut self.critic_optimizer,
                    critic,
                    critic_grads.grads(),
                    max_norm,
                    critic_lr,
                );
                self.critic = Some(critic);
                stats.critic_grad_norm = Some(norm);
            }
        }
        Ok(stats)
    }
}

#[cfg(test)]
mod tests {
    use super::exceeds_target_kl;

    #[test]
    fn target_kl_stops_past_one_and_a_half_times_the_target() {
        assert!(!exceeds_target_kl(100.0, None));
        assert!(!exceeds_target_kl(0.015, Some(0.01)));
        assert!(exceeds_target_kl(0.0151, Some(0.01)));
        assert!(exceeds_target_kl(f32::NAN, Some(0.01)));
        assert!(!exceeds_target_kl(f32::NAN, None));
    }
}
