//! Tool-call parsing: model output text → plain text, well-formed calls, malformed fragments.
//!
//! Model output is untrusted data: a malformed call is a value ([`MalformedToolCall`]) that rewards
//! can penalise, never an error. One parser per format, behind [`ToolCallParser`].

mod hermes;
mod parsed;

pub use hermes::HermesToolCallParser;
pub use parsed::{MalformedToolCall, ParsedOutput};

/// Parses one model output format into text and tool calls.
pub trait ToolCallParser: Send + Sync {
    /// Splits `text` into plain content, well-formed calls and malformed fragments.
    fn parse(&self, text: &str) -> ParsedOutput;
}
