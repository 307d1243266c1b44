//! The error type of `agent-rl-eval`.

use std::path::PathBuf;

/// Errors of the evaluation crate. Each names the file, line, record or field that was wrong.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EvalError {
    /// A data file could not be read.
    #[error("cannot read {}: {source}", .path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// An output file could not be written.
    #[error("cannot write {}: {source}", .path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A record of a data file is malformed.
    #[error("{}:{line}: {reason}", .path.display())]
    Record {
        /// The file.
        path: PathBuf,
        /// 1-based line (or record index for JSON arrays).
        line: usize,
        /// What is wrong.
        reason: String,
    },
    /// A data directory does not have the expected layout (a file or folder is missing).
    #[error("{}: {reason}", .path.display())]
    Layout {
        /// The directory or file.
        path: PathBuf,
        /// What is missing.
        reason: String,
    },
    /// A configuration field is out of range.
    #[error("invalid config field `{field}`: {reason}")]
    InvalidConfig {
        /// The field.
        field: String,
        /// What is wrong and how to fix it.
        reason: String,
    },
    /// An external program the operation needs is missing or unusable.
    #[error("{tool} is not available: {reason}")]
    MissingTool {
        /// The program (or package).
        tool: String,
        /// What it is needed for and how to get it.
        reason: String,
    },
    /// An external command failed.
    #[error("command `{command}` failed: {reason}")]
    Command {
        /// The command line.
        command: String,
        /// Exit status, output excerpt or the I/O error.
        reason: String,
    },
    /// An error of the core crate (model, tokenizer, generation, environment).
    #[error(transparent)]
    Core(#[from] agent_rl_core::CoreError),
}

/// `Result` with [`EvalError`] as the default error.
pub type Result<T, E = EvalError> = std::result::Result<T, E>;
