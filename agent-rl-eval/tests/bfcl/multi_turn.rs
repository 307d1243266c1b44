//! BFCL multi-turn against the official bfcl-eval (`scripts/bfcl_multi_turn_golden.py`):
//! single calls on the ported backends (`multi_turn_exec.jsonl`), and the official checker's
//! verdicts on the ground truth and edits of it (`multi_turn_verdicts.jsonl`, replayed on the
//! data under `AGENT_RL_DATA`).
//!
//! `MathAPI.logarithm` (mpmath at a chosen precision) is checked on 400 more random calls
//! (`logarithm.jsonl`, `scripts/bfcl_logarithm_golden.py`).
//!
//! `MathAPI.square_root` (`Decimal` at a chosen precision) is checked on 400 random calls
//! (`square_root.jsonl`, `scripts/bfcl_square_root_golden.py`).
//!
//! Pinned, known gaps (reported as unsupported, never scored): `MathAPI.logarithm`'s error paths
//! (non-positive or non-numeric arguments, base 1), texts that print a Python `set`, and long-context mode while
//! `AGENT_RL_BFCL_LONG_CONTEXT` does not name bfcl-eval's `long_context.py` (with it, those
//! entries must run in full; `long_context_mode_with_the_filler_data` fails without it). A call that is not valid Python gets `invalid syntax (<string>, line 1)`, not CPython's
//! exact wording (which only the model's own results can contain, never the ground truth's).

use std::collections::BTreeMap;

use agent_rl_eval::bfcl::multi_turn::{
    Instances, LONG_CONTEXT_ENV, LongContext, LongContextData, all_supported,
};
use agent_rl_eval::bfcl::{BfclDataset, BfclEntry, Category, Language, score_output};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

const EXEC: &str = include_str!("../fixtures/bfcl/multi_turn_exec.jsonl");
const VERDICTS: &str = include_str!("../fixtures/bfcl/multi_turn_verdicts.jsonl");
const STATEFUL: &str = include_str!("../fixtures/bfcl/multi_turn_stateful.jsonl");
const LOGARITHM: &str = include_str!("../fixtures/bfcl/logarithm.jsonl");
const SQUARE_ROOT: &str = include_str!("../fixtures/bfcl/square_root.jsonl");

/// The pinned gaps of ported classes, by the reason they are reported with.
pub(super) fn known_gap(reason: &str) -> bool {
    if reason.contains("needs bfcl-eval's filler data") {
        // Only a gap while the long-context data is not given.
        return std::env::var_os(LONG_CONTEXT_ENV).is_none();
    }
    reason.contains("logarithm")
        || reason.contains("long-context")
        || reason.contains("hash order")
        || reason.contains("set order")
}

#[test]
fn math_api_returns_what_python_returns() {
    let mut checked = 0;
    for line in EXEC.lines() {
        let vector: Value = serde_json::from_str(line).unwrap();
        let class = vector["class"].as_str().unwrap().to_owned();
        let call = vector["call"].as_str().unwrap().to_owned();
        let mut instances = Instances::new(&[class], &json!({}), &LongContext::Off).unwrap();
        match instances.execute(std::slice::from_ref(&call)) {
            Ok(results) => {
                let want = vector["result"].as_str().unwrap();
                if want.ends_with("(<string>, line 1)") {
                    // Pinned: CPython's SyntaxError wording is not reproduced, only its form.
                    assert_eq!(
                        results[0], "Error during execution: invalid syntax (<string>, line 1)",
                        "{call}"
                    );
                } else {
                    assert_eq!(results[0], want, "{call}");
                }
                checked += 1;
            }
            Err(reason) => panic!("{call}: unexpectedly unsupported: {reason}"),
        }
    }
    eprintln!("MathAPI: {checked} calls equal to Python");
    assert!(checked >= 100, "only {checked} vectors checked");
}

#[test]
fn logarithm_prints_what_mpmath_prints() {
    let mut instances =
        Instances::new(&["MathAPI".to_owned()], &json!({}), &LongContext::Off).unwrap();
    let mut checked = 0;
    for line in LOGARITHM.lines() {
        let vector: Value = serde_json::from_str(line).unwrap();
        let call = format!(
            "logarithm(value={}, base={}, precision={})",
            vector["value"], vector["base"], vector["precision"]
        );
        let results = instances.execute(std::slice::from_ref(&call)).unwrap();
        assert_eq!(results[0], vector["result"].as_str().unwrap(), "{call}");
        checked += 1;
    }
    assert_eq!(checked, 400);
}

/// `MathAPI.square_root` prints what `Decimal(number).sqrt()` prints at the asked precision,
/// and its refused precisions give the original's texts (`scripts/bfcl_square_root_golden.py`).
#[test]
fn square_root_prints_what_decimal_prints() {
    let mut instances =
        Instances::new(&["MathAPI".to_owned()], &json!({}), &LongContext::Off).unwrap();
    let mut checked = 0;
    for line in SQUARE_ROOT.lines() {
        let vector: Value = serde_json::from_str(line).unwrap();
        let call = vector["call"].as_str().unwrap().to_owned();
        let results = instances.execute(std::slice::from_ref(&call)).unwrap();
        assert_eq!(results[0], vector["result"].as_str().unwrap(), "{call}");
        checked += 1;
    }
    assert_eq!(checked, 400);
}

/// The model result (turns → steps → call strings) an edit of the ground truth gives; the same
/// edits as the goldens script's `apply_edit`.
fn apply_edit(truth: &[Vec<String>], edit: &[Value]) -> Vec<Vec<Vec<String>>> {
    let index = |i: usize| edit[i].as_u64().unwrap() as usize;
    let mut turns = truth.to_vec();
    let one_step = |turns: &[Vec<String>]| -> Vec<Vec<Vec<String>>> {
        turns
            .iter()
            .map(|turn| {
                if turn.is_empty() {
                    vec![]
                } else {
                    vec![turn.clone()]
                }
            })
            .collect()
    };
    match edit[0].as_str().unwrap() {
        "gt" => one_step(&turns),
        "empty" => vec![vec![]; turns.len()],
        "truncate" => one_step(&turns[..index(1)]),
        "split" => turns
            .iter()
            .map(|turn| turn.iter().map(|call| vec![call.clone()]).collect())
            .collect(),
        "clear" => {
            let mut steps = one_step(&turns);
            steps[index(1)].clear();
            steps
        }
        "drop" => {
            turns[index(1)].remove(index(2));
            one_step(&turns)
        }
        "dup" => {
            let call = turns[index(1)][index(2)].clone();
            turns[index(1)].insert(index(2), call);
            one_step(&turns)
        }
        "swap" => {
            turns[index(1)].swap(index(2), index(3));
            one_step(&turns)
        }
        "replace" => {
            turns[index(1)][index(2)] = edit[3].as_str().unwrap().to_owned();
            one_step(&turns)
        }
        "step" => {
            let mut steps = one_step(&turns);
            let extra = edit[2]
                .as_array()
                .unwrap()
                .iter()
                .map(|call| call.as_str().unwrap().to_owned())
                .collect();
            steps[index(1)].push(extra);
            steps
        }
        other => panic!("unknown edit {other}"),
    }
}

/// The four multi-turn categories, with bfcl-eval's long-context data when
/// `AGENT_RL_BFCL_LONG_CONTEXT` names it (else long-context entries stop where they need it).
/// The classes' function docs of the data's `multi_turn_func_doc/`.
pub(super) fn multi_turn_docs() -> agent_rl_eval::bfcl::multi_turn::MultiTurnDocs {
    let (folder, _) = BfclDataset::detect(&super::data_dir()).unwrap();
    agent_rl_eval::bfcl::multi_turn::MultiTurnDocs::load(&folder).unwrap()
}

pub(super) fn multi_turn_dataset() -> BfclDataset {
    let mut dataset = multi_turn_dataset_without_filler();
    if let Some(data) = LongContextData::from_env().unwrap() {
        dataset.set_long_context(std::sync::Arc::new(data));
    }
    dataset
}

fn multi_turn_dataset_without_filler() -> BfclDataset {
    BfclDataset::load_categories(
        &super::data_dir(),
        &[
            Category::MultiTurnBase,
            Category::MultiTurnMissFunc,
            Category::MultiTurnMissParam,
            Category::MultiTurnLongContext,
        ],
    )
    .unwrap()
}

pub(super) fn truth_of(entry: &BfclEntry) -> Vec<Vec<String>> {
    entry
        .ground_truth
        .iter()
        .map(|turn| {
            turn.as_array()
                .unwrap()
                .iter()
                .map(|call| call.as_str().unwrap().to_owned())
                .collect()
        })
        .collect()
}

/// Our checker decides every vector of every entry whose classes are ported as the official
/// one does; entries of unported classes are reported unsupported (and counted), except where
/// the verdict is decided before any check needs a backend (`force_terminated`, no response in
/// the first turn with a ground truth), and those must agree too.
#[test]
#[ignore = "needs AGENT_RL_DATA (the BFCL v4 multi-turn data); run with --include-ignored"]
fn checker_agrees_with_the_official_one_on_every_vector() {
    let dataset = multi_turn_dataset();
    let index = dataset.index();
    let mut agreed = 0;
    let mut unsupported: BTreeMap<String, usize> = BTreeMap::new();
    let mut supported_entries = 0;
    for line in VERDICTS.lines() {
        let record: Value = serde_json::from_str(line).unwrap();
        let id = record["id"].as_str().unwrap();
        let entry = index[id];
        let setup = entry.multi_turn.as_ref().expect("multi-turn fields");
        let ported = all_supported(&setup.involved_classes);
        supported_entries += usize::from(ported);
        let truth = truth_of(entry);
        for vector in record["vectors"].as_array().unwrap() {
            let edit = vector[0].as_array().unwrap();
            let steps = apply_edit(&truth, edit);
            let verdict = score_output(entry, &json!(steps), Default::default());
            let official_type = vector[2].as_str().map(|t| format!("multi_turn:{t}"));
            if !verdict.supported {
                let reason = verdict.error.clone().unwrap_or_default();
                assert!(
                    !ported || known_gap(&reason),
                    "{id} {edit:?}: unsupported although its classes are ported: {reason}"
                );
                *unsupported.entry(reason).or_insert(0) += 1;
                continue;
            }
            assert_eq!(
                (verdict.valid, verdict.error_type.clone()),
                (vector[1].as_bool().unwrap(), official_type),
                "{id} {edit:?}: {:?}",
                verdict.error
            );
            agreed += 1;
        }
    }
    eprintln!(
        "multi-turn checker: {agreed} vectors agree with bfcl-eval; {supported_entries} of 800 \
         entries have only ported classes; not scored: {unsupported:?}"
    );
    assert!(agreed >= 1000, "only {agreed} vectors compared");
}

/// The verdicts on a results file holding every entry's ground truth (or, `empty`, no step in
/// any turn).
fn replay(dataset: &BfclDataset, empty: bool) -> Vec<agent_rl_eval::bfcl::Verdict> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("results.jsonl");
    let lines: Vec<String> = dataset
        .entries()
        .map(|entry| {
            let truth = truth_of(entry);
            let steps = if empty {
                vec![Vec::<Vec<String>>::new(); truth.len()]
            } else {
                apply_edit(&truth, &[json!("gt")])
            };
            json!({"id": entry.id, "result": steps}).to_string()
        })
        .collect();
    std::fs::write(&path, lines.join("\n")).unwrap();
    agent_rl_eval::bfcl::score_results_file(dataset, &path, Default::default()).unwrap()
}

/// The acceptance replay through a results file: every ground truth the official checker
/// accepts (all 800) is valid here unless unsupported; an empty result is valid for none.
#[test]
#[ignore = "needs AGENT_RL_DATA (the BFCL v4 multi-turn data); run with --include-ignored"]
fn replaying_the_ground_truth_through_a_results_file() {
    let dataset = multi_turn_dataset();
    for (name, empty) in [("truth.jsonl", false), ("empty.jsonl", true)] {
        let verdicts = replay(&dataset, empty);
        let scored: Vec<_> = verdicts.iter().filter(|v| v.supported).collect();
        let valid = scored.iter().filter(|v| v.valid).count();
        eprintln!(
            "{name}: {} scored, {valid} valid, {} unsupported",
            scored.len(),
            verdicts.len() - scored.len()
        );
        assert!(!scored.is_empty());
        if empty {
            assert_eq!(valid, 0);
        } else {
            assert_eq!(
                valid,
                scored.len(),
                "{:?}",
                scored.iter().find(|v| !v.valid)
            );
        }
        for verdict in verdicts.iter().filter(|v| !v.supported) {
            let reason = verdict.error.as_deref().unwrap_or("");
            assert!(
                reason.contains("not implemented yet") || known_gap(reason),
                "{reason}"
            );
        }
    }
}

/// A call of a stateful golden sequence: `[turn, index]` of the ground truth, or the call itself.
fn golden_call(truth: &[Vec<String>], spec: &Value) -> String {
    match spec {
        Value::Array(at) => {
            truth[at[0].as_u64().unwrap() as usize][at[1].as_u64().unwrap() as usize].clone()
        }
        other => other.as_str().unwrap().to_owned(),
    }
}

/// The first 16 hex digits of the SHA-256 of a text, as the goldens script records results.
fn digest(text: &str) -> String {
    Sha256::digest(text.as_bytes())[..8]
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

/// Each stateful backend, loaded from an entry's `initial_config`, returns what the Python class
/// returns for every call of the recorded sequence (the class's ground-truth calls, altered
/// copies, probes) and ends in the same public state. A sequence stops at its first call
/// reported unsupported, which must be a pinned gap.
#[test]
#[ignore = "needs AGENT_RL_DATA (the BFCL v4 multi-turn data); run with --include-ignored"]
fn stateful_backends_return_what_python_returns() {
    let dataset = multi_turn_dataset();
    let index = dataset.index();
    let (mut calls_equal, mut states_equal) = (0, 0);
    let mut gaps: BTreeMap<String, usize> = BTreeMap::new();
    for line in STATEFUL.lines() {
        let record: Value = serde_json::from_str(line).unwrap();
        let id = record["id"].as_str().unwrap();
        let class = record["class"].as_str().unwrap().to_owned();
        let entry = index[id];
        let setup = entry.multi_turn.as_ref().expect("multi-turn fields");
        let truth = truth_of(entry);
        let long_context = LongContext::for_entry(id, setup.long_context.as_ref());
        let mut instances = match Instances::new(
            std::slice::from_ref(&class),
            &setup.initial_config,
            &long_context,
        ) {
            Ok(instances) => instances,
            Err(reason) => {
                assert!(known_gap(&reason), "{id} {class}: {reason}");
                *gaps.entry(reason).or_insert(0) += 1;
                continue;
            }
        };
        let specs = record["calls"].as_array().unwrap();
        let wanted = record["results"].as_array().unwrap();
        let mut complete = true;
        for (number, (spec, want)) in specs.iter().zip(wanted).enumerate() {
            let call = golden_call(&truth, spec);
            match instances.execute(std::slice::from_ref(&call)) {
                Ok(results) => {
                    assert_eq!(
                        digest(&results[0]),
                        want.as_str().unwrap(),
                        "{id} {class} call {number} `{call}`: ours is {:?}",
                        results[0]
                    );
                    calls_equal += 1;
                }
                Err(reason) => {
                    assert!(known_gap(&reason), "{id} {class} `{call}`: {reason}");
                    *gaps.entry(reason).or_insert(0) += 1;
                    complete = false;
                    break;
                }
            }
        }
        if complete {
            let state = record["state"].as_object().unwrap();
            let ours = instances.backends()[0].state();
            assert_eq!(ours.len(), state.len(), "{id} {class}: attribute count");
            for (name, value) in ours {
                assert_eq!(
                    Some(digest(&value.repr()).as_str()),
                    state[name].as_str(),
                    "{id} {class}: `{name}` differs; ours is {}",
                    value.repr()
                );
            }
            states_equal += 1;
        }
    }
    eprintln!(
        "stateful backends: {calls_equal} calls and {states_equal} final states equal to \
         bfcl-eval's; stopped at pinned gaps: {gaps:?}"
    );
    assert!(calls_equal >= 3000, "only {calls_equal} calls compared");
}

/// Replays an entry's ground truth as a policy: in each turn, the first step makes that turn's
/// ground-truth calls (as Hermes tool calls), the next answers in text.
pub(super) struct GroundTruthPolicy {
    pub(super) turns: Vec<Vec<serde_json::Map<String, Value>>>,
    pub(super) requests: usize,
}

impl GroundTruthPolicy {
    /// The policy of an entry's ground truth; `None` when a call cannot be a tool call (its
    /// ground truth has positional arguments, `sort('a.txt')`, or is spelled otherwise).
    pub(super) fn of(entry: &BfclEntry) -> Option<Self> {
        use agent_rl_eval::bfcl::decode_text;
        use agent_rl_eval::bfcl::multi_turn::call_string;
        let turns = truth_of(entry)
            .iter()
            .map(|calls| {
                calls
                    .iter()
                    .map(|call| {
                        let value = decode_text(&format!("[{call}]"), Language::Python).ok()?;
                        let decoded = value.as_array()?.first()?.as_object().cloned()?;
                        let (name, arguments) = decoded.iter().next()?;
                        let squeezed = |text: &str| text.replace([' ', '"'], "").replace('\'', "");
                        (squeezed(&call_string(name, arguments)) == squeezed(call))
                            .then_some(decoded)
                    })
                    .collect()
            })
            .collect::<Option<_>>()?;
        Some(Self { turns, requests: 0 })
    }

    /// The ground-truth calls of `turn` as Hermes tool calls (empty when there are none).
    pub(super) fn calls_text(&self, turn: usize) -> String {
        self.turns
            .get(turn)
            .into_iter()
            .flatten()
            .map(|call| {
                let (name, arguments) = call.iter().next().unwrap();
                format!(
                    "<tool_call>\n{}\n</tool_call>",
                    json!({"name": name, "arguments": arguments})
                )
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// A policy that never calls a tool.
    pub(super) fn silent() -> Self {
        Self {
            turns: Vec::new(),
            requests: 0,
        }
    }
}

impl agent_rl_core::Policy for GroundTruthPolicy {
    fn generate(
        &mut self,
        requests: &[agent_rl_core::ChatRequest],
        _: &agent_rl_core::SamplingConfig,
    ) -> Result<Vec<agent_rl_core::Completion>, agent_rl_core::CoreError> {
        use agent_rl_core::{HermesToolCallParser, Role, ToolCallParser};
        self.requests += requests.len();
        Ok(requests
            .iter()
            .map(|request| {
                let messages = &request.messages;
                let turn = messages.iter().filter(|m| m.role == Role::User).count() - 1;
                let last_user = messages.iter().rposition(|m| m.role == Role::User).unwrap();
                let stepped = messages[last_user..]
                    .iter()
                    .any(|m| !m.tool_calls.is_empty());
                let calls = self.calls_text(turn);
                let text = if stepped || calls.is_empty() {
                    "Done.".to_owned()
                } else {
                    calls
                };
                agent_rl_core::Completion {
                    token_ids: Vec::new(),
                    logprobs: Vec::new(),
                    parsed: HermesToolCallParser::default().parse(&text),
                    text,
                    finish_reason: agent_rl_core::FinishReason::Stop,
                }
            })
            .collect())
    }
}

/// Long-context mode with bfcl-eval's filler data (`AGENT_RL_BFCL_LONG_CONTEXT` names its
/// `long_context.py`): the ground truth of the long-context entries replays valid on more entries
/// than without the data, none stops for want of it, and the long-context backend calls of the
/// goldens (result digests) are all compared. Fails, rather than passing, when the variable is
/// not set.
#[test]
#[ignore = "needs AGENT_RL_DATA and AGENT_RL_BFCL_LONG_CONTEXT (bfcl-eval's long_context.py); \
            run with --include-ignored"]
fn long_context_mode_with_the_filler_data() {
    let data = LongContextData::from_env().unwrap().unwrap_or_else(|| {
        panic!(
            "set {LONG_CONTEXT_ENV} to bfcl-eval's long_context.py (pip install --no-deps \
             bfcl-eval==2026.3.23; see .ci/run)"
        )
    });
    let without = multi_turn_dataset_without_filler();
    let mut with = without.clone();
    with.set_long_context(std::sync::Arc::new(data));
    let count = |dataset: &BfclDataset| {
        let verdicts = replay(dataset, false);
        let long: Vec<_> = verdicts
            .into_iter()
            .filter(|v| v.category == Category::MultiTurnLongContext)
            .collect();
        let scored = long.iter().filter(|v| v.supported).count();
        let valid = long.iter().filter(|v| v.supported && v.valid).count();
        let reasons: Vec<String> = long
            .iter()
            .filter(|v| !v.supported)
            .filter_map(|v| v.error.clone())
            .collect();
        (long.len(), scored, valid, reasons)
    };
    let (total, scored_without, _, _) = count(&without);
    let (_, scored_with, valid_with, reasons) = count(&with);
    eprintln!(
        "long-context ground truth replayed: {scored_with} of {total} scored with the filler \
         data ({valid_with} valid), {scored_without} without; still unsupported: {reasons:?}"
    );
    assert_eq!(valid_with, scored_with);
    assert!(
        scored_with > scored_without + 100,
        "{scored_with} vs {scored_without}"
    );
    assert!(
        reasons
            .iter()
            .all(|r| !r.contains("needs bfcl-eval's filler data")),
        "{reasons:?}"
    );
    // Every golden call sequence of a long-context entry runs to its end with the data.
    let index = with.index();
    let mut calls = 0;
    for line in STATEFUL.lines() {
        let record: Value = serde_json::from_str(line).unwrap();
        let id = record["id"].as_str().unwrap();
        if !id.contains("long_context") {
            continue;
        }
        let class = record["class"].as_str().unwrap().to_owned();
        let setup = index[id].multi_turn.as_ref().unwrap();
        let mode = LongContext::for_entry(id, setup.long_context.as_ref());
        let mut instances =
            Instances::new(std::slice::from_ref(&class), &setup.initial_config, &mode)
                .unwrap_or_else(|reason| panic!("{id} {class}: {reason}"));
        let truth = truth_of(index[id]);
        for (spec, want) in record["calls"]
            .as_array()
            .unwrap()
            .iter()
            .zip(record["results"].as_array().unwrap())
        {
            let call = golden_call(&truth, spec);
            match instances.execute(std::slice::from_ref(&call)) {
                Ok(results) => {
                    assert_eq!(digest(&results[0]), want.as_str().unwrap(), "{id} `{call}`");
                    calls += 1;
                }
                Err(reason) => {
                    assert!(
                        !reason.contains("needs bfcl-eval's filler data"),
                        "{reason}"
                    );
                    assert!(known_gap(&reason), "{id} `{call}`: {reason}");
                    break;
                }
            }
        }
    }
    eprintln!("long-context golden calls equal to bfcl-eval's: {calls}");
    assert!(calls >= 500, "only {calls} long-context calls compared");
}

/// Multi-turn inference with a policy that makes the ground-truth calls: every entry whose
/// classes and calls are ported is judged valid (the loop feeds results back, ends turns on a
/// text answer and adds held-back functions at their turn); a policy that only answers in text
/// is valid for none.
#[test]
#[ignore = "needs AGENT_RL_DATA (the BFCL v4 multi-turn data); run with --include-ignored"]
fn multi_turn_inference_with_a_ground_truth_policy() {
    use agent_rl_eval::bfcl::multi_turn::{MultiTurnOutcome, infer_multi_turn};
    let dataset = multi_turn_dataset();
    let docs = multi_turn_docs();
    let sampling = agent_rl_core::SamplingConfig::default();
    let (mut valid, mut unsupported, mut undecodable) = (0, 0, 0);
    for entry in dataset.entries() {
        let truth = truth_of(entry);
        let Some(mut policy) = GroundTruthPolicy::of(entry) else {
            undecodable += 1;
            continue;
        };
        let outcome =
            infer_multi_turn(entry, &docs, &mut policy, &sampling, Default::default()).unwrap();
        match outcome {
            MultiTurnOutcome::Steps(steps) => {
                let verdict = score_output(entry, &json!(steps), Default::default());
                if !verdict.supported {
                    unsupported += 1;
                    continue;
                }
                assert!(
                    verdict.valid,
                    "{}: {:?}\nsteps {steps:?}\ntruth {truth:?}",
                    entry.id, verdict.error
                );
                valid += 1;
            }
            MultiTurnOutcome::Unsupported(reason) => {
                assert!(known_gap(&reason), "{}: {reason}", entry.id);
                unsupported += 1;
            }
        }
    }
    eprintln!(
        "multi-turn inference with the ground truth as policy: {valid} valid, {unsupported} \
         unsupported, {undecodable} left out (ground-truth calls with positional arguments)"
    );
    assert!(valid >= 500, "only {valid} entries valid");
}

/// `BfclRunner` with the function docs sends multi-turn entries through the inference loop: a
/// policy that never calls a tool gets one empty step list per turn in its results and is valid
/// for no entry; without the docs the entries are reported unsupported.
#[test]
#[ignore = "needs AGENT_RL_DATA (the BFCL v4 multi-turn data); run with --include-ignored"]
fn runner_runs_multi_turn_entries_with_the_docs() {
    use agent_rl_eval::bfcl::{BfclRunConfig, BfclRunner, BfclVersion};
    let dataset = multi_turn_dataset();
    let docs = multi_turn_docs();
    let config = BfclRunConfig {
        limit: Some(3),
        categories: vec![Category::MultiTurnBase, Category::MultiTurnMissFunc],
        ..BfclRunConfig::default()
    };
    let mut silent = GroundTruthPolicy::silent();
    let run = BfclRunner::new(&dataset, BfclVersion::V4, config.clone())
        .with_multi_turn_docs(&docs)
        .run(&mut silent)
        .unwrap();
    assert_eq!(run.verdicts.len(), 6);
    assert_eq!(run.results.len(), 6);
    let index = dataset.index();
    for line in &run.results {
        let turns = index[line.id.as_str()].turns.len();
        assert_eq!(line.result, json!(vec![Vec::<Vec<String>>::new(); turns]));
    }
    assert_eq!(
        silent.requests,
        run.results
            .iter()
            .map(|l| index[l.id.as_str()].turns.len())
            .sum::<usize>()
    );
    assert!(
        run.verdicts.iter().all(|v| v.supported && !v.valid),
        "{:?}",
        run.verdicts
    );
    let without = BfclRunner::new(&dataset, BfclVersion::V4, config)
        .run(&mut silent)
        .unwrap();
    assert!(without.verdicts.iter().all(|v| !v.supported));
}
