//! The SWE scaffold as a core [`Environment`]: `reset` checks out the instance's tree in a
//! fresh workspace and gives the agent the issue; each step runs one tool of the
//! [agent-computer interface](super::aci) (a reply without a tool call gets a reminder); the
//! episode ends at `submit` — the patch is then the tree's `git diff` — or at the step or
//! wall-time limit, with an empty patch (only a submitted patch counts). With a grader, the
//! end-of-episode reward is 1 when the [`LocalGrader`] resolves the patch and 0 otherwise, so
//! [`SweEnvironmentFactory`] plugs into `GrpoTrainer::with_environment` as it is.

use std::sync::Arc;
use std::time::{Duration, Instant};

use agent_rl_core::{
    Action, CoreError, Environment, EnvironmentFactory, Message, StepOutcome, Task,
};
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::aci::{Aci, AciConfig, tool_specs};
use super::grader::{InstanceGrade, LocalGrader};
use super::instance::SweInstance;
use super::workspace::{RepoSource, Workspace};
use crate::{EvalError, Result};

/// The default system prompt of the scaffold.
pub const SYSTEM_PROMPT: &str = "You are a software engineer working in a checked-out \
repository. Fix the issue the user describes by editing the repository's source files (not \
its tests). Use the tools: view and search to read code, bash to run commands (for example \
the tests), str_replace, insert and create to edit. Call one tool at a time. When your change \
is complete, call submit: your changes to the repository are the patch.";

/// Limits of one episode.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SweEnvConfig {
    /// The tools' settings.
    pub aci: AciConfig,
    /// Most steps (tool calls and replies) per episode. Default 50, at least 1.
    pub max_steps: usize,
    /// Most wall time per episode in seconds (a running command is cut at the budget's end).
    /// Default 1800, at least 1.
    pub max_wall_secs: u64,
    /// The system prompt. Default [`SYSTEM_PROMPT`].
    pub system_prompt: String,
}

impl Default for SweEnvConfig {
    fn default() -> Self {
        Self {
            aci: AciConfig::default(),
            max_steps: 50,
            max_wall_secs: 1800,
            system_prompt: SYSTEM_PROMPT.into(),
        }
    }
}

impl SweEnvConfig {
    /// Checks the settings.
    ///
    /// # Errors
    /// [`EvalError::InvalidConfig`] naming the field.
    pub fn validate(&self) -> Result<()> {
        self.aci.validate()?;
        for (field, value) in [
            ("max_steps", self.max_steps),
            ("max_wall_secs", self.max_wall_secs as usize),
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

/// One instance and where its tree comes from: the payload of a SWE [`Task`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweTask {
    /// The instance.
    pub instance: SweInstance,
    /// Its tree.
    pub source: RepoSource,
}

impl SweTask {
    /// The core task: id = instance id, the system prompt and the issue, the tools, and this
    /// record as `data`.
    pub fn to_task(&self, system_prompt: &str) -> Task {
        Task {
            id: self.instance.instance_id.clone(),
            messages: vec![
                Message::system(system_prompt),
                Message::user(format!(
                    "Repository: {}\n\n<issue>\n{}\n</issue>",
                    self.instance.repo,
                    self.instance.problem_statement.trim()
                )),
            ],
            tools: tool_specs(),
            data: json!(self),
        }
    }
}

/// Why an episode ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SweFinish {
    /// The agent called `submit`.
    Submitted,
    /// The step limit passed.
    StepLimit,
    /// The token budget passed (set by the runner).
    TokenLimit,
    /// The wall-time budget passed.
    TimeLimit,
    /// The policy failed on the episode's prompt (set by the runner).
    PolicyError,
    /// The workspace could not be set up.
    EnvironmentError,
}

/// What an episode produced.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweOutcome {
    /// The instance.
    pub instance_id: String,
    /// The submitted `git diff` (empty unless submitted).
    pub patch: String,
    /// Why it ended.
    pub finish_reason: SweFinish,
    /// Steps taken (tool calls and replies).
    pub steps: usize,
    /// Tool calls executed.
    pub tool_calls: usize,
    /// Seconds from reset to the end of the episode (to the patch when submitted).
    pub time_to_patch_secs: f64,
    /// The grade, when the environment has a grader.
    pub grade: Option<InstanceGrade>,
}

struct Episode {
    task: SweTask,
    workspace: Workspace,
    aci: Aci,
    started: Instant,
    steps: usize,
    tool_calls: usize,
    outcome: Option<SweOutcome>,
}

/// The SWE environment (see the module docs).
pub struct SweEnvironment {
    config: SweEnvConfig,
    grader: Option<Arc<LocalGrader>>,
    episode: Option<Episode>,
}

impl SweEnvironment {
    /// An environment with the given limits; with `grader`, the episode's reward is the
    /// grade of its patch.
    pub fn new(config: SweEnvConfig, grader: Option<Arc<LocalGrader>>) -> Self {
        Self {
            config,
            grader,
            episode: None,
        }
    }

    /// The outcome, once the episode has ended.
    pub fn outcome(&self) -> Option<&SweOutcome> {
        self.episode
            .as_ref()
            .and_then(|episode| episode.outcome.as_ref())
    }

    /// The workspace tree of the current episode.
    pub fn root(&self) -> Option<&std::path::Path> {
        self.episode
            .as_ref()
            .map(|episode| episode.workspace.root())
    }

    /// Ends the episode from outside (token budget, policy failure) with an empty patch;
    /// returns the reward (with a grader). No effect once ended.
    pub fn finish(&mut self, reason: SweFinish) -> Option<f32> {
        let grader = self.grader.clone();
        let episode = self.episode.as_mut()?;
        if episode.outcome.is_some() {
            return None;
        }
        end(episode, reason, String::new(), grader.as_deref())
    }

    fn time_left(&self, started: Instant) -> Duration {
        Duration::from_secs(self.config.max_wall_secs).saturating_sub(started.elapsed())
    }
}

fn end(
    episode: &mut Episode,
    reason: SweFinish,
    patch: String,
    grader: Option<&LocalGrader>,
) -> Option<f32> {
    let grade =
        grader.map(|grader| grader.grade(&episode.task.instance, &episode.task.source, &patch));
    let reward = grade
        .as_ref()
        .map(|grade| f32::from(u8::from(grade.resolved)));
    episode.outcome = Some(SweOutcome {
        instance_id: episode.task.instance.instance_id.clone(),
        patch,
        finish_reason: reason,
        steps: episode.steps,
        tool_calls: episode.tool_calls,
        time_to_patch_secs: episode.started.elapsed().as_secs_f64(),
        grade,
    });
    reward
}

fn env_error(reason: String) -> CoreError {
    CoreError::Environment {
        environment: "swe".into(),
        reason,
    }
}

impl Environment for SweEnvironment {
    fn reset(&mut self, task: &Task) -> std::result::Result<Vec<Message>, CoreError> {
        self.episode = None;
        let swe: SweTask = serde_json::from_value(task.data.clone()).map_err(|error| {
            env_error(format!(
                "task `{}` has no SWE instance and source: {error}",
                task.id
            ))
        })?;
        let workspace = Workspace::checkout(&swe.source).map_err(|e| env_error(e.to_string()))?;
        let aci = Aci::new(
            workspace.root().to_path_buf(),
            workspace.scratch(),
            self.config.aci.clone(),
        )
        .map_err(|error| env_error(error.to_string()))?;
        let messages = if task.messages.is_empty() {
            swe.to_task(&self.config.system_prompt).messages
        } else {
            task.messages.clone()
        };
        self.episode = Some(Episode {
            task: swe,
            workspace,
            aci,
            started: Instant::now(),
            steps: 0,
            tool_calls: 0,
            outcome: None,
        });
        Ok(messages)
    }

    fn step(&mut self, action: &Action) -> std::result::Result<StepOutcome, CoreError> {
        let grader = self.grader.clone();
        let max_steps = self.config.max_steps;
        let started = match &self.episode {
            Some(episode) if episode.outcome.is_none() => episode.started,
            Some(_) => return Err(env_error("step after the episode ended".into())),
            None => return Err(env_error("step before reset".into())),
        };
        let time_left = self.time_left(started);
        let Some(episode) = self.episode.as_mut() else {
            return Err(env_error("step before reset".into()));
        };
        episode.steps += 1;
        let (observation, submitted, info) = match action {
            Action::ToolCall(call) => {
                episode.tool_calls += 1;
                let result = episode.aci.execute(call, time_left);
                let info = json!({"tool": call.name, "failed": result.failed,
                                  "timed_out": result.timed_out});
                (
                    Message::tool(&call.name, result.output),
                    result.submitted,
                    info,
                )
            }
            Action::Respond(_) => (
                Message::user(
                    "Continue with a tool call (view, search, bash, str_replace, insert, \
                     create); call submit when your change is complete.",
                ),
                false,
                json!({"reply": true}),
            ),
        };
        let mut reward = None;
        let mut done = true;
        if submitted {
            let patch = episode
                .workspace
                .diff()
                .map_err(|e| env_error(e.to_string()))?;
            reward = end(episode, SweFinish::Submitted, patch, grader.as_deref());
        } else if episode.steps >= max_steps {
            reward = end(
                episode,
                SweFinish::StepLimit,
                String::new(),
                grader.as_deref(),
            );
        } else if time_left.is_zero()
            || started.elapsed() >= Duration::from_secs(self.config.max_wall_secs)
        {
            reward = end(
                episode,
                SweFinish::TimeLimit,
                String::new(),
                grader.as_deref(),
            );
        } else {
            done = false;
        }
        Ok(StepOutcome {
            observation,
            done,
            reward,
            info,
        })
    }
}

/// Makes a fresh [`SweEnvironment`] per episode (for `GrpoTrainer::with_environment`).
#[derive(Clone)]
pub struct SweEnvironmentFactory {
    /// Limits of each episode.
    pub config: SweEnvConfig,
    /// The grader that turns a patch into the reward.
    pub grader: Option<Arc<LocalGrader>>,
}

impl EnvironmentFactory for SweEnvironmentFactory {
    fn create(&self) -> Box<dyn Environment> {
        Box::new(SweEnvironment::new(
            self.config.clone(),
            self.grader.clone(),
        ))
    }
}

/// The reward of a SWE episode: the environment's grade (1 resolved, 0 not); an episode the
/// agent loop cut before the environment ended it has submitted nothing, which the grader
/// scores as an empty patch: 0.
pub fn resolved_reward() -> impl agent_rl_rewards::Reward {
    agent_rl_rewards::FnReward::new("swe_resolved", |sample: agent_rl_rewards::Sample<'_>| {
        Some(sample.trajectory.environment_reward.unwrap_or(0.0))
    })
}
