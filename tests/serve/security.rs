//! The server against hostile clients and web pages: abandoned work stops, the queue is bounded,
//! huge prompts are refused off the HTTP threads, cross-origin requests are refused by default,
//! half-sent requests are cut off.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use agent_rl::serve::{ServeConfig, start};
use serde_json::{Value, json};

use super::common::{
    config, drip_until_closed, get, huge_chat, post, post_raw, raw_exchange, raw_post, tiny_policy,
    tiny_server,
};

const JSON: &str = "Content-Type: application/json";

/// A chat request for `max_tokens` tokens (`n` of them) that do not stop at an end token.
fn long_chat(max_tokens: usize, n: usize, stream: bool) -> String {
    json!({"model": "tiny", "messages": [{"role": "user", "content": "Go on"}],
        "max_tokens": max_tokens, "n": n, "ignore_eos": true, "stream": stream})
    .to_string()
}

fn short_chat() -> Value {
    json!({"model": "tiny", "messages": [{"role": "user", "content": "Hi"}], "max_tokens": 4})
}

/// Opens a connection, sends a long chat request on it and, for a stream, waits for its first
/// bytes; the caller abandons it by dropping the socket.
fn open_long_request(address: SocketAddr, max_tokens: usize, stream: bool) -> TcpStream {
    let mut socket = TcpStream::connect(address).unwrap();
    let body = long_chat(max_tokens, 2, stream);
    socket
        .write_all(&raw_post("/v1/chat/completions", address, &[JSON], &body))
        .unwrap();
    if stream {
        socket
            .set_read_timeout(Some(Duration::from_secs(30)))
            .unwrap();
        let mut first = [0_u8; 64];
        let read = socket.read(&mut first).unwrap();
        assert!(read > 0 && first.starts_with(b"HTTP/1.1 200"), "{first:?}");
    }
    socket
}

#[test]
fn abandoned_requests_stop_generating() {
    let server = tiny_server(config());
    let asked = 8 * 2 * 2000;
    let sockets: Vec<TcpStream> = (0..8)
        .map(|i| open_long_request(server.address(), 2000, i % 2 == 0))
        .collect();
    std::thread::sleep(Duration::from_millis(100));
    drop(sockets);
    // A short request queued behind the abandoned ones is answered once they are dropped.
    let (status, answer) = post(&server, "/v1/chat/completions", &short_chat());
    assert_eq!(status, 200, "{answer}");
    let metrics = server.metrics();
    assert!(metrics.requests >= 9, "{metrics:?}");
    assert!(
        metrics.generated_tokens < asked / 2,
        "abandoned requests went on generating: {} of the {asked} tokens they asked for",
        metrics.generated_tokens
    );
}

#[test]
fn a_full_queue_answers_429_with_a_json_error() {
    let server = tiny_server(ServeConfig {
        max_queued_requests: 2,
        ..config()
    });
    let holders: Vec<TcpStream> = (0..2)
        .map(|_| open_long_request(server.address(), 2000, true))
        .collect();
    let (status, text) = post_raw(
        &server,
        "/v1/chat/completions",
        short_chat().to_string().as_bytes(),
        None,
    );
    assert_eq!(status, 429, "{text}");
    let error: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(error["error"]["code"], "server_busy", "{text}");
    drop(holders);
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let (status, answer) = post(&server, "/v1/chat/completions", &short_chat());
        if status == 200 {
            break;
        }
        assert_eq!(status, 429, "{answer}");
        assert!(
            Instant::now() < deadline,
            "the abandoned requests still hold the queue"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn huge_prompts_are_refused_without_blocking_health() {
    let server = tiny_server(config());
    let body = huge_chat(4_000_000);
    let mut slowest = Duration::ZERO;
    std::thread::scope(|scope| {
        let senders: Vec<_> = (0..4)
            .map(|_| {
                scope.spawn(|| post_raw(&server, "/v1/chat/completions", body.as_bytes(), None))
            })
            .collect();
        while senders.iter().any(|sender| !sender.is_finished()) {
            let start = Instant::now();
            let (status, _) = get(&server, "/health", None);
            assert_eq!(status, 200);
            slowest = slowest.max(start.elapsed());
            std::thread::sleep(Duration::from_millis(20));
        }
        for sender in senders {
            let (status, text) = sender.join().unwrap();
            assert_eq!(status, 400, "{}", &text[..text.len().min(300)]);
            assert!(text.contains("context"), "{text}");
        }
    });
    assert!(
        slowest < Duration::from_secs(1),
        "/health took {slowest:?} while huge prompts were tokenized"
    );
}

#[test]
fn cross_origin_requests_are_refused_by_default() {
    let server = tiny_server(config());
    let address = server.address();
    let body = short_chat().to_string();
    let send = |headers: &[&str]| {
        let (status, _, text) = raw_exchange(
            address,
            &raw_post("/v1/chat/completions", address, headers, &body),
        );
        (status, text)
    };
    // What a web page may send without a CORS preflight.
    for content_type in [
        "Content-Type: text/plain",
        "Content-Type: application/x-www-form-urlencoded",
    ] {
        let (status, text) = send(&[content_type]);
        assert_eq!(status, 415, "{content_type}: {text}");
        assert!(text.contains("application/json"), "{text}");
    }
    let (status, text) = send(&[]);
    assert_eq!(status, 415, "no Content-Type: {text}");
    let (status, text) = send(&[JSON, "Origin: http://evil.example"]);
    assert_eq!(status, 403, "{text}");
    assert!(text.contains("--allow-origin"), "{text}");
    // DNS rebinding: the page's own name resolving to the loopback address.
    let host = format!("Host: evil.example:{}", address.port());
    let (status, text) = send(&[JSON, &host]);
    assert_eq!(status, 403, "{text}");
    assert!(text.contains("--allow-host"), "{text}");
    let models = format!(
        "GET /v1/models HTTP/1.1\r\nHost: {address}\r\nOrigin: http://evil.example\r\n\
         Connection: close\r\n\r\n"
    );
    assert_eq!(raw_exchange(address, models.as_bytes()).0, 403);
    // Local clients pass: the bound address, localhost, JSON with a charset.
    let (status, text) = send(&[JSON]);
    assert_eq!(status, 200, "{text}");
    let host = format!("Host: localhost:{}", address.port());
    let (status, text) = send(&["Content-Type: application/json; charset=utf-8", &host]);
    assert_eq!(status, 200, "{text}");
}

#[test]
fn allowed_origins_and_hosts_are_opt_in() {
    let server = tiny_server(ServeConfig {
        allow_origins: vec!["http://app.example".into()],
        allow_hosts: vec!["gpu-box".into()],
        ..config()
    });
    let address = server.address();
    let preflight = format!(
        "OPTIONS /v1/chat/completions HTTP/1.1\r\nHost: {address}\r\n\
         Origin: http://app.example\r\nAccess-Control-Request-Method: POST\r\n\
         Access-Control-Request-Headers: content-type, authorization\r\nConnection: close\r\n\r\n"
    );
    let (status, headers, _) = raw_exchange(address, preflight.as_bytes());
    assert_eq!(status, 204, "{headers:?}");
    let header = |headers: &[(String, String)], name: &str| {
        headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.to_ascii_lowercase())
            .unwrap_or_default()
    };
    assert_eq!(
        header(&headers, "access-control-allow-origin"),
        "http://app.example"
    );
    let allowed = header(&headers, "access-control-allow-headers");
    assert!(
        allowed.contains("content-type") && allowed.contains("authorization"),
        "{allowed}"
    );
    let body = short_chat().to_string();
    let request = raw_post(
        "/v1/chat/completions",
        address,
        &[JSON, "Origin: http://app.example"],
        &body,
    );
    let (status, headers, text) = raw_exchange(address, &request);
    assert_eq!(status, 200, "{text}");
    assert_eq!(
        header(&headers, "access-control-allow-origin"),
        "http://app.example"
    );
    let request = raw_post(
        "/v1/chat/completions",
        address,
        &[JSON, "Origin: http://evil.example"],
        &body,
    );
    assert_eq!(raw_exchange(address, &request).0, 403);
    let host = format!("Host: gpu-box:{}", address.port());
    let request = raw_post("/v1/chat/completions", address, &[JSON, &host], &body);
    let (status, _, text) = raw_exchange(address, &request);
    assert_eq!(status, 200, "{text}");
}

#[test]
fn weight_updates_need_an_api_key() {
    let refused = start(
        tiny_policy(3),
        ServeConfig {
            allow_weight_updates: true,
            ..config()
        },
    );
    let message = refused.map(|_| ()).unwrap_err().to_string();
    assert!(
        message.contains("api_key") && message.contains("allow_weight_updates"),
        "{message}"
    );
    let server = tiny_server(ServeConfig {
        allow_weight_updates: true,
        api_key: Some("k3y".into()),
        ..config()
    });
    let body = json!({"model_path": "/no/such/checkpoint"}).to_string();
    let (status, text) = post_raw(&server, "/update_weights_from_disk", body.as_bytes(), None);
    assert_eq!(status, 401, "{text}");
    let (status, text) = post_raw(
        &server,
        "/update_weights_from_disk",
        body.as_bytes(),
        Some("k3y"),
    );
    assert_eq!(status, 400, "{text}");
}

#[test]
fn half_sent_requests_are_closed_after_the_read_timeouts() {
    let server = tiny_server(ServeConfig {
        header_read_timeout_ms: 500,
        body_read_timeout_ms: 500,
        ..config()
    });
    let address = server.address();
    let bound = Duration::from_secs(4);
    let mut answer = Vec::new();
    let head = format!("POST /v1/chat/completions HTTP/1.1\r\nHost: {address}\r\n");
    let took = drip_until_closed(address, head.as_bytes(), b"X-Slow: 1\r\n", &mut answer);
    assert!(
        took.is_some_and(|took| took < bound),
        "headers sent slowly held the connection for {took:?}"
    );
    let head = format!(
        "POST /v1/chat/completions HTTP/1.1\r\nHost: {address}\r\n{JSON}\r\n\
         Content-Length: 100000\r\n\r\n{{\"model\": "
    );
    let mut answer = Vec::new();
    let took = drip_until_closed(address, head.as_bytes(), b" ", &mut answer);
    assert!(
        took.is_some_and(|took| took < bound),
        "a body sent slowly held the connection for {took:?}"
    );
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains("request_timeout"), "{answer}");
    // A connection that never sends anything is closed too.
    let mut answer = Vec::new();
    let took = drip_until_closed(address, b"", b"", &mut answer);
    assert!(took.is_some_and(|took| took < bound), "{took:?}");
    // The server still serves.
    let (status, answer) = post(&server, "/v1/chat/completions", &short_chat());
    assert_eq!(status, 200, "{answer}");
}
