//! The error type of `agent-rl-rewards`.
//!
//! Errors are for bad inputs from the programmer or the dataset (a broken schema, a target naming
//! a tool that was never offered, a bad config). A malformed model output is never an error: it
//! is scored.

/// Errors of the rewards crate. Each names what was wrong and where.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RewardError {
    /// A tool spec's JSON schema cannot be used to validate arguments.
    #[error("tool `{tool}`: invalid parameter schema at `{path}`: {reason}")]
    InvalidSchema {
        /// The tool whose spec is broken.
        tool: String,
        /// JSON-pointer-like path inside the schema (`""` for the root).
        path: String,
        /// What is wrong and what is expected.
        reason: String,
    },
    /// The target expects a call to a tool that the trajectory's tool list does not offer.
    #[error(
        "task `{task_id}`: target expects a call to `{tool}`, which is not among the offered tools {offered:?}"
    )]
    UnknownTool {
        /// The task (trajectory) id.
        task_id: String,
        /// The tool the target names.
        tool: String,
        /// The tools that were offered.
        offered: Vec<String>,
    },
    /// A target could not be read.
    #[error("invalid target: {reason}")]
    InvalidTarget {
        /// What was wrong.
        reason: String,
    },
    /// A reward configuration value is out of range.
    #[error("invalid config `{field}`: {reason}")]
    InvalidConfig {
        /// The field.
        field: String,
        /// The valid range, and what was found.
        reason: String,
    },
    /// A batch could not be split into groups (normalise-then-sum).
    #[error(
        "reward `{reward}`: batch of {batch_size} samples is not a multiple of the group size {group_size}"
    )]
    GroupSize {
        /// The reward.
        reward: String,
        /// Samples in the batch.
        batch_size: usize,
        /// The configured group size.
        group_size: usize,
    },
    /// A reward or scorer returned a different number of scores than samples.
    #[error("reward `{reward}`: returned {found} scores for {expected} samples")]
    BatchLength {
        /// The reward or scorer.
        reward: String,
        /// Samples given.
        expected: usize,
        /// Scores returned.
        found: usize,
    },
    /// A scorer returned NaN or an infinity.
    #[error("reward `{reward}`: non-finite score {value} for sample {index}")]
    NonFiniteScore {
        /// The reward or scorer.
        reward: String,
        /// Index of the sample in the batch.
        index: usize,
        /// The value returned.
        value: f32,
    },
    /// A learned scorer or outcome verifier failed.
    #[error("`{name}` failed: {reason}")]
    Scorer {
        /// The scorer or verifier.
        name: String,
        /// What failed.
        reason: String,
    },
}

/// Result type of `agent-rl-rewards`.
pub type Result<T, E = RewardError> = std::result::Result<T, E>;
