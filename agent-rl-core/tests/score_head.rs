//! `Qwen2ForSequenceClassification` against transformers
//! (`tests/fixtures/score_tiny/make_fixture.py`): scores of left- and right-padded batches, the
//! per-token scores, a transformers checkpoint loading here, and a checkpoint written here that
//! the script loads in transformers.

use std::path::PathBuf;

use agent_rl_core::lora::LoraConfig;
use agent_rl_core::weights::{LoadOptions, SaveOptions, load_pretrained};
use agent_rl_core::{CoreError, Qwen2ForSequenceClassification};
use burn::backend::{Autodiff, Flex};
use burn::prelude::*;
use serde_json::{Value, json};

use crate::common::{B, assert_close, fixture, ids};

/// `tests/fixtures/score_tiny/<name>`.
fn score_fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/score_tiny")
        .join(name)
}

fn expected() -> Value {
    let text = std::fs::read_to_string(score_fixture("expected.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn floats(value: &Value) -> Vec<f32> {
    value
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap() as f32)
        .collect()
}

fn values<const D: usize>(tensor: Tensor<B, D>) -> Vec<f32> {
    tensor.into_data().into_vec::<f32>().unwrap()
}

/// `rows` padded with `pad` on the left or the right, and their masks.
fn padded(rows: &[Vec<u32>], pad: u32, left: bool) -> (Vec<Vec<u32>>, Vec<Vec<bool>>) {
    let width = rows.iter().map(Vec::len).max().unwrap();
    rows.iter()
        .map(|row| {
            let fill = width - row.len();
            let pads = std::iter::repeat_n(pad, fill);
            let (ids, mask): (Vec<u32>, Vec<bool>) = if left {
                let ids = pads.chain(row.iter().copied()).collect();
                (ids, (0..width).map(|i| i >= fill).collect())
            } else {
                let ids = row.iter().copied().chain(pads).collect();
                (ids, (0..width).map(|i| i < row.len()).collect())
            };
            (ids, mask)
        })
        .unzip()
}

fn load_hf() -> Qwen2ForSequenceClassification<B> {
    Qwen2ForSequenceClassification::from_pretrained(
        &score_fixture("hf_rm"),
        LoadOptions::default(),
        &Default::default(),
    )
    .unwrap()
    .0
}

#[test]
fn transformers_checkpoint_scores_match_left_and_right_padded() {
    let model = load_hf();
    let want = expected();
    assert_eq!(model.pad_token_id, Some(0));
    let rows: Vec<Vec<u32>> = want["rows"].as_array().unwrap().iter().map(ids).collect();
    let single: Vec<f32> = rows
        .iter()
        .flat_map(|row| values(model.score_ids(std::slice::from_ref(row), None)))
        .collect();
    assert_close(&single, &floats(&want["single"]), 1e-4, 1e-4, "unpadded");
    for (left, key) in [(false, "right_padded"), (true, "left_padded")] {
        let (batch, mask) = padded(&rows, 0, left);
        let got = values(model.score_ids(&batch, Some(&mask)));
        assert_close(&got, &floats(&want[key]), 1e-4, 1e-4, key);
    }
    // Per-token scores (the value head) at every real position of the right-padded batch.
    let (batch, mask) = padded(&rows, 0, false);
    let tokens = values(model.token_scores_ids(&batch, Some(&mask)));
    let width = mask[0].len();
    for (b, row) in want["right_padded_token_scores"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
    {
        let len = rows[b].len();
        assert_close(
            &tokens[b * width..b * width + len],
            &floats(row)[..len],
            1e-4,
            1e-4,
            &format!("token scores row {b}"),
        );
    }
}

#[test]
fn save_then_load_is_exact_and_in_hf_layout() {
    let model = load_hf();
    let dir = tempfile::tempdir().unwrap();
    model
        .save_pretrained(dir.path(), SaveOptions::default())
        .unwrap();
    let config: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("config.json")).unwrap())
            .unwrap();
    assert_eq!(
        config["architectures"],
        json!(["Qwen2ForSequenceClassification"])
    );
    assert_eq!(config["num_labels"], json!(1));
    assert_eq!(config["pad_token_id"], json!(0));
    let (reloaded, report) = Qwen2ForSequenceClassification::<B>::from_pretrained(
        dir.path(),
        LoadOptions::default(),
        &Default::default(),
    )
    .unwrap();
    assert!(report.unused.is_empty());
    assert!(report.applied.iter().any(|k| k == "score.weight"));
    let rows = vec![vec![5, 9, 33, 2], vec![7, 1, 0, 0]];
    let mask = vec![vec![true; 4], vec![true, true, false, false]];
    assert_eq!(
        values(model.score_ids(&rows, Some(&mask))),
        values(reloaded.score_ids(&rows, Some(&mask)))
    );
    // The same tensor keys and shapes as the file transformers wrote.
    let ours = agent_rl_core::weights::CheckpointReader::open(dir.path()).unwrap();
    let theirs = agent_rl_core::weights::CheckpointReader::open(&score_fixture("hf_rm")).unwrap();
    assert_eq!(
        ours.keys().collect::<Vec<_>>(),
        theirs.keys().collect::<Vec<_>>()
    );
}

/// A reward model built here from the tied fixture policy (seed 3), as the script loads it.
fn rust_rm() -> Qwen2ForSequenceClassification<B> {
    let (policy, _) = load_pretrained::<B>(
        &fixture("tied_f32"),
        LoadOptions::default(),
        &Default::default(),
    )
    .unwrap();
    Qwen2ForSequenceClassification::from_policy(policy, Some(0), 3)
}

/// Writes the checkpoint and its scores for the script's transformers check when
/// `AGENT_RL_WRITE_FIXTURES=1`; always checks the committed files are what the code writes now.
#[test]
fn rust_checkpoint_matches_committed() {
    let model = rust_rm();
    let rows = vec![vec![17, 42, 9, 200], vec![3, 150, 8, 0]];
    let mask = vec![vec![true; 4], vec![true, true, true, false]];
    let scores = values(model.score_ids(&rows, Some(&mask)));
    let scratch = tempfile::tempdir().unwrap();
    let write = std::env::var("AGENT_RL_WRITE_FIXTURES").is_ok_and(|v| v == "1");
    let dir = if write {
        score_fixture("rust_rm")
    } else {
        scratch.path().to_owned()
    };
    model.save_pretrained(&dir, SaveOptions::default()).unwrap();
    if write {
        let record = json!({"rows": rows, "scores": scores});
        std::fs::write(dir.join("rust_scores.json"), record.to_string()).unwrap();
    }
    let committed: Value = serde_json::from_str(
        &std::fs::read_to_string(score_fixture("rust_rm/rust_scores.json")).unwrap(),
    )
    .unwrap();
    assert_close(
        &scores,
        &floats(&committed["scores"]),
        1e-6,
        1e-6,
        "rust rm scores",
    );
    let (loaded, _) = Qwen2ForSequenceClassification::<B>::from_pretrained(
        &score_fixture("rust_rm"),
        LoadOptions::default(),
        &Default::default(),
    )
    .unwrap();
    assert_close(
        &values(loaded.score_ids(&rows, Some(&mask))),
        &scores,
        1e-6,
        1e-6,
        "committed rust rm reloaded",
    );
}

#[test]
fn from_policy_keeps_the_backbone_and_seeds_the_head() {
    let a = rust_rm();
    let b = rust_rm();
    let head = values(a.score.weight.val());
    assert_eq!(head, values(b.score.weight.val()), "same seed, same head");
    let std = (head.iter().map(|v| v * v).sum::<f32>() / head.len() as f32).sqrt();
    assert!((0.005..0.05).contains(&std), "head std {std}");
    assert!(a.model.lm_head.is_none());
    let (policy, _) = load_pretrained::<B>(
        &fixture("tied_f32"),
        LoadOptions::default(),
        &Default::default(),
    )
    .unwrap();
    let ids = Tensor::<B, 2, Int>::from_data([[4, 8, 15, 16]], &Default::default());
    let mask = vec![vec![true; 4]];
    let want = values(policy.forward_hidden(ids.clone(), &mask, None));
    let got = values(a.model.forward_hidden(ids, &mask, None));
    assert_eq!(got, want);
}

#[test]
fn causal_lm_checkpoints_and_multi_label_heads_are_refused() {
    let err = Qwen2ForSequenceClassification::<B>::from_pretrained(
        &fixture("tied_f32"),
        LoadOptions::default(),
        &Default::default(),
    )
    .unwrap_err();
    assert!(
        matches!(&err, CoreError::UnsupportedConfig { field, reason }
            if field == "num_labels" && reason.contains("from_policy")),
        "{err}"
    );
    // A labelled config over causal-LM weights: the missing head is named.
    let dir = tempfile::tempdir().unwrap();
    for name in ["model.safetensors", "config.json"] {
        std::fs::copy(fixture("tied_f32").join(name), dir.path().join(name)).unwrap();
    }
    let path = dir.path().join("config.json");
    let mut config: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    config["num_labels"] = json!(1);
    std::fs::write(&path, config.to_string()).unwrap();
    let err = Qwen2ForSequenceClassification::<B>::from_pretrained(
        dir.path(),
        LoadOptions::default(),
        &Default::default(),
    )
    .unwrap_err();
    assert!(
        matches!(&err, CoreError::MissingTensor { key, .. } if key == "score.weight"),
        "{err}"
    );
    let dir = tempfile::tempdir().unwrap();
    for name in ["model.safetensors", "config.json"] {
        std::fs::copy(score_fixture("hf_rm").join(name), dir.path().join(name)).unwrap();
    }
    let path = dir.path().join("config.json");
    let mut config: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    config["id2label"] = json!({"0": "bad", "1": "good"});
    std::fs::write(&path, config.to_string()).unwrap();
    let err = Qwen2ForSequenceClassification::<B>::from_pretrained(
        dir.path(),
        LoadOptions::default(),
        &Default::default(),
    )
    .unwrap_err();
    assert!(
        matches!(&err, CoreError::UnsupportedConfig { field, .. } if field == "num_labels"),
        "{err}"
    );
}

#[test]
fn lora_backbone_trains_adapters_and_head_only() {
    type A = Autodiff<Flex>;
    let (policy, _) = load_pretrained::<A>(
        &fixture("tied_f32"),
        LoadOptions::default(),
        &Default::default(),
    )
    .unwrap();
    let rm = Qwen2ForSequenceClassification::from_policy(policy, Some(0), 3);
    let rows = vec![vec![17, 42, 9, 200]];
    let before = rm
        .score_ids(&rows, None)
        .into_data()
        .into_vec::<f32>()
        .unwrap();
    let config = LoraConfig {
        r: 2,
        ..LoraConfig::default()
    };
    let rm = rm.with_lora(&config, 1).unwrap();
    assert!(rm.has_adapters());
    let scores = rm.score_ids(&rows, None);
    let after = scores.clone().into_data().into_vec::<f32>().unwrap();
    assert_close(&after, &before, 1e-6, 1e-6, "fresh adapters change nothing");
    let grads = scores.sum().backward();
    assert!(rm.score.weight.grad(&grads).is_some(), "the head trains");
    assert!(
        rm.model.embed_tokens.weight.grad(&grads).is_none(),
        "the backbone is frozen"
    );
    let adapter = rm.model.layers[0].self_attn.lora.as_ref().unwrap();
    let lora_a = adapter.q_proj.as_ref().unwrap().lora_a.grad(&grads);
    assert!(lora_a.is_some(), "the adapters train");
}
