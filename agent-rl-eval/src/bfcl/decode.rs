//! Decoding a model's output into BFCL's call list `[{name: {arg: value}}]`.
//!
//! Two output formats are understood:
//! - tool calls from the chat template, `<tool_call>{"name": …, "arguments": {…}}</tool_call>`
//!   (what function-calling models produce), decoded with the Hermes parser of `agent-rl-core`;
//! - BFCL's prompting format `[func(a=1, b='x')]`, Python syntax for the Python categories and
//!   Java/JavaScript call syntax (arguments kept as source text) for `simple_java` and
//!   `simple_javascript`.

use agent_rl_core::{HermesToolCallParser, ToolCall, ToolCallParser};
use serde_json::{Map, Value};

use super::category::Language;
use super::resolve::{bracketed, decode_python_calls};
use super::source_syntax::is_plausible_expression;

/// Decodes raw model text.
///
/// # Errors
/// A message when the text cannot be decoded (BFCL's `ast_decoder:decoder_failed`).
pub fn decode_text(text: &str, language: Language) -> Result<Value, String> {
    if text.contains("<tool_call>") {
        let parsed = HermesToolCallParser::default().parse(text);
        if let Some(malformed) = parsed.malformed.first() {
            return Err(format!("malformed tool call: {malformed:?}"));
        }
        return Ok(tool_calls_to_value(&parsed.tool_calls));
    }
    match language {
        Language::Python => decode_python_calls(text).map(Value::Array),
        Language::Java | Language::JavaScript => decode_source_call(text, language),
    }
}

/// BFCL's decoded form of tool calls: `[{name: arguments}]`; arguments given as a JSON string
/// are parsed (as the official function-calling handlers do).
pub fn tool_calls_to_value(calls: &[ToolCall]) -> Value {
    Value::Array(
        calls
            .iter()
            .map(|call| {
                let arguments = match &call.arguments {
                    Value::String(text) => {
                        serde_json::from_str(text).unwrap_or(call.arguments.clone())
                    }
                    other => other.clone(),
                };
                let mut map = Map::new();
                map.insert(call.name.clone(), arguments);
                Value::Object(map)
            })
            .collect(),
    )
}

/// A decoded call: function name and argument object.
pub type DecodedCall<'a> = (&'a str, &'a Map<String, Value>);

/// BFCL's format check: a list of one-key objects whose value is an object. Returns the calls, or
/// `None` when the shape is wrong (`ast_decoder:decoder_wrong_output_format`).
pub fn as_calls(decoded: &Value) -> Option<Vec<DecodedCall<'_>>> {
    let Value::Array(items) = decoded else {
        return None;
    };
    items
        .iter()
        .map(|item| match item {
            Value::Object(map) if map.len() == 1 => {
                let (name, arguments) = map.iter().next()?;
                arguments
                    .as_object()
                    .map(|arguments| (name.as_str(), arguments))
            }
            _ => None,
        })
        .collect()
}

/// BFCL's "empty output" rule for (ir)relevance: not in call format, `[]`, or `[{}]`.
pub fn is_empty_output(decoded: &Value) -> bool {
    if as_calls(decoded).is_none() {
        return true;
    }
    match decoded {
        Value::Array(items) => {
            items.is_empty()
                || (items.len() == 1 && items[0].as_object().is_some_and(Map::is_empty))
        }
        _ => true,
    }
}

/// Java/JavaScript prompting output: the first call `name(arg=value, …)`, each value kept as
/// source text; a top-level string literal loses its quotes.
fn decode_source_call(text: &str, language: Language) -> Result<Value, String> {
    let wrapped = bracketed(text);
    let inner: String = {
        let chars: Vec<char> = wrapped.chars().collect();
        chars[1..chars.len().saturating_sub(1).max(1)]
            .iter()
            .collect()
    };
    let open = inner.find('(').ok_or("no call found")?;
    let name = inner[..open].trim();
    let valid_name = !name.is_empty()
        && name.split('.').all(|part| {
            part.chars()
                .next()
                .is_some_and(|c| c.is_alphabetic() || c == '_' || c == '$')
                && part
                    .chars()
                    .all(|c| c.is_alphanumeric() || c == '_' || c == '$')
        });
    if !valid_name {
        return Err(format!("invalid function name {name:?}"));
    }
    let body = &inner[open + 1..];
    let close = matching_close(body).ok_or("unbalanced parentheses")?;
    let rest = body[close + 1..].trim();
    // a second call (or anything else) after the first is a syntax error for tree-sitter
    if !(rest.is_empty() || rest == ";") {
        return Err("unexpected text after the call".into());
    }
    let mut arguments = Map::new();
    for part in split_top_level(&body[..close], language == Language::Java) {
        let part = part.trim();
        if part.is_empty() {
            continue;
        }
        let (key, value) = part.split_once('=').ok_or("positional argument")?;
        let key = key.trim().to_owned();
        let value = value.trim();
        // tree-sitter reads a top-level `'…'` as a string (JS) or character (Java) literal;
        // both lose their quotes
        let unquoted = ['"', '\''].iter().find_map(|quote| {
            (value.len() >= 2 && value.starts_with(*quote) && value.ends_with(*quote))
                .then(|| value[1..value.len() - 1].to_owned())
        });
        if unquoted.is_none() && !is_plausible_expression(value, language == Language::JavaScript) {
            return Err(format!(
                "argument {key} is not a {language:?} expression: {value}"
            ));
        }
        let value = match (unquoted, language) {
            (Some(text), _) => text,
            (None, Language::Java) => java_source_value(value),
            (None, _) => value.to_owned(),
        };
        if arguments
            .insert(key.clone(), Value::String(value))
            .is_some()
        {
            return Err(format!("argument {key} repeated"));
        }
    }
    let mut call = Map::new();
    call.insert(name.to_owned(), Value::Object(arguments));
    Ok(Value::Array(vec![Value::Object(call)]))
}

/// The official Java decoder rebuilds creation expressions from the syntax tree:
/// `new T[] {a, b}` becomes `new T[]{a,b}`, and `new T<A, B>(x, y) {…}` becomes
/// `new T<A,B>(x, y)` (an anonymous class body, e.g. a `HashMap`'s `put` block, is dropped).
fn java_source_value(value: &str) -> String {
    let unchanged = || value.to_owned();
    let Some(rest) = value
        .strip_prefix("new")
        .filter(|r| r.starts_with(char::is_whitespace))
    else {
        return unchanged();
    };
    let rest = rest.trim_start();
    let Some(type_end) = rest.find(['(', '[']) else {
        return unchanged();
    };
    let type_text: String = rest[..type_end]
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect();
    let after = &rest[type_end..];
    let items = |inner: &str, separator: &str| {
        let parts: Vec<&str> = split_top_level(inner, true)
            .into_iter()
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .collect();
        parts.join(separator)
    };
    if let Some(array) = after.strip_prefix('[') {
        let Some(init) = array.trim_start().strip_prefix(']').map(str::trim) else {
            return unchanged();
        };
        return match init.strip_prefix('{').and_then(|i| i.strip_suffix('}')) {
            Some(inner) => format!("new {type_text}[]{{{}}}", items(inner, ",")),
            None => unchanged(),
        };
    }
    let arguments = &after[1..];
    match matching_close(arguments) {
        Some(close) => format!("new {type_text}({})", items(&arguments[..close], ", ")),
        None => unchanged(),
    }
}

/// The characters of `text` outside string literals (`"…"`, `'…'`, `` `…` ``, with backslash
/// escapes), with their byte indices; the quotes themselves are left out.
fn unquoted_chars(text: &str) -> impl Iterator<Item = (usize, char)> + '_ {
    let mut quote: Option<char> = None;
    let mut escaped = false;
    text.char_indices().filter(move |&(_, c)| {
        if let Some(q) = quote {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == q {
                quote = None;
            }
            return false;
        }
        if matches!(c, '"' | '\'' | '`') {
            quote = Some(c);
            return false;
        }
        true
    })
}

/// Index of the `)` closing an already opened `(`, skipping strings and nested brackets.
fn matching_close(text: &str) -> Option<usize> {
    let mut depth = 0usize;
    for (index, c) in unquoted_chars(text) {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' if depth == 0 => return Some(index),
            ')' | ']' | '}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    None
}

/// Splits on commas outside strings and brackets (and outside `<…>` with `angle`, for Java
/// generics).
fn split_top_level(text: &str, angle: bool) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut depth = 0usize;
    let mut start = 0;
    for (index, c) in unquoted_chars(text) {
        match c {
            '(' | '[' | '{' => depth += 1,
            '<' if angle => depth += 1,
            '>' if angle => depth = depth.saturating_sub(1),
            ')' | ']' | '}' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                parts.push(&text[start..index]);
                start = index + 1;
            }
            _ => {}
        }
    }
    parts.push(&text[start..]);
    parts
}
