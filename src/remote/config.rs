//! [`RemoteConfig`]: which endpoint, which model, and how patiently to call it.

use serde::{Deserialize, Serialize};

use agent_rl_core::CoreError;

/// Settings of [`super::RemotePolicy`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RemoteConfig {
    /// Base URL of the OpenAI-compatible API, up to and including `/v1`
    /// (e.g. `http://127.0.0.1:8000/v1`). Default `http://127.0.0.1:8000/v1`.
    pub base_url: String,
    /// The `model` to ask for. Default `"agent-rl"`.
    pub model: String,
    /// Environment variable holding the API key (sent as `Authorization: Bearer`); none = no
    /// key. Default none.
    pub api_key_env: Option<String>,
    /// Whole-request timeout in seconds. Default 600.
    pub timeout_secs: u64,
    /// Connection timeout in seconds. Default 10.
    pub connect_timeout_secs: u64,
    /// Retries after a 429, a 5xx or a transport error (0 = none). Default 4.
    pub max_retries: u32,
    /// First backoff in milliseconds; doubles per retry up to `max_backoff_ms` (a
    /// `Retry-After` header wins when larger). Default 500.
    pub initial_backoff_ms: u64,
    /// Longest backoff in milliseconds. Default 20000.
    pub max_backoff_ms: u64,
    /// Requests in flight at once. Default 8.
    pub max_concurrency: usize,
}

impl Default for RemoteConfig {
    fn default() -> Self {
        Self {
            base_url: "http://127.0.0.1:8000/v1".into(),
            model: "agent-rl".into(),
            api_key_env: None,
            timeout_secs: 600,
            connect_timeout_secs: 10,
            max_retries: 4,
            initial_backoff_ms: 500,
            max_backoff_ms: 20_000,
            max_concurrency: 8,
        }
    }
}

impl RemoteConfig {
    /// Checks every field.
    ///
    /// # Errors
    /// [`CoreError::InvalidArgument`] naming the field.
    pub fn validate(&self) -> Result<(), CoreError> {
        let bad = |field: &str, reason: &str| {
            Err(CoreError::InvalidArgument {
                field: field.into(),
                reason: reason.into(),
            })
        };
        if !(self.base_url.starts_with("http://") || self.base_url.starts_with("https://")) {
            return bad("base_url", "must start with http:// or https://");
        }
        if self.model.is_empty() {
            return bad("model", "must not be empty");
        }
        if self.timeout_secs == 0 || self.connect_timeout_secs == 0 {
            return bad("timeout_secs", "timeouts must be at least 1 second");
        }
        if self.max_concurrency == 0 {
            return bad("max_concurrency", "must be at least 1");
        }
        if self.initial_backoff_ms > self.max_backoff_ms {
            return bad("initial_backoff_ms", "must not exceed max_backoff_ms");
        }
        Ok(())
    }
}
