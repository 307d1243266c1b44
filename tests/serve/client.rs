//! [`RemotePolicy`] against our own server equals the local policy; it retries 5xx answers
//! with backoff and gives up on 4xx ones with the server's message.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::Arc;

use agent_rl::core::generation::SamplingConfig;
use agent_rl::core::{ChatRequest, Message, Policy, ToolSpec};
use agent_rl::remote::{RemoteConfig, RemotePolicy};
use serde_json::json;

use super::common::{config, tiny_policy, tiny_server};

fn remote(base_url: String) -> RemoteConfig {
    RemoteConfig {
        base_url,
        model: "tiny".into(),
        initial_backoff_ms: 1,
        max_backoff_ms: 5,
        max_concurrency: 4,
        ..RemoteConfig::default()
    }
}

#[test]
fn remote_policy_is_token_exact_with_our_server() {
    let server = tiny_server(config());
    let mut local = tiny_policy(3);
    let tool = ToolSpec::new("f", "a tool", json!({"type": "object"}));
    let requests: Vec<ChatRequest> = (0..6)
        .map(|i| ChatRequest {
            messages: vec![
                Message::system("Be brief."),
                Message::user(format!("question {i}")),
            ],
            tools: if i % 2 == 0 {
                vec![tool.clone()]
            } else {
                vec![]
            },
        })
        .collect();
    let sampling = SamplingConfig {
        ignore_eos: true,
        ..SamplingConfig::greedy(6)
    };
    let mut client = RemotePolicy::new(&remote(server.base_url()))
        .unwrap()
        .with_tokenizer(Arc::clone(&local.tokenizer));
    let got = client.generate(&requests, &sampling).unwrap();
    let want = local.generate(&requests, &sampling).unwrap();
    assert_eq!(got.len(), 6);
    for (got, want) in got.iter().zip(&want) {
        assert_eq!(got.token_ids, want.token_ids);
        assert_eq!(got.text, want.text);
        assert_eq!(got.parsed, want.parsed);
        assert_eq!(got.finish_reason, want.finish_reason);
        for (a, b) in got.logprobs.iter().zip(&want.logprobs) {
            assert!((a - b).abs() < 1e-5, "{a} vs {b}");
        }
    }
    assert_eq!(client.retokenized(), 0);
    assert!(server.metrics().requests >= 6);
}

/// A one-connection-at-a-time HTTP server answering each request with the next canned reply.
fn canned_server(replies: Vec<(u16, String)>) -> (String, std::thread::JoinHandle<usize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let handle = std::thread::spawn(move || {
        let mut served = 0;
        for (status, body) in replies {
            let (stream, _) = listener.accept().unwrap();
            let mut reader = BufReader::new(stream);
            let mut length = 0;
            loop {
                let mut line = String::new();
                reader.read_line(&mut line).unwrap();
                if let Some(value) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    length = value.trim().parse().unwrap();
                }
                if line == "\r\n" {
                    break;
                }
            }
            let mut request = vec![0; length];
            reader.read_exact(&mut request).unwrap();
            let mut stream = reader.into_inner();
            write!(stream, "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}", body.len()).unwrap();
            served += 1;
        }
        served
    });
    (url, handle)
}

#[test]
fn retries_5xx_then_succeeds_and_marks_answers_without_ids() {
    let busy = json!({"error": {"message": "overloaded"}}).to_string();
    let ok = json!({"choices": [{"index": 0, "finish_reason": "stop",
        "message": {"role": "assistant", "content": "hello", "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{\"x\": 1}"}}]}}]})
    .to_string();
    let (url, server) = canned_server(vec![(503, busy.clone()), (429, busy), (200, ok)]);
    let tokenizer = Arc::new(agent_rl_test_support::tiny_tokenizer().unwrap());
    let mut client = RemotePolicy::new(&remote(url))
        .unwrap()
        .with_tokenizer(Arc::clone(&tokenizer));
    let request = ChatRequest {
        messages: vec![Message::user("hi")],
        tools: vec![],
    };
    let out = client
        .generate(&[request], &SamplingConfig::greedy(4))
        .unwrap();
    assert_eq!(server.join().unwrap(), 3);
    assert_eq!(out[0].text, "hello");
    assert_eq!(out[0].parsed.tool_calls[0].name, "f");
    assert_eq!(out[0].parsed.tool_calls[0].arguments, json!({"x": 1}));
    assert_eq!(out[0].token_ids, tokenizer.encode("hello").unwrap());
    assert_eq!(client.retokenized(), 1);
}

#[test]
fn client_errors_are_not_retried_and_carry_the_message() {
    let bad = json!({"error": {"message": "the model `x` does not exist"}}).to_string();
    let (url, server) = canned_server(vec![(404, bad)]);
    let mut client = RemotePolicy::new(&remote(url)).unwrap();
    let request = ChatRequest {
        messages: vec![Message::user("hi")],
        tools: vec![],
    };
    let err = client
        .generate(&[request], &SamplingConfig::greedy(4))
        .unwrap_err();
    assert_eq!(server.join().unwrap(), 1);
    let text = err.to_string();
    assert!(
        text.contains("404") && text.contains("does not exist"),
        "{text}"
    );
    let missing = RemoteConfig {
        api_key_env: Some("AGENT_RL_TEST_NO_SUCH_VAR".into()),
        ..RemoteConfig::default()
    };
    assert!(
        RemotePolicy::new(&missing)
            .unwrap_err()
            .to_string()
            .contains("AGENT_RL_TEST_NO_SUCH_VAR")
    );
}
