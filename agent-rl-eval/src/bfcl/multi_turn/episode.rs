//! One multi-turn entry played turn by turn: what the model is offered at each turn
//! ([`MultiTurnPlan`]) and the model's backend instances with the calls it made so far
//! ([`MultiTurnEpisode`]), optionally checked turn by turn against the ground truth. The
//! inference loop ([`infer_multi_turn`](super::infer_multi_turn)) and the training environment
//! ([`MultiTurnEnvironment`](super::MultiTurnEnvironment)) both drive an episode; they differ
//! only in how they talk to the policy.

use std::collections::BTreeMap;
use std::sync::Arc;

use agent_rl_core::{Message, ToolCall, ToolSpec};
use serde_json::Value;

use super::checker::{TurnCheck, TurnSteps};
use super::execute::Instances;
use super::inference::{ADDED_FUNCTIONS_PROMPT, MultiTurnDocs, tool_call_string};
use super::long_context::LongContext;
use super::setup::MultiTurnSetup;
use crate::bfcl::category::Language;
use crate::bfcl::checker::CheckOptions;
use crate::bfcl::data::{BfclEntry, BfclMessage};
use crate::bfcl::params::Failure;
use crate::bfcl::runner::tool_spec;
use crate::error::{EvalError, Result};

/// How the functions held back until a turn (`miss_func`) reach the model at that turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AddedFunctions {
    /// bfcl-eval's function-calling mode: they join the request's tools and the turn's user
    /// message is [`ADDED_FUNCTIONS_PROMPT`].
    AsTools,
    /// bfcl-eval's prompting mode, for a conversation whose tools cannot change (a token-level
    /// rollout renders them once, in the prompt): the user message lists them, one tool spec
    /// per line as JSON (the form the offered tools have), followed by a newline and
    /// [`ADDED_FUNCTIONS_PROMPT`].
    InMessage,
}

/// What an entry offers the model, turn by turn: its user messages, its function docs (those
/// held back until a turn apart) and its backends' setup.
#[derive(Debug, Clone, PartialEq)]
pub struct MultiTurnPlan {
    /// The entry id (its category decides long-context mode).
    pub id: String,
    /// Per turn, the entry's user messages (empty at a held-back turn).
    pub turns: Vec<Vec<BfclMessage>>,
    /// The backends' setup.
    pub setup: MultiTurnSetup,
    /// The docs offered from the first turn.
    pub functions: Vec<Value>,
    /// Per turn, the docs added at that turn (`miss_func`).
    pub held_back: BTreeMap<usize, Vec<Value>>,
    /// How docs become tools (function names as the model sees them).
    pub options: CheckOptions,
}

impl MultiTurnPlan {
    /// The plan of a multi-turn entry, with its classes' docs from `docs`.
    ///
    /// # Errors
    /// [`EvalError::InvalidConfig`] for an entry without multi-turn fields.
    pub fn new(entry: &BfclEntry, docs: &MultiTurnDocs, options: CheckOptions) -> Result<Self> {
        let setup = entry
            .multi_turn
            .clone()
            .ok_or_else(|| EvalError::InvalidConfig {
                field: "entry".into(),
                reason: format!("{} has no multi-turn fields", entry.id),
            })?;
        let classes = &setup.involved_classes;
        let held_back_names: Vec<&str> = setup
            .missed_function
            .values()
            .flatten()
            .map(String::as_str)
            .collect();
        let held_back = setup
            .missed_function
            .iter()
            .map(|(turn, names)| (*turn, docs.named(classes, names)))
            .collect();
        Ok(Self {
            id: entry.id.clone(),
            turns: entry.turns.clone(),
            functions: docs.for_classes(classes, &held_back_names),
            held_back,
            setup,
            options,
        })
    }

    /// The tools offered at `turn`: the first turn's, and those added up to that turn.
    pub fn tools(&self, turn: usize) -> Vec<ToolSpec> {
        let added = self.held_back.range(..=turn).flat_map(|(_, docs)| docs);
        self.functions
            .iter()
            .chain(added)
            .map(|doc| self.tool(doc))
            .collect()
    }

    fn tool(&self, doc: &Value) -> ToolSpec {
        tool_spec(doc, Language::Python, self.options)
    }

    /// The user messages that open `turn` (see [`AddedFunctions`] for a held-back turn).
    pub fn user_messages(&self, turn: usize, added: AddedFunctions) -> Vec<Message> {
        if let Some(docs) = self.held_back.get(&turn) {
            let text = match added {
                AddedFunctions::AsTools => ADDED_FUNCTIONS_PROMPT.to_owned(),
                AddedFunctions::InMessage => {
                    let lines: Vec<String> = docs
                        .iter()
                        .map(|doc| {
                            serde_json::to_string(&self.tool(doc))
                                .unwrap_or_else(|_| doc.to_string())
                        })
                        .collect();
                    format!("{}\n{ADDED_FUNCTIONS_PROMPT}", lines.join("\n"))
                }
            };
            return vec![Message::user(text)];
        }
        self.turns
            .get(turn)
            .into_iter()
            .flatten()
            .map(BfclMessage::to_message)
            .collect()
    }
}

/// An entry in progress: the model's instances, its steps so far and, when scored, the
/// ground truth's side of the checker ([`TurnCheck`]).
pub struct MultiTurnEpisode {
    plan: Arc<MultiTurnPlan>,
    model: Instances,
    check: Option<(TurnCheck, Arc<Vec<Vec<String>>>)>,
    /// The steps of the turn in progress.
    current: Vec<Vec<String>>,
    /// The steps of the ended turns (after [`MultiTurnEpisode::stop`], the stopped turn's
    /// too); the turn in progress is their count.
    steps: TurnSteps,
    stopped: bool,
}

impl std::fmt::Debug for MultiTurnEpisode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MultiTurnEpisode")
            .field("id", &self.plan.id)
            .field("turn", &self.turn())
            .field("steps", &self.steps)
            .field("scored", &self.check.is_some())
            .finish()
    }
}

impl MultiTurnEpisode {
    /// An unscored episode (inference): the model's instances from the entry's setup.
    ///
    /// # Errors
    /// The unsupported reason when a class cannot be set up.
    pub fn new(plan: Arc<MultiTurnPlan>) -> std::result::Result<Self, String> {
        let long_context = LongContext::for_entry(&plan.id, plan.setup.long_context.as_ref());
        let model = Instances::new(
            &plan.setup.involved_classes,
            &plan.setup.initial_config,
            &long_context,
        )?;
        Ok(Self {
            plan,
            model,
            check: None,
            current: Vec::new(),
            steps: Vec::new(),
            stopped: false,
        })
    }

    /// An episode checked turn by turn against `ground_truth` (call strings per turn) as the
    /// official checker does.
    ///
    /// # Errors
    /// As [`MultiTurnEpisode::new`].
    pub fn scored(
        plan: Arc<MultiTurnPlan>,
        ground_truth: Arc<Vec<Vec<String>>>,
    ) -> std::result::Result<Self, String> {
        let check = TurnCheck::new(&plan.id, &plan.setup)?;
        let mut episode = Self::new(plan)?;
        episode.check = Some((check, ground_truth));
        Ok(episode)
    }

    /// The plan.
    pub fn plan(&self) -> &MultiTurnPlan {
        &self.plan
    }

    /// The index of the turn in progress: the number of ended turns (after
    /// [`MultiTurnEpisode::stop`], the stopped turn's).
    pub fn turn(&self) -> usize {
        self.steps.len() - usize::from(self.stopped)
    }

    /// True once every turn has ended, or after [`MultiTurnEpisode::stop`].
    pub fn is_over(&self) -> bool {
        self.stopped || self.turn() >= self.plan.turns.len()
    }

    /// True in the last turn.
    pub fn is_last_turn(&self) -> bool {
        self.turn() + 1 >= self.plan.turns.len()
    }

    /// Steps made in the turn in progress.
    pub fn steps_this_turn(&self) -> usize {
        self.current.len()
    }

    /// The call strings of the ended turns, per step (bfcl-eval's decoded result form).
    pub fn steps(&self) -> &TurnSteps {
        &self.steps
    }

    /// The ended turns' steps, the episode consumed.
    pub fn into_steps(self) -> TurnSteps {
        self.steps
    }

    /// One step: the calls rendered as call strings ([`tool_call_string`]), executed in order
    /// on the model's instances; returns one tool message per call with its result.
    ///
    /// `Ok(None)` when a call's arguments are neither a JSON object nor a string holding one:
    /// nothing runs and no step is counted (bfcl-eval fails to decode such a step and ends the
    /// turn; the caller should too).
    ///
    /// # Errors
    /// The unsupported reason when a call needs behaviour not ported.
    pub fn run_step(
        &mut self,
        calls: &[ToolCall],
    ) -> std::result::Result<Option<Vec<Message>>, String> {
        let Some(strings) = calls.iter().map(tool_call_string).collect() else {
            return Ok(None);
        };
        let results = self.run_call_strings(strings)?;
        Ok(Some(
            calls
                .iter()
                .zip(results)
                .map(|(call, result)| {
                    let mut message = Message::tool(call.name.clone(), result);
                    message.tool_call_id.clone_from(&call.id);
                    message
                })
                .collect(),
        ))
    }

    /// One step given as call strings (Python syntax, positional arguments allowed: a ground
    /// truth's), executed in order on the model's instances; returns their results.
    ///
    /// # Errors
    /// As [`MultiTurnEpisode::run_step`].
    pub fn run_call_strings(
        &mut self,
        calls: Vec<String>,
    ) -> std::result::Result<Vec<String>, String> {
        let results = self.model.execute(&calls)?;
        if let Some((check, _)) = &mut self.check {
            check.record(&results);
        }
        self.current.push(calls);
        Ok(results)
    }

    /// Ends the turn in progress. Scored: runs its ground truth and returns the checker's
    /// verdict on it (`None`: passed, or not checked because its ground truth is empty).
    ///
    /// # Errors
    /// The unsupported reason when the ground truth's calls need behaviour not ported (the turn
    /// has ended all the same).
    pub fn end_turn(&mut self) -> std::result::Result<Option<Failure>, String> {
        let turn = self.turn();
        let steps = std::mem::take(&mut self.current);
        let verdict = match &mut self.check {
            Some((check, truth)) => {
                let calls = truth.get(turn).map_or(&[][..], Vec::as_slice);
                check.check_turn(turn, calls, &self.model, &steps)
            }
            None => Ok(None),
        };
        // The turn's steps are kept even when its ground truth is unsupported.
        self.steps.push(steps);
        verdict
    }

    /// Ends the episode inside the turn in progress (bfcl-eval's force-quit at the step limit):
    /// that turn's steps are kept, later turns never run.
    pub fn stop(&mut self) {
        self.steps.push(std::mem::take(&mut self.current));
        self.stopped = true;
    }
}
