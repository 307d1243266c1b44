//! Every malformed request class gets its status and an OpenAI-shaped error; the server keeps
//! serving afterwards.

use serde_json::{Value, json};

use super::common::{config, get, post, post_raw, tiny_server};
use agent_rl::serve::ServeConfig;

fn assert_error(status: u16, body: &str, want_status: u16, want_param: Option<&str>) {
    assert_eq!(status, want_status, "{body}");
    let value: Value = serde_json::from_str(body).unwrap();
    let error = &value["error"];
    assert!(
        error["message"].as_str().is_some_and(|m| !m.is_empty()),
        "{body}"
    );
    assert!(error["type"].is_string(), "{body}");
    if let Some(param) = want_param {
        assert_eq!(error["param"], param, "{body}");
    }
}

#[test]
fn malformed_requests_get_openai_errors_with_4xx_codes() {
    let server = tiny_server(ServeConfig {
        max_tokens_limit: 64,
        max_request_bytes: 4096,
        ..config()
    });
    let chat = |body: &Value| {
        let (status, value) = post(&server, "/v1/chat/completions", body);
        (status, value.to_string())
    };
    let user = json!([{"role": "user", "content": "hi"}]);
    let (status, body) = post_raw(
        &server,
        "/v1/chat/completions",
        b"{\"model\": \"tiny\", ",
        None,
    );
    assert_error(status, &body, 400, None);
    let (status, body) = chat(&json!({"model": "nope", "messages": user}));
    assert_error(status, &body, 404, Some("model"));
    let (status, body) = chat(&json!({"model": "tiny", "messages": user, "temperature": "hot"}));
    assert_error(status, &body, 400, None);
    let (status, body) = chat(&json!({"model": "tiny", "messages": "hi"}));
    assert_error(status, &body, 400, None);
    let (status, body) = chat(&json!({"model": "tiny", "messages": user, "max_tokens": 65}));
    assert_error(status, &body, 400, Some("max_tokens"));
    let (status, body) =
        chat(&json!({"model": "tiny", "messages": user, "max_completion_tokens": 100000}));
    assert_error(status, &body, 400, Some("max_completion_tokens"));
    let (status, body) = chat(&json!({"model": "tiny", "messages": user, "n": 0}));
    assert_error(status, &body, 400, Some("n"));
    let (status, body) = chat(&json!({"model": "tiny", "messages": user, "top_logprobs": 3}));
    assert_error(status, &body, 400, Some("top_logprobs"));
    let (status, body) =
        chat(&json!({"model": "tiny", "messages": [{"role": "wizard", "content": "x"}]}));
    assert_error(status, &body, 400, Some("messages[0].role"));
    let (status, body) =
        chat(&json!({"model": "tiny", "messages": user, "tool_choice": "required"}));
    assert_error(status, &body, 400, Some("tool_choice"));
    let (status, body) = chat(
        &json!({"model": "tiny", "messages": [{"role": "assistant", "content": null,
        "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": "{oops"}}]}]}),
    );
    assert_error(status, &body, 400, None);
    let big = format!(
        "{{\"model\": \"tiny\", \"messages\": [{{\"role\": \"user\", \"content\": \"{}\"}}]}}",
        "x".repeat(5000)
    );
    let (status, body) = post_raw(&server, "/v1/chat/completions", big.as_bytes(), None);
    assert_error(status, &body, 413, None);
    let (status, body) = post(
        &server,
        "/v1/completions",
        &json!({"model": "tiny", "prompt": [1, 2, 99999]}),
    );
    assert_error(status, &body.to_string(), 400, Some("prompt[0]"));
    let (status, body) = post_raw(&server, "/v1/nothing", b"{}", None);
    assert_error(status, &body, 404, None);
    // Still serving.
    let (status, body) = chat(&json!({"model": "tiny", "messages": user, "max_tokens": 2}));
    assert_eq!(status, 200, "{body}");
}

#[test]
fn api_key_is_required_when_set() {
    let server = tiny_server(ServeConfig {
        api_key: Some("k3y".into()),
        ..config()
    });
    let body =
        json!({"model": "tiny", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 2})
            .to_string();
    let (status, text) = post_raw(&server, "/v1/chat/completions", body.as_bytes(), None);
    assert_error(status, &text, 401, None);
    let (status, text) = post_raw(
        &server,
        "/v1/chat/completions",
        body.as_bytes(),
        Some("wrong"),
    );
    assert_error(status, &text, 401, None);
    let (status, text) = get(&server, "/v1/models", None);
    assert_error(status, &text, 401, None);
    let (status, text) = post_raw(
        &server,
        "/v1/chat/completions",
        body.as_bytes(),
        Some("k3y"),
    );
    assert_eq!(status, 200, "{text}");
    let (status, text) = get(&server, "/v1/models", Some("k3y"));
    assert_eq!(status, 200, "{text}");
    assert!(text.contains("\"tiny\""));
}
