//! Fixture access shared by the tests.

use std::path::PathBuf;

use safetensors::SafeTensors;
use serde_json::Value;

/// The CPU backend the tests run on.
pub type B = burn::backend::Flex;

/// `tests/fixtures/qwen2_tiny/<name>`.
pub fn fixture(name: &str) -> PathBuf {
    fixture_in("qwen2_tiny", name)
}

/// `tests/fixtures/<set>/<name>`.
pub fn fixture_in(set: &str, name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(set)
        .join(name)
}

/// `expected.json`.
pub fn expected() -> Value {
    expected_in("qwen2_tiny")
}

/// `expected.json` of fixture set `set`.
pub fn expected_in(set: &str) -> Value {
    let path = fixture_in(set, "expected.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// A tensor of `<set>/expected_<model>.safetensors` as (shape, f32 data).
pub fn expected_tensor_in(set: &str, model: &str, key: &str) -> (Vec<usize>, Vec<f32>) {
    let bytes = std::fs::read(fixture_in(set, &format!("expected_{model}.safetensors"))).unwrap();
    let file = SafeTensors::deserialize(&bytes).unwrap();
    let view = file.tensor(key).unwrap();
    let data = view
        .data()
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect();
    (view.shape().to_vec(), data)
}

/// Ids of a JSON array.
pub fn ids(value: &Value) -> Vec<u32> {
    value
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap() as u32)
        .collect()
}

/// Asserts `|a - b| <= atol + rtol * |b|` elementwise, reporting the worst index.
pub fn assert_close(actual: &[f32], expected: &[f32], atol: f32, rtol: f32, what: &str) {
    assert_eq!(actual.len(), expected.len(), "{what}: length");
    let mut worst = (0usize, 0.0f32);
    for (i, (a, b)) in actual.iter().zip(expected).enumerate() {
        let excess = (a - b).abs() - (atol + rtol * b.abs());
        if excess > worst.1 || !a.is_finite() {
            worst = (i, excess.max(f32::MIN_POSITIVE));
        }
    }
    assert!(
        worst.1 <= 0.0,
        "{what}: index {} differs: {} vs {}",
        worst.0,
        actual[worst.0],
        expected[worst.0]
    );
}
