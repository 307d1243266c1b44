//! The report of a τ-bench run: average reward, pass^k, tool-call statistics; JSON + Markdown.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use super::domain::Domain;
use super::reward::pass_hat_k;
use super::runner::EpisodeResult;
use crate::failure::ItemFailure;

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
    /// Mean number of tool calls the model emitted per episode (well-formed or malformed,
    /// executed or not).
    pub average_attempted_tool_calls: f64,
    /// Mean number of tool calls the environment executed per episode.
    pub average_executed_tool_calls: f64,
    /// Calls emitted but not executed, over all episodes (beyond the per-turn limit, after the
    /// episode ended within the turn, or malformed).
    pub dropped_tool_calls: usize,
    /// Attempted calls to unknown tools, with arguments failing the schema, or that did not
    /// parse, over all attempted calls (0 when there were none).
    pub hallucinated_tool_call_rate: f64,
    /// The definition of each tool-call figure, keyed by field name (also in the Markdown).
    pub definitions: BTreeMap<String, String>,
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
        let attempts: usize = episodes.iter().map(|e| e.calls.attempted_tool_calls).sum();
        let executed: usize = episodes.iter().map(|e| e.calls.executed_tool_calls).sum();
        let hallucinated: usize = episodes.iter().map(|e| e.calls.hallucinated()).sum();
        Self {
            domain,
            split: split.to_owned(),
            tasks: per_task.len(),
            trials,
            average_reward: episodes.iter().map(|e| f64::from(e.reward)).sum::<f64>() / count,
            pass_hat_k: pass_hat_k(&per_task, trials),
            average_attempted_tool_calls: attempts as f64 / count,
            average_executed_tool_calls: executed as f64 / count,
            dropped_tool_calls: episodes.iter().map(|e| e.calls.dropped_tool_calls).sum(),
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
            definitions: DEFINITIONS
                .iter()
                .map(|(field, text)| ((*field).to_owned(), (*text).to_owned()))
                .collect(),
            episodes,
        }
    }

    /// The episodes that failed (environment, customer or policy error, e.g. a prompt too long
    /// for the model), each named `task T trial N` with its reason.
    pub fn failures(&self) -> Vec<ItemFailure> {
        self.episodes
            .iter()
            .filter_map(|episode| {
                episode.error.as_ref().map(|reason| ItemFailure {
                    id: format!("task {} trial {}", episode.task_id, episode.trial),
                    reason: reason.clone(),
                })
            })
            .collect()
    }

    /// A Markdown table of the summary, each tool-call figure with its definition.
    pub fn to_markdown(&self) -> String {
        let mut text = format!(
            "## τ-bench {} ({})\n\n| metric | value | definition |\n|---|---:|---|\n",
            self.domain.as_str(),
            self.split
        );
        let define = |field: &str| self.definitions.get(field).cloned().unwrap_or_default();
        let rows = [
            (
                "tasks × trials",
                format!("{} × {}", self.tasks, self.trials),
                String::new(),
            ),
            (
                "average reward",
                format!("{:.4}", self.average_reward),
                String::new(),
            ),
            (
                "average attempted tool calls per task",
                format!("{:.2}", self.average_attempted_tool_calls),
                define("average_attempted_tool_calls"),
            ),
            (
                "average executed tool calls per task",
                format!("{:.2}", self.average_executed_tool_calls),
                define("average_executed_tool_calls"),
            ),
            (
                "dropped tool calls",
                self.dropped_tool_calls.to_string(),
                define("dropped_tool_calls"),
            ),
            (
                "hallucinated tool-call rate",
                format!("{:.4}", self.hallucinated_tool_call_rate),
                define("hallucinated_tool_call_rate"),
            ),
            (
                "average conversation length (messages)",
                format!("{:.2}", self.average_conversation_length),
                String::new(),
            ),
            (
                "failed episodes",
                self.failed_episodes.to_string(),
                String::new(),
            ),
        ];
        for (name, value, definition) in rows {
            let _ = writeln!(text, "| {name} | {value} | {definition} |");
        }
        for (k, value) in self.pass_hat_k.iter().enumerate() {
            let _ = writeln!(text, "| pass^{} | {value:.4} | |", k + 1);
        }
        text
    }
}

/// The tool-call figures' definitions, written beside them in the JSON and Markdown reports.
const DEFINITIONS: [(&str, &str); 4] = [
    (
        "average_attempted_tool_calls",
        "tool calls the model emitted per episode, well-formed or malformed, executed or not",
    ),
    (
        "average_executed_tool_calls",
        "tool calls the environment executed per episode",
    ),
    (
        "dropped_tool_calls",
        "calls emitted but not executed (beyond max_tool_calls_per_turn, after the episode \
         ended within the turn, or malformed), all episodes",
    ),
    (
        "hallucinated_tool_call_rate",
        "(calls to unknown tools + calls whose arguments fail the tool schema + malformed \
         calls) / attempted calls",
    ),
];
