//! BFCL multi-turn entries as a core [`Environment`] for RL (`GrpoTrainer::with_environment`),
//! rewarded by the official checker's per-turn verdicts.
//!
//! An episode is one entry. [`MultiTurnEnvironment::reset`] sets up the model's backend
//! instances from the entry's `initial_config` (long-context filler when the dataset has it)
//! and the ground truth's, on separate instances, and returns the first turn's user message;
//! the task's tools are the entry's functions, those held back until a later turn (`miss_func`)
//! apart. The calls of one assistant message form one step
//! ([`Environment::step_message`]): they are executed in order on the model's instances and
//! each answered by a tool message with the text bfcl-eval's executor records (calls whose
//! arguments are not a JSON object do not decode: as in bfcl-eval, nothing runs and the turn
//! ends). A reply without calls ends the turn: the turn's ground-truth calls run on their instances and the checker
//! compares the instances' states and the results so far exactly as
//! [`check_multi_turn`](super::check_multi_turn) does
//! (a turn whose ground truth is empty, where the right move is to ask (`miss_param`) or the
//! function is missing (`miss_func`), is not checked: its calls still change the model's
//! instances). If the turn passes, the next turn's user message is the observation; at a
//! held-back turn, that message lists the added functions ([`AddedFunctions::InMessage`]:
//! bfcl-eval's prompting mode, since a token-level rollout cannot change the tools of its
//! prompt). More than `max_steps` steps in one turn force-quit the entry, as bfcl-eval's
//! inference loop does (the entry then fails with `multi_turn:force_terminated`, unless it was
//! the last turn, which is checked as usual).
//!
//! Malformed tool calls (text the parser could not read as a call) never reach an environment:
//! the agent loop sends the well-formed calls of a message and drops the rest, and a message with
//! none is a reply. [`infer_multi_turn`](super::infer_multi_turn) instead ends the turn at a step
//! with any malformed call, so the two can differ on such a message.
//!
//! **Reward** ([`MultiTurnRewardMode`]): by default the share of the entry's checked turns
//! (those with a non-empty ground truth) that pass before the first failure — the checker
//! decides no turn after a failed one, so the episode ends there. It is 1 exactly when the
//! official checker judges the entry valid, and it gives partial credit for the turns done
//! right. [`MultiTurnRewardMode::Entry`] gives 1 for a valid entry and 0 otherwise, the
//! benchmark's own metric. The reward so far is reported at the end of every checked turn, so
//! an episode the agent loop cuts (completion budget, `max_tool_iterations`) keeps the credit of
//! the turns it finished; [`multi_turn_reward`] reads it (0 when no turn ended).
//!
//! **Pinned gaps** (behaviour not ported; see the module docs of
//! [`multi_turn`](super)) are never scored as wrong: an entry whose ground truth needs one is
//! left out when the tasks are built ([`MultiTurnEnvironmentFactory::skipped`] says which and
//! why), and a model call that needs one ends the episode unscored: the observation is
//! a system message starting with [`UNSUPPORTED_PREFIX`], the episode's
//! [`MultiTurnEpisodeReport::verdict`] is [`MultiTurnVerdict::Unsupported`], and
//! [`multi_turn_reward`] scores it `None` (left out of the group's advantages).

use std::collections::HashMap;
use std::sync::Arc;

use agent_rl_core::{
    Action, CoreError, Environment, EnvironmentFactory, Message, Role, StepOutcome, Task, ToolCall,
    step_each,
};
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::checker::{MultiTurnVerdict, TurnSteps, ground_truth_turns};
use super::decode::force_terminated;
use super::episode::{AddedFunctions, MultiTurnEpisode, MultiTurnPlan};
use super::inference::{MAX_STEPS, MultiTurnDocs};
use crate::bfcl::category::Scoring;
use crate::bfcl::checker::CheckOptions;
use crate::bfcl::data::{BfclDataset, BfclEntry};

/// The start of the observation that ends an episode at a call this port cannot execute.
pub const UNSUPPORTED_PREFIX: &str = "BFCL multi-turn: not scored, unsupported call: ";

/// How an episode's verdicts become its reward.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MultiTurnRewardMode {
    /// Checked turns passed before the first failure ÷ checked turns (1 iff the entry is valid).
    #[default]
    TurnShare,
    /// 1 when the whole entry is valid, else 0.
    Entry,
}

/// Settings of the multi-turn environment.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MultiTurnEnvConfig {
    /// How verdicts become the reward (default [`MultiTurnRewardMode::TurnShare`]).
    pub reward: MultiTurnRewardMode,
    /// Steps (assistant messages with calls) allowed in one turn before the entry is
    /// force-quit; default bfcl-eval's [`MAX_STEPS`].
    pub max_steps: usize,
    /// How function names are shown to the model (as in evaluation).
    pub options: CheckOptions,
}

impl Default for MultiTurnEnvConfig {
    fn default() -> Self {
        Self {
            reward: MultiTurnRewardMode::default(),
            max_steps: MAX_STEPS,
            options: CheckOptions::default(),
        }
    }
}

/// A multi-turn entry that did not become a task, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkippedEntry {
    /// The entry id.
    pub id: String,
    /// Why it was left out (a pinned gap, a malformed record, …).
    pub reason: String,
}

/// How an episode stands, or how it ended.
#[derive(Debug, Clone, PartialEq)]
pub struct MultiTurnEpisodeReport {
    /// The entry id.
    pub id: String,
    /// The checker's verdict on the entry as played (`Valid` only when every turn ran and
    /// passed); `None` while the episode runs.
    pub verdict: Option<MultiTurnVerdict>,
    /// Checked turns that passed.
    pub passed_turns: usize,
    /// Checked turns of the entry (those with a non-empty ground truth).
    pub checked_turns: usize,
    /// The reward (`None` for an unsupported episode).
    pub reward: Option<f32>,
    /// The model's call strings per ended turn and step (bfcl-eval's decoded result form).
    pub steps: TurnSteps,
}

impl MultiTurnEpisodeReport {
    /// True once the episode is over (it has a verdict).
    pub fn is_done(&self) -> bool {
        self.verdict.is_some()
    }
}

/// What the environment keeps of one entry.
#[derive(Debug)]
struct EntrySpec {
    plan: Arc<MultiTurnPlan>,
    /// The ground truth's call strings per turn.
    truth: Arc<Vec<Vec<String>>>,
    /// The number of checked turns (see [`EntrySpec::is_checked`]).
    checked: usize,
}

impl EntrySpec {
    /// True for a turn the checker decides: one with a non-empty ground truth.
    fn is_checked(&self, turn: usize) -> bool {
        self.truth.get(turn).is_some_and(|calls| !calls.is_empty())
    }
}

/// Builds the tasks of a dataset's multi-turn entries and makes a [`MultiTurnEnvironment`] per
/// episode.
#[derive(Debug, Clone)]
pub struct MultiTurnEnvironmentFactory {
    specs: Arc<HashMap<String, Arc<EntrySpec>>>,
    tasks: Vec<Task>,
    skipped: Vec<SkippedEntry>,
    config: MultiTurnEnvConfig,
}

impl MultiTurnEnvironmentFactory {
    /// The tasks of every multi-turn entry of `dataset` (in category and file order), with the
    /// classes' function docs `docs`. An entry is left out (see
    /// [`MultiTurnEnvironmentFactory::skipped`]) when its record does not fit the environment
    /// (no multi-turn fields, a malformed ground truth, a later turn that is not one user
    /// message) or when replaying its ground truth through the environment's checker does not
    /// pass — a pinned gap (e.g. long-context entries without the filler data), or a ground truth
    /// the checker rejects — since no policy could earn the full reward there.
    pub fn new(dataset: &BfclDataset, docs: &MultiTurnDocs, config: MultiTurnEnvConfig) -> Self {
        let mut specs = HashMap::new();
        let mut tasks = Vec::new();
        let mut skipped = Vec::new();
        let entries = dataset
            .entries()
            .filter(|entry| entry.category.scoring() == Scoring::MultiTurn);
        for entry in entries {
            match entry_spec(entry, docs, config.options) {
                Ok(spec) => {
                    tasks.push(task(entry, &spec));
                    specs.insert(entry.id.clone(), Arc::new(spec));
                }
                Err(reason) => skipped.push(SkippedEntry {
                    id: entry.id.clone(),
                    reason,
                }),
            }
        }
        Self {
            specs: Arc::new(specs),
            tasks,
            skipped,
            config,
        }
    }

    /// The tasks: the first turn's user message, the tools offered from the first turn, and
    /// `data` = `{"bfcl": {"id", "category"}, "turns", "checked_turns"}`.
    pub fn tasks(&self) -> &[Task] {
        &self.tasks
    }

    /// The entries left out, with the reason.
    pub fn skipped(&self) -> &[SkippedEntry] {
        &self.skipped
    }

    /// The settings.
    pub fn config(&self) -> MultiTurnEnvConfig {
        self.config
    }

    /// A fresh environment over these tasks.
    pub fn environment(&self) -> MultiTurnEnvironment {
        MultiTurnEnvironment {
            specs: Arc::clone(&self.specs),
            config: self.config,
            running: None,
        }
    }
}

impl EnvironmentFactory for MultiTurnEnvironmentFactory {
    fn create(&self) -> Box<dyn Environment> {
        Box::new(self.environment())
    }
}

fn task(entry: &BfclEntry, spec: &EntrySpec) -> Task {
    Task {
        id: entry.id.clone(),
        messages: spec.plan.user_messages(0, AddedFunctions::InMessage),
        tools: spec.plan.tools(0),
        data: json!({
            "bfcl": {"id": entry.id, "category": entry.category},
            "turns": spec.truth.len(),
            "checked_turns": spec.checked,
        }),
    }
}

/// The spec of an entry, after checking that its ground truth earns the full reward.
fn entry_spec(
    entry: &BfclEntry,
    docs: &MultiTurnDocs,
    options: CheckOptions,
) -> Result<EntrySpec, String> {
    let plan = MultiTurnPlan::new(entry, docs, options).map_err(|error| error.to_string())?;
    let truth = ground_truth_turns(&entry.ground_truth)?;
    if truth.len() != plan.turns.len() {
        return Err(format!(
            "the ground truth has {} turns, the question {}",
            truth.len(),
            plan.turns.len()
        ));
    }
    if plan.held_back.contains_key(&0) {
        return Err("functions are held back until the first turn".into());
    }
    for turn in 1..plan.turns.len() {
        let messages = plan.user_messages(turn, AddedFunctions::InMessage);
        if messages.len() != 1 || messages[0].role != Role::User {
            return Err(format!(
                "turn {turn} does not open with exactly one user message (the environment \
                 answers a turn's end with one)"
            ));
        }
    }
    let plan = Arc::new(plan);
    let truth = Arc::new(truth);
    let mut replay = MultiTurnEpisode::scored(Arc::clone(&plan), Arc::clone(&truth))
        .map_err(|reason| format!("unsupported: {reason}"))?;
    for calls in truth.iter() {
        if !calls.is_empty() {
            replay
                .run_call_strings(calls.clone())
                .map_err(|reason| format!("unsupported: {reason}"))?;
        }
        match replay.end_turn() {
            Ok(None) => {}
            Ok(Some(failure)) => {
                return Err(format!(
                    "its ground truth fails the checker ({}: {})",
                    failure.error_type, failure.message
                ));
            }
            Err(reason) => return Err(format!("unsupported: {reason}")),
        }
    }
    let mut spec = EntrySpec {
        plan,
        truth,
        checked: 0,
    };
    spec.checked = (0..spec.truth.len())
        .filter(|&turn| spec.is_checked(turn))
        .count();
    Ok(spec)
}

/// One episode, in progress or ended.
struct Running {
    spec: Arc<EntrySpec>,
    episode: MultiTurnEpisode,
    /// Checked turns that passed.
    passed: usize,
    /// `None` while the episode runs; set once, when it ends.
    verdict: Option<MultiTurnVerdict>,
}

/// A BFCL multi-turn environment (see the module docs); made by
/// [`MultiTurnEnvironmentFactory`].
pub struct MultiTurnEnvironment {
    specs: Arc<HashMap<String, Arc<EntrySpec>>>,
    config: MultiTurnEnvConfig,
    running: Option<Running>,
}

impl std::fmt::Debug for MultiTurnEnvironment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MultiTurnEnvironment")
            .field("tasks", &self.specs.len())
            .field("config", &self.config)
            .field("report", &self.report())
            .finish()
    }
}

impl MultiTurnEnvironment {
    /// How the current (or last) episode stands.
    pub fn report(&self) -> Option<MultiTurnEpisodeReport> {
        let run = self.running.as_ref()?;
        Some(MultiTurnEpisodeReport {
            id: run.spec.plan.id.clone(),
            verdict: run.verdict.clone(),
            passed_turns: run.passed,
            checked_turns: run.spec.checked,
            reward: self.reward(run),
            steps: run.episode.steps().clone(),
        })
    }

    /// The reward of `run` so far (`None` once it ended unsupported).
    fn reward(&self, run: &Running) -> Option<f32> {
        let valid = match &run.verdict {
            Some(MultiTurnVerdict::Unsupported(_)) => return None,
            Some(MultiTurnVerdict::Valid) => true,
            Some(MultiTurnVerdict::Invalid(_)) | None => false,
        };
        Some(match self.config.reward {
            MultiTurnRewardMode::Entry => f32::from(u8::from(valid)),
            MultiTurnRewardMode::TurnShare if run.spec.checked == 0 => f32::from(u8::from(valid)),
            MultiTurnRewardMode::TurnShare => run.passed as f32 / run.spec.checked as f32,
        })
    }

    fn error(reason: impl Into<String>) -> CoreError {
        CoreError::Environment {
            environment: "bfcl_multi_turn".into(),
            reason: reason.into(),
        }
    }

    fn running(&mut self) -> Result<&mut Running, CoreError> {
        match self.running.as_mut() {
            None => Err(Self::error("step before reset")),
            Some(run) if run.verdict.is_some() => Err(Self::error("step after the episode ended")),
            Some(run) => Ok(run),
        }
    }

    /// Ends the episode with `verdict`; the outcome carries the final reward.
    fn finish(&mut self, verdict: MultiTurnVerdict) -> Result<StepOutcome, CoreError> {
        let run = self.running()?;
        let observation = match &verdict {
            MultiTurnVerdict::Unsupported(reason) => {
                Message::system(format!("{UNSUPPORTED_PREFIX}{reason}"))
            }
            MultiTurnVerdict::Valid => Message::system("BFCL multi-turn: every turn passed"),
            MultiTurnVerdict::Invalid(failure) => Message::system(format!(
                "BFCL multi-turn: {} checked turn(s) of {} passed; then {}",
                run.passed, run.spec.checked, failure.error_type
            )),
        };
        let info = json!({"verdict": verdict_name(&verdict), "passed_turns": run.passed,
            "checked_turns": run.spec.checked});
        run.verdict = Some(verdict);
        let reward = self.running.as_ref().and_then(|run| self.reward(run));
        Ok(StepOutcome {
            observation,
            done: true,
            reward,
            info,
        })
    }

    /// One step of calls: their tool messages, the last one ending the episode at a force-quit.
    /// Calls whose arguments do not decode end the turn instead (one outcome, as a reply
    /// without calls), as bfcl-eval's inference loop does.
    fn tool_step(&mut self, calls: &[ToolCall]) -> Result<Vec<StepOutcome>, CoreError> {
        let max_steps = self.config.max_steps;
        let run = self.running()?;
        let messages = match run.episode.run_step(calls) {
            Ok(Some(messages)) => messages,
            Ok(None) => return Ok(vec![self.end_turn()?]),
            Err(reason) => return Ok(vec![self.finish(MultiTurnVerdict::Unsupported(reason))?]),
        };
        let mut outcomes: Vec<StepOutcome> = messages
            .into_iter()
            .map(|observation| StepOutcome {
                observation,
                done: false,
                reward: None,
                info: json!({"source": "tool"}),
            })
            .collect();
        if run.episode.steps_this_turn() > max_steps {
            let end = if run.episode.is_last_turn() {
                // The result still has every turn: the checker decides the last one as usual.
                self.end_turn()?
            } else {
                let turns = run.spec.truth.len();
                run.episode.stop();
                let kept = run.episode.steps().len();
                self.finish(MultiTurnVerdict::Invalid(force_terminated(kept, turns)))?
            };
            if let Some(last) = outcomes.last_mut() {
                last.done = end.done;
                last.reward = end.reward;
                last.info = end.info;
            }
        }
        Ok(outcomes)
    }

    /// The assistant answered without calls: the turn ends and is checked.
    fn end_turn(&mut self) -> Result<StepOutcome, CoreError> {
        let run = self.running()?;
        let checked = run.spec.is_checked(run.episode.turn());
        match run.episode.end_turn() {
            Err(reason) => return self.finish(MultiTurnVerdict::Unsupported(reason)),
            Ok(Some(failure)) => return self.finish(MultiTurnVerdict::Invalid(failure)),
            Ok(None) => {}
        }
        if checked {
            run.passed += 1;
        }
        if run.episode.is_over() {
            return self.finish(MultiTurnVerdict::Valid);
        }
        let next = run.episode.turn();
        let observation = run
            .spec
            .plan
            .user_messages(next, AddedFunctions::InMessage)
            .into_iter()
            .next()
            .ok_or_else(|| Self::error(format!("turn {next} has no user message")))?;
        let info = json!({"source": "user", "turn": next, "passed_turns": run.passed});
        let reward = if checked {
            self.running.as_ref().and_then(|run| self.reward(run))
        } else {
            None
        };
        Ok(StepOutcome {
            observation,
            done: false,
            reward,
            info,
        })
    }
}

fn verdict_name(verdict: &MultiTurnVerdict) -> String {
    match verdict {
        MultiTurnVerdict::Valid => "valid".into(),
        MultiTurnVerdict::Invalid(failure) => failure.error_type.clone(),
        MultiTurnVerdict::Unsupported(_) => "multi_turn:unsupported".into(),
    }
}

impl Environment for MultiTurnEnvironment {
    fn reset(&mut self, task: &Task) -> Result<Vec<Message>, CoreError> {
        let spec = self.specs.get(&task.id).ok_or_else(|| {
            Self::error(format!(
                "task `{}` is not a multi-turn entry of this environment's dataset",
                task.id
            ))
        })?;
        let spec = Arc::clone(spec);
        let episode = MultiTurnEpisode::scored(Arc::clone(&spec.plan), Arc::clone(&spec.truth))
            .map_err(|reason| Self::error(format!("task `{}`: {reason}", task.id)))?;
        self.running = Some(Running {
            spec,
            episode,
            passed: 0,
            verdict: None,
        });
        Ok(task.messages.clone())
    }

    fn step(&mut self, action: &Action) -> Result<StepOutcome, CoreError> {
        match action {
            Action::Respond(_) => self.end_turn(),
            Action::ToolCall(call) => {
                let mut outcomes = self.tool_step(std::slice::from_ref(call))?;
                outcomes
                    .pop()
                    .ok_or_else(|| Self::error("a call without an outcome"))
            }
        }
    }

    /// The calls of one message are one step (bfcl-eval's unit for the step limit): one tool
    /// message per call, or a single outcome when the step ends the episode (an unsupported
    /// call) or the turn (arguments that do not decode). A message mixing calls and replies is
    /// taken action by action, each call a step of its own.
    fn step_message(&mut self, actions: &[Action]) -> Result<Vec<StepOutcome>, CoreError> {
        let calls: Option<Vec<ToolCall>> = actions
            .iter()
            .map(|action| match action {
                Action::ToolCall(call) => Some(call.clone()),
                Action::Respond(_) => None,
            })
            .collect();
        match calls {
            Some(calls) if !calls.is_empty() => self.tool_step(&calls),
            _ => step_each(self, actions),
        }
    }
}

/// The reward of a multi-turn episode: the environment's reward (see the module docs), 0 when
/// the agent loop cut the episode before any checked turn ended, `None` (not scored) when the
/// episode ended at an unsupported call.
pub fn multi_turn_reward() -> impl agent_rl_rewards::Reward {
    agent_rl_rewards::FnReward::new("bfcl_multi_turn", |sample: agent_rl_rewards::Sample<'_>| {
        let trajectory = sample.trajectory;
        let unsupported = trajectory
            .turns
            .last()
            .and_then(|turn| turn.observations.last())
            .is_some_and(|message| {
                message.role == Role::System && message.text().starts_with(UNSUPPORTED_PREFIX)
            });
        (!unsupported).then(|| trajectory.environment_reward.unwrap_or(0.0))
    })
}
