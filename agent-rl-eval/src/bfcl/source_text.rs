//! Java and JavaScript ground truth as the source text a model writes.
//!
//! BFCL offers Java/JavaScript functions with every parameter typed `string` and converts the
//! model's source text (`new ArrayList<>(Arrays.asList(1, 2))`, `5L`, `true`) to values before
//! comparing them with the possible answers, which hold the converted values. A training target
//! compares the model's strings directly, so each acceptable value is rendered back to source
//! text here, and only renderings that the evaluator's own argument check accepts are kept.

use serde_json::{Map, Value};

use super::argument::check_param;
use super::category::Language;
use super::value::is_omission_marker;

/// The acceptable values of one Java/JavaScript parameter as source text: `""` (may be omitted)
/// kept, every other alternative replaced by its first rendering that the evaluator accepts
/// for this parameter (duplicates dropped). Alternatives with no such rendering are left out.
pub(super) fn source_alternatives(
    param: &str,
    schema: &Value,
    acceptable: &[Value],
    language: Language,
) -> Vec<Value> {
    let declared = schema.get("type").and_then(Value::as_str).unwrap_or("");
    let items = schema
        .get("items")
        .and_then(|items| items.get("type"))
        .and_then(Value::as_str);
    let mut out: Vec<Value> = Vec::new();
    for alternative in acceptable {
        let rendered = if is_omission_marker(alternative) {
            Some(alternative.clone())
        } else {
            renderings(alternative, declared, items, language)
                .into_iter()
                .map(Value::String)
                .find(|text| check_param(param, text, schema, acceptable, language).is_ok())
        };
        if let Some(text) = rendered
            && !out.contains(&text)
        {
            out.push(text);
        }
    }
    out
}

/// Candidate source texts of `value` for a parameter declared `declared` (collections of
/// `items`), most natural first.
fn renderings(
    value: &Value,
    declared: &str,
    items_type: Option<&str>,
    language: Language,
) -> Vec<String> {
    let java = language == Language::Java;
    match value {
        Value::String(text) => vec![text.clone(), format!("\"{text}\"")],
        Value::Bool(flag) => vec![flag.to_string()],
        Value::Number(number) => {
            let text = number.to_string();
            let mut out = vec![text.clone()];
            if java {
                out.extend([format!("{text}L"), format!("{text}f")]);
            } else {
                out.push(format!("{text}n"));
            }
            if number.is_i64() || number.is_u64() {
                out.push(format!("{text}.0"));
            }
            out
        }
        Value::Array(items) => {
            let mut out = Vec::new();
            for quoted in [true, false] {
                let body = items
                    .iter()
                    .map(|item| match (item, items_type) {
                        (Value::Number(n), Some("long")) if java => format!("{n}L"),
                        (Value::Number(n), Some("float")) if java => format!("{n}f"),
                        _ => literal(item, quoted, language),
                    })
                    .collect::<Vec<_>>()
                    .join(", ");
                if java {
                    out.push(format!("new ArrayList<>(Arrays.asList({body}))"));
                    let element = if declared == "Array" {
                        "Object"
                    } else {
                        "String"
                    };
                    out.push(format!("new {element}[]{{{body}}}"));
                } else {
                    out.push(format!("[{body}]"));
                }
            }
            if items.is_empty() && java {
                out.push("new ArrayList<>()".into());
            }
            out
        }
        Value::Object(fields) => {
            let first = |alternatives: &Value| match alternatives {
                Value::Array(values) => values.iter().find(|v| !is_omission_marker(v)).cloned(),
                other => Some(other.clone()),
            };
            let pairs: Vec<(String, Value)> = fields
                .iter()
                .filter_map(|(key, alternatives)| first(alternatives).map(|v| (key.clone(), v)))
                .collect();
            let mut out = Vec::new();
            for quoted in [true, false] {
                if java {
                    let puts: String = pairs
                        .iter()
                        .map(|(key, v)| {
                            format!("put(\"{key}\", {}); ", literal(v, quoted, language))
                        })
                        .collect();
                    out.push(format!("new HashMap<String, Object>() {{{{ {puts}}}}}"));
                } else {
                    let body = pairs
                        .iter()
                        .map(|(key, v)| format!("{key}: {}", literal(v, quoted, language)))
                        .collect::<Vec<_>>()
                        .join(", ");
                    out.push(format!("{{{body}}}"));
                }
            }
            out
        }
        Value::Null => Vec::new(),
    }
}

/// A nested literal: strings quoted or bare, collections rendered recursively.
fn literal(value: &Value, quoted: bool, language: Language) -> String {
    match value {
        Value::String(text) if quoted => format!("\"{text}\""),
        Value::String(text) => text.clone(),
        Value::Array(items) => format!(
            "[{}]",
            items
                .iter()
                .map(|item| literal(item, quoted, language))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Value::Object(map) => {
            let body = map
                .iter()
                .map(|(key, v)| format!("{key}: {}", literal(v, quoted, language)))
                .collect::<Vec<_>>()
                .join(", ");
            format!("{{{body}}}")
        }
        other => other.to_string(),
    }
}

/// A Java/JavaScript possible answer `{name: {param: [values…]}}` with every parameter's
/// values replaced by their source text (see [`source_alternatives`]); `doc` is the function
/// doc in BFCL's types.
///
/// # Errors
/// The parameter (and its values) for which no value has a rendering the evaluator accepts.
pub(super) fn source_answer(
    answer: &Value,
    doc: Option<&Value>,
    language: Language,
) -> Result<Value, String> {
    let Some((name, params)) = answer.as_object().and_then(|map| map.iter().next()) else {
        return Ok(answer.clone());
    };
    let empty = Map::new();
    let properties = doc
        .and_then(|doc| doc.get("parameters"))
        .and_then(|p| p.get("properties"))
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let mut rendered = Map::new();
    for (param, acceptable) in params.as_object().unwrap_or(&empty) {
        let values = match acceptable {
            Value::Array(values) => values.clone(),
            single => vec![single.clone()],
        };
        let schema = properties.get(param).cloned().unwrap_or(Value::Null);
        let alternatives = source_alternatives(param, &schema, &values, language);
        if alternatives.is_empty() {
            return Err(format!(
                "parameter `{param}` of `{name}`: no source text of {acceptable} passes the checker"
            ));
        }
        rendered.insert(param.clone(), Value::Array(alternatives));
    }
    let mut out = Map::new();
    out.insert(name.clone(), Value::Object(rendered));
    Ok(Value::Object(out))
}
