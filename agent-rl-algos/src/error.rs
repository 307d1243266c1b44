//! The error type of `agent-rl-algos`.

use std::path::PathBuf;

use agent_rl_core::CoreError;

/// Errors of the algorithms crate. Each names the config field, input or tensor that was wrong.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AlgoError {
    /// A config field has a value outside its valid range.
    #[error("config field `{field}`: {reason}")]
    InvalidConfig {
        /// The field, dotted for nested configs (e.g. `optimizer.learning_rate`).
        field: String,
        /// What is wrong and how to fix it.
        reason: String,
    },
    /// An argument of a function is inconsistent (lengths, group sizes, missing inputs).
    #[error("invalid input `{name}`: {reason}")]
    InvalidInput {
        /// The argument.
        name: String,
        /// What is wrong.
        reason: String,
    },
    /// A tensor argument has the wrong shape.
    #[error("tensor `{name}`: expected shape {expected:?}, found {found:?}")]
    ShapeMismatch {
        /// The argument.
        name: String,
        /// The shape it must have.
        expected: Vec<usize>,
        /// The shape it has.
        found: Vec<usize>,
    },
    /// An error of the core crate (model, tokenizer, generation).
    #[error(transparent)]
    Core(#[from] CoreError),
    /// A dataset file could not be read.
    #[error("cannot read dataset {}", .path.display())]
    DatasetRead {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A dataset row is malformed or cannot be rendered and tokenised.
    #[error("{}:{line}: {reason}", .path.display())]
    DatasetRow {
        /// The file (`<memory>` for rows built in code).
        path: PathBuf,
        /// 1-based line of the row (its 1-based index for rows built in code).
        line: usize,
        /// What is wrong with the row.
        reason: String,
    },
    /// Rendering a conversation's prefix with the chat template does not give a prefix of the
    /// full rendering, so tokens cannot be attributed to turns (e.g. templates that rewrite
    /// earlier turns).
    #[error("chat template is not prefix-stable at message {message}: {reason}")]
    TemplateNotPrefixStable {
        /// 0-based index of the message whose rendering broke the prefix property.
        message: usize,
        /// The text that differed.
        reason: String,
    },
    /// A reward function failed (broken target or schema, failing scorer).
    #[error(transparent)]
    Reward(#[from] agent_rl_rewards::RewardError),
    /// A checkpoint file could not be written or read.
    #[error("checkpoint file {}: {reason}", .path.display())]
    Checkpoint {
        /// The file.
        path: std::path::PathBuf,
        /// What failed (the underlying I/O, JSON or recorder error).
        reason: String,
    },
    /// A file of the run directory (metrics, summary, config, reward curve) could not be read or
    /// written.
    #[error("run directory file {}: {source}", .path.display())]
    RunDirectory {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// An [`Evaluator`](crate::pipeline::Evaluator) from another crate (a benchmark) failed.
    #[error("evaluator `{name}` failed")]
    Evaluator {
        /// The evaluator.
        name: String,
        /// Its error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

impl AlgoError {
    /// Shorthand for [`AlgoError::InvalidConfig`].
    pub(crate) fn config(field: impl Into<String>, reason: impl Into<String>) -> Self {
        Self::InvalidConfig {
            field: field.into(),
            reason: reason.into(),
        }
    }

    /// Shorthand for [`AlgoError::InvalidInput`].
    pub(crate) fn input(name: impl Into<String>, reason: impl Into<String>) -> Self {
        Self::InvalidInput {
            name: name.into(),
            reason: reason.into(),
        }
    }
}

/// `Result` with [`AlgoError`] as the default error.
pub type Result<T, E = AlgoError> = std::result::Result<T, E>;
