//! The clipped GRPO objective with KL penalty, for every loss type and importance level.

use burn::tensor::{Tensor, backend::Backend};

use crate::config::GrpoConfig;
use crate::error::{AlgoError, Result};
use crate::kl::{KlEstimator, per_token_kl};
use crate::loss::{
    GrpoLossMetrics, ImportanceSamplingLevel, LossType, aggregate_loss, log_importance_weights,
    masked_mean,
};

/// The settings of the GRPO loss (a view of [`GrpoConfig`]).
///
/// Per token (or per sequence), with ratio `ρ = exp(log_weight)`:
/// `loss = −w·min(min(ρ, δ)·A, clip(ρ, 1 − ε, 1 + ε_high)·A) + β·KL`, then reduced by
/// [`aggregate_loss`], where `w` is the sampler correction weight (1 unless
/// [`GrpoLossInputs::sampler_weights`] is given). This reproduces TRL 1.16's `GRPOTrainer` loss (checked against it by the
/// golden test in `tests/grpo_golden.rs`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GrpoLoss {
    /// Normalisation of the per-token losses.
    pub loss_type: LossType,
    /// Token- or sequence-level importance ratios.
    pub importance_sampling_level: ImportanceSamplingLevel,
    /// KL coefficient; 0 disables the KL term (then no reference log-probs are needed).
    pub beta: f32,
    /// KL estimator.
    pub kl_estimator: KlEstimator,
    /// Multiply the KL term by the importance ratio.
    pub use_bias_correction_kl: bool,
    /// Lower clip range ε.
    pub epsilon_low: f32,
    /// Upper clip range ε_high.
    pub epsilon_high: f32,
    /// Cap δ of the unclipped ratio (two-sided clipping); `None` = off.
    pub delta: Option<f32>,
    /// Completion budget (the `dr_grpo` normaliser).
    pub max_completion_length: usize,
    /// Micro-batches per optimiser step (divides `grpo`, `bnpo`, `dr_grpo`).
    pub gradient_accumulation_steps: usize,
}

/// The tensors one GRPO loss evaluation needs.
#[derive(Debug, Clone)]
pub struct GrpoLossInputs<B: Backend> {
    /// Log-probabilities of the sampled completion tokens under the current policy, `[batch, steps]`
    /// (tracked by autodiff in training).
    pub logps: Tensor<B, 2>,
    /// Log-probabilities at sampling time, `[batch, steps]`; `None` = on-policy (`logps` detached).
    pub old_logps: Option<Tensor<B, 2>>,
    /// Log-probabilities under the reference model, `[batch, steps]`; required when `beta != 0`.
    pub ref_logps: Option<Tensor<B, 2>>,
    /// One advantage per completion, `[batch]`.
    pub advantages: Tensor<B, 1>,
    /// 1 for tokens in the loss (policy-generated), 0 for padding and tool-result tokens, `[batch, steps]`.
    pub mask: Tensor<B, 2>,
    /// `dapo` only: active tokens across all micro-batches of the optimiser step; `None` = this
    /// micro-batch's mask sum.
    pub num_items_in_batch: Option<f32>,
    /// Truncated importance weights against a separate rollout engine, `[batch, steps]`
    /// (constants, see [`truncated_importance_weights`](crate::loss::truncated_importance_weights)):
    /// they multiply each token's clipped surrogate before the KL term is added, as TRL's
    /// `vllm_importance_sampling_correction`. `None` = 1 (rollouts from the learner itself).
    pub sampler_weights: Option<Tensor<B, 2>>,
}

/// The loss and its diagnostics.
#[derive(Debug, Clone)]
pub struct GrpoLossOutput<B: Backend> {
    /// Scalar loss, `[1]`, ready to be summed over the micro-batches of a step.
    pub loss: Tensor<B, 1>,
    /// KL and clipping statistics (TRL names via [`GrpoLossMetrics::named`]).
    pub metrics: GrpoLossMetrics,
}

fn check_shape(name: &str, found: [usize; 2], expected: [usize; 2]) -> Result<()> {
    if found == expected {
        Ok(())
    } else {
        Err(AlgoError::ShapeMismatch {
            name: name.into(),
            expected: expected.to_vec(),
            found: found.to_vec(),
        })
    }
}

fn host(tensor: Tensor<impl Backend, 2>) -> Vec<f32> {
    tensor.detach().into_data().iter::<f32>().collect()
}

impl GrpoLoss {
    /// The loss settings of a GRPO config.
    pub fn from_config(config: &GrpoConfig) -> Self {
        Self {
            loss_type: config.loss_type,
            importance_sampling_level: config.importance_sampling_level,
            beta: config.beta,
            kl_estimator: config.kl_estimator,
            use_bias_correction_kl: config.use_bias_correction_kl,
            epsilon_low: config.epsilon,
            epsilon_high: config.effective_epsilon_high(),
            delta: config.delta,
            max_completion_length: config.max_completion_length,
            gradient_accumulation_steps: config.optimizer.gradient_accumulation_steps,
        }
    }

    /// Computes the loss (differentiable w.r.t. `inputs.logps` on an autodiff backend) and its metrics.
    ///
    /// # Shapes
    /// - `logps`, `old_logps`, `ref_logps`, `mask`: `[batch, steps]`; `advantages`: `[batch]`
    /// - returns `loss`: `[1]`
    ///
    /// # Errors
    /// [`AlgoError::ShapeMismatch`] when shapes disagree; [`AlgoError::InvalidInput`] when
    /// `beta != 0` and `ref_logps` is missing.
    pub fn forward<B: Backend>(&self, inputs: GrpoLossInputs<B>) -> Result<GrpoLossOutput<B>> {
        let GrpoLossInputs {
            logps,
            old_logps,
            ref_logps,
            advantages,
            mask,
            num_items_in_batch,
            sampler_weights,
        } = inputs;
        let [batch, steps] = logps.dims();
        check_shape("mask", mask.dims(), [batch, steps])?;
        if advantages.dims() != [batch] {
            return Err(AlgoError::ShapeMismatch {
                name: "advantages".into(),
                expected: vec![batch],
                found: advantages.dims().to_vec(),
            });
        }
        if let Some(old) = &old_logps {
            check_shape("old_logps", old.dims(), [batch, steps])?;
        }
        if let Some(weights) = &sampler_weights {
            check_shape("sampler_weights", weights.dims(), [batch, steps])?;
        }
        let ref_logps = match (self.beta != 0.0, ref_logps) {
            (true, Some(r)) => {
                check_shape("ref_logps", r.dims(), [batch, steps])?;
                Some(r)
            }
            (true, None) => {
                return Err(AlgoError::input(
                    "ref_logps",
                    "required when beta != 0 (the KL term)",
                ));
            }
            (false, _) => None,
        };

        let old_logps = old_logps.unwrap_or_else(|| logps.clone().detach());
        let log_weights = log_importance_weights(
            logps.clone() - old_logps,
            mask.clone(),
            self.importance_sampling_level,
        );
        let ratio = log_weights.exp(); // [batch, steps] or [batch, 1]

        let kl = ref_logps.map(|r| {
            let kl = per_token_kl(logps.clone(), r, self.kl_estimator);
            if self.use_bias_correction_kl {
                kl * ratio.clone()
            } else {
                kl
            }
        });

        let low = 1.0 - self.epsilon_low;
        let high = 1.0 + self.epsilon_high;
        let clipped = ratio.clone().clamp(low, high);
        let ratio = match self.delta {
            Some(delta) => ratio.clamp_max(delta),
            None => ratio,
        };
        let adv = advantages.clone().unsqueeze_dim::<2>(1); // [batch, 1]
        let surrogate = (ratio.clone() * adv.clone()).min_pair(clipped * adv);
        let mut per_token_loss = surrogate.neg().expand([batch, steps]);
        if let Some(weights) = sampler_weights {
            per_token_loss = per_token_loss * weights.detach();
        }
        if let Some(kl) = &kl {
            per_token_loss = per_token_loss + kl.clone().mul_scalar(self.beta);
        }

        let num_items = match num_items_in_batch {
            Some(n) => n,
            None => mask.clone().sum().into_scalar_f32(),
        };
        let loss = aggregate_loss(
            per_token_loss,
            mask.clone(),
            self.loss_type,
            self.max_completion_length,
            num_items,
            self.gradient_accumulation_steps,
        );

        let kl_metric = kl.map(|kl| masked_mean(kl.detach(), mask.clone()).into_scalar_f32());
        let width = ratio.dims()[1];
        let advantages: Vec<f32> = advantages.detach().into_data().iter::<f32>().collect();
        let metrics = GrpoLossMetrics::from_host(
            &host(ratio),
            width,
            &advantages,
            &host(mask),
            steps,
            low,
            high,
            kl_metric,
        );
        Ok(GrpoLossOutput { loss, metrics })
    }
}

/// Reads a one-element tensor as `f32` whatever the backend's float type.
trait IntoScalarF32 {
    fn into_scalar_f32(self) -> f32;
}

impl<B: Backend> IntoScalarF32 for Tensor<B, 1> {
    fn into_scalar_f32(self) -> f32 {
        self.into_data().iter::<f32>().next().unwrap_or(f32::NAN)
    }
}
