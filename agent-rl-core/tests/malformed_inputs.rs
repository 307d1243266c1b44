//! Generated malformed inputs to every loader of this crate (config.json, safetensors files and
//! headers, tokenizer files, chat templates): each gives a value or an error, never a panic, and
//! within a time bound.

use std::path::Path;
use std::time::{Duration, Instant};

use agent_rl_core::weights::{LoadOptions, load_pretrained};
use agent_rl_core::{ChatTemplate, ChatTokenizer, Message, Qwen2Config};
use agent_rl_test_support::malformed::{json_value, mutate_json};
use proptest::prelude::*;
use serde_json::{Map, Value};

use crate::common::{B, fixture};

/// Strings with template and JSON punctuation.
const STRINGS: &str = "[a-z<|>{}%\\\\]{0,12}";

/// Per-case bound: generous for a loaded CI machine, far below a hang.
const CASE_BOUND: Duration = Duration::from_secs(20);

/// Fixed seed: CI sees the same cases every run (a failure is reproducible, never a flake);
/// change the seed locally to explore further.
fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 48,
        failure_persistence: None,
        rng_seed: proptest::test_runner::RngSeed::Fixed(0x5eed_2026_1204),
        ..ProptestConfig::default()
    }
}

/// Runs `work`, failing on a panic (with its message) or on a case slower than [`CASE_BOUND`].
fn no_panic_within_bound<T>(what: &str, work: impl FnOnce() -> T) -> Result<T, TestCaseError> {
    let started = Instant::now();
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(work)).map_err(|panic| {
        let message = panic
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
            .unwrap_or_default();
        TestCaseError::fail(format!("{what} panicked: {message}"))
    })?;
    prop_assert!(
        started.elapsed() < CASE_BOUND,
        "{what} took {:?}",
        started.elapsed()
    );
    Ok(result)
}

/// An edit of a byte string: overwrite, delete, insert or truncate.
#[derive(Debug, Clone)]
enum ByteEdit {
    Overwrite(usize, u8),
    Delete(usize, usize),
    Insert(usize, Vec<u8>),
    Truncate(usize),
}

fn byte_edit() -> impl Strategy<Value = ByteEdit> {
    prop_oneof![
        4 => (any::<usize>(), any::<u8>()).prop_map(|(at, byte)| ByteEdit::Overwrite(at, byte)),
        2 => (any::<usize>(), 1usize..64).prop_map(|(at, len)| ByteEdit::Delete(at, len)),
        2 => (any::<usize>(), prop::collection::vec(any::<u8>(), 1..16))
            .prop_map(|(at, bytes)| ByteEdit::Insert(at, bytes)),
        1 => any::<usize>().prop_map(ByteEdit::Truncate),
    ]
}

/// Applies edits, positions taken modulo the current length (edits aim at the first
/// `focus` bytes, where headers live, half of the time).
fn apply(mut bytes: Vec<u8>, edits: &[ByteEdit], focus: usize) -> Vec<u8> {
    for (index, edit) in edits.iter().enumerate() {
        let span = if index % 2 == 0 {
            focus.min(bytes.len())
        } else {
            bytes.len()
        }
        .max(1);
        match edit {
            ByteEdit::Overwrite(at, byte) => {
                if let Some(slot) = bytes.get_mut(at % span) {
                    *slot = *byte;
                }
            }
            ByteEdit::Delete(at, len) => {
                let start = (at % span).min(bytes.len());
                let end = (start + len).min(bytes.len());
                bytes.drain(start..end);
            }
            ByteEdit::Insert(at, new) => {
                let at = (at % span).min(bytes.len());
                bytes.splice(at..at, new.iter().copied());
            }
            ByteEdit::Truncate(at) => bytes.truncate(at % span),
        }
    }
    bytes
}

fn copy_fixture(name: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(fixture(name)).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), dir.path().join(entry.file_name())).unwrap();
    }
    dir
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn load(dir: &Path) -> bool {
    load_pretrained::<B>(dir, LoadOptions::default(), &Default::default()).is_ok()
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn config_json_with_wrong_values_loads_or_errs(
        choice in prop::collection::vec(any::<usize>(), 1..4),
        replacement in json_value(STRINGS),
        remove in any::<bool>(),
    ) {
        let dir = copy_fixture("tied_f32");
        let path = dir.path().join("config.json");
        let mut config = read_json(&path);
        mutate_json(&mut config, &choice, replacement, remove);
        std::fs::write(&path, config.to_string()).unwrap();
        no_panic_within_bound("Qwen2Config::from_file", || Qwen2Config::from_file(&path).is_ok())?;
        no_panic_within_bound("load_pretrained", || load(dir.path()))?;
    }

    #[test]
    fn config_json_with_corrupt_bytes_loads_or_errs(
        edits in prop::collection::vec(byte_edit(), 1..6),
    ) {
        let dir = copy_fixture("tied_f32");
        let path = dir.path().join("config.json");
        let bytes = apply(std::fs::read(&path).unwrap(), &edits, 1 << 20);
        std::fs::write(&path, bytes).unwrap();
        no_panic_within_bound("load_pretrained", || load(dir.path()))?;
    }

    #[test]
    fn safetensors_with_corrupt_header_or_data_loads_or_errs(
        edits in prop::collection::vec(byte_edit(), 1..6),
    ) {
        let dir = copy_fixture("tied_f32");
        let path = dir.path().join("model.safetensors");
        let original = std::fs::read(&path).unwrap();
        let header = 8 + u64::from_le_bytes(original[..8].try_into().unwrap()) as usize;
        std::fs::write(&path, apply(original, &edits, header)).unwrap();
        no_panic_within_bound("load_pretrained", || load(dir.path()))?;
    }

    #[test]
    fn shard_index_with_wrong_values_loads_or_errs(
        choice in prop::collection::vec(any::<usize>(), 1..4),
        replacement in json_value(STRINGS),
        remove in any::<bool>(),
    ) {
        let dir = copy_fixture("sharded_f32");
        let path = dir.path().join("model.safetensors.index.json");
        let mut index = read_json(&path);
        mutate_json(&mut index, &choice, replacement, remove);
        std::fs::write(&path, index.to_string()).unwrap();
        no_panic_within_bound("load_pretrained (sharded)", || load(dir.path()))?;
    }

    #[test]
    fn tokenizer_files_with_wrong_values_load_or_err(
        file in prop_oneof![Just("tokenizer.json"), Just("tokenizer_config.json")],
        choice in prop::collection::vec(any::<usize>(), 1..5),
        replacement in json_value(STRINGS),
        remove in any::<bool>(),
        edits in prop::collection::vec(byte_edit(), 0..3),
    ) {
        let dir = copy_fixture("tied_f32");
        let path = dir.path().join(file);
        let mut value = read_json(&path);
        mutate_json(&mut value, &choice, replacement, remove);
        let bytes = apply(value.to_string().into_bytes(), &edits, 4096);
        std::fs::write(&path, bytes).unwrap();
        let loaded = no_panic_within_bound("ChatTokenizer::from_dir", || {
            ChatTokenizer::from_dir(dir.path())
        })?;
        if let Ok(tokenizer) = loaded {
            no_panic_within_bound("encode/decode/render", || {
                let ids = tokenizer.encode("Hi <|im_start|>there").unwrap_or_default();
                let _ = tokenizer.decode(&ids, true);
                let _ = tokenizer.check_model_vocab(384);
                let _ = tokenizer.apply_chat_template(&[Message::user("hi")], &[], true);
            })?;
        }
    }

    #[test]
    fn generated_chat_templates_render_or_err(
        parts in prop::collection::vec(template_part(), 1..8),
    ) {
        let source: String = parts.concat();
        let compiled = no_panic_within_bound("ChatTemplate::new", || {
            ChatTemplate::new(&source, "generated.jinja")
        })?;
        if let Ok(template) = compiled {
            let template = template.with_limits(2_000_000, 1 << 20);
            let rendered = no_panic_within_bound("ChatTemplate::render", || {
                template.render(
                    &[Message::system("s"), Message::user("hi")],
                    &[],
                    true,
                    &Map::new(),
                )
            })?;
            if let Err(err) = rendered {
                prop_assert!(err.to_string().contains("generated.jinja"), "{err}");
            }
        }
    }
}

/// Fragments of Jinja, well-formed or not, loops included.
fn template_part() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("{% for m in messages %}{{ m.role }}: {{ m.content }}\n{% endfor %}".to_owned()),
        Just(
            "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}"
                .to_owned()
        ),
        Just(
            "{% set s = 'ab' * 99999 %}{% for i in range(100000) %}{{ s }}{% endfor %}".to_owned()
        ),
        Just(
            "{% set ns = namespace(s='x') %}{% for i in range(60) %}\
             {% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s|length }}"
                .to_owned()
        ),
        Just(
            "{% macro d(s, n) %}{% if n %}{{ d(s ~ s, n - 1) }}{% endif %}{% endmacro %}\
             {{ d('x', 60)|length }}"
                .to_owned()
        ),
        Just("{% set s = 'x' * 99999 %}{{ s|replace('', s)|length }}".to_owned()),
        Just("{{ messages[5].content }}".to_owned()),
        Just("{{ messages[0].content | tojson(indent=2) }}".to_owned()),
        Just("{{ raise_exception('bad') }}".to_owned()),
        Just("{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}".to_owned()),
        Just("{% macro f(x) %}{{ f(x) }}{% endmacro %}{{ f(1) }}".to_owned()),
        Just("{{ 1 / 0 }}".to_owned()),
        Just("{{ tools | length }}".to_owned()),
        Just("{% for".to_owned()),
        Just("{{ }".to_owned()),
        Just("{% endif %}".to_owned()),
        "[a-z {}%|()'\\[\\]]{0,24}",
    ]
}
