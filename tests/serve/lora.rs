//! vLLM's adapter endpoints: a loaded adapter, named as `model`, answers like the merged model
//! run locally; the base model is unchanged; unloading forgets it.

use std::path::PathBuf;

use agent_rl::backend::{CpuBackend, load_policy};
use agent_rl::core::generation::{SamplingConfig, generate_ids};
use agent_rl::core::lora::load_adapter;
use agent_rl::serve::{ServeConfig, start};
use serde_json::json;

use super::common::{config, get, ids, post, post_raw};

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("agent-rl-core/tests/fixtures")
}

#[test]
fn a_named_adapter_answers_like_the_merged_model() {
    let base_dir = fixtures().join("qwen2_tiny/untied_f32");
    let adapter_dir = fixtures().join("lora_tiny/adapter");
    let policy = load_policy::<CpuBackend>(&base_dir, &Default::default()).unwrap();
    let base_model = policy.model.clone();
    let server = start(
        policy,
        ServeConfig {
            allow_runtime_lora: true,
            ..config()
        },
    )
    .unwrap();
    let load = json!({"lora_name": "tuned", "lora_path": adapter_dir.to_str().unwrap()});
    let (status, text) = post_raw(
        &server,
        "/v1/load_lora_adapter",
        load.to_string().as_bytes(),
        None,
    );
    assert_eq!(status, 200, "{text}");
    let (_, models) = get(&server, "/v1/models", None);
    assert!(
        models.contains("\"tuned\"") && models.contains("\"parent\":\"tiny\""),
        "{models}"
    );
    let prompt = vec![3u32, 17, 42, 99, 5];
    let ask = |model: &str| {
        let (status, answer) = post(
            &server,
            "/v1/completions",
            &json!({"model": model,
            "prompt": prompt, "temperature": 0, "max_tokens": 8, "ignore_eos": true}),
        );
        assert_eq!(status, 200, "{answer}");
        ids(&answer["choices"][0]["token_ids"])
    };
    let sampling = SamplingConfig {
        ignore_eos: true,
        ..SamplingConfig::greedy(8)
    };
    let (adapted, _) = load_adapter(base_model.clone(), &adapter_dir).unwrap();
    let merged = adapted.merge_adapters();
    let want = generate_ids(&merged, std::slice::from_ref(&prompt), &sampling, &[])
        .unwrap()
        .remove(0);
    let base = generate_ids(&base_model, std::slice::from_ref(&prompt), &sampling, &[])
        .unwrap()
        .remove(0);
    assert_eq!(ask("tuned"), want.token_ids);
    assert_eq!(ask("tiny"), base.token_ids);
    assert_ne!(
        want.token_ids, base.token_ids,
        "the adapter changes the greedy output"
    );
    let unload = json!({"lora_name": "tuned"}).to_string();
    let (status, text) = post_raw(&server, "/v1/unload_lora_adapter", unload.as_bytes(), None);
    assert_eq!(status, 200, "{text}");
    let (status, _) = post(
        &server,
        "/v1/completions",
        &json!({"model": "tuned", "prompt": [1]}),
    );
    assert_eq!(status, 404);
    let (status, _) = post_raw(&server, "/v1/unload_lora_adapter", unload.as_bytes(), None);
    assert_eq!(status, 404);
    let bad = json!({"lora_name": "x", "lora_path": "/no/such/dir"}).to_string();
    let (status, text) = post_raw(&server, "/v1/load_lora_adapter", bad.as_bytes(), None);
    assert_eq!(status, 400, "{text}");
    assert!(text.contains("/no/such/dir"), "{text}");
}

#[test]
fn adapter_loading_is_off_by_default() {
    let server = super::common::tiny_server(config());
    let load = json!({"lora_name": "a", "lora_path": "/tmp"}).to_string();
    let (status, text) = post_raw(&server, "/v1/load_lora_adapter", load.as_bytes(), None);
    assert_eq!(status, 403, "{text}");
    assert!(text.contains("--allow-runtime-lora"), "{text}");
}

#[test]
fn the_remote_policy_publishes_an_adapter_and_samples_from_it() {
    use agent_rl::core::{ChatRequest, Message, Policy};
    use agent_rl::remote::{RemoteConfig, RemotePolicy};

    let base_dir = fixtures().join("qwen2_tiny/untied_f32");
    let adapter_dir = fixtures().join("lora_tiny/adapter");
    let policy = load_policy::<CpuBackend>(&base_dir, &Default::default()).unwrap();
    let (adapted, _) = load_adapter(policy.model.clone(), &adapter_dir).unwrap();
    let mut local =
        agent_rl::core::BurnPolicy::new(adapted, std::sync::Arc::clone(&policy.tokenizer));
    let server = start(
        policy,
        ServeConfig {
            allow_runtime_lora: true,
            ..config()
        },
    )
    .unwrap();
    let mut client = RemotePolicy::new(&RemoteConfig {
        base_url: server.base_url(),
        model: "tiny".into(),
        ..RemoteConfig::default()
    })
    .unwrap()
    .with_tokenizer(std::sync::Arc::clone(&local.tokenizer));
    client.load_lora_adapter("step-1", &adapter_dir).unwrap();
    client.set_model("step-1");
    let request = ChatRequest {
        messages: vec![Message::user("Hi")],
        tools: vec![],
    };
    let sampling = SamplingConfig {
        ignore_eos: true,
        ..SamplingConfig::greedy(6)
    };
    let got = client
        .generate(std::slice::from_ref(&request), &sampling)
        .unwrap();
    let want = local.generate(&[request], &sampling).unwrap();
    assert_eq!(got[0].token_ids, want[0].token_ids);
    client.unload_lora_adapter("step-1").unwrap();
    assert!(
        client
            .unload_lora_adapter("step-1")
            .unwrap_err()
            .to_string()
            .contains("404")
    );
}
