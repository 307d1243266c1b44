//! Every kind of bad checkpoint gives a typed error naming the file and key.

use std::path::Path;

use agent_rl_core::CoreError;
use agent_rl_core::weights::{LoadOptions, load_pretrained};
use safetensors::SafeTensors;
use safetensors::tensor::TensorView;
use serde_json::Value;

use crate::common::{B, fixture};

fn copy_fixture(name: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(fixture(name)).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), dir.path().join(entry.file_name())).unwrap();
    }
    dir
}

fn load(dir: &Path) -> Result<(), CoreError> {
    load_pretrained::<B>(dir, LoadOptions::default(), &Default::default()).map(|_| ())
}

/// Rewrites `model.safetensors` in `dir` through `edit(key, shape, bytes)`.
fn rewrite(
    dir: &Path,
    edit: impl Fn(&str, Vec<usize>, Vec<u8>) -> Option<(String, Vec<usize>, Vec<u8>)>,
) {
    let path = dir.join("model.safetensors");
    let bytes = std::fs::read(&path).unwrap();
    let file = SafeTensors::deserialize(&bytes).unwrap();
    let mut entries = Vec::new();
    for (key, view) in file.tensors() {
        if let Some(entry) = edit(&key, view.shape().to_vec(), view.data().to_vec()) {
            entries.push((entry, view.dtype()));
        }
    }
    let views: Vec<(String, TensorView<'_>)> = entries
        .iter()
        .map(|((key, shape, data), dtype)| {
            (
                key.clone(),
                TensorView::new(*dtype, shape.clone(), data).unwrap(),
            )
        })
        .collect();
    safetensors::serialize_to_file(views, None, &path).unwrap();
}

#[test]
fn missing_tensor_names_key_and_file() {
    let dir = copy_fixture("tied_f32");
    rewrite(dir.path(), |key, shape, data| {
        (key != "model.layers.1.mlp.up_proj.weight").then(|| (key.to_owned(), shape, data))
    });
    match load(dir.path()) {
        Err(err @ CoreError::MissingTensor { .. }) => {
            let text = err.to_string();
            assert!(
                text.contains("model.layers.1.mlp.up_proj.weight")
                    && text.contains("model.safetensors"),
                "{text}"
            );
        }
        other => panic!("expected MissingTensor, got {other:?}"),
    }
}

#[test]
fn shape_mismatch_names_key_and_shapes() {
    let dir = copy_fixture("tied_f32");
    rewrite(dir.path(), |key, shape, data| {
        if key == "model.norm.weight" {
            Some((
                key.to_owned(),
                vec![shape[0] / 2],
                data[..data.len() / 2].to_vec(),
            ))
        } else {
            Some((key.to_owned(), shape, data))
        }
    });
    match load(dir.path()) {
        Err(CoreError::ShapeMismatch {
            key,
            expected,
            found,
            ..
        }) => {
            assert_eq!(
                (key.as_str(), expected, found),
                ("model.norm.weight", vec![32], vec![16])
            );
        }
        other => panic!("expected ShapeMismatch, got {other:?}"),
    }
}

#[test]
fn unexpected_tensor_is_refused_unless_allowed() {
    let dir = copy_fixture("tied_f32");
    rewrite(dir.path(), |key, shape, data| {
        if key == "model.norm.weight" {
            Some(("model.extra_head.weight".to_owned(), shape, data))
        } else {
            Some((key.to_owned(), shape, data))
        }
    });
    // Put the norm back so only the extra key is wrong.
    let original = std::fs::read(fixture("tied_f32/model.safetensors")).unwrap();
    let norm = SafeTensors::deserialize(&original)
        .unwrap()
        .tensor("model.norm.weight")
        .unwrap()
        .data()
        .to_vec();
    rewrite(dir.path(), |key, shape, data| {
        Some((key.to_owned(), shape, data))
    });
    rewrite(dir.path(), move |key, shape, data| {
        let _ = &data;
        Some((key.to_owned(), shape, data))
    });
    let path = dir.path().join("model.safetensors");
    let bytes = std::fs::read(&path).unwrap();
    let file = SafeTensors::deserialize(&bytes).unwrap();
    let mut owned: Vec<(String, Vec<usize>, Vec<u8>, safetensors::Dtype)> = file
        .tensors()
        .into_iter()
        .map(|(k, v)| (k, v.shape().to_vec(), v.data().to_vec(), v.dtype()))
        .collect();
    owned.push((
        "model.norm.weight".into(),
        vec![32],
        norm,
        safetensors::Dtype::F32,
    ));
    let views: Vec<(String, TensorView<'_>)> = owned
        .iter()
        .map(|(k, s, d, t)| (k.clone(), TensorView::new(*t, s.clone(), d).unwrap()))
        .collect();
    safetensors::serialize_to_file(views, None, &path).unwrap();
    match load(dir.path()) {
        Err(CoreError::UnexpectedTensors { keys, .. }) => {
            assert_eq!(keys, ["model.extra_head.weight"])
        }
        other => panic!("expected UnexpectedTensors, got {other:?}"),
    }
    let (_, report) = load_pretrained::<B>(
        dir.path(),
        LoadOptions {
            allow_unexpected: true,
        },
        &Default::default(),
    )
    .unwrap();
    assert_eq!(report.unused, ["model.extra_head.weight"]);
}

#[test]
fn unsupported_dtype_names_key() {
    let dir = copy_fixture("tied_f32");
    let path = dir.path().join("model.safetensors");
    let bytes = std::fs::read(&path).unwrap();
    let file = SafeTensors::deserialize(&bytes).unwrap();
    let owned: Vec<(String, Vec<usize>, Vec<u8>, safetensors::Dtype)> = file
        .tensors()
        .into_iter()
        .map(|(k, v)| {
            if k == "model.norm.weight" {
                let data: Vec<u8> = v
                    .data()
                    .chunks(4)
                    .flat_map(|_| 1i32.to_le_bytes())
                    .collect();
                (k, v.shape().to_vec(), data, safetensors::Dtype::I32)
            } else {
                (k, v.shape().to_vec(), v.data().to_vec(), v.dtype())
            }
        })
        .collect();
    let views: Vec<(String, TensorView<'_>)> = owned
        .iter()
        .map(|(k, s, d, t)| (k.clone(), TensorView::new(*t, s.clone(), d).unwrap()))
        .collect();
    safetensors::serialize_to_file(views, None, &path).unwrap();
    match load(dir.path()) {
        Err(err @ CoreError::UnsupportedDtype { .. }) => {
            assert!(err.to_string().contains("model.norm.weight"), "{err}")
        }
        other => panic!("expected UnsupportedDtype, got {other:?}"),
    }
}

#[test]
fn corrupt_file_is_named() {
    let dir = copy_fixture("tied_f32");
    std::fs::write(
        dir.path().join("model.safetensors"),
        b"\xff\xff\xff\xff\xff\xff\xff\x7fgarbage",
    )
    .unwrap();
    match load(dir.path()) {
        Err(err @ CoreError::Safetensors { .. }) => {
            assert!(err.to_string().contains("model.safetensors"), "{err}")
        }
        other => panic!("expected Safetensors, got {other:?}"),
    }
}

#[test]
fn missing_weights_file_is_named() {
    let dir = copy_fixture("tied_f32");
    std::fs::remove_file(dir.path().join("model.safetensors")).unwrap();
    match load(dir.path()) {
        Err(err @ CoreError::Io { .. }) => {
            assert!(err.to_string().contains("model.safetensors"), "{err}")
        }
        other => panic!("expected Io, got {other:?}"),
    }
}

#[test]
fn missing_shard_is_named() {
    let dir = copy_fixture("sharded_f32");
    std::fs::remove_file(dir.path().join("model-00002-of-00003.safetensors")).unwrap();
    match load(dir.path()) {
        Err(err @ CoreError::Io { .. }) => {
            assert!(err.to_string().contains("model-00002-of-00003"), "{err}")
        }
        other => panic!("expected Io, got {other:?}"),
    }
}

#[test]
fn unsupported_config_names_field() {
    let dir = copy_fixture("tied_f32");
    let path = dir.path().join("config.json");
    let mut config: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    config["hidden_act"] = Value::String("gelu".into());
    std::fs::write(&path, config.to_string()).unwrap();
    match load(dir.path()) {
        Err(err @ CoreError::UnsupportedConfig { .. }) => {
            assert!(err.to_string().contains("`hidden_act`"), "{err}")
        }
        other => panic!("expected UnsupportedConfig, got {other:?}"),
    }
}

#[test]
fn non_finite_weight_is_refused_naming_the_tensor() {
    for (bad, shown) in [(f32::NAN, "NaN"), (f32::INFINITY, "inf")] {
        let dir = copy_fixture("tied_f32");
        rewrite(dir.path(), |key, shape, mut data| {
            if key == "model.layers.0.self_attn.k_proj.weight" {
                data[12..16].copy_from_slice(&bad.to_le_bytes());
            }
            Some((key.to_owned(), shape, data))
        });
        match load(dir.path()) {
            Err(err @ CoreError::NonFiniteTensor { .. }) => {
                let text = err.to_string();
                assert!(
                    text.contains("model.layers.0.self_attn.k_proj.weight")
                        && text.contains("element 3")
                        && text.contains(shown),
                    "{text}"
                );
            }
            other => panic!("expected NonFiniteTensor, got {other:?}"),
        }
    }
}

#[test]
fn invalid_rms_norm_eps_is_refused_naming_the_field() {
    for eps in ["-1", "0", "0.0"] {
        let dir = copy_fixture("tied_f32");
        let path = dir.path().join("config.json");
        let text = std::fs::read_to_string(&path).unwrap();
        let text = text.replace(
            "\"rms_norm_eps\": 1e-06",
            &format!("\"rms_norm_eps\": {eps}"),
        );
        std::fs::write(&path, text).unwrap();
        let err = load(dir.path()).expect_err("invalid eps");
        assert!(
            matches!(err, CoreError::UnsupportedConfig { ref field, .. } if field == "rms_norm_eps"),
            "{eps}: {err}"
        );
    }
}

#[test]
fn shard_paths_outside_the_model_directory_are_refused() {
    for outside in [
        "../../../../etc/passwd",
        "/etc/passwd",
        "shards/../../x.safetensors",
        "",
    ] {
        let dir = copy_fixture("sharded_f32");
        let path = dir.path().join("model.safetensors.index.json");
        let mut index: Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        index["weight_map"]["lm_head.weight"] = Value::String(outside.into());
        std::fs::write(&path, index.to_string()).unwrap();
        match load(dir.path()) {
            Err(err @ CoreError::ShardOutsideDirectory { .. }) => {
                let text = err.to_string();
                assert!(
                    text.contains(&format!("`{outside}`"))
                        && text.contains("model.safetensors.index.json"),
                    "{text}"
                );
            }
            other => panic!("{outside:?}: expected ShardOutsideDirectory, got {other:?}"),
        }
    }
}
