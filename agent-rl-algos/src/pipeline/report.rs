//! [`PipelineReport`]: what a pipeline run did — the trained model, the held-out scores at each
//! evaluation point and each stage's own report.

use std::path::PathBuf;

use agent_rl_core::Qwen2ForCausalLm;
use burn::tensor::backend::AutodiffBackend;
use serde_json::{Map, Value, json};

use crate::checkpoint_dir::SkippedCheckpoint;
use crate::evaluate::ToolUseScores;
use crate::grpo::GrpoReport;
use crate::ppo::PpoReport;
use crate::reward_model::RewardReport;
use crate::sft::SftReport;

/// The report of one stage.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum StageReport {
    /// An SFT stage ran.
    Sft(SftReport),
    /// A GRPO stage ran (or continued from a checkpoint).
    Grpo(GrpoReport),
    /// A reward-model stage ran.
    RewardModel(RewardReport),
    /// A PPO stage ran (or continued from a checkpoint).
    Ppo(PpoReport),
    /// The stage was skipped: the run resumed from a later stage's checkpoint.
    Skipped {
        /// The stage's name.
        stage: &'static str,
    },
}

impl StageReport {
    /// The stage's name (`sft`, `grpo`, `reward_model`, `ppo`).
    pub fn name(&self) -> &'static str {
        match self {
            Self::Sft(_) => "sft",
            Self::Grpo(_) => "grpo",
            Self::RewardModel(_) => "reward_model",
            Self::Ppo(_) => "ppo",
            Self::Skipped { stage } => stage,
        }
    }

    /// The facts of the stage recorded in `summary.json` under its name.
    pub fn summary(&self) -> Option<Value> {
        match self {
            Self::Sft(report) => Some(json!({
                "steps": report.steps,
                "train_examples": report.num_train_examples,
                "eval_examples": report.num_eval_examples,
                "num_tokens": report.num_tokens,
                "last_train_loss": report.history.last().map(|m| m.loss),
                "last_eval_loss": report.eval_losses.last().map(|(_, loss)| *loss),
                "train_time_secs": report.train_time_secs,
            })),
            Self::Grpo(report) | Self::Ppo(report) => Some(json!({
                "global_step": report.global_step,
                "mean_reward_last_5": report
                    .mean_reward(report.steps.len().saturating_sub(5)..report.steps.len()),
            })),
            Self::RewardModel(report) => {
                let last = report.evals.last().map(|(_, eval)| eval);
                Some(json!({
                    "steps": report.steps,
                    "train_pairs": report.num_train_pairs,
                    "eval_pairs": report.num_eval_pairs,
                    "accuracy": last.map(|eval| eval.metrics.accuracy),
                    "eval_loss": last.map(|eval| eval.loss),
                    "mean_margin": last.map(|eval| eval.metrics.margin),
                    "train_time_secs": report.train_time_secs,
                }))
            }
            Self::Skipped { .. } => None,
        }
    }
}

/// What [`Pipeline::run`](super::Pipeline::run) did.
#[derive(Debug)]
pub struct PipelineReport<B: AutodiffBackend> {
    /// The model after the last stage.
    pub model: Qwen2ForCausalLm<B>,
    /// Held-out scores by evaluation point, in order (`before`, `after_<stage>`…, `after`);
    /// a resumed run includes the points measured before the interruption.
    pub scores: Vec<(String, ToolUseScores)>,
    /// One report per stage, in order.
    pub stages: Vec<StageReport>,
    /// The run directory, when one was written.
    pub run_dir: Option<PathBuf>,
    /// The checkpoint step the run resumed from.
    pub resumed_from: Option<usize>,
    /// Newer checkpoints a resume passed over (incomplete or damaged), newest first, with why.
    pub skipped_checkpoints: Vec<SkippedCheckpoint>,
}

impl<B: AutodiffBackend> PipelineReport<B> {
    /// The scores at evaluation point `point`.
    pub fn score(&self, point: &str) -> Option<&ToolUseScores> {
        self.scores
            .iter()
            .find(|(name, _)| name == point)
            .map(|(_, s)| s)
    }

    /// The scores as one JSON object keyed by evaluation point.
    pub fn scores_json(&self) -> Value {
        let map: Map<String, Value> = self
            .scores
            .iter()
            .map(|(name, s)| (name.clone(), serde_json::to_value(s).unwrap_or(Value::Null)))
            .collect();
        Value::Object(map)
    }

    /// [`Self::scores_json`] plus, when a reward-model stage ran,
    /// `"reward_model": {"accuracy": …}` (its last held-out accuracy): what the demos write with
    /// `--summary`.
    pub fn summary_json(&self) -> Value {
        let mut summary = self.scores_json();
        if let (Value::Object(map), Some(report)) = (&mut summary, self.reward_model()) {
            let accuracy = self.reward_model_accuracy();
            map.insert(
                "reward_model".into(),
                json!({"accuracy": accuracy, "steps": report.steps}),
            );
        }
        summary
    }

    /// A Markdown table of the scores, one row per evaluation point.
    pub fn scores_table(&self) -> String {
        let mut out = String::from(
            "| held-out tasks | format accuracy | argument match | success rate |\n\
             |---|---:|---:|---:|\n",
        );
        let last = self.stages.last().map_or("training", StageReport::name);
        for (point, s) in &self.scores {
            out.push_str(&format!(
                "| {} | {:.1}% | {:.1}% | {:.1}% |\n",
                point_label(point, last),
                100.0 * s.format_accuracy,
                100.0 * s.argument_match,
                100.0 * s.success_rate
            ));
        }
        out
    }

    /// The GRPO stage's report, when one ran.
    pub fn grpo(&self) -> Option<&GrpoReport> {
        self.stages.iter().find_map(|stage| match stage {
            StageReport::Grpo(report) => Some(report),
            _ => None,
        })
    }

    /// The PPO stage's report, when one ran.
    pub fn ppo(&self) -> Option<&PpoReport> {
        self.stages.iter().find_map(|stage| match stage {
            StageReport::Ppo(report) => Some(report),
            _ => None,
        })
    }

    /// The reward-model stage's report, when one ran.
    pub fn reward_model(&self) -> Option<&RewardReport> {
        self.stages.iter().find_map(|stage| match stage {
            StageReport::RewardModel(report) => Some(report),
            _ => None,
        })
    }

    /// The held-out accuracy of the reward model at its last evaluation, when a reward-model
    /// stage ran and evaluated.
    pub fn reward_model_accuracy(&self) -> Option<f32> {
        let (_, eval) = self.reward_model()?.evals.last()?;
        Some(eval.metrics.accuracy)
    }

    /// The SFT stage's report, when one ran.
    pub fn sft(&self) -> Option<&SftReport> {
        self.stages.iter().find_map(|stage| match stage {
            StageReport::Sft(report) => Some(report),
            _ => None,
        })
    }
}

/// A readable name of an evaluation point (`after_sft` → `after SFT`; `after` names the last
/// stage).
fn point_label(point: &str, last_stage: &str) -> String {
    match point {
        "before" => "before training".into(),
        "after" => format!("after {}", last_stage.to_uppercase()),
        other => other.strip_prefix("after_").map_or_else(
            || other.to_owned(),
            |stage| format!("after {}", stage.to_uppercase()),
        ),
    }
}
