//! Matching one tool call against one expected call.

use agent_rl_core::ToolCall;
use serde::Serialize;

use super::expected::ExpectedCall;
use super::mismatch::{Mismatch, MismatchKind, ValueKind};
use super::options::MatchOptions;
use super::value::match_fields;

/// The result of matching one call against one expected call.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CallMatch {
    /// True when the function names are equal.
    pub name_matches: bool,
    /// Argument checks made: every expected argument, plus every unexpected argument given.
    pub arguments_checked: usize,
    /// Expected arguments that were right (given acceptably, or omitted where allowed).
    pub arguments_correct: usize,
    /// Every difference found (empty for an exact match).
    pub mismatches: Vec<Mismatch>,
}

impl CallMatch {
    /// True when the call is fully acceptable.
    pub fn is_exact(&self) -> bool {
        self.name_matches && self.mismatches.is_empty()
    }

    /// Fraction of argument checks passed, in `[0, 1]`; `0` when the name is wrong, `1` for a
    /// call with no arguments to check.
    pub fn argument_fraction(&self) -> f64 {
        if !self.name_matches {
            0.0
        } else if self.arguments_checked == 0 {
            1.0
        } else {
            self.arguments_correct as f64 / self.arguments_checked as f64
        }
    }

    /// Credit in `[0, 1]`: `1` for an exact match; otherwise the argument fraction with
    /// `partial_credit`, else `0`.
    pub fn credit(&self, partial_credit: bool) -> f64 {
        if self.is_exact() {
            1.0
        } else if partial_credit {
            self.argument_fraction()
        } else {
            0.0
        }
    }
}

/// Matches `actual` against `expected`: the function name, then every argument against its
/// acceptable values (see [`ExpectedCall`] for the conventions).
///
/// All mismatches are reported, not only the first. A call to the wrong function reports
/// [`MismatchKind::WrongFunction`] only and gets no argument credit.
///
/// ```
/// use agent_rl_core::ToolCall;
/// use agent_rl_rewards::matching::{match_call, ExpectedCall, MatchOptions, MismatchKind};
/// use serde_json::json;
/// let expected = ExpectedCall::new("area").with_argument("base", [json!(10.0)])
///     .with_argument("height", [json!(5)]);
/// let result = match_call(&ToolCall::new("area", json!({"base": 10, "height": 6})), &expected,
///     &MatchOptions::bfcl());
/// assert!(!result.is_exact());
/// assert_eq!(result.mismatches[0].path, "height");
/// assert!(matches!(result.mismatches[0].kind, MismatchKind::WrongValue { .. }));
/// assert_eq!(result.credit(true), 0.5);
/// ```
pub fn match_call(actual: &ToolCall, expected: &ExpectedCall, options: &MatchOptions) -> CallMatch {
    if actual.name != expected.name {
        return CallMatch {
            name_matches: false,
            arguments_checked: expected.arguments.len(),
            arguments_correct: 0,
            mismatches: vec![Mismatch::new(
                "",
                MismatchKind::WrongFunction {
                    expected: expected.name.clone(),
                    found: actual.name.clone(),
                },
            )],
        };
    }
    let Some(arguments) = actual.arguments_object() else {
        return CallMatch {
            name_matches: true,
            arguments_checked: expected.arguments.len().max(1),
            arguments_correct: 0,
            mismatches: vec![Mismatch::new(
                "",
                MismatchKind::ArgumentsNotObject {
                    found: ValueKind::of(&actual.arguments),
                },
            )],
        };
    };
    let outcome = match_fields(arguments, &expected.arguments, options, "");
    CallMatch {
        name_matches: true,
        arguments_checked: outcome.checked,
        arguments_correct: outcome.correct,
        mismatches: outcome.mismatches,
    }
}
