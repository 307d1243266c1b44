//! SGLang's `/update_weights_from_disk`: the served base weights are swapped for a checkpoint
//! (the path a full fine-tuning trainer publishes by), loaded adapters follow the new weights,
//! and a checkpoint of another shape, a missing directory or a server without the flag are
//! refused with OpenAI-shaped errors.

use std::path::PathBuf;
use std::sync::Arc;

use agent_rl::backend::{CpuBackend, load_policy};
use agent_rl::core::generation::{SamplingConfig, generate_ids};
use agent_rl::core::lora::load_adapter;
use agent_rl::core::weights::{SaveOptions, random_model, save_pretrained};
use agent_rl::core::{BurnPolicy, Qwen2ForCausalLm};
use agent_rl::remote::{RemoteConfig, RemotePolicy};
use agent_rl::serve::{ServeConfig, ServerHandle, start};
use serde_json::json;

use super::common::{KEY_ENV, config, ids, post, post_raw, test_key};

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("agent-rl-core/tests/fixtures")
}

const PROMPT: [u32; 5] = [3, 17, 42, 99, 5];

/// Greedy ids of `model` (served name) for [`PROMPT`].
fn served(server: &ServerHandle, model: &str) -> Vec<u32> {
    let (status, answer) = post(
        server,
        "/v1/completions",
        &json!({"model": model, "prompt": PROMPT, "temperature": 0, "max_tokens": 8,
                "ignore_eos": true}),
    );
    assert_eq!(status, 200, "{answer}");
    ids(&answer["choices"][0]["token_ids"])
}

/// Greedy ids of `model` run locally for [`PROMPT`].
fn local(model: &Qwen2ForCausalLm<CpuBackend>) -> Vec<u32> {
    let sampling = SamplingConfig {
        ignore_eos: true,
        ..SamplingConfig::greedy(8)
    };
    generate_ids(model, &[PROMPT.to_vec()], &sampling, &[])
        .unwrap()
        .remove(0)
        .token_ids
}

#[test]
fn new_weights_answer_like_the_checkpoint_and_adapters_follow_them() {
    let base_dir = fixtures().join("qwen2_tiny/untied_f32");
    let adapter_dir = fixtures().join("lora_tiny/adapter");
    let policy = load_policy::<CpuBackend>(&base_dir, &Default::default()).unwrap();
    let old = policy.model.clone();
    let server = start(
        policy,
        ServeConfig {
            allow_runtime_lora: true,
            allow_weight_updates: true,
            api_key: Some(test_key()),
            ..config()
        },
    )
    .unwrap();
    let client = RemotePolicy::new(&RemoteConfig {
        base_url: server.base_url(),
        model: "tiny".into(),
        api_key_env: Some(KEY_ENV.into()),
        ..RemoteConfig::default()
    })
    .unwrap();
    client.load_lora_adapter("tuned", &adapter_dir).unwrap();

    // Other weights of the same shape: another random draw of the fixture's config.
    let fresh = random_model::<CpuBackend>(old.config(), 99, 0.3, &Default::default()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    save_pretrained(&fresh, dir.path(), SaveOptions::default()).unwrap();
    assert_ne!(
        local(&fresh),
        local(&old),
        "the new weights change the output"
    );
    client.update_weights_from_disk(dir.path()).unwrap();

    assert_eq!(served(&server, "tiny"), local(&fresh));
    let (adapted, _) = load_adapter(fresh.clone(), &adapter_dir).unwrap();
    assert_eq!(
        served(&server, "tuned"),
        local(&adapted.merge_adapters()),
        "the adapter is re-read onto the new weights"
    );
}

#[test]
fn another_shape_a_missing_directory_and_a_server_without_the_flag_are_refused() {
    let base_dir = fixtures().join("qwen2_tiny/untied_f32");
    let policy = load_policy::<CpuBackend>(&base_dir, &Default::default()).unwrap();
    let mut wider = policy.model.config().clone();
    wider.intermediate_size *= 2;
    let other = random_model::<CpuBackend>(&wider, 1, 0.3, &Default::default()).unwrap();
    let other_dir = tempfile::tempdir().unwrap();
    save_pretrained(&other, other_dir.path(), SaveOptions::default()).unwrap();
    let before = local(&policy.model);
    let server = start(
        policy,
        ServeConfig {
            allow_weight_updates: true,
            api_key: Some(test_key()),
            ..config()
        },
    )
    .unwrap();
    let update = |path: &str| {
        let body = json!({"model_path": path}).to_string();
        post_raw(
            &server,
            "/update_weights_from_disk",
            body.as_bytes(),
            Some(&test_key()),
        )
    };
    let (status, text) = update(other_dir.path().to_str().unwrap());
    assert_eq!(status, 400, "{text}");
    assert!(
        text.contains("architecture") && text.contains("model_path"),
        "{text}"
    );
    let (status, text) = update("/no/such/checkpoint");
    assert_eq!(status, 400, "{text}");
    assert!(text.contains("/no/such/checkpoint"), "{text}");
    let body = json!({"model_path": "/x", "load_format": "pt"}).to_string();
    let (status, text) = post_raw(
        &server,
        "/update_weights_from_disk",
        body.as_bytes(),
        Some(&test_key()),
    );
    assert_eq!(status, 400, "{text}");
    assert!(text.contains("load_format"), "{text}");
    assert_eq!(
        served(&server, "tiny"),
        before,
        "refused updates change nothing"
    );

    let locked = start(
        BurnPolicy::new(
            other,
            Arc::new(agent_rl_test_support::tiny_tokenizer().unwrap()),
        ),
        config(),
    )
    .unwrap();
    let body = json!({"model_path": "/tmp"}).to_string();
    let (status, text) = post_raw(&locked, "/update_weights_from_disk", body.as_bytes(), None);
    assert_eq!(status, 403, "{text}");
    assert!(text.contains("--allow-weight-updates"), "{text}");
}
