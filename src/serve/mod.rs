//! An OpenAI-compatible HTTP server for a local model (`agent-rl serve`).
//!
//! [`start`] serves a [`BurnPolicy`](agent_rl_core::BurnPolicy) on any burn backend:
//! `GET /v1/models`, `POST /v1/chat/completions` (tools, `tool_choice`, tool calls parsed into
//! OpenAI's shape, `n`, sampling, `seed`, `stop`, `logprobs`/`top_logprobs`, streaming with
//! `usage`), `POST /v1/completions`, vLLM's `POST /v1/load_lora_adapter` and
//! `/v1/unload_lora_adapter` (a request picks an adapter by naming it as `model`), `GET /metrics` (Prometheus counters) and `GET /health`.
//! Responses also carry the token ids (`prompt_token_ids`, and `token_ids` per choice, as vLLM
//! names them) so rollouts can stay token-in / token-out. Concurrent requests are decoded in
//! one batch. Errors are OpenAI-shaped JSON with 4xx/5xx codes; bodies and budgets are bounded;
//! the default address is loopback; an optional API key is compared in constant time.
//!
//! Hostile clients and web pages are expected: a request whose client goes away stops
//! generating at the next decode step; at most `max_queued_requests` are held (more get 429);
//! prompts are tokenized off the HTTP threads and refused as soon as they exceed the context;
//! headers and bodies must arrive within their read timeouts; requests from other web origins,
//! for other host names (DNS rebinding) or with non-JSON bodies are refused unless allowed;
//! replacing the weights needs the API key.
//!
//! ```no_run
//! use agent_rl::serve::{ServeConfig, start};
//! # fn main() -> anyhow::Result<()> {
//! let policy = agent_rl::backend::load_policy::<agent_rl::backend::CpuBackend>(
//!     std::path::Path::new("Qwen2.5-0.5B-Instruct"), &Default::default())?;
//! let server = start(policy, ServeConfig { port: 8000, ..ServeConfig::default() })?;
//! println!("{}", server.base_url());
//! server.wait()?;
//! # Ok(()) }
//! ```

mod admission;
mod auth;
mod bounded_encode;
mod completions;
mod config;
mod cross_origin;
mod engine;
mod error;
mod listener;
mod metrics;
mod plan;
mod response;
mod routes;
mod server;
mod stream;
mod wire;

pub use auth::ApiKey;
pub use config::ServeConfig;
pub use error::{ApiError, ServeError};
pub use metrics::{MetricsSnapshot, ServeMetrics};
pub use server::{ServerHandle, start};
pub use wire::{
    ChatCompletionRequest, CompletionRequest, LoadLoraRequest, PromptField, SamplingFields,
    StopField, StreamOptions, UnloadLoraRequest, WireMessage,
};
