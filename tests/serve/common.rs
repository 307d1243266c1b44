//! Servers over tiny models, and a raw HTTP helper.

use std::path::PathBuf;
use std::sync::Arc;

use agent_rl::backend::CpuBackend;
use agent_rl::core::weights::random_model;
use agent_rl::core::{BurnPolicy, Qwen2Config};
use agent_rl::serve::{ServeConfig, ServerHandle, start};
use agent_rl_test_support::{tiny_config, tiny_tokenizer};
use serde_json::Value;

/// The committed tiny HF snapshot (context 256) that the CLI tests also load.
pub fn fixture_model() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("agent-rl-core/tests/fixtures/qwen2_tiny/tied_f32")
}

/// A seeded tiny random model with the fixture tokenizer and a 2048-token context (room for
/// tool schemas, which the byte-level fixture tokenizer spells almost a token per byte).
pub fn tiny_policy(seed: u64) -> BurnPolicy<CpuBackend> {
    let config = Qwen2Config {
        max_position_embeddings: 2048,
        ..tiny_config()
    };
    let model = random_model::<CpuBackend>(&config, seed, 0.3, &Default::default()).unwrap();
    BurnPolicy::new(model, Arc::new(tiny_tokenizer().unwrap()))
}

/// Loopback, any free port.
pub fn config() -> ServeConfig {
    ServeConfig {
        port: 0,
        model_name: "tiny".into(),
        ..ServeConfig::default()
    }
}

/// [`tiny_policy`] served with `config`.
pub fn tiny_server(config: ServeConfig) -> ServerHandle {
    start(tiny_policy(3), config).unwrap()
}

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into()
}

/// POSTs raw bytes to `path` (under the server's root) and returns the status and body.
pub fn post_raw(
    server: &ServerHandle,
    path: &str,
    body: &[u8],
    key: Option<&str>,
) -> (u16, String) {
    let mut request = agent()
        .post(format!("http://{}{path}", server.address()))
        .header("Content-Type", "application/json");
    if let Some(key) = key {
        request = request.header("Authorization", &format!("Bearer {key}"));
    }
    let mut response = request.send(body).unwrap();
    let status = response.status().as_u16();
    (status, response.body_mut().read_to_string().unwrap())
}

/// POSTs JSON and parses the JSON answer.
pub fn post(server: &ServerHandle, path: &str, body: &Value) -> (u16, Value) {
    let (status, text) = post_raw(server, path, body.to_string().as_bytes(), None);
    (
        status,
        serde_json::from_str(&text).unwrap_or_else(|_| panic!("not JSON: {text}")),
    )
}

/// GETs `path`.
pub fn get(server: &ServerHandle, path: &str, key: Option<&str>) -> (u16, String) {
    let mut request = agent().get(format!("http://{}{path}", server.address()));
    if let Some(key) = key {
        request = request.header("Authorization", &format!("Bearer {key}"));
    }
    let mut response = request.call().unwrap();
    let status = response.status().as_u16();
    (status, response.body_mut().read_to_string().unwrap())
}

/// The ids of a JSON array.
pub fn ids(value: &Value) -> Vec<u32> {
    value
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap() as u32)
        .collect()
}
