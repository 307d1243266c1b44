//! BFCL (Berkeley Function Calling Leaderboard): loader, output decoding, the AST checker
//! faithful to the official one, scoring of result files, aggregation and a [`Policy`] runner.
//!
//! | step | items |
//! |---|---|
//! | load the upstream v3/v4 layout | [`BfclDataset`], [`BfclEntry`], [`Category`] |
//! | decode model output | [`decode_text`], [`decode_python_calls`], [`tool_calls_to_value`] |
//! | check one entry | [`check_entry`], [`check_call`], [`Failure`] (official error types) |
//! | score a results file | [`score_results_file`], [`score_output`], [`ResultLine`], [`Verdict`] |
//! | aggregate | [`BfclReport`] (BFCL's own formulas, plus format/argument/end-to-end rates) |
//! | run a model | [`BfclRunner`] |
//! | train on it | [`training_tasks`], [`split_train_held_out`], [`reference_calls`] |
//!
//! Scoring one output, as raw model text or as decoded calls:
//!
//! ```
//! use agent_rl_eval::bfcl::{BfclEntry, Category, CheckOptions, score_output};
//! use serde_json::json;
//! let entry = BfclEntry {
//!     id: "simple_python_0".into(),
//!     category: Category::SimplePython,
//!     turns: Vec::new(),
//!     functions: vec![json!({"name": "area", "parameters": {"type": "dict",
//!         "properties": {"base": {"type": "float"}, "unit": {"type": "string"}},
//!         "required": ["base"]}})],
//!     ground_truth: vec![json!({"area": {"base": [10.0], "unit": ["cm", ""]}})],
//!     multi_turn: None,
//! };
//! let verdict = score_output(&entry, &json!("[area(base=10, unit='CM')]"), CheckOptions::default());
//! assert!(verdict.valid); // int accepted for float, strings compared case-insensitively
//! let verdict = score_output(&entry, &json!([{"area": {"unit": "cm"}}]), CheckOptions::default());
//! assert_eq!(verdict.error_type.as_deref(), Some("simple_function_checker:missing_required"));
//! ```
//!
//! [`Policy`]: agent_rl_core::Policy

mod argument;
mod category;
mod checker;
mod convert;
mod convert_js;
mod data;
mod decode;
mod evaluator;
pub mod multi_turn;
mod params;
mod pylit;
mod pyparse;
mod report;
mod resolve;
mod runner;
mod score;
mod source_syntax;
mod source_text;
mod training;
mod value;

pub use category::{Category, Language, Scoring};
pub use checker::{
    CheckOptions, check_call, check_calls, check_entry, is_supported, model_function_name,
};
pub use convert::java_convert;
pub use convert_js::js_convert;
pub use data::{BfclDataset, BfclEntry, BfclMessage, BfclVersion};
pub use decode::{DecodedCall, as_calls, decode_text, is_empty_output, tool_calls_to_value};
pub use evaluator::BfclEvaluator;
pub use params::Failure;
pub use pyparse::{MAX_EXPRESSION_CHARS, MAX_NESTING_DEPTH, PyExpr, parse_expression};
pub use report::{BfclReport, CategoryReport};
pub use resolve::decode_python_calls;
pub use runner::{
    BfclRun, BfclRunConfig, BfclRunner, INFERENCE_ERROR, chat_request, decode_completion,
};
pub use score::{
    ResultLine, Verdict, read_results, score_decoded, score_output, score_results_file,
};
pub use training::{
    expected_calls, is_trainable, reference_calls, split_train_held_out, training_target,
    training_task, training_tasks,
};
pub use value::{PyType, py_eq, standardize};
