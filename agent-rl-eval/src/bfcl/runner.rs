//! Running a [`Policy`] on BFCL: render each question with its tools, generate, decode, check,
//! aggregate.

use agent_rl_core::{ChatRequest, Completion, Policy, SamplingConfig, ToolSpec};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::category::{Category, Language, Scoring};
use super::checker::{CheckOptions, model_function_name};
use super::data::{BfclDataset, BfclEntry, BfclMessage, BfclVersion};
use super::decode::{decode_text, tool_calls_to_value};
use super::multi_turn::{MultiTurnDocs, MultiTurnOutcome, infer_multi_turn};
use super::report::BfclReport;
use super::score::{ResultLine, Verdict, score_decoded, score_output};
use crate::batch::generate_each;
use crate::error::{EvalError, Result};
use crate::failure::{ItemFailure, OverlongPrompt};

/// Options of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BfclRunConfig {
    /// Sampling settings (BFCL's own runs use temperature 0.001; default greedy).
    pub sampling: SamplingConfig,
    /// Entries per category at most (in file order); `None` = all. Default `None`.
    pub limit: Option<usize>,
    /// Requests sent to the policy at once, `>= 1`. Default 8.
    pub batch_size: usize,
    /// Categories to run; empty = every loaded one. Default empty.
    pub categories: Vec<Category>,
    /// Checker options; `underscore_to_dot` also renames the tools offered to the model.
    pub check: CheckOptions,
    /// What to do with a single-turn prompt that does not fit the model's context with
    /// `sampling.max_new_tokens`: fail the entry (default) or generate fewer tokens.
    pub overlong: OverlongPrompt,
}

impl Default for BfclRunConfig {
    fn default() -> Self {
        Self {
            sampling: SamplingConfig {
                temperature: 0.0,
                ..SamplingConfig::default()
            },
            limit: None,
            batch_size: 8,
            categories: Vec::new(),
            check: CheckOptions::default(),
            overlong: OverlongPrompt::Skip,
        }
    }
}

impl BfclRunConfig {
    /// Checks the field ranges.
    ///
    /// # Errors
    /// [`EvalError::InvalidConfig`] when `batch_size` is 0 or `limit` is `Some(0)`.
    pub fn validate(&self) -> Result<()> {
        if self.batch_size == 0 {
            return Err(EvalError::InvalidConfig {
                field: "batch_size".into(),
                reason: "must be at least 1".into(),
            });
        }
        if self.limit == Some(0) {
            return Err(EvalError::InvalidConfig {
                field: "limit".into(),
                reason: "must be at least 1 (or unset for all entries)".into(),
            });
        }
        Ok(())
    }
}

/// The outcome of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BfclRun {
    /// What the model produced, one line per entry (the result-file format).
    pub results: Vec<ResultLine>,
    /// One verdict per entry.
    pub verdicts: Vec<Verdict>,
    /// The aggregate report.
    pub report: BfclReport,
}

/// Runs a policy over a dataset. Multi-turn entries run through [`infer_multi_turn`] when the
/// runner has the classes' function docs ([`BfclRunner::with_multi_turn_docs`]); without them
/// they are reported as not supported.
pub struct BfclRunner<'a> {
    dataset: &'a BfclDataset,
    version: BfclVersion,
    config: BfclRunConfig,
    progress: Option<Box<dyn FnMut(usize, usize) + 'a>>,
    result_sink: Option<ResultSink<'a>>,
    multi_turn_docs: Option<&'a MultiTurnDocs>,
}

/// Receives each result line as soon as its entry is done (see [`BfclRunner::with_result_sink`]).
type ResultSink<'a> = Box<dyn FnMut(&ResultLine) -> Result<()> + 'a>;

impl<'a> BfclRunner<'a> {
    /// A runner over `dataset` (whose files follow `version`'s naming) with `config`.
    pub fn new(dataset: &'a BfclDataset, version: BfclVersion, config: BfclRunConfig) -> Self {
        Self {
            dataset,
            version,
            config,
            progress: None,
            result_sink: None,
            multi_turn_docs: None,
        }
    }

    /// Runs multi-turn entries with these function docs (see [`MultiTurnDocs::load`]).
    #[must_use]
    pub fn with_multi_turn_docs(mut self, docs: &'a MultiTurnDocs) -> Self {
        self.multi_turn_docs = Some(docs);
        self
    }

    /// Calls `hook(done, total)` after each batch (e.g. to advance a progress bar).
    #[must_use]
    pub fn with_progress(mut self, hook: impl FnMut(usize, usize) + 'a) -> Self {
        self.progress = Some(Box::new(hook));
        self
    }

    /// Hands each result line to `sink` as soon as its entry is done, so that a caller writing
    /// them out keeps every finished entry when a later one fails (e.g. the endpoint goes away).
    #[must_use]
    pub fn with_result_sink(mut self, sink: impl FnMut(&ResultLine) -> Result<()> + 'a) -> Self {
        self.result_sink = Some(Box::new(sink));
        self
    }

    /// Pushes `line` to `results` after handing it to the sink.
    fn record(&mut self, results: &mut Vec<ResultLine>, line: ResultLine) -> Result<()> {
        if let Some(sink) = self.result_sink.as_mut() {
            sink(&line)?;
        }
        results.push(line);
        Ok(())
    }

    /// The entries a run covers: the chosen categories, at most `limit` each.
    pub fn selected_entries(&self) -> Vec<&'a BfclEntry> {
        let dataset: &'a BfclDataset = self.dataset;
        dataset
            .categories
            .iter()
            .filter(|(category, _)| {
                self.config.categories.is_empty() || self.config.categories.contains(category)
            })
            .flat_map(|(_, entries)| entries.iter().take(self.config.limit.unwrap_or(usize::MAX)))
            .collect()
    }

    /// Generates, decodes and checks every selected entry. An entry whose generation fails (a
    /// prompt too long for the model, an endpoint error) is judged wrong, with the reason in its
    /// verdict's `error` and in the report's `failures`; the run goes on.
    ///
    /// # Errors
    /// An invalid config, or the result sink's error.
    pub fn run(&mut self, policy: &mut dyn Policy) -> Result<BfclRun> {
        self.config.validate()?;
        let entries = self.selected_entries();
        let (multi_turn, single_turn): (Vec<&BfclEntry>, Vec<&BfclEntry>) = entries
            .into_iter()
            .partition(|entry| entry.category.scoring() == Scoring::MultiTurn);
        let total = single_turn.len() + multi_turn.len();
        let mut results = Vec::with_capacity(total);
        let mut verdicts = Vec::with_capacity(total);
        let mut failures = Vec::new();
        for batch in single_turn.chunks(self.config.batch_size) {
            let requests: Vec<ChatRequest> = batch
                .iter()
                .map(|entry| chat_request(entry, self.config.check))
                .collect();
            let completions = generate_each(
                policy,
                &requests,
                &self.config.sampling,
                self.config.overlong,
                "bfcl",
            );
            for (entry, completion) in batch.iter().zip(completions) {
                let completion = match completion {
                    Ok(completion) => completion,
                    Err(error) => {
                        let failure = ItemFailure {
                            id: entry.id.clone(),
                            reason: error.to_string(),
                        };
                        verdicts.push(failed_verdict(entry, &failure));
                        failures.push(failure);
                        continue;
                    }
                };
                verdicts.push(score_decoded(
                    entry,
                    decode_completion(entry, &completion),
                    self.config.check,
                ));
                let line = ResultLine {
                    id: entry.id.clone(),
                    result: Value::String(completion.text),
                };
                self.record(&mut results, line)?;
            }
            if let Some(hook) = self.progress.as_mut() {
                hook(verdicts.len(), total);
            }
        }
        for entry in multi_turn {
            let Some(docs) = self.multi_turn_docs else {
                verdicts.push(score_decoded(
                    entry,
                    Err("multi-turn inference needs the function docs \
                         (BfclRunner::with_multi_turn_docs)"
                        .into()),
                    self.config.check,
                ));
                if let Some(hook) = self.progress.as_mut() {
                    hook(verdicts.len(), total);
                }
                continue;
            };
            match infer_multi_turn(
                entry,
                docs,
                policy,
                &self.config.sampling,
                self.config.check,
            ) {
                Ok(MultiTurnOutcome::Steps(steps)) => {
                    let result = json!(steps);
                    verdicts.push(score_output(entry, &result, self.config.check));
                    let line = ResultLine {
                        id: entry.id.clone(),
                        result,
                    };
                    self.record(&mut results, line)?;
                }
                Ok(MultiTurnOutcome::Unsupported(reason)) => {
                    let mut verdict = score_decoded(entry, Err(reason.clone()), self.config.check);
                    verdict.error = Some(reason);
                    verdicts.push(verdict);
                }
                Err(error) => {
                    let failure = ItemFailure {
                        id: entry.id.clone(),
                        reason: error.to_string(),
                    };
                    verdicts.push(failed_verdict(entry, &failure));
                    failures.push(failure);
                }
            }
            if let Some(hook) = self.progress.as_mut() {
                hook(verdicts.len(), total);
            }
        }
        let mut report =
            BfclReport::with_dataset_counts(&verdicts, self.version, &self.dataset.counts());
        report.failures = failures;
        Ok(BfclRun {
            results,
            verdicts,
            report,
        })
    }
}

/// The verdict on an entry whose generation failed: wrong, with the reason.
fn failed_verdict(entry: &BfclEntry, failure: &ItemFailure) -> Verdict {
    Verdict {
        id: entry.id.clone(),
        category: entry.category,
        valid: false,
        error_type: Some(INFERENCE_ERROR.into()),
        error: Some(failure.reason.clone()),
        well_formed: false,
        argument_score: None,
        supported: true,
    }
}

/// The `error_type` of an entry whose generation failed (counted wrong, as BFCL counts an
/// inference error).
pub const INFERENCE_ERROR: &str = "inference_error";

/// Decodes a completion: its tool calls when it made any, else its text in the prompting format.
pub fn decode_completion(
    entry: &BfclEntry,
    completion: &Completion,
) -> std::result::Result<Value, String> {
    let parsed = &completion.parsed;
    if let Some(malformed) = parsed.malformed.first() {
        return Err(format!("malformed tool call: {malformed:?}"));
    }
    if !parsed.tool_calls.is_empty() {
        return Ok(tool_calls_to_value(&parsed.tool_calls));
    }
    decode_text(&completion.text, entry.category.language())
}

/// The chat request of an entry: its messages, and its function docs as tools (BFCL types
/// mapped to JSON schema, the language hint appended to each description; Java/JavaScript
/// parameters become strings whose description names the original type, as BFCL does).
pub fn chat_request(entry: &BfclEntry, options: CheckOptions) -> ChatRequest {
    let messages = entry
        .turns
        .first()
        .into_iter()
        .flatten()
        .map(BfclMessage::to_message)
        .collect();
    let language = entry.category.language();
    let tools = entry
        .functions
        .iter()
        .map(|doc| tool_spec(doc, language, options))
        .collect();
    ChatRequest { messages, tools }
}

fn language_hint(language: Language) -> &'static str {
    match language {
        Language::Python => " Note that the provided function is in Python 3 syntax.",
        Language::Java => " Note that the provided function is in Java 8 SDK syntax.",
        Language::JavaScript => " Note that the provided function is in JavaScript syntax.",
    }
}

/// A BFCL function doc as a tool for the chat template (see [`chat_request`]).
pub(crate) fn tool_spec(doc: &Value, language: Language, options: CheckOptions) -> ToolSpec {
    let name = model_function_name(
        doc.get("name").and_then(Value::as_str).unwrap_or(""),
        options,
    );
    let description = format!(
        "{}{}",
        doc.get("description").and_then(Value::as_str).unwrap_or(""),
        language_hint(language)
    );
    let mut parameters = doc
        .get("parameters")
        .cloned()
        .unwrap_or_else(|| json!({"type": "dict", "properties": {}}));
    if language != Language::Python
        && let Some(properties) = parameters
            .get_mut("properties")
            .and_then(Value::as_object_mut)
    {
        let language_name = if language == Language::Java {
            "Java"
        } else {
            "JavaScript"
        };
        for schema in properties.values_mut() {
            let declared = schema
                .get("type")
                .and_then(Value::as_str)
                .unwrap_or("any")
                .to_owned();
            let description = schema
                .get("description")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned();
            let mut replaced = Map::new();
            replaced.insert("type".into(), json!("string"));
            replaced.insert(
                "description".into(),
                json!(format!("{description} This is {language_name} {declared} type parameter in string representation.")),
            );
            *schema = Value::Object(replaced);
        }
    }
    ToolSpec::new(name, description, to_json_schema(&parameters))
}

/// BFCL's type names mapped to JSON-schema ones, recursively.
fn to_json_schema(schema: &Value) -> Value {
    match schema {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(key, value)| {
                    let value = match (key.as_str(), value) {
                        ("type", Value::String(name)) => json!(match name.as_str() {
                            "dict" | "object" | "HashMap" | "Hashtable" => "object",
                            "float" | "double" | "number" => "number",
                            "integer" | "long" | "short" | "byte" | "Bigint" => "integer",
                            "tuple" | "array" | "list" | "ArrayList" | "Array" | "Queue"
                            | "Stack" => "array",
                            "boolean" | "bool" | "Boolean" => "boolean",
                            _ => "string",
                        }),
                        _ => to_json_schema(value),
                    };
                    (key.clone(), value)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(to_json_schema).collect()),
        other => other.clone(),
    }
}
