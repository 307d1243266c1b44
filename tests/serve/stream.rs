//! Server-sent events carry the same tokens and text as the plain answer, then the finish,
//! the usage chunk and `[DONE]`.

use serde_json::{Value, json};

use super::common::{config, ids, post, post_raw, tiny_server};

/// The `data:` payloads of an event stream.
fn events(text: &str) -> Vec<String> {
    text.split("\n\n")
        .filter_map(|e| e.strip_prefix("data: "))
        .map(str::to_owned)
        .collect()
}

#[test]
fn chat_stream_matches_the_plain_answer_per_choice() {
    let server = tiny_server(config());
    let body = json!({"model": "tiny", "messages": [{"role": "user", "content": "Tell"}], "n": 2,
        "temperature": 0.8, "seed": 11, "max_tokens": 10, "ignore_eos": true, "stop": ["zz"]});
    let (status, plain) = post(&server, "/v1/chat/completions", &body);
    assert_eq!(status, 200, "{plain}");
    let mut streamed = body.clone();
    streamed["stream"] = json!(true);
    streamed["stream_options"] = json!({"include_usage": true});
    let (status, text) = post_raw(
        &server,
        "/v1/chat/completions",
        streamed.to_string().as_bytes(),
        None,
    );
    assert_eq!(status, 200, "{text}");
    let events = events(&text);
    assert_eq!(events.last().map(String::as_str), Some("[DONE]"));
    let chunks: Vec<Value> = events[..events.len() - 1]
        .iter()
        .map(|e| serde_json::from_str(e).unwrap())
        .collect();
    for index in 0..2 {
        let mut content = String::new();
        let mut token_ids = Vec::new();
        let mut finish = None;
        for chunk in &chunks {
            assert_eq!(chunk["object"], "chat.completion.chunk");
            for choice in chunk["choices"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|c| c["index"] == index)
            {
                content.push_str(choice["delta"]["content"].as_str().unwrap_or(""));
                if let Some(list) = choice.get("token_ids") {
                    token_ids.extend(ids(list));
                }
                if let Some(reason) = choice["finish_reason"].as_str() {
                    finish = Some(reason.to_owned());
                }
            }
        }
        let want = &plain["choices"][index];
        assert_eq!(content, want["message"]["content"].as_str().unwrap());
        assert_eq!(token_ids, ids(&want["token_ids"]));
        assert_eq!(finish.as_deref(), want["finish_reason"].as_str());
    }
    let usage = &chunks.last().unwrap()["usage"];
    assert_eq!(usage, &plain["usage"]);
    assert!(
        chunks.len() > 6,
        "tokens arrive in several chunks: {}",
        chunks.len()
    );
}

#[test]
fn completion_stream_with_tools_free_text_and_error_cases() {
    let server = tiny_server(config());
    let body = json!({"model": "tiny", "prompt": "abc", "temperature": 0, "max_tokens": 6,
        "ignore_eos": true});
    let (_, plain) = post(&server, "/v1/completions", &body);
    let mut streamed = body.clone();
    streamed["stream"] = json!(true);
    let (status, text) = post_raw(
        &server,
        "/v1/completions",
        streamed.to_string().as_bytes(),
        None,
    );
    assert_eq!(status, 200, "{text}");
    let joined: String = events(&text)
        .iter()
        .filter(|e| *e != "[DONE]")
        .map(|e| serde_json::from_str::<Value>(e).unwrap())
        .map(|c| c["choices"][0]["text"].as_str().unwrap_or("").to_owned())
        .collect();
    assert_eq!(joined, plain["choices"][0]["text"].as_str().unwrap());
    // A streaming request that is invalid is refused before any event, as JSON.
    streamed["max_tokens"] = json!(0);
    let (status, text) = post_raw(
        &server,
        "/v1/completions",
        streamed.to_string().as_bytes(),
        None,
    );
    assert_eq!(status, 400, "{text}");
}
