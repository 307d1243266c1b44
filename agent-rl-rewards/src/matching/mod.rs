//! The call-matching engine: do the model's tool calls match the expected ones?
//!
//! Shared by the [`ArgumentMatch`](crate::ArgumentMatch) and [`Outcome`](crate::Outcome) rewards
//! and by the BFCL evaluator, so that training and evaluation use the same semantics:
//!
//! - each argument has a list of acceptable values; `""` among them means "may be omitted"
//!   (BFCL's possible-answer convention, see [`ExpectedCall`]);
//! - an integer is accepted where a float is expected, never the reverse;
//! - strings are optionally normalised ([`StringNormalization::bfcl`] by default);
//! - lists and objects are compared recursively; nested objects may carry per-field alternatives;
//! - missing required, unexpected argument, wrong type, wrong length and wrong value are distinct
//!   [`MismatchKind`]s, each with the path where it occurred;
//! - parallel calls are paired order-insensitively by an optimal assignment
//!   ([`max_weight_assignment`]), never greedily;
//! - credit per call is all-or-nothing, or the fraction of right arguments with
//!   [`MatchOptions::partial_credit`].
//!
//! | entry point | compares |
//! |---|---|
//! | [`match_calls`] → [`CallsMatch`] | a set of calls with a set of expected calls |
//! | [`match_call`] → [`CallMatch`] | one call with one expected call |
//! | [`match_alternatives`], [`match_pattern`], [`match_literal`] | one value |

mod assignment;
mod call;
mod calls;
mod expected;
mod mismatch;
mod options;
mod value;

pub use assignment::max_weight_assignment;
pub use call::{CallMatch, match_call};
pub use calls::{CallPair, CallsMatch, match_calls};
pub use expected::{ExpectedArgument, ExpectedCall, ValuePattern};
pub use mismatch::{Mismatch, MismatchKind, ValueKind};
pub use options::{MatchOptions, StringNormalization};
pub use value::{match_alternatives, match_literal, match_pattern};
