//! The runners' failure policy: an item (BFCL entry, τ-bench episode, SWE instance) that fails
//! is recorded with its id and reason, and the run goes on; a prompt too long for the model is
//! such a failure unless the answer budget may be cut to fit ([`OverlongPrompt::Truncate`]).

use serde::{Deserialize, Serialize};

/// What a runner does with a prompt that, with `max_new_tokens` on top, does not fit the model's
/// context (known for a local model; a remote server reports it as a generation error).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OverlongPrompt {
    /// The item fails with the prompt's length in its reason (the default).
    #[default]
    Skip,
    /// The answer is generated with the tokens the context leaves (fewer than `max_new_tokens`,
    /// so it may be cut short); a prompt that fills the context by itself still fails.
    Truncate,
}

impl OverlongPrompt {
    /// The name of the setting (`skip`, `truncate`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Skip => "skip",
            Self::Truncate => "truncate",
        }
    }
}

impl std::str::FromStr for OverlongPrompt {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        match text {
            "skip" => Ok(Self::Skip),
            "truncate" => Ok(Self::Truncate),
            other => Err(format!("unknown value `{other}` (valid: skip, truncate)")),
        }
    }
}

/// An item that could not be evaluated: its id and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ItemFailure {
    /// The item's id (a BFCL entry id, `task 3 trial 0` of τ-bench, a SWE instance id).
    pub id: String,
    /// Why it failed (e.g. the prompt's length against the model's context).
    pub reason: String,
}
