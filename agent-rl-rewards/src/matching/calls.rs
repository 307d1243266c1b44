//! Matching a set of calls against a set of expected calls, order-insensitively.

use agent_rl_core::ToolCall;
use serde::Serialize;

use super::assignment::max_weight_assignment;
use super::call::{CallMatch, match_call};
use super::expected::ExpectedCall;
use super::options::MatchOptions;

/// One actual call paired with one expected call.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CallPair {
    /// Index into the actual calls.
    pub actual: usize,
    /// Index into the expected calls.
    pub expected: usize,
    /// How well they match.
    pub result: CallMatch,
}

/// The optimal pairing of actual calls with expected calls, and its score.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CallsMatch {
    /// Paired calls, in order of the actual calls. Pairs whose function names differ are left
    /// out (both sides are then unmatched).
    pub pairs: Vec<CallPair>,
    /// Actual calls paired with nothing (extra or wrong-function calls), ascending.
    pub unmatched_actual: Vec<usize>,
    /// Expected calls paired with nothing (missing calls), ascending.
    pub unmatched_expected: Vec<usize>,
    /// Number of actual calls.
    pub num_actual: usize,
    /// Number of expected calls.
    pub num_expected: usize,
    /// Whether credit is partial (copied from the options used).
    pub partial_credit: bool,
}

impl CallsMatch {
    /// Sum of the pairs' credit.
    pub fn credit(&self) -> f64 {
        self.pairs
            .iter()
            .map(|pair| pair.result.credit(self.partial_credit))
            .sum()
    }

    /// Score in `[0, 1]`: credit divided by `max(expected, actual)` calls, so that missing calls
    /// and extra calls both cost; `1` when nothing was expected and nothing was called.
    pub fn score(&self) -> f64 {
        let denominator = self.num_actual.max(self.num_expected);
        if denominator == 0 {
            1.0
        } else {
            self.credit() / denominator as f64
        }
    }

    /// True when every expected call is matched exactly and there is no other call (BFCL's
    /// pass criterion).
    pub fn is_exact(&self) -> bool {
        self.num_actual == self.num_expected
            && self.pairs.len() == self.num_expected
            && self.pairs.iter().all(|pair| pair.result.is_exact())
    }
}

/// Pairs `actual` calls with `expected` calls so that the total credit is maximal (not greedily,
/// and regardless of order), then reports every pair's mismatches.
///
/// The assignment maximises the total credit; among assignments of equal credit it prefers
/// pairing calls to the same function with more right arguments, so that mismatch reports pair
/// each wrong call with the expected call it was closest to.
///
/// ```
/// use agent_rl_core::ToolCall;
/// use agent_rl_rewards::matching::{match_calls, ExpectedCall, MatchOptions};
/// use serde_json::json;
/// let expected = [
///     ExpectedCall::new("weather").with_argument("city", [json!("Paris")]),
///     ExpectedCall::new("weather").with_argument("city", [json!("Rome")]),
/// ];
/// let actual = [
///     ToolCall::new("weather", json!({"city": "rome"})),
///     ToolCall::new("weather", json!({"city": "Paris"})),
/// ];
/// let result = match_calls(&actual, &expected, &MatchOptions::bfcl());
/// assert!(result.is_exact());
/// assert_eq!(result.score(), 1.0);
/// ```
pub fn match_calls(
    actual: &[ToolCall],
    expected: &[ExpectedCall],
    options: &MatchOptions,
) -> CallsMatch {
    let results: Vec<Vec<CallMatch>> = actual
        .iter()
        .map(|call| {
            expected
                .iter()
                .map(|want| match_call(call, want, options))
                .collect()
        })
        .collect();
    // Credit decides; among assignments of equal credit, a tiny tie-break prefers pairing calls
    // of the same function and with more right arguments (it sums to less than 0.001, below any
    // credit difference).
    let tie_scale = 1e-3 / (2.0 * (actual.len().min(expected.len()) + 1) as f64);
    let weights: Vec<Vec<f64>> = results
        .iter()
        .map(|row| {
            row.iter()
                .map(|result| {
                    let names = if result.name_matches { 1.0 } else { 0.0 };
                    result.credit(options.partial_credit)
                        + tie_scale * (names + result.argument_fraction())
                })
                .collect()
        })
        .collect();
    let assignment = max_weight_assignment(&weights);
    let mut pairs = Vec::new();
    let mut expected_used = vec![false; expected.len()];
    for (actual_index, (column, mut row)) in assignment.into_iter().zip(results).enumerate() {
        if let Some(expected_index) = column
            && row[expected_index].name_matches
        {
            expected_used[expected_index] = true;
            pairs.push(CallPair {
                actual: actual_index,
                expected: expected_index,
                result: row.swap_remove(expected_index),
            });
        }
    }
    let paired_actual: Vec<usize> = pairs.iter().map(|pair| pair.actual).collect();
    CallsMatch {
        unmatched_actual: (0..actual.len())
            .filter(|index| !paired_actual.contains(index))
            .collect(),
        unmatched_expected: (0..expected.len())
            .filter(|index| !expected_used[*index])
            .collect(),
        pairs,
        num_actual: actual.len(),
        num_expected: expected.len(),
        partial_credit: options.partial_credit,
    }
}
