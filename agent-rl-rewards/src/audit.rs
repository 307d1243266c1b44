//! Classifying every call attempt of a trajectory: valid, malformed, unknown tool, bad arguments.

use agent_rl_core::{ToolCall, Trajectory};
use serde::Serialize;

use crate::error::Result;
use crate::schema::{check_schema, validate_arguments};

/// Counts of call attempts by verdict over a whole trajectory, shared by
/// [`ToolCallFormat`](crate::ToolCallFormat) and the [`Guards`](crate::Guards).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct CallAudit {
    /// All attempts: well-formed calls plus malformed fragments.
    pub attempts: usize,
    /// Well-formed calls to an offered tool whose arguments satisfy its schema.
    pub valid: usize,
    /// Fragments that did not parse as a call.
    pub malformed: usize,
    /// Well-formed calls to a tool that was not offered (hallucinated tools).
    pub unknown_tool: usize,
    /// Well-formed calls to an offered tool whose arguments break its schema.
    pub invalid_arguments: usize,
    /// Well-formed calls identical (same name, equal arguments) to an earlier call.
    pub duplicates: usize,
}

impl CallAudit {
    /// Audits every attempt in `trajectory` against its offered tools.
    ///
    /// # Errors
    /// [`RewardError::InvalidSchema`](crate::RewardError::InvalidSchema) when an offered tool's
    /// schema is malformed.
    pub fn of(trajectory: &Trajectory) -> Result<Self> {
        for tool in &trajectory.tools {
            check_schema(tool.name(), tool.parameters())?;
        }
        let mut audit = CallAudit::default();
        let mut seen: Vec<&ToolCall> = Vec::new();
        for turn in &trajectory.turns {
            audit.malformed += turn.parsed.malformed.len();
            audit.attempts += turn.parsed.attempted_calls();
            for call in &turn.parsed.tool_calls {
                if seen
                    .iter()
                    .any(|earlier| earlier.name == call.name && earlier.arguments == call.arguments)
                {
                    audit.duplicates += 1;
                } else {
                    seen.push(call);
                }
                match trajectory
                    .tools
                    .iter()
                    .find(|tool| tool.name() == call.name)
                {
                    None => audit.unknown_tool += 1,
                    Some(tool) => {
                        if validate_arguments(&call.name, tool.parameters(), &call.arguments)?
                            .is_empty()
                        {
                            audit.valid += 1;
                        } else {
                            audit.invalid_arguments += 1;
                        }
                    }
                }
            }
        }
        Ok(audit)
    }

    /// Attempts that are not valid calls (malformed, unknown tool or invalid arguments).
    pub fn bad(&self) -> usize {
        self.malformed + self.unknown_tool + self.invalid_arguments
    }
}
