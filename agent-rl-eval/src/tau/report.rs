//! The report of a τ-bench run: average reward, pass^k, tool-call statistics; JSON + Markdown.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use super::domain::Domain;
use super::reward::pass_hat_k;
use super::runner::EpisodeResult;

/// Summary of a run on one domain's split.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TauReport {
    /// The domain.
    pub domain: Domain,
    /// The split.
    pub split: String,
    /// Number of distinct tasks run.
    pub tasks: usize,
    /// Trials per task.
    pub trials: usize,
    /// Mean reward over all episodes (task completion rate).
    pub average_reward: f64,
    /// `pass^k` for k = 1..=trials.
    pub pass_hat_k: Vec<f64>,
    /// Mean number of tool calls per episode.
    pub average_tool_calls: f64,
    /// Calls to unknown tools, with arguments failing the schema, or that did not parse, over
    /// all call attempts (0 when there were none).
    pub hallucinated_tool_call_rate: f64,
    /// Mean number of messages per conversation (system and first user message included).
    pub average_conversation_length: f64,
    /// Episodes that failed (environment or customer error).
    pub failed_episodes: usize,
    /// Every episode.
    pub episodes: Vec<EpisodeResult>,
}

impl TauReport {
    /// Aggregates finished episodes. A trial succeeds when its reward is within 1e-6 of 1.
    pub fn from_episodes(
        domain: Domain,
        split: &str,
        trials: usize,
        episodes: Vec<EpisodeResult>,
    ) -> Self {
        let count = episodes.len().max(1) as f64;
        let mut successes: BTreeMap<usize, usize> = BTreeMap::new();
        for episode in &episodes {
            let entry = successes.entry(episode.task_id).or_default();
            if (episode.reward - 1.0).abs() < 1e-6 {
                *entry += 1;
            }
        }
        let per_task: Vec<usize> = successes.values().copied().collect();
        let attempts: usize = episodes
            .iter()
            .map(|e| e.stats.tool_calls + e.malformed_calls)
            .sum();
        let hallucinated: usize = episodes
            .iter()
            .map(|e| {
                e.stats.unknown_tool_calls + e.stats.invalid_argument_calls + e.malformed_calls
            })
            .sum();
        Self {
            domain,
            split: split.to_owned(),
            tasks: per_task.len(),
            trials,
            average_reward: episodes.iter().map(|e| f64::from(e.reward)).sum::<f64>() / count,
            pass_hat_k: pass_hat_k(&per_task, trials),
            average_tool_calls: episodes
                .iter()
                .map(|e| e.stats.tool_calls as f64)
                .sum::<f64>()
                / count,
            hallucinated_tool_call_rate: if attempts == 0 {
                0.0
            } else {
                hallucinated as f64 / attempts as f64
            },
            average_conversation_length: episodes
                .iter()
                .map(|e| e.messages.len() as f64)
                .sum::<f64>()
                / count,
            failed_episodes: episodes.iter().filter(|e| e.error.is_some()).count(),
            episodes,
        }
    }

    /// A Markdown table of the summary.
    pub fn to_markdown(&self) -> String {
        let mut text = format!(
            "## τ-bench {} ({})\n\n| metric | value |\n|---|---:|\n",
            self.domain.as_str(),
            self.split
        );
        let rows = [
            (
                "tasks × trials",
                format!("{} × {}", self.tasks, self.trials),
            ),
            ("average reward", format!("{:.4}", self.average_reward)),
            (
                "average tool calls per task",
                format!("{:.2}", self.average_tool_calls),
            ),
            (
                "hallucinated tool-call rate",
                format!("{:.4}", self.hallucinated_tool_call_rate),
            ),
            (
                "average conversation length (messages)",
                format!("{:.2}", self.average_conversation_length),
            ),
            ("failed episodes", self.failed_episodes.to_string()),
        ];
        for (name, value) in rows {
            let _ = writeln!(text, "| {name} | {value} |");
        }
        for (k, value) in self.pass_hat_k.iter().enumerate() {
            let _ = writeln!(text, "| pass^{} | {value:.4} |", k + 1);
        }
        text
    }
}
