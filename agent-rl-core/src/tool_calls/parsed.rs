//! The result of parsing one model output.

use serde::{Deserialize, Serialize};

use crate::conversation::ToolCall;

/// A tool-call fragment that could not be parsed, kept verbatim with the reason.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MalformedToolCall {
    /// The raw text between (or after) the tool-call markers.
    pub raw: String,
    /// Why it was rejected (e.g. "invalid JSON: …", "missing `name`", "unterminated").
    pub reason: String,
}

/// Model output split into plain text and tool calls.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ParsedOutput {
    /// Text outside tool-call blocks, trimmed.
    pub content: String,
    /// Well-formed calls, in the order they appear.
    pub tool_calls: Vec<ToolCall>,
    /// Fragments that looked like tool calls but did not parse, in order.
    pub malformed: Vec<MalformedToolCall>,
}

impl ParsedOutput {
    /// Number of call attempts, well-formed or not.
    pub fn attempted_calls(&self) -> usize {
        self.tool_calls.len() + self.malformed.len()
    }

    /// True when the output attempted no tool call at all.
    pub fn is_text_only(&self) -> bool {
        self.attempted_calls() == 0
    }
}
