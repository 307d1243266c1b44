//! Servers over tiny models, and a raw HTTP helper.

use std::io::{BufRead, BufReader, ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use agent_rl::backend::CpuBackend;
use agent_rl::core::weights::random_model;
use agent_rl::core::{BurnPolicy, Qwen2Config};
use agent_rl::serve::{ServeConfig, ServerHandle, start};
use agent_rl_test_support::{tiny_config, tiny_tokenizer};
use serde_json::{Value, json};

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

/// The environment variable test clients read the API key from (`RemoteConfig::api_key_env`):
/// cargo sets it when it runs tests, while setting a variable would race other tests' threads.
pub const KEY_ENV: &str = "CARGO_PKG_NAME";

/// The API key of test servers that need one (weight updates need it): [`KEY_ENV`]'s value.
pub fn test_key() -> String {
    std::env::var(KEY_ENV).unwrap_or_else(|_| panic!("{KEY_ENV} is not set: run under cargo"))
}

/// POSTs JSON (with [`test_key`], which servers without a key ignore) and parses the JSON
/// answer.
pub fn post(server: &ServerHandle, path: &str, body: &Value) -> (u16, Value) {
    let key = std::env::var(KEY_ENV).ok();
    let (status, text) = post_raw(server, path, body.to_string().as_bytes(), key.as_deref());
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

/// One HTTP/1.1 exchange on a fresh loopback connection: writes `request` as given (any
/// headers, any body), reads until the server closes, and returns the status, the headers
/// (names lower-cased) and the body.
pub fn raw_exchange(address: SocketAddr, request: &[u8]) -> (u16, Vec<(String, String)>, String) {
    let mut stream = TcpStream::connect(address).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    stream.write_all(request).unwrap();
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    let answer = String::from_utf8_lossy(&answer).into_owned();
    let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|line| line.split(' ').nth(1))
        .and_then(|code| code.parse().ok())
        .unwrap_or_else(|| panic!("no status line in {answer:?}"));
    let headers = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(name, value)| (name.trim().to_ascii_lowercase(), value.trim().to_owned()))
        .collect();
    (status, headers, body.to_owned())
}

/// A `POST` of `body` to `path` with `Connection: close` and the given extra header lines
/// (each `Name: value`); `Host` is the server's address unless one of `headers` sets it.
pub fn raw_post(path: &str, address: SocketAddr, headers: &[&str], body: &str) -> Vec<u8> {
    let mut request = format!("POST {path} HTTP/1.1\r\n");
    if !headers
        .iter()
        .any(|h| h.to_ascii_lowercase().starts_with("host:"))
    {
        request.push_str(&format!("Host: {address}\r\n"));
    }
    for header in headers {
        request.push_str(header);
        request.push_str("\r\n");
    }
    request.push_str(&format!(
        "Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    ));
    request.into_bytes()
}

/// A chat body of about `bytes` bytes of distinct words (under the body limit, far over the
/// context).
pub fn huge_chat(bytes: usize) -> String {
    let mut content = String::with_capacity(bytes + 16);
    let mut word = 0_usize;
    while content.len() < bytes {
        content.push_str(&format!("w{word:x} "));
        word += 1;
    }
    json!({"model": "tiny", "messages": [{"role": "user", "content": content}]}).to_string()
}

/// Writes `first`, then one more `drip` every 100 ms until the server closes the connection;
/// returns how long that took (`None`: still open after 10 s). Whatever the server answered
/// before closing is left in `answer`.
pub fn drip_until_closed(
    address: SocketAddr,
    first: &[u8],
    drip: &[u8],
    answer: &mut Vec<u8>,
) -> Option<Duration> {
    let mut socket = TcpStream::connect(address).unwrap();
    let start = Instant::now();
    socket.write_all(first).unwrap();
    socket
        .set_read_timeout(Some(Duration::from_millis(100)))
        .unwrap();
    let mut buffer = [0_u8; 4096];
    while start.elapsed() < Duration::from_secs(10) {
        match socket.read(&mut buffer) {
            Ok(0) => return Some(start.elapsed()),
            Ok(read) => answer.extend_from_slice(&buffer[..read]),
            Err(err) if matches!(err.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                if socket.write_all(drip).is_err() {
                    return Some(start.elapsed());
                }
            }
            Err(_) => return Some(start.elapsed()),
        }
    }
    None
}

/// Kills the server process when the test ends, whatever happens.
pub struct Child(pub std::process::Child);

impl Drop for Child {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `agent-rl serve --model <model> --served-model-name tiny` on a free loopback port (with
/// `extra` flags) and its base URL.
pub fn serve(model: &str, extra: &[&str]) -> (Child, String) {
    let mut child = Child(
        Command::new(env!("CARGO_BIN_EXE_agent-rl"))
            .args([
                "serve",
                "--model",
                model,
                "--port",
                "0",
                "--served-model-name",
                "tiny",
            ])
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let mut line = String::new();
    BufReader::new(child.0.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line.trim().rsplit(' ').next().unwrap().to_owned();
    assert!(url.starts_with("http://127.0.0.1:"), "{line}");
    (child, url)
}
