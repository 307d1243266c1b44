//! [`PipelineReport`]: what a pipeline run did — the trained model, the held-out scores at each
//! evaluation point and each stage's own report.

use std::path::PathBuf;

use agent_rl_core::Qwen2ForCausalLm;
use burn::tensor::backend::AutodiffBackend;
use serde_json::{Map, Value, json};

use crate::checkpoint_dir::SkippedCheckpoint;
use crate::evaluate::ToolUseScores;
use crate::grpo::GrpoReport;
use crate::sft::SftReport;

/// The report of one stage.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum StageReport {
    /// An SFT stage ran.
    Sft(SftReport),
    /// A GRPO stage ran (or continued from a checkpoint).
    Grpo(GrpoReport),
    /// The stage was skipped: the run resumed from a later stage's checkpoint.
    Skipped {
        /// The stage's name.
        stage: &'static str,
    },
}

impl StageReport {
    /// The stage's name (`sft`, `grpo`).
    pub fn name(&self) -> &'static str {
        match self {
            Self::Sft(_) => "sft",
            Self::Grpo(_) => "grpo",
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
            Self::Grpo(report) => Some(json!({
                "global_step": report.global_step,
                "mean_reward_last_5": report
                    .mean_reward(report.steps.len().saturating_sub(5)..report.steps.len()),
            })),
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
