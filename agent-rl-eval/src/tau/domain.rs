//! The two τ-bench domains behind one type: loading, tool dispatch, hashing.

use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::airline::{self, AirlineDb};
use super::retail::{self, RetailDb};
use crate::Result;

/// A τ-bench domain.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Domain {
    /// Online retail store (16 tools).
    Retail,
    /// Airline reservations (14 tools).
    Airline,
}

impl Domain {
    /// The folder name in the data directory (`retail`, `airline`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Retail => "retail",
            Self::Airline => "airline",
        }
    }

    /// The tool names of the domain.
    pub fn tool_names(self) -> &'static [&'static str] {
        match self {
            Self::Retail => &retail::TOOL_NAMES,
            Self::Airline => &airline::TOOL_NAMES,
        }
    }
}

impl std::str::FromStr for Domain {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        match text {
            "retail" => Ok(Self::Retail),
            "airline" => Ok(Self::Airline),
            other => Err(format!(
                "unknown τ-bench domain `{other}` (retail, airline)"
            )),
        }
    }
}

/// How a tool call went, for counting errors and hallucinations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CallStatus {
    /// The tool ran and returned a normal result.
    Ok,
    /// The tool returned one of its own `Error: …` strings (database unchanged).
    ToolError,
    /// The original would raise (bad or missing arguments, wrong types); observation `Error: …`.
    Raised,
    /// No tool of that name; observation `Unknown action <name>`.
    UnknownTool,
}

/// The observation of one tool call and how it went.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolOutcome {
    /// What the agent sees.
    pub observation: String,
    /// Classification of the call.
    pub status: CallStatus,
}

/// A domain database (fresh per episode).
#[derive(Debug, Clone, PartialEq)]
pub enum TauDb {
    /// Retail tables.
    Retail(RetailDb),
    /// Airline tables.
    Airline(AirlineDb),
}

impl TauDb {
    /// Loads the domain's tables from its folder (`<data>/retail` or `<data>/airline`).
    ///
    /// # Errors
    /// [`crate::EvalError::Io`] / [`crate::EvalError::Record`] naming the file.
    pub fn load(domain: Domain, dir: &Path) -> Result<Self> {
        Ok(match domain {
            Domain::Retail => Self::Retail(RetailDb::load(dir)?),
            Domain::Airline => Self::Airline(AirlineDb::load(dir)?),
        })
    }

    /// The domain of this database.
    pub fn domain(&self) -> Domain {
        match self {
            Self::Retail(_) => Domain::Retail,
            Self::Airline(_) => Domain::Airline,
        }
    }

    /// τ-bench's database hash (equal hashes = equal states for the reward).
    pub fn data_hash(&self) -> String {
        match self {
            Self::Retail(db) => db.data_hash(),
            Self::Airline(db) => db.data_hash(),
        }
    }

    /// Runs tool `name` with JSON keyword arguments as the original environment step does:
    /// unknown names give `Unknown action <name>`, raised exceptions `Error: <text>`.
    pub fn call(&mut self, name: &str, args: &Value) -> ToolOutcome {
        let result = match self {
            Self::Retail(db) => db.invoke(name, args),
            Self::Airline(db) => db.invoke(name, args),
        };
        match result {
            None => ToolOutcome {
                observation: format!("Unknown action {name}"),
                status: CallStatus::UnknownTool,
            },
            Some(Err(text)) => ToolOutcome {
                observation: format!("Error: {text}"),
                status: CallStatus::Raised,
            },
            Some(Ok(text)) => {
                let status = if text.starts_with("Error: ") {
                    CallStatus::ToolError
                } else {
                    CallStatus::Ok
                };
                ToolOutcome {
                    observation: text,
                    status,
                }
            }
        }
    }
}
