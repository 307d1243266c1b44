//! Comparing one JSON value against acceptable values, recursively.

use serde_json::{Map, Number, Value};

use super::expected::{ExpectedArgument, ValuePattern};
use super::mismatch::{Mismatch, MismatchKind, ValueKind};
use super::options::MatchOptions;

/// Checks `actual` against a list of alternatives: it matches when it matches any of them.
///
/// The `""` omission marker accepts only an empty string here (omission itself is handled where
/// fields are matched). When no alternative has a compatible type the error is
/// [`MismatchKind::WrongType`]; otherwise it is the first mismatch of a type-compatible one.
///
/// ```
/// use agent_rl_rewards::matching::{match_alternatives, MatchOptions, MismatchKind, ValuePattern};
/// use serde_json::json;
/// let acceptable = [ValuePattern::Literal(json!(2.0)), ValuePattern::Literal(json!(""))];
/// let options = MatchOptions::bfcl();
/// assert!(match_alternatives(&json!(2), &acceptable, &options, "x").is_ok()); // int for float
/// let err = match_alternatives(&json!(true), &acceptable, &options, "x").expect_err("bool");
/// assert!(matches!(err.kind, MismatchKind::WrongType { .. }));
/// ```
///
/// # Errors
/// The [`Mismatch`] explaining why no alternative matched.
pub fn match_alternatives(
    actual: &Value,
    acceptable: &[ValuePattern],
    options: &MatchOptions,
    path: &str,
) -> Result<(), Mismatch> {
    if actual.as_str() == Some("") && acceptable.iter().any(ValuePattern::is_omission_marker) {
        return Ok(());
    }
    let candidates: Vec<&ValuePattern> = acceptable
        .iter()
        .filter(|pattern| !pattern.is_omission_marker())
        .collect();
    if candidates.is_empty() {
        return Err(Mismatch::new(
            path,
            MismatchKind::WrongValue {
                found: actual.clone(),
            },
        ));
    }
    let found = ValueKind::of(actual);
    let mut first_error = None;
    for pattern in &candidates {
        if !kinds_compatible(found, pattern_kind(pattern), options) {
            continue;
        }
        match match_pattern(actual, pattern, options, path) {
            Ok(()) => return Ok(()),
            Err(mismatch) => {
                first_error.get_or_insert(mismatch);
            }
        }
    }
    Err(first_error.unwrap_or_else(|| {
        let mut expected: Vec<ValueKind> = Vec::new();
        for pattern in candidates {
            let kind = pattern_kind(pattern);
            if !expected.contains(&kind) {
                expected.push(kind);
            }
        }
        Mismatch::new(path, MismatchKind::WrongType { expected, found })
    }))
}

/// Checks `actual` against one pattern.
///
/// # Errors
/// The first [`Mismatch`] found, with its path below `path`.
pub fn match_pattern(
    actual: &Value,
    pattern: &ValuePattern,
    options: &MatchOptions,
    path: &str,
) -> Result<(), Mismatch> {
    match pattern {
        ValuePattern::Literal(expected) => match_literal(actual, expected, options, path),
        ValuePattern::Object(fields) => {
            let Value::Object(map) = actual else {
                return Err(wrong_type(ValueKind::Object, actual, path));
            };
            match match_fields(map, fields, options, path)
                .mismatches
                .into_iter()
                .next()
            {
                Some(mismatch) => Err(mismatch),
                None => Ok(()),
            }
        }
        ValuePattern::List(items) => {
            let Value::Array(values) = actual else {
                return Err(wrong_type(ValueKind::Array, actual, path));
            };
            check_length(items.len(), values.len(), path)?;
            for (index, (value, item)) in values.iter().zip(items).enumerate() {
                match_pattern(value, item, options, &format!("{path}[{index}]"))?;
            }
            Ok(())
        }
    }
}

/// Checks `actual` against one literal value: numbers numerically (int→float leniency), strings
/// after normalisation, lists element-wise, objects key by key (missing and unexpected keys are
/// mismatches).
///
/// # Errors
/// The first [`Mismatch`] found, with its path below `path`.
pub fn match_literal(
    actual: &Value,
    expected: &Value,
    options: &MatchOptions,
    path: &str,
) -> Result<(), Mismatch> {
    let found = ValueKind::of(actual);
    let wanted = ValueKind::of(expected);
    if !kinds_compatible(found, wanted, options) {
        return Err(wrong_type(wanted, actual, path));
    }
    let equal = match (actual, expected) {
        (Value::Number(a), Value::Number(e)) => numbers_equal(a, e, options.float_tolerance),
        (Value::String(a), Value::String(e)) => options.normalize(a) == options.normalize(e),
        (Value::Array(values), Value::Array(items)) => {
            check_length(items.len(), values.len(), path)?;
            for (index, (value, item)) in values.iter().zip(items).enumerate() {
                match_literal(value, item, options, &format!("{path}[{index}]"))?;
            }
            true
        }
        (Value::Object(map), Value::Object(fields)) => {
            for (key, item) in fields {
                let field_path = join(path, key);
                match map.get(key) {
                    Some(value) => match_literal(value, item, options, &field_path)?,
                    None => return Err(Mismatch::new(field_path, MismatchKind::MissingRequired)),
                }
            }
            if let Some(key) = map.keys().find(|key| !fields.contains_key(*key)) {
                return Err(Mismatch::new(
                    join(path, key),
                    MismatchKind::UnexpectedArgument,
                ));
            }
            true
        }
        (a, e) => a == e,
    };
    if equal {
        Ok(())
    } else {
        Err(Mismatch::new(
            path,
            MismatchKind::WrongValue {
                found: actual.clone(),
            },
        ))
    }
}

/// Result of matching an object's fields against expected arguments.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct FieldsOutcome {
    /// Expected arguments plus unexpected ones.
    pub checked: usize,
    /// Expected arguments that were right (given acceptably, or omitted when optional).
    pub correct: usize,
    /// Every mismatch, expected arguments first, then unexpected ones.
    pub mismatches: Vec<Mismatch>,
}

/// Matches every field of `actual` against `expected` (all mismatches, not just the first).
pub(crate) fn match_fields(
    actual: &Map<String, Value>,
    expected: &[ExpectedArgument],
    options: &MatchOptions,
    prefix: &str,
) -> FieldsOutcome {
    let mut outcome = FieldsOutcome::default();
    for argument in expected {
        outcome.checked += 1;
        let path = join(prefix, &argument.name);
        let result = match actual.get(&argument.name) {
            None if argument.is_optional() => Ok(()),
            None => Err(Mismatch::new(path, MismatchKind::MissingRequired)),
            Some(value) => match_alternatives(value, &argument.acceptable, options, &path),
        };
        match result {
            Ok(()) => outcome.correct += 1,
            Err(mismatch) => outcome.mismatches.push(mismatch),
        }
    }
    for key in actual.keys() {
        if !expected.iter().any(|argument| &argument.name == key) {
            outcome.checked += 1;
            outcome.mismatches.push(Mismatch::new(
                join(prefix, key),
                MismatchKind::UnexpectedArgument,
            ));
        }
    }
    outcome
}

fn pattern_kind(pattern: &ValuePattern) -> ValueKind {
    match pattern {
        ValuePattern::Literal(value) => ValueKind::of(value),
        ValuePattern::Object(_) => ValueKind::Object,
        ValuePattern::List(_) => ValueKind::Array,
    }
}

fn kinds_compatible(found: ValueKind, wanted: ValueKind, options: &MatchOptions) -> bool {
    found == wanted
        || (options.int_as_float && found == ValueKind::Integer && wanted == ValueKind::Float)
}

fn numbers_equal(actual: &Number, expected: &Number, tolerance: f64) -> bool {
    let as_int = |number: &Number| {
        number
            .as_i64()
            .map(i128::from)
            .or_else(|| number.as_u64().map(i128::from))
    };
    if let (Some(a), Some(e)) = (as_int(actual), as_int(expected))
        && tolerance == 0.0
    {
        return a == e;
    }
    match (actual.as_f64(), expected.as_f64()) {
        (Some(a), Some(e)) => a == e || (a - e).abs() <= tolerance,
        _ => false,
    }
}

fn wrong_type(wanted: ValueKind, actual: &Value, path: &str) -> Mismatch {
    Mismatch::new(
        path,
        MismatchKind::WrongType {
            expected: vec![wanted],
            found: ValueKind::of(actual),
        },
    )
}

fn check_length(expected: usize, found: usize, path: &str) -> Result<(), Mismatch> {
    if expected == found {
        Ok(())
    } else {
        Err(Mismatch::new(
            path,
            MismatchKind::WrongLength { expected, found },
        ))
    }
}

fn join(prefix: &str, name: &str) -> String {
    if prefix.is_empty() {
        name.to_owned()
    } else {
        format!("{prefix}.{name}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn literal(actual: Value, expected: Value) -> Result<(), Mismatch> {
        match_literal(&actual, &expected, &MatchOptions::bfcl(), "x")
    }

    #[test]
    fn numbers_int_float_leniency_is_one_way() {
        assert!(literal(json!(3), json!(3.0)).is_ok());
        assert!(literal(json!(3), json!(3)).is_ok());
        let err = literal(json!(3.0), json!(3)).expect_err("float for int");
        assert_eq!(
            err.kind,
            MismatchKind::WrongType {
                expected: vec![ValueKind::Integer],
                found: ValueKind::Float
            }
        );
        let strict = MatchOptions::bfcl().with_int_as_float(false);
        assert!(match_literal(&json!(3), &json!(3.0), &strict, "x").is_err());
        assert!(literal(json!(3), json!(3.5)).is_err());
        assert!(literal(json!(u64::MAX), json!(u64::MAX)).is_ok());
        assert!(literal(json!(-1), json!(u64::MAX)).is_err());
    }

    #[test]
    fn float_tolerance_applies_when_set() {
        let loose = MatchOptions::bfcl().with_float_tolerance(1e-6);
        assert!(match_literal(&json!(0.30000000000000004), &json!(0.3), &loose, "x").is_ok());
        assert!(literal(json!(0.30000000000000004), json!(0.3)).is_err());
    }

    #[test]
    fn strings_normalise_at_every_depth() {
        assert!(
            literal(
                json!(["New York", {"k": "A-B"}]),
                json!(["new york", {"k": "ab"}])
            )
            .is_ok()
        );
        let exact = MatchOptions::strict();
        assert!(match_literal(&json!("New York"), &json!("new york"), &exact, "x").is_err());
    }

    #[test]
    fn nested_paths_name_the_failing_element() {
        let err =
            literal(json!({"a": [1, {"b": 2}]}), json!({"a": [1, {"b": 3}]})).expect_err("differs");
        assert_eq!(err.path, "x.a[1].b");
        let err = literal(json!({"a": 1, "z": 0}), json!({"a": 1})).expect_err("extra key");
        assert_eq!(
            (err.path.as_str(), err.kind),
            ("x.z", MismatchKind::UnexpectedArgument)
        );
        let err = literal(json!({}), json!({"a": 1})).expect_err("missing key");
        assert_eq!(
            (err.path.as_str(), err.kind),
            ("x.a", MismatchKind::MissingRequired)
        );
        let err = literal(json!([1]), json!([1, 2])).expect_err("length");
        assert_eq!(
            err.kind,
            MismatchKind::WrongLength {
                expected: 2,
                found: 1
            }
        );
    }

    #[test]
    fn omission_marker_alone_rejects_any_given_value() {
        let only_omit = [ValuePattern::Literal(json!(""))];
        let options = MatchOptions::bfcl();
        assert!(match_alternatives(&json!(""), &only_omit, &options, "x").is_ok());
        let err = match_alternatives(&json!("a"), &only_omit, &options, "x").expect_err("given");
        assert!(matches!(err.kind, MismatchKind::WrongValue { .. }));
    }
}
