//! τ-bench as a core [`Environment`]: reset with a task → the policy and the customer's first
//! message; step with a reply or a tool call → the customer's answer or the tool's observation.
//! Each episode gets a fresh copy of the database; the reward is computed when the episode ends
//! (`###STOP###` from the customer, or the terminate tool).

use std::path::Path;
use std::sync::Arc;

use agent_rl_core::{
    Action, CoreError, Environment, EnvironmentFactory, Message, StepOutcome, Task, ToolSpec,
};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::data::{TauTask, domain_dir, load_json};
use super::domain::{CallStatus, Domain, TauDb};
use super::replay::load_tasks;
use super::reward::{RewardInfo, TERMINATE_TOOL, compute_reward};
use super::schema::{CallFault, call_fault};
use super::user::{STOP_TOKEN, UserSimulator};
use crate::{EvalError, Result};

/// One domain's split, ready to run: database, policy text, tool schemas and tasks.
#[derive(Debug, Clone)]
pub struct TauSuite {
    /// The domain.
    pub domain: Domain,
    /// The split name (`test`, `dev`, `train`).
    pub split: String,
    /// The untouched database (copied per episode).
    pub db: Arc<TauDb>,
    /// The agent's system prompt (`wiki.md`).
    pub wiki: Arc<String>,
    /// The tools offered to the agent (`tools.json`).
    pub tools: Arc<Vec<ToolSpec>>,
    /// The tasks; the index is the task id.
    pub tasks: Vec<TauTask>,
}

impl TauSuite {
    /// Loads `<data>/<domain>/` (or `<data>/tau_bench/<domain>/`): tables, `wiki.md`,
    /// `tools.json` and `tasks_<split>.json`.
    ///
    /// # Errors
    /// [`EvalError::Layout`] for a missing folder, [`EvalError::Io`] / [`EvalError::Record`]
    /// naming the file that could not be read.
    pub fn load(data_dir: &Path, domain: Domain, split: &str) -> Result<Self> {
        let dir = domain_dir(data_dir, domain.as_str())?;
        let wiki_path = dir.join("wiki.md");
        let wiki = std::fs::read_to_string(&wiki_path).map_err(|source| EvalError::Io {
            path: wiki_path,
            source,
        })?;
        let tools: Vec<ToolSpec> = load_json(&dir.join("tools.json"))?;
        Ok(Self {
            domain,
            split: split.to_owned(),
            db: Arc::new(TauDb::load(domain, &dir)?),
            wiki: Arc::new(wiki),
            tools: Arc::new(tools),
            tasks: load_tasks(&dir, split)?,
        })
    }

    /// The task `index` as a core [`Task`]: id `<domain>/<split>/<index>`, the wiki as system
    /// message, the tools, and the τ-bench task record as `data`.
    pub fn task(&self, index: usize) -> Option<Task> {
        let record = self.tasks.get(index)?;
        Some(Task {
            id: format!("{}/{}/{index}", self.domain.as_str(), self.split),
            messages: vec![Message::system(self.wiki.as_str())],
            tools: self.tools.as_ref().clone(),
            data: serde_json::to_value(record).unwrap_or(Value::Null),
        })
    }

    /// An environment for this suite with the given simulated customer.
    pub fn environment(&self, user: Box<dyn UserSimulator>) -> TauEnvironment {
        TauEnvironment::new(Arc::clone(&self.db), Arc::clone(&self.tools), user)
    }
}

/// Counters of one episode, over the calls the environment executed (the runner's
/// [`ToolCallCounts`](super::ToolCallCounts) also count the calls it never saw).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct EpisodeStats {
    /// Tool calls executed.
    pub tool_calls: usize,
    /// Executed calls to tools that do not exist.
    pub unknown_tool_calls: usize,
    /// Executed calls whose arguments fail the tool's schema.
    pub invalid_argument_calls: usize,
    /// Calls the original would answer with a raised exception (`Error: …` from Python).
    pub raised_calls: usize,
    /// Replies sent to the customer.
    pub responses: usize,
    /// The end-of-episode reward, once done.
    pub reward: Option<RewardInfo>,
}

/// τ-bench environment: a fresh database per episode and a simulated customer.
pub struct TauEnvironment {
    initial: Arc<TauDb>,
    tools: Arc<Vec<ToolSpec>>,
    user: Box<dyn UserSimulator>,
    episode: Option<(TauTask, TauDb)>,
    responses: Vec<String>,
    stats: EpisodeStats,
    done: bool,
}

impl TauEnvironment {
    /// An environment over `initial` (copied at each reset) with `tools` for schema checks.
    pub fn new(
        initial: Arc<TauDb>,
        tools: Arc<Vec<ToolSpec>>,
        user: Box<dyn UserSimulator>,
    ) -> Self {
        Self {
            initial,
            tools,
            user,
            episode: None,
            responses: Vec::new(),
            stats: EpisodeStats::default(),
            done: false,
        }
    }

    /// Counters of the current (or last) episode.
    pub fn stats(&self) -> &EpisodeStats {
        &self.stats
    }

    /// The database as the agent has left it so far.
    pub fn db(&self) -> Option<&TauDb> {
        self.episode.as_ref().map(|(_, db)| db)
    }

    fn error(reason: impl Into<String>) -> CoreError {
        CoreError::Environment {
            environment: "tau".into(),
            reason: reason.into(),
        }
    }

    fn finish(&mut self) -> Option<f32> {
        let (task, db) = self.episode.as_ref()?;
        let info = compute_reward(&self.initial, task, db, &self.responses);
        let reward = info.reward;
        self.stats.reward = Some(info);
        self.done = true;
        Some(reward)
    }
}

impl Environment for TauEnvironment {
    fn reset(&mut self, task: &Task) -> Result<Vec<Message>, CoreError> {
        let record: TauTask = serde_json::from_value(task.data.clone()).map_err(|error| {
            Self::error(format!(
                "task `{}`: data is not a τ-bench task: {error}",
                task.id
            ))
        })?;
        let first = self.user.reset(&record.instruction)?;
        self.episode = Some((record, (*self.initial).clone()));
        self.responses.clear();
        self.stats = EpisodeStats::default();
        self.done = false;
        let mut messages = task.messages.clone();
        messages.push(Message::user(first));
        Ok(messages)
    }

    fn step(&mut self, action: &Action) -> Result<StepOutcome, CoreError> {
        if self.done {
            return Err(Self::error("step after the episode ended"));
        }
        let Some((_, db)) = self.episode.as_mut() else {
            return Err(Self::error("step before reset"));
        };
        let (observation, done, info) = match action {
            Action::Respond(text) => {
                self.stats.responses += 1;
                self.responses.push(text.clone());
                let reply = self.user.step(text)?;
                let done = reply.contains(STOP_TOKEN);
                (Message::user(reply), done, json!({"source": "user"}))
            }
            Action::ToolCall(call) => {
                self.stats.tool_calls += 1;
                let outcome = db.call(&call.name, &call.arguments);
                let violation = match call_fault(&self.tools, call) {
                    Some(CallFault::InvalidArguments(reason)) => Some(reason),
                    _ => None,
                };
                match outcome.status {
                    CallStatus::UnknownTool => self.stats.unknown_tool_calls += 1,
                    _ if violation.is_some() => self.stats.invalid_argument_calls += 1,
                    _ => {}
                }
                if outcome.status == CallStatus::Raised {
                    self.stats.raised_calls += 1;
                }
                let done = call.name == TERMINATE_TOOL && outcome.status != CallStatus::UnknownTool;
                let mut message = Message::tool(call.name.clone(), outcome.observation);
                message.tool_call_id.clone_from(&call.id);
                let info = json!({"source": call.name, "status": outcome.status, "schema_violation": violation});
                (message, done, info)
            }
        };
        let reward = if done { self.finish() } else { None };
        Ok(StepOutcome {
            observation,
            done,
            reward,
            info,
        })
    }
}

/// Makes one [`TauEnvironment`] per episode, each with a new simulated customer.
pub struct TauEnvironmentFactory {
    initial: Arc<TauDb>,
    tools: Arc<Vec<ToolSpec>>,
    make_user: Box<dyn Fn() -> Box<dyn UserSimulator> + Send + Sync>,
}

impl TauEnvironmentFactory {
    /// A factory over the suite's database and tools; `make_user` builds each episode's customer.
    pub fn new(
        suite: &TauSuite,
        make_user: impl Fn() -> Box<dyn UserSimulator> + Send + Sync + 'static,
    ) -> Self {
        Self {
            initial: Arc::clone(&suite.db),
            tools: Arc::clone(&suite.tools),
            make_user: Box::new(make_user),
        }
    }
}

impl EnvironmentFactory for TauEnvironmentFactory {
    fn create(&self) -> Box<dyn Environment> {
        Box::new(TauEnvironment::new(
            Arc::clone(&self.initial),
            Arc::clone(&self.tools),
            (self.make_user)(),
        ))
    }
}
