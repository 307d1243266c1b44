//! The error type of `agent-rl-core`.

use std::path::PathBuf;

/// Errors of the core crate. Each names the file, key or field that was wrong.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CoreError {
    /// A file could not be read or written.
    #[error("cannot access {}", .path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// A file could not be written (a full disk, a read-only or missing directory).
    #[error("cannot write {}: {source}", .path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// A JSON file is not valid JSON or does not have the expected shape.
    #[error("invalid JSON in {}: {source}", .path.display())]
    Json {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: serde_json::Error,
    },
    /// A model config field has a value this implementation does not support.
    #[error("config field `{field}`: {reason}")]
    UnsupportedConfig {
        /// The HF field name, e.g. `rope_scaling`.
        field: String,
        /// What was found and what is supported.
        reason: String,
    },
    /// A safetensors file is corrupt or not safetensors.
    #[error("cannot parse safetensors file {}: {reason}", .file.display())]
    Safetensors {
        /// The file.
        file: PathBuf,
        /// The parser's message.
        reason: String,
    },
    /// A tensor the model needs is not in the checkpoint.
    #[error("tensor `{key}` missing from {}", .file.display())]
    MissingTensor {
        /// The checkpoint file (or index) searched.
        file: PathBuf,
        /// HF key, e.g. `model.layers.0.self_attn.q_proj.weight`.
        key: String,
    },
    /// A tensor has the wrong shape.
    #[error("tensor `{key}` in {}: expected shape {expected:?}, found {found:?}", .file.display())]
    ShapeMismatch {
        /// The file holding it.
        file: PathBuf,
        /// HF key.
        key: String,
        /// Shape the config implies.
        expected: Vec<usize>,
        /// Shape in the file.
        found: Vec<usize>,
    },
    /// A tensor has a storage type that cannot be loaded.
    #[error("tensor `{key}` in {}: unsupported dtype {dtype}", .file.display())]
    UnsupportedDtype {
        /// The file holding it.
        file: PathBuf,
        /// HF key.
        key: String,
        /// The dtype found.
        dtype: String,
    },
    /// A tensor holds NaN or an infinity: the checkpoint is corrupt or the run that wrote it
    /// diverged.
    #[error(
        "tensor `{key}` in {}: element {index} is {value}; the weights must be finite \
         (a corrupt file or a diverged run)",
        .file.display()
    )]
    NonFiniteTensor {
        /// The file holding it.
        file: PathBuf,
        /// HF key.
        key: String,
        /// Flat index of the first non-finite element.
        index: usize,
        /// That element (NaN, inf or -inf).
        value: f32,
    },
    /// A sharded checkpoint's index names a file outside the checkpoint directory.
    #[error(
        "{}: shard `{shard}` lies outside the model directory; shard names must be plain \
         relative paths (no `..`, no absolute paths)",
        .index.display()
    )]
    ShardOutsideDirectory {
        /// The index file.
        index: PathBuf,
        /// The shard name as written in the index.
        shard: String,
    },
    /// The checkpoint holds tensors the model does not use.
    #[error("unexpected tensors in {}: {keys:?}", .file.display())]
    UnexpectedTensors {
        /// The checkpoint file (or index).
        file: PathBuf,
        /// The unused keys (sorted).
        keys: Vec<String>,
    },
    /// The tokenizer could not be loaded or failed.
    #[error("tokenizer {}: {reason}", .path.display())]
    Tokenizer {
        /// The tokenizer file (or model directory).
        path: PathBuf,
        /// The tokenizers library's message.
        reason: String,
    },
    /// The tokenizer produces ids the model's embedding does not have.
    #[error(
        "tokenizer {} has a vocabulary of {tokenizer_ids} ids but the model's embedding has \
         {model_vocab_size} rows (config.json `vocab_size`); use the tokenizer that belongs to \
         the model",
        .path.display()
    )]
    VocabularyMismatch {
        /// The tokenizer file.
        path: PathBuf,
        /// One past the tokenizer's largest id (its vocabulary size, added tokens included).
        tokenizer_ids: usize,
        /// Rows of the model's embedding.
        model_vocab_size: usize,
    },
    /// A chat template failed to compile or render.
    #[error("chat template ({source_name}): {reason}")]
    ChatTemplate {
        /// Where the template came from (file path or `tokenizer_config.json:chat_template`).
        source_name: String,
        /// minijinja's message, with line information.
        reason: String,
    },
    /// Bad arguments to a generation or scoring call.
    #[error("invalid argument `{field}`: {reason}")]
    InvalidArgument {
        /// The argument or setting.
        field: String,
        /// What was wrong and how to fix it.
        reason: String,
    },
    /// An environment failed (not a bad action from the model, which is an observation).
    #[error("environment `{environment}`: {reason}")]
    Environment {
        /// The environment's name.
        environment: String,
        /// What failed.
        reason: String,
    },
    /// A remote policy endpoint failed (after its retries) or answered something unusable.
    #[error("policy endpoint {endpoint}: {reason}")]
    Remote {
        /// The URL called.
        endpoint: String,
        /// What went wrong (status and the server's message, or the transport error).
        reason: String,
    },
    /// A device could not be created (e.g. CUDA without a driver).
    #[error("device `{device}` unavailable: {reason}")]
    DeviceUnavailable {
        /// The device asked for.
        device: String,
        /// Why it cannot be used.
        reason: String,
    },
}

/// Result type of `agent-rl-core`.
pub type Result<T, E = CoreError> = std::result::Result<T, E>;
