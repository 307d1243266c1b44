//! The official multi-turn checker: per turn, the model's steps and the ground truth's calls run on
//! separate instances; after each turn with a non-empty ground truth the instances' public
//! attributes must be equal (`multi_turn:instance_state_mismatch`) and every ground-truth result
//! must appear among the model's results of all turns so far, unordered, with multiplicity
//! (`multi_turn:execution_response_mismatch`). A turn whose ground truth is empty (`miss_func`,
//! `miss_param`: the right move is to ask) is executed but not checked.

use serde_json::Value;

use super::execute::Instances;
use super::long_context::LongContext;
use super::setup::MultiTurnSetup;
use crate::bfcl::params::Failure;

/// The verdict of the multi-turn checker on one entry.
#[derive(Debug, Clone, PartialEq)]
pub enum MultiTurnVerdict {
    /// Accepted.
    Valid,
    /// Rejected, with the official error type.
    Invalid(Failure),
    /// Not scored: the entry needs a backend or behaviour not ported (the reason).
    Unsupported(String),
}

/// Per turn, per step, the call strings of a model's result.
pub type TurnSteps = Vec<Vec<Vec<String>>>;

/// True for a step list the official checker treats as no response (`[]` or `[[]]`).
fn is_empty_response(steps: &[Vec<String>]) -> bool {
    steps.is_empty() || (steps.len() == 1 && steps[0].is_empty())
}

/// Ground truth of an entry as call strings per turn.
///
/// # Errors
/// A turn that is not a list of strings.
pub fn ground_truth_turns(ground_truth: &[Value]) -> Result<Vec<Vec<String>>, String> {
    ground_truth
        .iter()
        .enumerate()
        .map(|(turn, calls)| {
            calls
                .as_array()
                .and_then(|items| {
                    items
                        .iter()
                        .map(|v| v.as_str().map(str::to_owned))
                        .collect()
                })
                .ok_or_else(|| format!("ground truth turn {turn} is not a list of call strings"))
        })
        .collect()
}

/// Checks a model's decoded steps against the ground truth, as `multi_turn_checker` does.
/// `entry_id` decides the long-context mode, as upstream; its filler data is the setup's
/// [`MultiTurnSetup::long_context`] (without it, long-context entries that need it are
/// unsupported).
pub fn check_multi_turn(
    entry_id: &str,
    setup: &MultiTurnSetup,
    ground_truth: &[Vec<String>],
    model: &[Vec<Vec<String>>],
) -> MultiTurnVerdict {
    match run_checker(entry_id, setup, ground_truth, model) {
        Ok(None) => MultiTurnVerdict::Valid,
        Ok(Some(failure)) => MultiTurnVerdict::Invalid(failure),
        Err(reason) => MultiTurnVerdict::Unsupported(reason),
    }
}

fn empty_turn(turn: usize) -> Failure {
    Failure::new(
        "multi_turn:empty_turn_model_response",
        format!("Model response list is empty for turn {turn}"),
    )
}

fn run_checker(
    entry_id: &str,
    setup: &MultiTurnSetup,
    ground_truth: &[Vec<String>],
    model: &[Vec<Vec<String>>],
) -> Result<Option<Failure>, String> {
    // The first turn with a ground truth is checked before any state comparison: no response
    // there fails the entry whatever the backends do.
    if let Some(turn) = ground_truth.iter().position(|calls| !calls.is_empty())
        && is_empty_response(model.get(turn).map_or(&[][..], Vec::as_slice))
    {
        return Ok(Some(empty_turn(turn)));
    }
    let long_context = LongContext::for_entry(entry_id, setup.long_context.as_ref());
    let mut model_side = Instances::new(
        &setup.involved_classes,
        &setup.initial_config,
        &long_context,
    )?;
    let mut check = TurnCheck::new(entry_id, setup)?;
    for (turn, truth_calls) in ground_truth.iter().enumerate() {
        let steps = model.get(turn).map_or(&[][..], Vec::as_slice);
        for step in steps {
            check.record(&model_side.execute(step)?);
        }
        if let Some(failure) = check.check_turn(turn, truth_calls, &model_side, steps)? {
            return Ok(Some(failure));
        }
    }
    Ok(None)
}

/// The ground truth's side of the checker, turn by turn: its instances, and the model's results
/// so far. [`check_multi_turn`] runs it over a whole result; the training environment runs it
/// as the episode goes.
pub struct TurnCheck {
    truth: Instances,
    model_results: Vec<String>,
}

impl std::fmt::Debug for TurnCheck {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TurnCheck")
            .field("truth", &self.truth)
            .field("model_results", &self.model_results.len())
            .finish()
    }
}

impl TurnCheck {
    /// The ground truth's instances of an entry (long-context mode by `entry_id`, as upstream).
    ///
    /// # Errors
    /// The unsupported reason when a class cannot be set up.
    pub fn new(entry_id: &str, setup: &MultiTurnSetup) -> Result<Self, String> {
        let long_context = LongContext::for_entry(entry_id, setup.long_context.as_ref());
        Ok(Self {
            truth: Instances::new(
                &setup.involved_classes,
                &setup.initial_config,
                &long_context,
            )?,
            model_results: Vec::new(),
        })
    }

    /// Records the results of a step of the model's calls (executed on the model's instances).
    pub fn record(&mut self, results: &[String]) {
        self.model_results.extend_from_slice(results);
    }

    /// Ends turn `turn`: runs its ground-truth calls and, when there are any, compares the
    /// model's instances and results so far with the ground truth's (`steps`: the model's steps
    /// of this turn, already executed on `model` and recorded). `Ok(None)` when the turn passes
    /// or is not checked (empty ground truth).
    ///
    /// # Errors
    /// The unsupported reason when a ground-truth call needs behaviour not ported.
    pub fn check_turn(
        &mut self,
        turn: usize,
        truth_calls: &[String],
        model: &Instances,
        steps: &[Vec<String>],
    ) -> Result<Option<Failure>, String> {
        let truth_results = self.truth.execute(truth_calls)?;
        if truth_calls.is_empty() {
            return Ok(None);
        }
        if is_empty_response(steps) {
            return Ok(Some(empty_turn(turn)));
        }
        for (model_backend, truth_backend) in model.backends().iter().zip(self.truth.backends()) {
            let model_state = model_backend.state();
            for (attribute, truth_value) in truth_backend.state() {
                let same = model_state
                    .iter()
                    .any(|(name, value)| *name == attribute && *value == truth_value);
                if !same {
                    return Ok(Some(Failure::new(
                        "multi_turn:instance_state_mismatch",
                        format!(
                            "Model instance for {} does not match the state with ground truth \
                             instance ({attribute} differs).",
                            truth_backend.class_name()
                        ),
                    )));
                }
            }
        }
        let mut remaining = self.model_results.clone();
        let mut missing = Vec::new();
        for result in &truth_results {
            match remaining.iter().position(|r| r == result) {
                Some(index) => {
                    remaining.remove(index);
                }
                None => missing.push(result.clone()),
            }
        }
        if !missing.is_empty() {
            return Ok(Some(Failure::new(
                "multi_turn:execution_response_mismatch",
                format!(
                    "Model response execution results so far does not contain all the ground \
                     truth response execution results for turn {turn} (missing: {missing:?})."
                ),
            )));
        }
        Ok(None)
    }
}
