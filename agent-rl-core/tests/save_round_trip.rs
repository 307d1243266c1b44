//! save → load is bit-exact, in one file or in shards, and bf16 saving rounds as expected.

use agent_rl_core::Qwen2ForCausalLm;
use agent_rl_core::weights::{
    LoadOptions, SaveOptions, StorageDtype, load_pretrained, save_pretrained,
};
use burn::module::Module;

use crate::common::{B, fixture, fixture_in};

fn params(model: &Qwen2ForCausalLm<B>) -> Vec<f32> {
    let mut out = Vec::new();
    let record = model.clone().into_record();
    let _ = record; // records are opaque; compare through the forward pass and the saved bytes
    for layer in &model.layers {
        out.extend(
            layer
                .self_attn
                .qkv_proj
                .weight
                .val()
                .into_data()
                .into_vec::<f32>()
                .unwrap(),
        );
        out.extend(
            layer
                .mlp
                .gate_up_proj
                .weight
                .val()
                .into_data()
                .into_vec::<f32>()
                .unwrap(),
        );
    }
    out.extend(
        model
            .embed_tokens
            .weight
            .val()
            .into_data()
            .into_vec::<f32>()
            .unwrap(),
    );
    out
}

#[test]
fn save_then_load_is_bit_exact_and_keeps_hf_files_identical() {
    let (model, _) = load_pretrained::<B>(
        &fixture("untied_f32"),
        LoadOptions::default(),
        &Default::default(),
    )
    .unwrap();
    for shard_bytes in [usize::MAX, 60_000] {
        let dir = tempfile::tempdir().unwrap();
        save_pretrained(
            &model,
            dir.path(),
            SaveOptions {
                dtype: StorageDtype::F32,
                max_shard_bytes: shard_bytes,
            },
        )
        .unwrap();
        if shard_bytes != usize::MAX {
            assert!(dir.path().join("model.safetensors.index.json").exists());
        }
        let (again, report) =
            load_pretrained::<B>(dir.path(), LoadOptions::default(), &Default::default()).unwrap();
        assert!(report.unused.is_empty());
        assert_eq!(params(&model), params(&again));
        let ids = vec![vec![1u32, 5, 9, 200]];
        let a = model
            .forward_ids(&ids, None)
            .into_data()
            .into_vec::<f32>()
            .unwrap();
        let b = again
            .forward_ids(&ids, None)
            .into_data()
            .into_vec::<f32>()
            .unwrap();
        assert_eq!(a, b);
    }
    // The single-file save holds exactly HF's tensors, byte for byte.
    let dir = tempfile::tempdir().unwrap();
    save_pretrained(&model, dir.path(), SaveOptions::default()).unwrap();
    let ours = std::fs::read(dir.path().join("model.safetensors")).unwrap();
    let theirs = std::fs::read(fixture("untied_f32/model.safetensors")).unwrap();
    let ours = safetensors::SafeTensors::deserialize(&ours).unwrap();
    let theirs = safetensors::SafeTensors::deserialize(&theirs).unwrap();
    let mut keys = ours.names();
    keys.sort();
    let mut their_keys = theirs.names();
    their_keys.sort();
    assert_eq!(keys, their_keys);
    for key in keys {
        assert_eq!(
            ours.tensor(key).unwrap().data(),
            theirs.tensor(key).unwrap().data(),
            "{key}"
        );
    }
}

#[test]
fn bf16_save_round_trips_bf16_checkpoints_exactly() {
    let (model, _) = load_pretrained::<B>(
        &fixture("untied_bf16"),
        LoadOptions::default(),
        &Default::default(),
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    save_pretrained(
        &model,
        dir.path(),
        SaveOptions {
            dtype: StorageDtype::Bf16,
            ..SaveOptions::default()
        },
    )
    .unwrap();
    let ours = std::fs::read(dir.path().join("model.safetensors")).unwrap();
    let theirs = std::fs::read(fixture("untied_bf16/model.safetensors")).unwrap();
    let ours = safetensors::SafeTensors::deserialize(&ours).unwrap();
    let theirs = safetensors::SafeTensors::deserialize(&theirs).unwrap();
    for key in theirs.names() {
        assert_eq!(
            ours.tensor(key).unwrap().data(),
            theirs.tensor(key).unwrap().data(),
            "{key}"
        );
    }
}

#[test]
fn tokenizer_saved_to_a_dir_loads_back_identically() {
    use agent_rl_core::{ChatTemplate, ChatTokenizer, Message};
    let fixture =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/qwen2_tiny/tied_f32");
    let original = ChatTokenizer::from_dir(&fixture).unwrap();
    let template = ChatTemplate::new(
        "{% for m in messages %}[{{ m.role }}] {{ m.content }}\n{% endfor %}",
        "inline",
    )
    .unwrap();
    let custom = ChatTokenizer::new(
        original.inner().clone(),
        Some(template),
        original.eos_ids.clone(),
        original.pad_id,
    );
    for tokenizer in [&original, &custom] {
        let dir = tempfile::tempdir().unwrap();
        tokenizer.save_to_dir(dir.path()).unwrap();
        let loaded = ChatTokenizer::from_dir(dir.path()).unwrap();
        let messages = vec![
            Message::user("Weather in Oslo?"),
            Message::assistant("sunny"),
        ];
        assert_eq!(
            loaded.apply_chat_template(&messages, &[], false).unwrap(),
            tokenizer
                .apply_chat_template(&messages, &[], false)
                .unwrap()
        );
        assert_eq!(
            loaded.encode("héllo <|im_end|>").unwrap(),
            tokenizer.encode("héllo <|im_end|>").unwrap()
        );
        assert_eq!(loaded.eos_ids, tokenizer.eos_ids);
        assert_eq!(loaded.pad_id, tokenizer.pad_id);
    }
}

/// A full disk while the weights are written is reported as a write error naming the file, not
/// as a safetensors file that cannot be parsed. The temporary file the save streams into is made
/// a link to `/dev/full`, whose writes fail with ENOSPC (no root or small file system needed).
#[cfg(target_os = "linux")]
#[test]
fn a_full_disk_is_a_write_error() {
    use agent_rl_core::CoreError;

    let (model, _) = load_pretrained::<B>(
        &fixture("tied_f32"),
        LoadOptions::default(),
        &Default::default(),
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    // the temporary name of agent_rl_core::atomic::replace_with
    let temporary = dir
        .path()
        .join(format!(".model.safetensors.tmp-{}", std::process::id()));
    std::os::unix::fs::symlink("/dev/full", &temporary).unwrap();
    let error =
        save_pretrained(&model, dir.path(), SaveOptions::default()).expect_err("the disk is full");
    let text = error.to_string();
    assert!(
        matches!(&error, CoreError::Write { source, .. }
            if source.raw_os_error() == Some(28)),
        "{error:?}"
    );
    assert!(
        text.starts_with("cannot write") && text.contains("model.safetensors"),
        "{text}"
    );
    assert!(!dir.path().join("model.safetensors").exists());
}

#[test]
fn llama_checkpoints_save_back_as_llama_with_their_biases() {
    for name in ["tied_plain", "untied_biased"] {
        let source = fixture_in("llama_tiny", name);
        let (model, _) =
            load_pretrained::<B>(&source, LoadOptions::default(), &Default::default()).unwrap();
        let dir = tempfile::tempdir().unwrap();
        save_pretrained(&model, dir.path(), SaveOptions::default()).unwrap();
        let config: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.path().join("config.json")).unwrap())
                .unwrap();
        let original: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(source.join("config.json")).unwrap())
                .unwrap();
        assert_eq!(config["model_type"], "llama", "{name}");
        assert_eq!(config["architectures"][0], "LlamaForCausalLM", "{name}");
        for key in [
            "attention_bias",
            "mlp_bias",
            "head_dim",
            "rope_parameters",
            "tie_word_embeddings",
        ] {
            assert_eq!(config[key], original[key], "{name}: {key}");
        }
        // The same HF tensors, byte for byte (biases included, none invented).
        let ours = std::fs::read(dir.path().join("model.safetensors")).unwrap();
        let theirs = std::fs::read(source.join("model.safetensors")).unwrap();
        let ours = safetensors::SafeTensors::deserialize(&ours).unwrap();
        let theirs = safetensors::SafeTensors::deserialize(&theirs).unwrap();
        let mut keys = ours.names();
        keys.sort();
        let mut their_keys = theirs.names();
        their_keys.sort();
        assert_eq!(keys, their_keys, "{name}");
        for key in keys {
            assert_eq!(
                ours.tensor(key).unwrap().data(),
                theirs.tensor(key).unwrap().data(),
                "{name}: {key}"
            );
        }
    }
}
