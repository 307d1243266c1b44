//! One JSON POST with retries: backoff on 429, 5xx and transport errors.

use std::time::Duration;

use agent_rl_core::CoreError;
use serde_json::Value;

use super::config::RemoteConfig;

/// A blocking HTTP client for one endpoint.
#[derive(Clone)]
pub(crate) struct Http {
    agent: ureq::Agent,
    api_key: Option<String>,
    config: RemoteConfig,
}

impl Http {
    /// The agent for `config`, with the key read from its environment variable.
    ///
    /// # Errors
    /// [`CoreError::InvalidArgument`] for a bad config or an unset key variable.
    pub fn new(config: &RemoteConfig) -> Result<Self, CoreError> {
        config.validate()?;
        let api_key = match &config.api_key_env {
            Some(var) => Some(std::env::var(var).map_err(|_| CoreError::InvalidArgument {
                field: "api_key_env".into(),
                reason: format!("the environment variable `{var}` is not set"),
            })?),
            None => None,
        };
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .timeout_global(Some(Duration::from_secs(config.timeout_secs)))
            .timeout_connect(Some(Duration::from_secs(config.connect_timeout_secs)))
            .http_status_as_error(false)
            .max_idle_connections_per_host(config.max_concurrency.max(3))
            .build()
            .into();
        Ok(Self {
            agent,
            api_key,
            config: config.clone(),
        })
    }

    /// `base_url` + `path`.
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.config.base_url.trim_end_matches('/'))
    }

    /// The server's root + `path`: `base_url` without a trailing `/v1` (routes such as SGLang's
    /// `/update_weights_from_disk` live beside `/v1`, not under it).
    pub fn root_url(&self, path: &str) -> String {
        let base = self.config.base_url.trim_end_matches('/');
        format!("{}{path}", base.strip_suffix("/v1").unwrap_or(base))
    }

    /// POSTs `body` to `path` and returns the JSON answer (see [`Self::post`]).
    ///
    /// # Errors
    /// As [`Self::post`], and answers that are not JSON.
    pub fn post_json(&self, path: &str, body: &Value) -> Result<Value, CoreError> {
        let text = self.post(path, body)?;
        serde_json::from_str(&text).map_err(|err| CoreError::Remote {
            endpoint: self.url(path),
            reason: format!("the answer is not JSON ({err})"),
        })
    }

    /// POSTs `body` to `path` and returns the answer's text, retrying 429, 5xx and transport
    /// failures with exponential backoff.
    ///
    /// # Errors
    /// [`CoreError::Remote`] with the status and the server's message once retries are spent,
    /// or at once for other 4xx answers.
    pub fn post(&self, path: &str, body: &Value) -> Result<String, CoreError> {
        self.post_to(self.url(path), body)
    }

    /// POSTs `body` to the absolute `url`, as [`Self::post`] does.
    ///
    /// # Errors
    /// As [`Self::post`].
    pub fn post_to(&self, url: String, body: &Value) -> Result<String, CoreError> {
        let remote = |reason: String| CoreError::Remote {
            endpoint: url.clone(),
            reason,
        };
        let mut attempt = 0;
        loop {
            let mut request = self.agent.post(&url);
            if let Some(key) = &self.api_key {
                request = request.header("Authorization", &format!("Bearer {key}"));
            }
            let (retry, reason, retry_after) = match request.send_json(body) {
                Ok(mut response) => {
                    let status = response.status().as_u16();
                    let retry_after = response
                        .headers()
                        .get("retry-after")
                        .and_then(|v| v.to_str().ok())
                        .and_then(|v| v.trim().parse::<u64>().ok());
                    let text = response.body_mut().read_to_string().unwrap_or_default();
                    if (200..300).contains(&status) {
                        return Ok(text);
                    }
                    let message = serde_json::from_str::<Value>(&text)
                        .ok()
                        .and_then(|v| v["error"]["message"].as_str().map(str::to_owned))
                        .unwrap_or(text);
                    let retry = status == 429 || status >= 500;
                    (retry, format!("HTTP {status}: {message}"), retry_after)
                }
                Err(err) => (true, err.to_string(), None),
            };
            if !retry || attempt >= self.config.max_retries {
                let tries = attempt + 1;
                return Err(remote(format!("{reason} (after {tries} attempt(s))")));
            }
            let backoff = self
                .config
                .initial_backoff_ms
                .saturating_mul(1 << attempt.min(20))
                .min(self.config.max_backoff_ms);
            let wait = retry_after.map_or(backoff, |s| {
                backoff
                    .max(s.saturating_mul(1000))
                    .min(self.config.max_backoff_ms)
            });
            tracing::warn!(%url, attempt, wait_ms = wait, %reason, "retrying the policy endpoint");
            std::thread::sleep(Duration::from_millis(wait));
            attempt += 1;
        }
    }
}
