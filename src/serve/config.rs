//! [`ServeConfig`]: where the server listens and the limits it enforces.

use serde::{Deserialize, Serialize};

use super::error::ServeError;

/// Settings of the OpenAI-compatible server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ServeConfig {
    /// Address to bind. Default `127.0.0.1` (loopback only: expose it deliberately).
    pub host: String,
    /// Port; 0 picks a free one (the bound address is reported). Default 8000.
    pub port: u16,
    /// The model name clients must send in `model`. Default `"agent-rl"`.
    pub model_name: String,
    /// Most sequences (requests × `n`) decoded in one generation batch. Default 16.
    pub max_batch: usize,
    /// How long the batcher waits for more requests after the first one, in milliseconds.
    /// Default 2.
    pub batch_wait_ms: u64,
    /// Largest `max_tokens` a request may ask for. Default 4096.
    pub max_tokens_limit: usize,
    /// `max_tokens` when a request gives none (capped by the context left). Default 256.
    pub default_max_tokens: usize,
    /// Largest `n` per request. Default 16.
    pub max_n: usize,
    /// Largest request body, in bytes (larger ones get 413). Default 4 MiB.
    pub max_request_bytes: usize,
    /// When set, every request must carry `Authorization: Bearer <key>` with this key.
    /// Never serialised.
    #[serde(skip)]
    pub api_key: Option<String>,
    /// Text put after the generation prompt when `tool_choice` forces a call (`required` or a
    /// named function): the tool-call opening of the model's format. Default `"<tool_call>\n"`
    /// (Qwen2.5 / Hermes).
    pub tool_call_prefix: String,
    /// Allow `/v1/load_lora_adapter` and `/v1/unload_lora_adapter` (they read directories on
    /// the server's disk, so they are off unless asked for). Default false.
    pub allow_runtime_lora: bool,
    /// Allow `/update_weights_from_disk` (SGLang's route: replace the served weights with a
    /// checkpoint directory on the server's disk, as a full fine-tuning trainer publishes its
    /// policy). Off unless asked for; needs [`ServeConfig::api_key`]. Default false.
    pub allow_weight_updates: bool,
    /// Most generation requests admitted at once (being read, queued or decoded); more are
    /// answered 429 with a JSON error and `Retry-After`. Default 256.
    pub max_queued_requests: usize,
    /// How long a client may take to send a request's headers (and how long an idle
    /// keep-alive connection stays open), in milliseconds; then the connection is closed.
    /// Default 30000.
    pub header_read_timeout_ms: u64,
    /// How long a client may take to send a request's body, in milliseconds; then it gets 408
    /// and the connection is closed. Default 60000.
    pub body_read_timeout_ms: u64,
    /// Web origins (`scheme://host[:port]`, as browsers send them in `Origin`) whose pages may
    /// call the API; `*` allows any. Requests carrying another `Origin` get 403. Default none:
    /// only clients that send no `Origin` (scripts, SDKs, curl).
    pub allow_origins: Vec<String>,
    /// Host names (besides IP addresses and `localhost`) that requests may name in `Host`;
    /// `*` allows any. Others get 403, which defeats DNS rebinding. Default none.
    pub allow_hosts: Vec<String>,
}

impl Default for ServeConfig {
    fn default() -> Self {
        Self {
            host: "127.0.0.1".into(),
            port: 8000,
            model_name: "agent-rl".into(),
            max_batch: 16,
            batch_wait_ms: 2,
            max_tokens_limit: 4096,
            default_max_tokens: 256,
            max_n: 16,
            max_request_bytes: 4 << 20,
            api_key: None,
            tool_call_prefix: "<tool_call>\n".into(),
            allow_runtime_lora: false,
            allow_weight_updates: false,
            max_queued_requests: 256,
            header_read_timeout_ms: 30_000,
            body_read_timeout_ms: 60_000,
            allow_origins: Vec::new(),
            allow_hosts: Vec::new(),
        }
    }
}

impl ServeConfig {
    /// Checks every field's range.
    ///
    /// # Errors
    /// [`ServeError::InvalidConfig`] naming the field.
    pub fn validate(&self) -> Result<(), ServeError> {
        let bad = |field: &str, reason: &str| {
            Err(ServeError::InvalidConfig {
                field: field.into(),
                reason: reason.into(),
            })
        };
        if self.model_name.trim().is_empty() {
            return bad("model_name", "must not be empty");
        }
        if self.max_batch == 0 {
            return bad("max_batch", "must be at least 1");
        }
        if self.max_tokens_limit == 0 || self.default_max_tokens == 0 {
            return bad("max_tokens_limit", "token limits must be at least 1");
        }
        if self.max_n == 0 {
            return bad("max_n", "must be at least 1");
        }
        if self.max_request_bytes < 1024 {
            return bad("max_request_bytes", "must be at least 1024");
        }
        if self.api_key.as_deref().is_some_and(str::is_empty) {
            return bad("api_key", "is set but empty");
        }
        if self.allow_weight_updates && self.api_key.is_none() {
            return bad(
                "allow_weight_updates",
                "replacing the served weights over HTTP needs an api_key \
                 (`agent-rl serve --api-key-env VAR`)",
            );
        }
        if self.max_queued_requests == 0 {
            return bad("max_queued_requests", "must be at least 1");
        }
        if self.header_read_timeout_ms == 0 || self.body_read_timeout_ms == 0 {
            return bad(
                "header_read_timeout_ms",
                "read timeouts must be at least 1 ms (they bound half-sent requests)",
            );
        }
        if let Some(origin) = self.allow_origins.iter().find(|o| !valid_origin(o)) {
            return bad(
                "allow_origins",
                &format!("`{origin}` is not `*` or an origin like `https://app.example:8080`"),
            );
        }
        if let Some(host) = self.allow_hosts.iter().find(|h| !valid_host_name(h)) {
            return bad(
                "allow_hosts",
                &format!("`{host}` is not `*` or a host name without port"),
            );
        }
        Ok(())
    }
}

/// `*`, or `scheme://host[:port]` with nothing after it (what browsers send in `Origin`).
fn valid_origin(origin: &str) -> bool {
    origin == "*"
        || origin.split_once("://").is_some_and(|(scheme, rest)| {
            !scheme.is_empty()
                && scheme
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
                && !rest.is_empty()
                && !rest.contains(['/', '?', '#', ' ', '@'])
        })
}

/// `*`, or a host name (letters, digits, `-`, `.`, `_`) without port.
fn valid_host_name(host: &str) -> bool {
    host == "*"
        || (!host.is_empty()
            && host
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-._".contains(c)))
}
