//! The agent loop for evaluation: any [`Policy`] drives [`SweEnvironment`]s over SWE tasks, a
//! batch of episodes in lockstep (one policy call per step for all live episodes). Every tool
//! call of a turn is executed in order until the episode ends; a turn without one is a reply.
//! Limits: the environment's steps and wall time, and a budget of generated tokens per
//! episode. Each episode records its patch, steps, tool calls, tokens, finish reason and time
//! to patch; [`predictions`] turns them into the official predictions format.

use std::sync::Arc;

use agent_rl_core::{Action, ChatRequest, Environment, Message, Policy, SamplingConfig, ToolSpec};
use serde::{Deserialize, Serialize};

use super::aci::tool_specs;
use super::env::{SweEnvConfig, SweEnvironment, SweFinish, SweOutcome, SweTask};
use super::grader::LocalGrader;
use super::prediction::Prediction;
use crate::OverlongPrompt;
use crate::batch::generate_each;
use crate::{EvalError, Result};

/// Settings of a SWE run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SweRunConfig {
    /// Limits of each episode and the tools' settings.
    pub env: SweEnvConfig,
    /// Sampling of each agent turn (`max_new_tokens` is per turn).
    pub sampling: SamplingConfig,
    /// Most tokens the policy may generate per episode. Default 32,768, at least 1.
    pub max_total_tokens: usize,
    /// Episodes run together. Default 1, at least 1.
    pub batch_size: usize,
}

impl Default for SweRunConfig {
    fn default() -> Self {
        Self {
            env: SweEnvConfig::default(),
            sampling: SamplingConfig {
                temperature: 0.0,
                max_new_tokens: 1024,
                ..SamplingConfig::default()
            },
            max_total_tokens: 32_768,
            batch_size: 1,
        }
    }
}

impl SweRunConfig {
    /// Checks the settings.
    ///
    /// # Errors
    /// [`EvalError::InvalidConfig`] naming the field.
    pub fn validate(&self) -> Result<()> {
        self.env.validate()?;
        for (field, value) in [
            ("max_total_tokens", self.max_total_tokens),
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
pub struct SweEpisode {
    /// Patch, finish reason, steps, tool calls, time to patch (and grade, with a grader).
    #[serde(flatten)]
    pub outcome: SweOutcome,
    /// Tokens the policy generated.
    pub tokens: usize,
    /// Tool-call attempts that did not parse.
    pub malformed_calls: usize,
    /// Why the episode failed (workspace or policy error), if it did.
    pub error: Option<String>,
    /// The conversation.
    pub messages: Vec<Message>,
}

struct Running {
    env: SweEnvironment,
    messages: Vec<Message>,
    tokens: usize,
    malformed: usize,
    error: Option<String>,
    fallback: Option<SweOutcome>,
}

impl Running {
    fn done(&self) -> bool {
        self.fallback.is_some() || self.env.outcome().is_some()
    }

    fn finished(self) -> SweEpisode {
        let outcome = self
            .env
            .outcome()
            .cloned()
            .or(self.fallback)
            .expect("finished is only called on ended episodes (checked by done)");
        SweEpisode {
            outcome,
            tokens: self.tokens,
            malformed_calls: self.malformed,
            error: self.error,
            messages: self.messages,
        }
    }

    /// One agent turn: its tool calls in order until the episode ends, or a reply.
    fn advance(&mut self, parsed: &agent_rl_core::ParsedOutput) {
        self.malformed += parsed.malformed.len();
        let actions: Vec<Action> = if parsed.tool_calls.is_empty() {
            self.messages
                .push(Message::assistant(parsed.content.clone()));
            vec![Action::Respond(parsed.content.clone())]
        } else {
            let content = Some(parsed.content.clone()).filter(|text| !text.is_empty());
            self.messages.push(Message::assistant_tool_calls(
                content,
                parsed.tool_calls.clone(),
            ));
            parsed
                .tool_calls
                .iter()
                .cloned()
                .map(Action::ToolCall)
                .collect()
        };
        for action in &actions {
            match self.env.step(action) {
                Ok(outcome) => {
                    self.messages.push(outcome.observation);
                    if outcome.done {
                        return;
                    }
                }
                Err(error) => {
                    self.error = Some(error.to_string());
                    self.env.finish(SweFinish::EnvironmentError);
                    return;
                }
            }
        }
    }
}

/// Runs `policy` on `tasks`; with `grader`, each patch is graded when its episode ends.
/// `progress(done, total)` is called after each finished episode.
///
/// # Errors
/// Invalid settings. A failure of one episode (its checkout, the policy on its prompt) is
/// recorded in that episode (`error`, empty patch).
pub fn run_swe(
    policy: &mut dyn Policy,
    tasks: &[SweTask],
    config: &SweRunConfig,
    grader: Option<Arc<LocalGrader>>,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Vec<SweEpisode>> {
    config.validate()?;
    let tools: Vec<ToolSpec> = tool_specs();
    let mut results = Vec::with_capacity(tasks.len());
    for chunk in tasks.chunks(config.batch_size) {
        let mut active = Vec::with_capacity(chunk.len());
        for task in chunk {
            let mut env = SweEnvironment::new(config.env.clone(), grader.clone());
            let core_task = task.to_task(&config.env.system_prompt);
            let (messages, error) = match env.reset(&core_task) {
                Ok(messages) => (messages, None),
                Err(error) => (core_task.messages.clone(), Some(error.to_string())),
            };
            let fallback = error.as_ref().map(|_| SweOutcome {
                instance_id: task.instance.instance_id.clone(),
                patch: String::new(),
                finish_reason: SweFinish::EnvironmentError,
                steps: 0,
                tool_calls: 0,
                time_to_patch_secs: 0.0,
                grade: None,
            });
            let running = Running {
                env,
                messages,
                tokens: 0,
                malformed: 0,
                error,
                fallback,
            };
            if running.done() {
                results.push(running.finished());
                progress(results.len(), tasks.len());
            } else {
                active.push(running);
            }
        }
        while !active.is_empty() {
            let requests: Vec<ChatRequest> = active
                .iter()
                .map(|episode| ChatRequest {
                    messages: episode.messages.clone(),
                    tools: tools.clone(),
                })
                .collect();
            let completions = generate_each(
                policy,
                &requests,
                &config.sampling,
                OverlongPrompt::Skip,
                "swe agent",
            );
            let mut still = Vec::with_capacity(active.len());
            for (mut episode, completion) in active.into_iter().zip(completions) {
                match completion {
                    Ok(completion) => {
                        episode.tokens += completion.token_ids.len();
                        episode.advance(&completion.parsed);
                        if !episode.done() && episode.tokens >= config.max_total_tokens {
                            episode.env.finish(SweFinish::TokenLimit);
                        }
                    }
                    Err(error) => {
                        episode.error = Some(error.to_string());
                        episode.env.finish(SweFinish::PolicyError);
                    }
                }
                if episode.done() {
                    results.push(episode.finished());
                    progress(results.len(), tasks.len());
                } else {
                    still.push(episode);
                }
            }
            active = still;
        }
    }
    Ok(results)
}

/// The episodes' patches as predictions in the official format.
pub fn predictions(episodes: &[SweEpisode], model_name_or_path: &str) -> Vec<Prediction> {
    episodes
        .iter()
        .map(|episode| Prediction {
            instance_id: episode.outcome.instance_id.clone(),
            model_name_or_path: model_name_or_path.to_string(),
            model_patch: episode.outcome.patch.clone(),
        })
        .collect()
}

/// The episodes file beside a predictions file: `preds.jsonl` → `preds.episodes.jsonl`.
pub fn episodes_path(predictions_path: &std::path::Path) -> std::path::PathBuf {
    let stem = predictions_path.file_stem().map_or_else(
        || "predictions".into(),
        |stem| stem.to_string_lossy().into_owned(),
    );
    predictions_path.with_file_name(format!("{stem}.episodes.jsonl"))
}

/// Writes episodes as JSONL (one per line, conversation included), atomically.
///
/// # Errors
/// [`EvalError::Io`] naming the file.
pub fn write_episodes(path: &std::path::Path, episodes: &[SweEpisode]) -> Result<()> {
    super::instance::write_jsonl(path, episodes)
}

/// Reads an episodes file written by [`write_episodes`].
///
/// # Errors
/// [`EvalError::Io`]; [`EvalError::Record`] naming the line of a malformed episode.
pub fn read_episodes(path: &std::path::Path) -> Result<Vec<SweEpisode>> {
    super::instance::read_jsonl(path, |line, value| {
        serde_json::from_value(value).map_err(|error| EvalError::Record {
            path: path.to_path_buf(),
            line,
            reason: error.to_string(),
        })
    })
}
