//! Executing call strings on an entry's backend instances the way bfcl-eval's
//! `execute_multi_turn_func_call` does: method names mapped to the involved classes (a later
//! class wins a shared name), forbidden names refused, Python's evaluation of the call (keyword
//! and positional arguments, literals, nested calls) and its result turned into text (`str` as
//! is, `dict` through `json.dumps`, anything else `str()`), exceptions as
//! `Error during execution: …`.
//!
//! Not reproduced: Python builtins and module globals callable by name (`print(…)`, `len(…)`
//! give `NameError` text here; the result text differs, the state does not), the rewriting of
//! method names inside string literals, and operators other than `+ - * / **` inside arguments (reported unsupported).

use std::collections::HashMap;

use serde_json::Value;

use super::backend::{Backend, CallError, bind_arguments};
use super::long_context::LongContext;
use super::pyops;
use super::registry::{is_stateless, new_backend};
use super::value::PyValue;
use crate::bfcl::pyparse::{PyExpr, parse_expression};

/// Names the official executor refuses to evaluate.
const FORBIDDEN: [&str; 8] = [
    "kill", "exit", "quit", "remove", "unlink", "popen", "Popen", "run",
];

/// The backend instances of one entry (one side: the model's or the ground truth's).
pub struct Instances {
    backends: Vec<Box<dyn Backend>>,
    method_owner: HashMap<&'static str, usize>,
}

impl std::fmt::Debug for Instances {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.backends.iter().map(|b| b.class_name()).collect();
        f.debug_struct("Instances")
            .field("classes", &names)
            .finish()
    }
}

impl Instances {
    /// Creates and loads the involved classes from `initial_config` (stateless classes are not
    /// loaded, as upstream), in long-context mode when `long_context` is on.
    ///
    /// # Errors
    /// The unsupported reason when a class is not ported or its config cannot be loaded.
    pub fn new(
        involved_classes: &[String],
        initial_config: &Value,
        long_context: &LongContext,
    ) -> Result<Self, String> {
        let mut backends = Vec::with_capacity(involved_classes.len());
        let mut method_owner = HashMap::new();
        for class_name in involved_classes {
            let mut backend = new_backend(class_name)
                .ok_or_else(|| format!("backend {class_name} is not implemented yet"))?;
            if !is_stateless(class_name) {
                let config = initial_config
                    .get(class_name)
                    .map_or_else(|| PyValue::Dict(Vec::new()), PyValue::from_json);
                match backend.load_scenario(&config, long_context) {
                    Ok(()) => {}
                    Err(CallError::Unsupported(reason)) => return Err(reason),
                    Err(CallError::Raised(text)) => {
                        return Err(format!("{class_name} rejects its initial_config: {text}"));
                    }
                }
            }
            for method in backend.methods() {
                method_owner.insert(method.name, backends.len());
            }
            backends.push(backend);
        }
        Ok(Self {
            backends,
            method_owner,
        })
    }

    /// The instances, in `involved_classes` order.
    pub fn backends(&self) -> &[Box<dyn Backend>] {
        &self.backends
    }

    /// Executes one step's calls in order, returning one result text per call.
    ///
    /// # Errors
    /// The unsupported reason when a call needs behaviour this port does not reproduce.
    pub fn execute(&mut self, calls: &[String]) -> Result<Vec<String>, String> {
        calls.iter().map(|call| self.execute_one(call)).collect()
    }

    fn execute_one(&mut self, call: &str) -> Result<String, String> {
        let head = call.split('(').next().unwrap_or("");
        let name = head.split('.').nth(1).unwrap_or(head);
        if FORBIDDEN.contains(&name) {
            return Ok(format!(
                "Error during execution: Function call {name} is not allowed."
            ));
        }
        let evaluated = match parse_expression(call) {
            Ok(expr) => self.evaluate(&expr),
            Err(_) => Err(CallError::raised("invalid syntax (<string>, line 1)")),
        };
        match evaluated {
            Ok(value) => Ok(result_text(&value)),
            Err(CallError::Raised(text)) => Ok(format!("Error during execution: {text}")),
            Err(CallError::Unsupported(reason)) => Err(reason),
        }
    }

    fn evaluate(&mut self, expr: &PyExpr) -> Result<PyValue, CallError> {
        Ok(match expr {
            PyExpr::Str(text) => PyValue::Str(text.clone()),
            PyExpr::Int(n) => PyValue::Int(
                i64::try_from(*n)
                    .map_err(|_| CallError::Unsupported(format!("integer {n} exceeds 64 bits")))?,
            ),
            PyExpr::Float(x) => PyValue::Float(*x),
            PyExpr::Bool(flag) => PyValue::Bool(*flag),
            PyExpr::None => PyValue::None,
            PyExpr::Ellipsis => PyValue::Opaque("Ellipsis".into()),
            PyExpr::List(items) => PyValue::List(self.evaluate_all(items)?),
            PyExpr::Tuple(items) => PyValue::Tuple(self.evaluate_all(items)?),
            PyExpr::Dict(pairs) => {
                let mut out = Vec::with_capacity(pairs.len());
                for (key, value) in pairs {
                    let key = self.evaluate(key)?;
                    let value = self.evaluate(value)?;
                    match out.iter_mut().find(|(k, _)| *k == key) {
                        Some(slot) => slot.1 = value,
                        None => out.push((key, value)),
                    }
                }
                PyValue::Dict(out)
            }
            PyExpr::Unary(op, operand) => {
                let value = self.evaluate(operand)?;
                match (op.as_str(), value) {
                    ("-", PyValue::Int(n)) => PyValue::Int(-n),
                    ("-", PyValue::Float(x)) => PyValue::Float(-x),
                    ("+", value @ (PyValue::Int(_) | PyValue::Float(_))) => value,
                    (op, value) => {
                        return Err(CallError::Unsupported(format!(
                            "operator {op} on {}",
                            value.type_name()
                        )));
                    }
                }
            }
            PyExpr::Name(name) => return Err(name_error(name)),
            PyExpr::Attribute(base, _) => {
                self.evaluate(base)?;
                return Err(CallError::Unsupported("attribute access".into()));
            }
            PyExpr::Call {
                func,
                args,
                keywords,
                ..
            } => return self.call(func, args, keywords),
            PyExpr::Binary(op, left, right) => {
                let (left, right) = (self.evaluate(left)?, self.evaluate(right)?);
                match op.as_str() {
                    "+" => pyops::add(&left, &right)?,
                    "-" => pyops::sub(&left, &right)?,
                    "*" => pyops::mul(&left, &right)?,
                    "/" => pyops::truediv(&left, &right)?,
                    "**" => pyops::pow(&left, &right)?,
                    other => {
                        return Err(CallError::Unsupported(format!("operator {other}")));
                    }
                }
            }
            PyExpr::Set(_) | PyExpr::Subscript(_) => {
                return Err(CallError::Unsupported(format!(
                    "expression {expr:?} is not a literal"
                )));
            }
        })
    }

    fn evaluate_all(&mut self, items: &[PyExpr]) -> Result<Vec<PyValue>, CallError> {
        items.iter().map(|item| self.evaluate(item)).collect()
    }

    fn call(
        &mut self,
        func: &PyExpr,
        args: &[PyExpr],
        keywords: &[(String, PyExpr)],
    ) -> Result<PyValue, CallError> {
        let PyExpr::Name(name) = func else {
            return self.evaluate(func);
        };
        let Some(&owner) = self.method_owner.get(name.as_str()) else {
            return Err(name_error(name));
        };
        let positional = self.evaluate_all(args)?;
        let mut named = Vec::with_capacity(keywords.len());
        for (key, value) in keywords {
            if key == "null" {
                return Err(CallError::Unsupported("`**mapping` arguments".into()));
            }
            named.push((key.clone(), self.evaluate(value)?));
        }
        let backend = &mut self.backends[owner];
        let method = backend
            .methods()
            .iter()
            .find(|method| method.name == name)
            .ok_or_else(|| name_error(name))?;
        let bound = bind_arguments(backend.class_name(), method, positional, named, |source| {
            if source.starts_with('<') {
                return PyValue::Opaque(source.to_owned());
            }
            parse_expression(source)
                .ok()
                .and_then(|expr| literal(&expr))
                .unwrap_or(PyValue::None)
        })?;
        backend.call(name, bound)
    }
}

/// The value of a Python literal expression (numbers, strings, `True`/`False`/`None`, `...`,
/// and lists, tuples and dicts of literals); `None` for anything else. A dict literal's repeated
/// key keeps its first position and its last value, as in Python.
pub(super) fn literal(expr: &PyExpr) -> Option<PyValue> {
    Some(match expr {
        PyExpr::Str(text) => PyValue::Str(text.clone()),
        PyExpr::Int(n) => PyValue::Int(i64::try_from(*n).ok()?),
        PyExpr::Float(x) => PyValue::Float(*x),
        PyExpr::Bool(flag) => PyValue::Bool(*flag),
        PyExpr::None => PyValue::None,
        PyExpr::Ellipsis => PyValue::Opaque("Ellipsis".into()),
        PyExpr::Unary(op, operand) if op == "-" => match literal(operand)? {
            PyValue::Int(n) => PyValue::Int(-n),
            PyValue::Float(x) => PyValue::Float(-x),
            _ => return None,
        },
        PyExpr::List(items) => PyValue::List(items.iter().map(literal).collect::<Option<_>>()?),
        PyExpr::Tuple(items) => PyValue::Tuple(items.iter().map(literal).collect::<Option<_>>()?),
        PyExpr::Dict(pairs) => {
            let mut out: Vec<(PyValue, PyValue)> = Vec::with_capacity(pairs.len());
            for (key, value) in pairs {
                let (key, value) = (literal(key)?, literal(value)?);
                match out.iter_mut().find(|(known, _)| *known == key) {
                    Some(slot) => slot.1 = value,
                    None => out.push((key, value)),
                }
            }
            PyValue::Dict(out)
        }
        _ => return None,
    })
}

fn name_error(name: &str) -> CallError {
    CallError::raised(format!("name '{name}' is not defined"))
}

/// The text the official executor records for a call's return value.
pub fn result_text(value: &PyValue) -> String {
    match value {
        PyValue::Str(text) => text.clone(),
        PyValue::Dict(_) => value.json_dumps().unwrap_or_else(|_| value.repr()),
        other => other.repr(),
    }
}
