//! Generated malformed JSON for the loaders' property tests: arbitrary values and mutations of
//! a valid document at a chosen path.

use proptest::prelude::*;
use serde_json::{Map, Value};

/// Any JSON value, nested up to three levels; numbers include the extremes, strings are drawn
/// from the regular expression `strings` (code-like characters for the input at hand).
pub fn json_value(strings: &'static str) -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        prop_oneof![
            Just(0i64),
            Just(-1),
            Just(i64::MAX),
            Just(i64::MIN),
            any::<i64>()
        ]
        .prop_map(Value::from),
        prop_oneof![
            Just(1e308f64),
            Just(-0.0),
            Just(-0.5),
            Just(1e-300),
            any::<f64>()
        ]
        .prop_filter("JSON numbers are finite", |f| f.is_finite())
        .prop_map(Value::from),
        strings.prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec(("[a-z_]{1,10}", inner), 0..4)
                .prop_map(|pairs| Value::Object(pairs.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

/// Replaces the value at a path chosen by `choice` (a walk down objects and arrays, each index
/// taken modulo the container's size) with `replacement`, or removes it from its object when
/// `remove` is set.
///
/// ```
/// use serde_json::json;
/// let mut config = json!({"a": {"b": 1}});
/// agent_rl_test_support::malformed::mutate_json(&mut config, &[0, 0], json!("x"), false);
/// assert_eq!(config, json!({"a": {"b": "x"}}));
/// ```
pub fn mutate_json(value: &mut Value, choice: &[usize], replacement: Value, remove: bool) {
    let Some((pick, rest)) = choice.split_first() else {
        *value = replacement;
        return;
    };
    match value {
        Value::Object(map) if !map.is_empty() => {
            let key = map
                .keys()
                .nth(pick % map.len())
                .cloned()
                .unwrap_or_default();
            if rest.is_empty() && remove {
                map.remove(&key);
            } else if let Some(child) = map.get_mut(&key) {
                mutate_json(child, rest, replacement, remove);
            }
        }
        Value::Array(items) if !items.is_empty() => {
            let index = pick % items.len();
            mutate_json(&mut items[index], rest, replacement, remove);
        }
        _ => *value = replacement,
    }
}
