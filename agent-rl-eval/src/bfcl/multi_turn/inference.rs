//! Multi-turn inference with any [`Policy`], as bfcl-eval's function-calling inference loop
//! runs it: the backends of the entry are created once; per turn the user's messages are added
//! (for a `miss_func` turn, the held-back functions join the tools and the user message is
//! BFCL's fixed "updated functions" sentence), then the policy is queried step by step: each
//! step's tool calls are rendered as call strings (`name(k=repr(v),…)`), executed, and their
//! results fed back as tool messages; the turn ends when a step makes no call (or its calls are
//! malformed, or their arguments are not a JSON object). More than [`MAX_STEPS`] steps in one turn force-quit the entry after that turn,
//! so its result has fewer turns than the ground truth (unless it was the last).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use agent_rl_core::{ChatRequest, Message, Policy, SamplingConfig, ToolCall};
use serde_json::Value;

use super::checker::TurnSteps;
use super::episode::{AddedFunctions, MultiTurnEpisode, MultiTurnPlan};
use super::value::PyValue;
use crate::bfcl::checker::CheckOptions;
use crate::bfcl::data::BfclEntry;
use crate::error::{EvalError, Result};

/// bfcl-eval's `MAXIMUM_STEP_LIMIT`: steps allowed in one turn.
pub const MAX_STEPS: usize = 20;

/// The user message of a turn whose held-back functions are added (function-calling mode).
pub const ADDED_FUNCTIONS_PROMPT: &str =
    "I have updated some more functions you can choose from. What about now?";

/// The function-doc file of each class under `multi_turn_func_doc/`.
const DOC_FILES: [(&str, &str); 8] = [
    ("GorillaFileSystem", "gorilla_file_system.json"),
    ("MathAPI", "math_api.json"),
    ("MessageAPI", "message_api.json"),
    ("TwitterAPI", "posting_api.json"),
    ("TicketAPI", "ticket_api.json"),
    ("TradingBot", "trading_bot.json"),
    ("TravelAPI", "travel_booking.json"),
    ("VehicleControlAPI", "vehicle_control.json"),
];

/// The multi-turn classes' function docs (`multi_turn_func_doc/*.json`), by class name.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct MultiTurnDocs {
    by_class: BTreeMap<String, Vec<Value>>,
}

impl MultiTurnDocs {
    /// Reads `multi_turn_func_doc/` under the BFCL data folder (the one holding the
    /// `BFCL_v*_*.json` files).
    ///
    /// # Errors
    /// A missing file or a line that is not a JSON function doc, naming the file and line.
    pub fn load(data_dir: &Path) -> Result<Self> {
        let folder = data_dir.join("multi_turn_func_doc");
        let mut by_class = BTreeMap::new();
        for (class, file) in DOC_FILES {
            let path: PathBuf = folder.join(file);
            let text = std::fs::read_to_string(&path).map_err(|source| EvalError::Io {
                path: path.clone(),
                source,
            })?;
            let mut docs = Vec::new();
            for (index, line) in text.lines().enumerate() {
                if line.trim().is_empty() {
                    continue;
                }
                let doc: Value = serde_json::from_str(line).map_err(|error| EvalError::Record {
                    path: path.clone(),
                    line: index + 1,
                    reason: format!("not a JSON function doc: {error}"),
                })?;
                docs.push(doc);
            }
            by_class.insert(class.to_owned(), docs);
        }
        Ok(Self { by_class })
    }

    /// The docs of the given classes, in order, without the named functions.
    pub fn for_classes(&self, classes: &[String], held_back: &[&str]) -> Vec<Value> {
        classes
            .iter()
            .filter_map(|class| self.by_class.get(class))
            .flatten()
            .filter(|doc| !held_back.contains(&doc_name(doc)))
            .cloned()
            .collect()
    }

    /// The docs of the named functions among the given classes.
    pub fn named(&self, classes: &[String], names: &[String]) -> Vec<Value> {
        self.for_classes(classes, &[])
            .into_iter()
            .filter(|doc| names.iter().any(|name| name == doc_name(doc)))
            .collect()
    }
}

fn doc_name(doc: &Value) -> &str {
    doc.get("name").and_then(Value::as_str).unwrap_or("")
}

/// What multi-turn inference produced for one entry.
#[derive(Debug, Clone, PartialEq)]
pub enum MultiTurnOutcome {
    /// Per turn, per step, the call strings (fewer turns than the entry's when force-terminated),
    /// in bfcl-eval's decoded result form.
    Steps(TurnSteps),
    /// The entry needs a backend or behaviour not ported (the reason); not scored.
    Unsupported(String),
}

/// A call as bfcl-eval renders a function-calling response: `name(k=repr(v),…)`. Arguments
/// that are not a JSON object render as none; for a model's calls use [`tool_call_string`],
/// which refuses them.
pub fn call_string(name: &str, arguments: &Value) -> String {
    let rendered: Vec<String> = match arguments {
        Value::Object(map) => map
            .iter()
            .map(|(key, value)| format!("{key}={}", PyValue::from_json(value).repr()))
            .collect(),
        _ => Vec::new(),
    };
    format!("{name}({})", rendered.join(","))
}

/// A model's tool call as a call string ([`call_string`]), its arguments an object or a string
/// holding one (decoded first, as bfcl-eval's `convert_to_function_call` does); `None` for any
/// other arguments, where bfcl-eval's decoding raises and its inference loop ends the turn.
pub fn tool_call_string(call: &ToolCall) -> Option<String> {
    match &call.arguments {
        Value::Object(_) => Some(call_string(&call.name, &call.arguments)),
        Value::String(text) => match serde_json::from_str::<Value>(text) {
            Ok(arguments @ Value::Object(_)) => Some(call_string(&call.name, &arguments)),
            _ => None,
        },
        _ => None,
    }
}

/// Runs one multi-turn entry with `policy` (one request per step).
///
/// # Errors
/// The policy's generation errors; an entry without multi-turn fields.
pub fn infer_multi_turn(
    entry: &BfclEntry,
    docs: &MultiTurnDocs,
    policy: &mut dyn Policy,
    sampling: &SamplingConfig,
    options: CheckOptions,
) -> Result<MultiTurnOutcome> {
    let plan = Arc::new(MultiTurnPlan::new(entry, docs, options)?);
    let mut episode = match MultiTurnEpisode::new(Arc::clone(&plan)) {
        Ok(episode) => episode,
        Err(reason) => return Ok(MultiTurnOutcome::Unsupported(reason)),
    };
    let mut messages: Vec<Message> = Vec::new();
    while !episode.is_over() {
        let turn = episode.turn();
        messages.extend(plan.user_messages(turn, AddedFunctions::AsTools));
        let tools = plan.tools(turn);
        loop {
            let request = ChatRequest {
                messages: messages.clone(),
                tools: tools.clone(),
            };
            let completion = policy
                .generate(std::slice::from_ref(&request), sampling)?
                .into_iter()
                .next()
                .ok_or_else(|| EvalError::InvalidConfig {
                    field: "policy".into(),
                    reason: "the policy returned no completion for a request".into(),
                })?;
            let parsed = &completion.parsed;
            if parsed.tool_calls.is_empty() || !parsed.malformed.is_empty() {
                messages.push(Message::assistant(completion.text.clone()));
                break;
            }
            messages.push(Message::assistant_tool_calls(
                (!parsed.content.is_empty()).then(|| parsed.content.clone()),
                parsed.tool_calls.clone(),
            ));
            match episode.run_step(&parsed.tool_calls) {
                Ok(Some(results)) => messages.extend(results),
                // bfcl-eval's loop ends the turn when a step does not decode.
                Ok(None) => break,
                Err(reason) => return Ok(MultiTurnOutcome::Unsupported(reason)),
            }
            if episode.steps_this_turn() > MAX_STEPS {
                // Force-quit: this turn is kept, the later ones are never run.
                episode.stop();
                return Ok(MultiTurnOutcome::Steps(episode.into_steps()));
            }
        }
        // Unscored: ending a turn only moves on.
        if let Err(reason) = episode.end_turn() {
            return Ok(MultiTurnOutcome::Unsupported(reason));
        }
    }
    Ok(MultiTurnOutcome::Steps(episode.into_steps()))
}
