//! The [`Backend`] trait of BFCL's executable multi-turn classes, their method signatures, and
//! Python's argument binding (with its `TypeError` texts).

use super::long_context::LongContext;
use super::value::PyValue;

/// Why a call produced no Python result.
#[derive(Debug, Clone, PartialEq)]
pub enum CallError {
    /// The call raised; the text is Python's `str(exception)`.
    Raised(String),
    /// The call needs behaviour this port does not reproduce (named); the entry is then reported
    /// as unsupported rather than scored.
    Unsupported(String),
}

impl CallError {
    /// A raised exception with the given text.
    pub fn raised(text: impl Into<String>) -> Self {
        CallError::Raised(text.into())
    }
}

/// One parameter of a method: its name and, when optional, its default as a Python literal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Param {
    /// The name.
    pub name: &'static str,
    /// The default's Python source (`"0"`, `"None"`, `"False"`), or `None` when required. A
    /// default written `<name>` stands for one mutable object that every call leaving the
    /// argument out shares (Python's `def f(x=[])`); the backend then receives
    /// `PyValue::Opaque("<name>")` and keeps that object itself.
    pub default: Option<&'static str>,
}

/// A required parameter.
pub const fn required(name: &'static str) -> Param {
    Param {
        name,
        default: None,
    }
}

/// An optional parameter with a default given as Python source.
pub const fn optional(name: &'static str, default: &'static str) -> Param {
    Param {
        name,
        default: Some(default),
    }
}

/// A public method: its name and parameters (without `self`), in declaration order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Method {
    /// The name.
    pub name: &'static str,
    /// The parameters.
    pub params: &'static [Param],
}

/// An executable BFCL multi-turn class (`GorillaFileSystem`, `MathAPI`, …), ported from the
/// official Python: same return values, error texts and state changes.
pub trait Backend: Send {
    /// The Python class name.
    fn class_name(&self) -> &'static str;

    /// The public methods (those the official executor maps call names to).
    fn methods(&self) -> &'static [Method];

    /// `_load_scenario`: sets the state from the class's part of an entry's `initial_config`,
    /// in long-context mode when `long_context` is on (with bfcl-eval's filler data, when given).
    ///
    /// # Errors
    /// A config the Python class would reject, or one this port cannot load (long-context
    /// loading without the filler data).
    fn load_scenario(
        &mut self,
        config: &PyValue,
        long_context: &LongContext,
    ) -> Result<(), CallError>;

    /// Calls a method with its arguments bound in declaration order (defaults filled in).
    ///
    /// # Errors
    /// What the Python method raises, or [`CallError::Unsupported`].
    fn call(&mut self, method: &str, args: Vec<PyValue>) -> Result<PyValue, CallError>;

    /// The public attributes (`vars(instance)` without `_`-prefixed names), compared by the
    /// state check.
    fn state(&self) -> Vec<(&'static str, PyValue)>;
}

/// Binds positional and keyword arguments to `method`'s parameters as Python does, filling in
/// defaults from `parse_default`.
///
/// # Errors
/// Python's `TypeError` text (`Class.method() got an unexpected keyword argument 'x'`, …).
pub fn bind_arguments(
    class_name: &str,
    method: &Method,
    positional: Vec<PyValue>,
    keywords: Vec<(String, PyValue)>,
    parse_default: impl Fn(&str) -> PyValue,
) -> Result<Vec<PyValue>, CallError> {
    let qualified = format!("{class_name}.{}()", method.name);
    let params = method.params;
    let given_positional = positional.len();
    let mut slots: Vec<Option<PyValue>> = vec![None; params.len()];
    for (slot, value) in slots.iter_mut().zip(positional) {
        *slot = Some(value);
    }
    for (name, value) in keywords {
        let Some(index) = params.iter().position(|p| p.name == name) else {
            return Err(CallError::raised(format!(
                "{qualified} got an unexpected keyword argument '{name}'"
            )));
        };
        if slots[index].is_some() {
            return Err(CallError::raised(format!(
                "{qualified} got multiple values for argument '{name}'"
            )));
        }
        slots[index] = Some(value);
    }
    if given_positional > params.len() {
        let required = params.iter().filter(|p| p.default.is_none()).count() + 1;
        let most = params.len() + 1;
        let takes = if required == most {
            format!("{most} positional argument{}", plural(most))
        } else {
            format!("from {required} to {most} positional arguments")
        };
        let given = given_positional + 1;
        let verb = if given == 1 { "was" } else { "were" };
        return Err(CallError::raised(format!(
            "{qualified} takes {takes} but {given} {verb} given"
        )));
    }
    let missing: Vec<String> = params
        .iter()
        .zip(&slots)
        .filter(|(param, slot)| slot.is_none() && param.default.is_none())
        .map(|(param, _)| format!("'{}'", param.name))
        .collect();
    if !missing.is_empty() {
        let names = match missing.as_slice() {
            [one] => one.clone(),
            [first, second] => format!("{first} and {second}"),
            [init @ .., last] => format!("{}, and {last}", init.join(", ")),
            [] => String::new(),
        };
        return Err(CallError::raised(format!(
            "{qualified} missing {} required positional argument{}: {names}",
            missing.len(),
            plural(missing.len())
        )));
    }
    Ok(params
        .iter()
        .zip(slots)
        .map(|(param, slot)| slot.unwrap_or_else(|| parse_default(param.default.unwrap_or("None"))))
        .collect())
}

/// Test helper: the official result text of one call (panics when the call is unsupported).
#[cfg(test)]
pub(crate) fn call_text(backend: &mut dyn Backend, method: &str, args: Vec<PyValue>) -> String {
    super::execute::result_text(&backend.call(method, args).expect("the call returns"))
}

fn plural(count: usize) -> &'static str {
    if count == 1 { "" } else { "s" }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ADD: Method = Method {
        name: "add",
        params: &[required("a"), required("b")],
    };
    const ROUND: Method = Method {
        name: "r",
        params: &[required("n"), optional("d", "0")],
    };

    fn bind(method: &Method, pos: usize, kw: &[&str]) -> Result<Vec<PyValue>, CallError> {
        bind_arguments(
            "MathAPI",
            method,
            (0..pos).map(|i| PyValue::Int(i as i64)).collect(),
            kw.iter()
                .map(|k| ((*k).to_owned(), PyValue::None))
                .collect(),
            |_| PyValue::Int(0),
        )
    }

    fn text(result: Result<Vec<PyValue>, CallError>) -> String {
        match result {
            Err(CallError::Raised(text)) => text,
            other => format!("{other:?}"),
        }
    }

    /// Texts checked against CPython 3.11 (see the module docs of the goldens script).
    #[test]
    fn type_errors_read_like_python() {
        assert_eq!(
            text(bind(&ADD, 3, &[])),
            "MathAPI.add() takes 3 positional arguments but 4 were given"
        );
        assert_eq!(
            text(bind(&ADD, 0, &["c"])),
            "MathAPI.add() got an unexpected keyword argument 'c'"
        );
        assert_eq!(
            text(bind(&ADD, 1, &["a"])),
            "MathAPI.add() got multiple values for argument 'a'"
        );
        assert_eq!(
            text(bind(&ADD, 0, &[])),
            "MathAPI.add() missing 2 required positional arguments: 'a' and 'b'"
        );
        assert_eq!(
            text(bind(&ROUND, 3, &[])),
            "MathAPI.r() takes from 2 to 3 positional arguments but 4 were given"
        );
        assert_eq!(
            text(bind(&ROUND, 0, &[])),
            "MathAPI.r() missing 1 required positional argument: 'n'"
        );
        assert_eq!(
            bind(&ROUND, 1, &[]),
            Ok(vec![PyValue::Int(0), PyValue::Int(0)])
        );
    }
}
