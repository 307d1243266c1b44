//! Per-step training metrics with TRL's names, and the observer trait trainers report to.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::curriculum::CurriculumMetrics;
use crate::evaluate::ToolUseScores;
use crate::loss::{GrpoLossMetrics, SamplerMismatchMetrics};
use crate::ppo::PpoMetrics;
use crate::reward_model::PreferenceMetrics;

/// Mean and std of one reward function over the step's scored completions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RewardStats {
    /// The reward's name (`rewards/<name>/mean`).
    pub name: String,
    /// Mean over completions it scored.
    pub mean: f32,
    /// Unbiased std over completions it scored.
    pub std: f32,
}

/// Length statistics of the step's completions (`completions/*`).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct CompletionStats {
    /// `completions/mean_length` in tokens.
    pub mean_length: f32,
    /// `completions/min_length`.
    pub min_length: f32,
    /// `completions/max_length`.
    pub max_length: f32,
    /// `completions/clipped_ratio`: fraction truncated at `max_completion_length`.
    pub clipped_ratio: f32,
}

impl CompletionStats {
    /// Statistics of `(length in tokens, truncated)` pairs; all zero for an empty slice.
    pub fn from_lengths(completions: &[(usize, bool)]) -> Self {
        if completions.is_empty() {
            return Self::default();
        }
        let n = completions.len() as f32;
        Self {
            mean_length: completions.iter().map(|&(l, _)| l as f32).sum::<f32>() / n,
            min_length: completions.iter().map(|&(l, _)| l).min().unwrap_or(0) as f32,
            max_length: completions.iter().map(|&(l, _)| l).max().unwrap_or(0) as f32,
            clipped_ratio: completions.iter().filter(|&&(_, t)| t).count() as f32 / n,
        }
    }
}

/// Everything a trainer reports after one optimiser step.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct StepMetrics {
    /// Optimiser step, 1-based.
    pub step: usize,
    /// `loss`: the step's loss (summed over micro-batches, averaged over iterations).
    pub loss: f32,
    /// `grad_norm`: global gradient norm before clipping.
    pub grad_norm: Option<f32>,
    /// `learning_rate` used for this step.
    pub learning_rate: f64,
    /// `reward`: mean weighted reward.
    pub reward: f32,
    /// `reward_std`: std of the weighted reward over the batch.
    pub reward_std: f32,
    /// `rewards/<name>/mean` and `/std` per reward function.
    pub rewards: Vec<RewardStats>,
    /// `frac_reward_zero_std`: fraction of groups whose rewards all equal.
    pub frac_reward_zero_std: f32,
    /// `kl` and `clip_ratio/*` from the loss.
    pub loss_metrics: GrpoLossMetrics,
    /// `sampling/*`: the truncated importance sampling against a separate rollout engine
    /// (mean weight, share cut by the cap, learner–sampler log-probability gap), on steps whose
    /// rollouts came from one (GRPO with a remote rollout source).
    #[serde(default)]
    pub sampler_mismatch: Option<SamplerMismatchMetrics>,
    /// `entropy`: mean per-token entropy of the policy on completion tokens.
    pub entropy: Option<f32>,
    /// `completions/*` length statistics.
    pub completions: CompletionStats,
    /// `tools/calls_per_episode`: mean tool calls per episode.
    pub tool_calls_per_episode: f32,
    /// `tools/failure_frequency`: fraction of tool calls that failed (malformed or errored).
    pub tool_failure_frequency: Option<f32>,
    /// `eval_loss`: mean token loss on the held-out split, on steps where it was computed.
    pub eval_loss: Option<f32>,
    /// `mean_token_accuracy`: fraction of loss tokens the model predicts exactly (argmax), SFT.
    pub mean_token_accuracy: Option<f32>,
    /// `num_tokens`: tokens (prompt + completion) processed so far.
    pub num_tokens: u64,
    /// `step_time`: wall-clock seconds of the step.
    pub step_time_secs: f64,
    /// `timing/rollout`: wall-clock seconds spent generating (and running tools) in the step;
    /// the rest of `step_time` is scoring, reference/old log-probs and the update. Zero for SFT.
    #[serde(default)]
    pub rollout_time_secs: f64,
    /// `tokens/s`: generated tokens per second of rollout (`timing/rollout`).
    pub tokens_per_sec: f64,
    /// Reward-model training: `accuracy`, `margin`, `min/mean/max_reward`, `rewards/chosen`,
    /// `rewards/rejected` of the step's pairs.
    #[serde(default)]
    pub preference: Option<PreferenceMetrics>,
    /// Reward-model training: the same on the eval split (`eval_accuracy`, …), on steps where it
    /// was computed.
    #[serde(default)]
    pub eval_preference: Option<PreferenceMetrics>,
    /// PPO's own metrics (`objective/*`, `policy/*`, `loss/*`, `val/*`); `None` for other trainers.
    #[serde(default)]
    pub ppo: Option<PpoMetrics>,
    /// `eval/format_accuracy`, `eval/argument_match`, `eval/success_rate`, `eval/episodes`:
    /// held-out scores on steps where the trainer evaluated (GRPO's `eval_steps`).
    #[serde(default)]
    pub held_out: Option<ToolUseScores>,
    /// `curriculum/*`: the sampler's level and this step's draws by source, when training
    /// from a curriculum.
    #[serde(default)]
    pub curriculum: Option<CurriculumMetrics>,
}

impl StepMetrics {
    /// The metrics as `(TRL name, value)` pairs in a stable order; absent optional values are left out.
    pub fn named(&self) -> Vec<(String, f64)> {
        let mut out: Vec<(String, f64)> = vec![
            ("step".into(), self.step as f64),
            ("loss".into(), f64::from(self.loss)),
        ];
        if let Some(norm) = self.grad_norm {
            out.push(("grad_norm".into(), f64::from(norm)));
        }
        out.push(("learning_rate".into(), self.learning_rate));
        out.push(("reward".into(), f64::from(self.reward)));
        out.push(("reward_std".into(), f64::from(self.reward_std)));
        for r in &self.rewards {
            out.push((format!("rewards/{}/mean", r.name), f64::from(r.mean)));
            out.push((format!("rewards/{}/std", r.name), f64::from(r.std)));
        }
        out.push((
            "frac_reward_zero_std".into(),
            f64::from(self.frac_reward_zero_std),
        ));
        out.extend(
            self.loss_metrics
                .named()
                .into_iter()
                .map(|(k, v)| (k.to_string(), f64::from(v))),
        );
        if let Some(mismatch) = &self.sampler_mismatch {
            out.extend(
                mismatch
                    .named()
                    .into_iter()
                    .map(|(k, v)| (k.to_string(), f64::from(v))),
            );
        }
        if let Some(entropy) = self.entropy {
            out.push(("entropy".into(), f64::from(entropy)));
        }
        let c = &self.completions;
        out.push(("completions/mean_length".into(), f64::from(c.mean_length)));
        out.push(("completions/min_length".into(), f64::from(c.min_length)));
        out.push(("completions/max_length".into(), f64::from(c.max_length)));
        out.push((
            "completions/clipped_ratio".into(),
            f64::from(c.clipped_ratio),
        ));
        out.push((
            "tools/calls_per_episode".into(),
            f64::from(self.tool_calls_per_episode),
        ));
        if let Some(failures) = self.tool_failure_frequency {
            out.push(("tools/failure_frequency".into(), f64::from(failures)));
        }
        if let Some(eval_loss) = self.eval_loss {
            out.push(("eval_loss".into(), f64::from(eval_loss)));
        }
        if let Some(accuracy) = self.mean_token_accuracy {
            out.push(("mean_token_accuracy".into(), f64::from(accuracy)));
        }
        out.push(("num_tokens".into(), self.num_tokens as f64));
        out.push(("step_time".into(), self.step_time_secs));
        if self.rollout_time_secs > 0.0 {
            out.push(("timing/rollout".into(), self.rollout_time_secs));
        }
        out.push(("tokens/s".into(), self.tokens_per_sec));
        if let Some(preference) = &self.preference {
            out.extend(preference.named(""));
        }
        if let Some(preference) = &self.eval_preference {
            out.extend(preference.named("eval_"));
        }
        if let Some(ppo) = &self.ppo {
            out.extend(ppo.named().into_iter().map(|(k, v)| (k.to_string(), v)));
        }
        if let Some(scores) = &self.held_out {
            out.extend([
                (
                    "eval/format_accuracy".into(),
                    f64::from(scores.format_accuracy),
                ),
                (
                    "eval/argument_match".into(),
                    f64::from(scores.argument_match),
                ),
                ("eval/success_rate".into(), f64::from(scores.success_rate)),
                ("eval/episodes".into(), scores.episodes as f64),
            ]);
        }
        if let Some(curriculum) = &self.curriculum {
            out.extend(curriculum.named());
        }
        out
    }

    /// A flat JSON object keyed by TRL names (one line of `metrics.jsonl`); NaN becomes `null`.
    pub fn to_json(&self) -> Value {
        let map: Map<String, Value> = self
            .named()
            .into_iter()
            .map(|(k, v)| {
                let value = metric_json(&k, v);
                (k, value)
            })
            .collect();
        Value::Object(map)
    }
}

/// Metrics that count (written as integers).
const INTEGER_METRICS: [&str; 3] = ["step", "num_tokens", "eval/episodes"];

/// One metric as JSON: counts as integers; a value that is exactly an `f32` (most metrics are
/// computed in `f32`) at `f32` precision, so that `0.9f32` is written `0.9`, not
/// `0.8999999761581421`; NaN and infinities as `null`.
pub fn metric_json(name: &str, value: f64) -> Value {
    if !value.is_finite() {
        return Value::Null;
    }
    if INTEGER_METRICS.contains(&name) && value.fract() == 0.0 && value.abs() < 9.0e15 {
        return Value::from(value as i64);
    }
    let narrow = value as f32;
    let value = if f64::from(narrow) == value {
        narrow.to_string().parse::<f64>().unwrap_or(value)
    } else {
        value
    };
    serde_json::Number::from_f64(value).map_or(Value::Null, Value::Number)
}

/// Receives progress from a trainer; the library never prints, observers decide what to show.
///
/// Closures `FnMut(&StepMetrics)` are observers.
pub trait TrainObserver {
    /// Called after every optimiser step.
    fn on_step(&mut self, metrics: &StepMetrics);

    /// Called once when training ends (normally or early); default does nothing.
    fn on_train_end(&mut self, _last: Option<&StepMetrics>) {}
}

impl<F: FnMut(&StepMetrics)> TrainObserver for F {
    fn on_step(&mut self, metrics: &StepMetrics) {
        self(metrics);
    }
}

/// An observer that keeps every step's metrics (for tests and reports).
#[derive(Debug, Clone, Default)]
pub struct MetricsHistory {
    /// The recorded steps, in order.
    pub steps: Vec<StepMetrics>,
}

impl TrainObserver for MetricsHistory {
    fn on_step(&mut self, metrics: &StepMetrics) {
        self.steps.push(metrics.clone());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_trl() {
        let metrics = StepMetrics {
            rewards: vec![RewardStats {
                name: "format".into(),
                mean: 0.5,
                std: 0.1,
            }],
            loss_metrics: GrpoLossMetrics {
                kl: Some(0.01),
                ..Default::default()
            },
            completions: CompletionStats::from_lengths(&[(4, false), (8, true)]),
            ..Default::default()
        };
        let json = metrics.to_json();
        for key in [
            "reward",
            "reward_std",
            "rewards/format/mean",
            "frac_reward_zero_std",
            "kl",
            "clip_ratio/low_mean",
            "clip_ratio/high_mean",
            "clip_ratio/region_mean",
            "completions/mean_length",
            "completions/clipped_ratio",
            "tools/calls_per_episode",
            "step_time",
            "tokens/s",
        ] {
            assert!(json.get(key).is_some(), "missing {key}");
        }
        assert_eq!(json["completions/mean_length"], 6.0);
        assert_eq!(json["completions/clipped_ratio"], 0.5);
        assert!(json.get("entropy").is_none());
    }

    #[test]
    fn closures_and_history_observe() {
        let mut seen = 0;
        let mut count = |_: &StepMetrics| seen += 1;
        count.on_step(&StepMetrics::default());
        let mut history = MetricsHistory::default();
        history.on_step(&StepMetrics {
            step: 3,
            ..Default::default()
        });
        assert_eq!(history.steps[0].step, 3);
        assert_eq!(seen, 1);
    }
}
