//! Runs an agent [`Policy`] on a τ-bench split as the original's tool-calling agent does: the
//! wiki as system prompt, at most `max_steps` agent turns, only the first tool call of a turn
//! executed, rewards from the environment. Episodes advance in lockstep so that each step's
//! requests go to the policy as one batch.

use agent_rl_core::{
    Action, ChatRequest, Completion, CoreError, Environment, Message, Policy, SamplingConfig,
};
use serde::{Deserialize, Serialize};

use super::env::{EpisodeStats, TauEnvironment, TauSuite};
use super::report::TauReport;
use super::user::UserSimulator;
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
        Ok(())
    }
}

/// One finished episode.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EpisodeResult {
    /// Index of the task in the split.
    pub task_id: usize,
    /// Trial number (0-based).
    pub trial: usize,
    /// Reward (0 when the episode hit the step limit or failed).
    pub reward: f32,
    /// Agent turns taken.
    pub steps: usize,
    /// Tool-call attempts that did not parse (counted as hallucinated calls).
    pub malformed_calls: usize,
    /// Counters from the environment.
    pub stats: EpisodeStats,
    /// The conversation (system, user, assistant, tool messages).
    pub messages: Vec<Message>,
    /// Why the episode failed, if it did (the original records reward 0).
    pub error: Option<String>,
}

struct Running {
    task_id: usize,
    trial: usize,
    env: TauEnvironment,
    messages: Vec<Message>,
    steps: usize,
    malformed_calls: usize,
    reward: Option<f32>,
    error: Option<String>,
}

impl Running {
    fn finished(self) -> EpisodeResult {
        EpisodeResult {
            task_id: self.task_id,
            trial: self.trial,
            reward: self.reward.unwrap_or(0.0),
            steps: self.steps,
            malformed_calls: self.malformed_calls,
            stats: self.env.stats().clone(),
            messages: self.messages,
            error: self.error,
        }
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
            let mut episode = Running {
                task_id,
                trial,
                env,
                messages,
                steps: 0,
                malformed_calls: 0,
                reward: None,
                error,
            };
            if episode.error.is_some() {
                episode.reward = Some(0.0);
            }
            running.push(episode);
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
            let completions = generate_each(policy, &requests, &config.sampling);
            let mut still = Vec::with_capacity(active.len());
            for (mut episode, completion) in active.into_iter().zip(completions) {
                match completion {
                    Ok(completion) => advance(&mut episode, &completion.parsed),
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

/// Generates for the whole batch; when that fails, request by request, so that one episode's
/// failure (a prompt too long for the model) ends that episode only.
fn generate_each(
    policy: &mut dyn Policy,
    requests: &[ChatRequest],
    sampling: &SamplingConfig,
) -> Vec<std::result::Result<Completion, CoreError>> {
    if let Ok(completions) = policy.generate(requests, sampling)
        && completions.len() == requests.len()
    {
        return completions.into_iter().map(Ok).collect();
    }
    requests
        .iter()
        .map(|request| {
            let mut completions = policy.generate(std::slice::from_ref(request), sampling)?;
            completions.pop().ok_or_else(|| CoreError::Environment {
                environment: "tau agent".into(),
                reason: "the policy returned no completion".into(),
            })
        })
        .collect()
}

/// One agent turn: the first tool call if any (the others are dropped), else a reply.
fn advance(episode: &mut Running, parsed: &agent_rl_core::ParsedOutput) {
    episode.steps += 1;
    episode.malformed_calls += parsed.malformed.len();
    let action = match parsed.tool_calls.first() {
        Some(call) => {
            let content = Some(parsed.content.clone()).filter(|text| !text.is_empty());
            episode
                .messages
                .push(Message::assistant_tool_calls(content, vec![call.clone()]));
            Action::ToolCall(call.clone())
        }
        None => {
            episode
                .messages
                .push(Message::assistant(parsed.content.clone()));
            Action::Respond(parsed.content.clone())
        }
    };
    match episode.env.step(&action) {
        Ok(outcome) => {
            episode.messages.push(outcome.observation);
            if outcome.done {
                episode.reward = Some(outcome.reward.unwrap_or(0.0));
            }
        }
        Err(error) => {
            episode.error = Some(error.to_string());
            episode.reward = Some(0.0);
        }
    }
}
