//! Runs an agent [`Policy`] on a τ-bench split as the original's tool-calling agent does: the
//! wiki as system prompt, at most `max_steps` agent turns, only the first tool call of a turn
//! executed (`max_tool_calls_per_turn`, default 1; every emitted call is still counted, see
//! [`ToolCallCounts`]), rewards from the environment. Episodes advance in lockstep so that each step's
//! requests go to the policy as one batch.

use agent_rl_core::{ChatRequest, Environment, Policy, SamplingConfig};
use serde::{Deserialize, Serialize};

use super::env::TauSuite;
use super::episode::Running;
pub use super::episode::{EpisodeResult, ToolCallCounts};
use super::report::TauReport;
use super::user::UserSimulator;
use crate::batch::generate_each;
use crate::failure::OverlongPrompt;
use crate::{EvalError, Result};

/// Settings of a τ-bench run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TauRunConfig {
    /// Tasks to run (indices into the split); `None` = all. Default `None`.
    pub task_ids: Option<Vec<usize>>,
    /// Trials per task (for pass^k). Default 1, at least 1.
    pub trials: usize,
    /// Most agent turns per episode (the original's 30). At least 1.
    pub max_steps: usize,
    /// Episodes run together (one policy batch per step). Default 8, at least 1.
    pub batch_size: usize,
    /// Sampling of the agent (the original uses temperature 0).
    pub sampling: SamplingConfig,
    /// Most tool calls executed per agent turn, in the order emitted; the others are dropped
    /// (still counted as attempted). `None` = all. Default `Some(1)`, as the original agent.
    pub max_tool_calls_per_turn: Option<usize>,
    /// What to do with an agent prompt that does not fit the model's context with
    /// `sampling.max_new_tokens`: end the episode as failed (default) or generate fewer tokens.
    pub overlong: OverlongPrompt,
}

impl Default for TauRunConfig {
    fn default() -> Self {
        Self {
            task_ids: None,
            trials: 1,
            max_steps: 30,
            batch_size: 8,
            sampling: SamplingConfig {
                temperature: 0.0,
                ..SamplingConfig::default()
            },
            max_tool_calls_per_turn: Some(1),
            overlong: OverlongPrompt::Skip,
        }
    }
}

impl TauRunConfig {
    /// Checks the settings.
    ///
    /// # Errors
    /// [`EvalError::InvalidConfig`] naming the field.
    pub fn validate(&self) -> Result<()> {
        for (field, value) in [
            ("trials", self.trials),
            ("max_steps", self.max_steps),
            ("batch_size", self.batch_size),
        ] {
            if value == 0 {
                return Err(EvalError::InvalidConfig {
                    field: field.into(),
                    reason: "must be at least 1".into(),
                });
            }
        }
        if self.max_tool_calls_per_turn == Some(0) {
            return Err(EvalError::InvalidConfig {
                field: "max_tool_calls_per_turn".into(),
                reason: "must be at least 1 (or none for no limit)".into(),
            });
        }
        Ok(())
    }
}

/// Runs `policy` on the suite's tasks; `make_user(task_id, trial)` builds each episode's
/// customer; `progress(done, total)` is called after each finished episode.
///
/// # Errors
/// Invalid settings or a task id out of range. Failures of one episode (its environment, its
/// customer, or the policy on its prompt) are recorded in that episode (`error`, reward 0), as
/// the original records a crashed task with reward 0.
pub fn run_tau(
    suite: &TauSuite,
    policy: &mut dyn Policy,
    make_user: &dyn Fn(usize, usize) -> Box<dyn UserSimulator>,
    config: &TauRunConfig,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<TauReport> {
    config.validate()?;
    let task_ids: Vec<usize> = config
        .task_ids
        .clone()
        .unwrap_or_else(|| (0..suite.tasks.len()).collect());
    if let Some(bad) = task_ids.iter().find(|&&id| id >= suite.tasks.len()) {
        return Err(EvalError::InvalidConfig {
            field: "task_ids".into(),
            reason: format!("task {bad} out of range (split has {})", suite.tasks.len()),
        });
    }
    let jobs: Vec<(usize, usize)> = (0..config.trials)
        .flat_map(|trial| task_ids.iter().map(move |&task| (task, trial)))
        .collect();
    let limit = config.max_tool_calls_per_turn.unwrap_or(usize::MAX);
    let mut results = Vec::with_capacity(jobs.len());
    for chunk in jobs.chunks(config.batch_size) {
        let mut running: Vec<Running> = Vec::with_capacity(chunk.len());
        for &(task_id, trial) in chunk {
            let task = suite
                .task(task_id)
                .ok_or_else(|| EvalError::InvalidConfig {
                    field: "task_ids".into(),
                    reason: format!("task {task_id} out of range"),
                })?;
            let mut env = suite.environment(make_user(task_id, trial));
            let (messages, error) = match env.reset(&task) {
                Ok(messages) => (messages, None),
                Err(error) => (task.messages.clone(), Some(error.to_string())),
            };
            running.push(Running::new((task_id, trial), env, messages, error));
        }
        let mut active: Vec<Running> = Vec::new();
        for episode in running {
            if episode.reward.is_some() {
                results.push(episode.finished());
                progress(results.len(), jobs.len());
            } else {
                active.push(episode);
            }
        }
        while !active.is_empty() {
            let requests: Vec<ChatRequest> = active
                .iter()
                .map(|episode| ChatRequest {
                    messages: episode.messages.clone(),
                    tools: suite.tools.as_ref().clone(),
                })
                .collect();
            let completions = generate_each(
                policy,
                &requests,
                &config.sampling,
                config.overlong,
                "tau agent",
            );
            let mut still = Vec::with_capacity(active.len());
            for (mut episode, completion) in active.into_iter().zip(completions) {
                match completion {
                    Ok(completion) => episode.advance(&completion.parsed, &suite.tools, limit),
                    Err(error) => {
                        episode.error = Some(error.to_string());
                        episode.reward = Some(0.0);
                    }
                }
                if episode.reward.is_none() && episode.steps >= config.max_steps {
                    episode.reward = Some(0.0);
                }
                if episode.reward.is_some() {
                    results.push(episode.finished());
                    progress(results.len(), jobs.len());
                } else {
                    still.push(episode);
                }
            }
            active = still;
        }
    }
    Ok(TauReport::from_episodes(
        suite.domain,
        &suite.split,
        config.trials,
        results,
    ))
}
