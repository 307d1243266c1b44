//! The PPO-specific metrics of a step, with TRL 1.12's `PPOTrainer` names.

use serde::{Deserialize, Serialize};

/// What a PPO step reports beyond the common [`StepMetrics`](crate::StepMetrics) fields.
///
/// Rollout quantities are per episode (summed over its policy tokens, then averaged over the
/// batch, as TRL does); optimisation quantities are averaged over every minibatch of every epoch.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct PpoMetrics {
    /// `objective/kl`: mean over episodes of the summed per-token KL to the reference.
    pub kl: f32,
    /// `objective/entropy`: mean over episodes of the summed `−log π` of the sampled tokens.
    pub entropy: f32,
    /// `objective/non_score_reward`: mean over episodes of the summed `−β·KL`.
    pub non_score_reward: f32,
    /// `objective/rlhf_reward`: `non_score_reward` + `scores`.
    pub rlhf_reward: f32,
    /// `objective/scores`: mean sequence score (after the missing-EOS penalty).
    pub scores: f32,
    /// `policy/approxkl_avg`.
    pub approxkl_avg: f32,
    /// `policy/clipfrac_avg`.
    pub clipfrac_avg: f32,
    /// `loss/policy_avg`.
    pub policy_loss_avg: f32,
    /// `loss/value_avg`.
    pub value_loss_avg: f32,
    /// `val/clipfrac_avg`.
    pub value_clipfrac_avg: f32,
    /// `policy/entropy_avg`: mean per-token entropy of the policy during the updates.
    pub entropy_avg: f32,
    /// `val/ratio`: mean importance ratio.
    pub ratio: f32,
    /// `val/ratio_var`: variance of the per-minibatch mean ratios.
    pub ratio_var: f32,
    /// `val/num_eos_tokens`: episodes of the batch that ended with EOS.
    pub num_eos_tokens: usize,
    /// `objective/kl_coef`: the KL coefficient β used for this batch's rewards.
    pub kl_coef: f32,
    /// `policy/num_updates`: optimiser steps taken on the policy for this batch (not in TRL):
    /// `num_ppo_epochs × num_mini_batches`, fewer after the `target_kl` early stop, 0 during the
    /// critic warm-up.
    pub policy_updates: usize,
    /// `critic/grad_norm`: the critic's gradient norm before clipping (last minibatch).
    pub critic_grad_norm: Option<f32>,
}

impl PpoMetrics {
    /// The metrics as `(TRL name, value)` pairs.
    pub fn named(&self) -> Vec<(&'static str, f64)> {
        let mut out = vec![
            ("objective/kl", f64::from(self.kl)),
            ("objective/entropy", f64::from(self.entropy)),
            (
                "objective/non_score_reward",
                f64::from(self.non_score_reward),
            ),
            ("objective/rlhf_reward", f64::from(self.rlhf_reward)),
            ("objective/scores", f64::from(self.scores)),
            ("objective/kl_coef", f64::from(self.kl_coef)),
            ("policy/approxkl_avg", f64::from(self.approxkl_avg)),
            ("policy/clipfrac_avg", f64::from(self.clipfrac_avg)),
            ("loss/policy_avg", f64::from(self.policy_loss_avg)),
            ("loss/value_avg", f64::from(self.value_loss_avg)),
            ("val/clipfrac_avg", f64::from(self.value_clipfrac_avg)),
            ("policy/entropy_avg", f64::from(self.entropy_avg)),
            ("val/ratio", f64::from(self.ratio)),
            ("val/ratio_var", f64::from(self.ratio_var)),
            ("val/num_eos_tokens", self.num_eos_tokens as f64),
            ("policy/num_updates", self.policy_updates as f64),
        ];
        if let Some(norm) = self.critic_grad_norm {
            out.push(("critic/grad_norm", f64::from(norm)));
        }
        out
    }
}
