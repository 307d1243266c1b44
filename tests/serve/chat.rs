//! Chat and text completions over HTTP agree with the local model: greedy tokens, sampled tokens
//! per seed and choice, log-probabilities, prompts with tool calls and results; concurrent
//! requests are batched without changing their answers.

use agent_rl::core::generation::{SamplingConfig, generate_ids};
use agent_rl::core::{ChatRequest, Message, Policy, ToolCall, ToolSpec};
use serde_json::{Value, json};

use super::common::{config, get, ids, post, tiny_policy, tiny_server};
use agent_rl::serve::ServeConfig;

#[test]
fn greedy_chat_matches_the_local_policy_with_ids_and_logprobs() {
    let server = tiny_server(config());
    let (status, answer) = post(
        &server,
        "/v1/chat/completions",
        &json!({
        "model": "tiny", "messages": [{"role": "user", "content": "Say hi"}],
        "temperature": 0, "max_tokens": 8, "logprobs": true, "top_logprobs": 3, "ignore_eos": true}),
    );
    assert_eq!(status, 200, "{answer}");
    let mut local = tiny_policy(3);
    let request = ChatRequest {
        messages: vec![Message::user("Say hi")],
        tools: vec![],
    };
    let sampling = SamplingConfig {
        ignore_eos: true,
        ..SamplingConfig::greedy(8)
    };
    let want = local
        .generate(std::slice::from_ref(&request), &sampling)
        .unwrap()
        .remove(0);
    let choice = &answer["choices"][0];
    assert_eq!(ids(&choice["token_ids"]), want.token_ids);
    let prompt = local
        .tokenizer
        .encode_chat(&request.messages, &[], true)
        .unwrap();
    assert_eq!(ids(&answer["prompt_token_ids"]), prompt);
    assert_eq!(choice["message"]["content"], want.text.as_str());
    assert_eq!(choice["finish_reason"], "length");
    assert_eq!(answer["usage"]["prompt_tokens"], prompt.len());
    assert_eq!(answer["usage"]["completion_tokens"], 8);
    let entries = choice["logprobs"]["content"].as_array().unwrap();
    assert_eq!(entries.len(), 8);
    for ((entry, &id), &logprob) in entries.iter().zip(&want.token_ids).zip(&want.logprobs) {
        assert_eq!(entry["token_id"], id);
        assert!((entry["logprob"].as_f64().unwrap() as f32 - logprob).abs() < 1e-5);
        let top = entry["top_logprobs"].as_array().unwrap();
        assert_eq!(top.len(), 3);
        assert_eq!(top[0]["token_id"], id, "greedy picks the most likely token");
    }
}

#[test]
fn n_choices_follow_the_seed_like_local_generation() {
    let server = tiny_server(config());
    let body = json!({"model": "tiny", "messages": [{"role": "user", "content": "Count"}],
        "n": 3, "temperature": 1.0, "seed": 7, "max_tokens": 6, "ignore_eos": true});
    let (status, first) = post(&server, "/v1/chat/completions", &body);
    assert_eq!(status, 200, "{first}");
    let (_, second) = post(&server, "/v1/chat/completions", &body);
    let local = tiny_policy(3);
    let prompt = ids(&first["prompt_token_ids"]);
    let sampling = SamplingConfig {
        temperature: 1.0,
        seed: 7,
        ignore_eos: true,
        ..SamplingConfig::greedy(6)
    };
    let want = generate_ids(
        &local.model,
        &vec![prompt; 3],
        &sampling,
        &local.tokenizer.eos_ids,
    )
    .unwrap();
    let choices = first["choices"].as_array().unwrap();
    assert_eq!(choices.len(), 3);
    for (i, choice) in choices.iter().enumerate() {
        assert_eq!(choice["index"], i);
        assert_eq!(ids(&choice["token_ids"]), want[i].token_ids);
        assert_eq!(choice["token_ids"], second["choices"][i]["token_ids"]);
    }
    assert_ne!(want[0].token_ids, want[1].token_ids, "streams differ");
}

#[test]
fn tool_calls_and_results_in_the_request_render_like_the_chat_template() {
    let server = tiny_server(config());
    let tool = json!({"type": "function", "function": {"name": "get_weather",
        "description": "Weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}});
    let messages = json!([
        {"role": "user", "content": [{"type": "text", "text": "Weather in Paris?"}]},
        {"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function",
            "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "sunny"},
    ]);
    let (status, answer) = post(
        &server,
        "/v1/chat/completions",
        &json!({
        "model": "tiny", "messages": messages, "tools": [tool], "temperature": 0, "max_tokens": 4}),
    );
    assert_eq!(status, 200, "{answer}");
    let local = tiny_policy(3);
    let tools: Vec<ToolSpec> = vec![serde_json::from_value(tool).unwrap()];
    let mut call = ToolCall::new("get_weather", json!({"city": "Paris"}));
    call.id = Some("call_1".into());
    let mut result = Message::tool("get_weather", "sunny");
    result.tool_call_id = Some("call_1".into());
    let conversation = vec![
        Message::user("Weather in Paris?"),
        Message::assistant_tool_calls(None, vec![call]),
        result,
    ];
    let prompt = local
        .tokenizer
        .encode_chat(&conversation, &tools, true)
        .unwrap();
    assert_eq!(ids(&answer["prompt_token_ids"]), prompt);
    let message = &answer["choices"][0]["message"];
    assert_eq!(message["role"], "assistant");
    assert!(
        message["content"].is_string() || message["tool_calls"].is_array(),
        "{answer}"
    );
}

#[test]
fn a_named_tool_choice_starts_the_output_with_that_call() {
    let server = tiny_server(config());
    let tool = json!({"type": "function", "function": {"name": "lookup", "parameters": {"type": "object"}}});
    let (status, answer) = post(
        &server,
        "/v1/chat/completions",
        &json!({
        "model": "tiny", "messages": [{"role": "user", "content": "go"}], "tools": [tool],
        "tool_choice": {"type": "function", "function": {"name": "lookup"}},
        "temperature": 0, "max_tokens": 4}),
    );
    assert_eq!(status, 200, "{answer}");
    let local = tiny_policy(3);
    let tools: Vec<ToolSpec> = vec![serde_json::from_value(tool).unwrap()];
    let text = local
        .tokenizer
        .apply_chat_template(&[Message::user("go")], &tools, true)
        .unwrap();
    let prefill = "<tool_call>\n{\"name\": \"lookup\", \"arguments\": ";
    let prompt = local.tokenizer.encode(&format!("{text}{prefill}")).unwrap();
    assert_eq!(ids(&answer["prompt_token_ids"]), prompt);
    // Four random tokens cannot close the call: it is malformed, so the text is kept whole.
    let message = &answer["choices"][0]["message"];
    assert!(
        message["content"].as_str().unwrap().starts_with(prefill),
        "{answer}"
    );
}

#[test]
fn text_completions_take_ids_and_report_legacy_logprobs() {
    let server = tiny_server(config());
    let (status, answer) = post(
        &server,
        "/v1/completions",
        &json!({
        "model": "tiny", "prompt": [[5, 6, 7], [9, 10]], "temperature": 0, "max_tokens": 5,
        "logprobs": 2, "ignore_eos": true}),
    );
    assert_eq!(status, 200, "{answer}");
    let local = tiny_policy(3);
    let sampling = SamplingConfig {
        ignore_eos: true,
        ..SamplingConfig::greedy(5)
    };
    for (i, prompt) in [vec![5, 6, 7], vec![9, 10]].into_iter().enumerate() {
        let want = generate_ids(&local.model, std::slice::from_ref(&prompt), &sampling, &[])
            .unwrap()
            .remove(0);
        let choice = &answer["choices"][i];
        assert_eq!(ids(&choice["token_ids"]), want.token_ids);
        assert_eq!(ids(&choice["prompt_token_ids"]), prompt);
        assert_eq!(
            choice["text"],
            local.tokenizer.decode(&want.token_ids, true).unwrap()
        );
        let logprobs = &choice["logprobs"];
        assert_eq!(logprobs["tokens"].as_array().unwrap().len(), 5);
        // The legacy shape keys alternatives by their text: two ids that decode alike share one key.
        let alternatives = logprobs["top_logprobs"][0].as_object().unwrap().len();
        assert!((1..=2).contains(&alternatives), "{logprobs}");
        let first = logprobs["token_logprobs"][0].as_f64().unwrap() as f32;
        assert!((first - want.logprobs[0]).abs() < 1e-5);
    }
    assert_eq!(answer["usage"]["prompt_tokens"], 5);
    assert_eq!(answer["usage"]["completion_tokens"], 10);
}

#[test]
fn stop_strings_end_the_choice_and_are_left_out() {
    let server = tiny_server(config());
    let body = |stop: Value| {
        json!({"model": "tiny", "prompt": [5, 6], "temperature": 0,
        "max_tokens": 12, "ignore_eos": true, "stop": stop})
    };
    let (_, free) = post(&server, "/v1/completions", &body(Value::Null));
    let text = free["choices"][0]["text"].as_str().unwrap().to_owned();
    let stop: String = text.chars().skip(3).take(2).collect();
    let cut = text.find(&stop).unwrap();
    let (status, stopped) = post(&server, "/v1/completions", &body(json!([stop])));
    assert_eq!(status, 200, "{stopped}");
    assert_eq!(stopped["choices"][0]["text"], &text[..cut]);
    assert_eq!(stopped["choices"][0]["finish_reason"], "stop");
}

#[test]
fn concurrent_requests_share_batches_and_keep_their_answers() {
    let server = tiny_server(ServeConfig {
        batch_wait_ms: 100,
        ..config()
    });
    let local = tiny_policy(3);
    let prompts: Vec<Vec<u32>> = (0..16u32)
        .map(|i| (0..(2 + i % 5)).map(|j| 3 + i + j).collect())
        .collect();
    let answers: Vec<(u16, Value)> = std::thread::scope(|scope| {
        let handles: Vec<_> = prompts
            .iter()
            .map(|prompt| {
                let server = &server;
                scope.spawn(move || {
                    post(
                        server,
                        "/v1/completions",
                        &json!({"model": "tiny",
                    "prompt": prompt, "temperature": 0, "max_tokens": 6, "ignore_eos": true}),
                    )
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let sampling = SamplingConfig {
        ignore_eos: true,
        ..SamplingConfig::greedy(6)
    };
    for (prompt, (status, answer)) in prompts.iter().zip(&answers) {
        assert_eq!(*status, 200, "{answer}");
        let want = generate_ids(&local.model, std::slice::from_ref(prompt), &sampling, &[])
            .unwrap()
            .remove(0);
        assert_eq!(ids(&answer["choices"][0]["token_ids"]), want.token_ids);
    }
    let metrics = server.metrics();
    assert_eq!(metrics.requests, 16);
    assert!(metrics.batches < 16, "{metrics:?}");
    assert!(metrics.largest_batch > 1, "{metrics:?}");
    let (_, text) = get(&server, "/metrics", None);
    assert!(
        text.contains(&format!(
            "agent_rl_generation_batches_total {}",
            metrics.batches
        )),
        "{text}"
    );
}
