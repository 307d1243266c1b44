//! `MathAPI`: bfcl-eval's stateless calculator class (`math_api.py`), with its return values and
//! error texts. `logarithm` (mpmath at a chosen precision) is computed as mpmath computes and
//! prints it ([`super::mpmath_log`]) for positive arguments, `square_root` as `Decimal` computes
//! and prints it ([`super::decimal_sqrt`]) up to 10,000 digits; `logarithm`'s error paths are not
//! ported and report unsupported.

use std::cmp::Ordering;

use super::backend::{Backend, CallError, Method, optional, required};
use super::long_context::LongContext;
use super::pyops::{self, truthy};
use super::value::PyValue;

const METHODS: &[Method] = &[
    Method {
        name: "logarithm",
        params: &[required("value"), required("base"), required("precision")],
    },
    Method {
        name: "mean",
        params: &[required("numbers")],
    },
    Method {
        name: "standard_deviation",
        params: &[required("numbers")],
    },
    Method {
        name: "si_unit_conversion",
        params: &[required("value"), required("unit_in"), required("unit_out")],
    },
    Method {
        name: "imperial_si_conversion",
        params: &[required("value"), required("unit_in"), required("unit_out")],
    },
    Method {
        name: "add",
        params: &[required("a"), required("b")],
    },
    Method {
        name: "subtract",
        params: &[required("a"), required("b")],
    },
    Method {
        name: "multiply",
        params: &[required("a"), required("b")],
    },
    Method {
        name: "divide",
        params: &[required("a"), required("b")],
    },
    Method {
        name: "power",
        params: &[required("base"), required("exponent")],
    },
    Method {
        name: "square_root",
        params: &[required("number"), required("precision")],
    },
    Method {
        name: "absolute_value",
        params: &[required("number")],
    },
    Method {
        name: "round_number",
        params: &[required("number"), optional("decimal_places", "0")],
    },
    Method {
        name: "percentage",
        params: &[required("part"), required("whole")],
    },
    Method {
        name: "min_value",
        params: &[required("numbers")],
    },
    Method {
        name: "max_value",
        params: &[required("numbers")],
    },
    Method {
        name: "sum_values",
        params: &[required("numbers")],
    },
];

/// The `MathAPI` class (no public state).
#[derive(Debug, Clone, Default)]
pub struct MathApi;

fn result(value: PyValue) -> PyValue {
    PyValue::dict([("result", value)])
}

fn error(text: impl Into<String>) -> PyValue {
    PyValue::dict([("error", PyValue::Str(text.into()))])
}

/// Runs `body`, turning a raised `TypeError` into `{"error": message}` as the Python `try`
/// blocks do (every exception these bodies raise is a `TypeError`).
fn catching_type_error(
    message: &str,
    body: impl FnOnce() -> Result<PyValue, CallError>,
) -> Result<PyValue, CallError> {
    match body() {
        Err(CallError::Raised(_)) => Ok(error(message)),
        other => other,
    }
}

fn is_number(value: &PyValue) -> bool {
    matches!(
        value,
        PyValue::Bool(_) | PyValue::Int(_) | PyValue::Float(_)
    )
}

fn unhashable(value: &PyValue) -> Option<CallError> {
    matches!(value, PyValue::List(_) | PyValue::Dict(_))
        .then(|| CallError::raised(format!("unhashable type: '{}'", value.type_name())))
}

fn extreme(numbers: &PyValue, wanted: Ordering, empty: &str) -> Result<PyValue, CallError> {
    if !truthy(numbers) {
        return Ok(error(empty));
    }
    catching_type_error("All elements in the list must be numbers", || {
        let items = pyops::iterate(numbers)?;
        let mut best = items[0].clone();
        for item in &items[1..] {
            if pyops::compare(item, &best)? == wanted {
                best = item.clone();
            }
        }
        Ok(result(best))
    })
}

fn mean_of(items: &[PyValue]) -> Result<PyValue, CallError> {
    pyops::truediv(&pyops::sum(items)?, &PyValue::Int(items.len() as i64))
}

fn si_unit_conversion(
    value: &PyValue,
    unit_in: &PyValue,
    unit_out: &PyValue,
) -> Result<PyValue, CallError> {
    let to_meters = |unit: &PyValue| -> Option<PyValue> {
        Some(match unit {
            PyValue::Str(u) if u == "km" => PyValue::Int(1000),
            PyValue::Str(u) if u == "m" => PyValue::Int(1),
            PyValue::Str(u) if u == "cm" => PyValue::Float(0.01),
            PyValue::Str(u) if u == "mm" => PyValue::Float(0.001),
            PyValue::Str(u) if u == "um" => PyValue::Float(1e-6),
            PyValue::Str(u) if u == "nm" => PyValue::Float(1e-9),
            _ => return None,
        })
    };
    if !is_number(value) {
        return Ok(error("Value must be a number"));
    }
    if let Some(err) = unhashable(unit_in).or_else(|| unhashable(unit_out)) {
        return Err(err);
    }
    let (Some(factor_in), Some(factor_out)) = (to_meters(unit_in), to_meters(unit_out)) else {
        return Ok(error(format!(
            "Conversion from '{}' to '{}' is not supported",
            unit_in.to_py_str(),
            unit_out.to_py_str()
        )));
    };
    let from_meters = pyops::truediv(&PyValue::Int(1), &factor_out)?;
    let in_meters = pyops::mul(value, &factor_in)?;
    Ok(result(pyops::mul(&in_meters, &from_meters)?))
}

fn imperial_si_conversion(
    value: &PyValue,
    unit_in: &PyValue,
    unit_out: &PyValue,
) -> Result<PyValue, CallError> {
    if !is_number(value) {
        return Ok(error("Value must be a number"));
    }
    if unit_in == unit_out {
        return Ok(result(value.clone()));
    }
    let key = format!("{}_to_{}", unit_in.to_py_str(), unit_out.to_py_str());
    let factor = match key.as_str() {
        "cm_to_in" => 0.393701,
        "in_to_cm" => 2.54,
        "m_to_ft" => 3.28084,
        "ft_to_m" => 0.3048,
        "m_to_yd" => 1.09361,
        "yd_to_m" => 0.9144,
        "km_to_miles" => 0.621371,
        "miles_to_km" => 1.60934,
        "kg_to_lb" => 2.20462,
        "lb_to_kg" => 0.453592,
        "celsius_to_fahrenheit" => 1.8,
        "fahrenheit_to_celsius" => 5.0 / 9.0,
        _ => {
            return Ok(error(format!(
                "Conversion from '{}' to '{}' is not supported",
                unit_in.to_py_str(),
                unit_out.to_py_str()
            )));
        }
    };
    let factor = PyValue::Float(factor);
    let converted = match key.as_str() {
        "celsius_to_fahrenheit" => pyops::add(&pyops::mul(value, &factor)?, &PyValue::Int(32))?,
        "fahrenheit_to_celsius" => pyops::mul(&pyops::sub(value, &PyValue::Int(32))?, &factor)?,
        _ => pyops::mul(value, &factor)?,
    };
    Ok(result(converted))
}

fn round_number(number: &PyValue, places: &PyValue) -> Result<PyValue, CallError> {
    let message = "First input must be a number, second input must be an integer";
    let places = match places {
        PyValue::Int(n) => *n,
        PyValue::Bool(flag) => i64::from(*flag),
        _ => return Ok(error(message)),
    };
    match number {
        PyValue::Int(n) if places >= 0 => Ok(result(PyValue::Int(*n))),
        PyValue::Bool(flag) if places >= 0 => Ok(result(PyValue::Int(i64::from(*flag)))),
        PyValue::Float(x) if (0..=15).contains(&places) && x.is_finite() => {
            // Python rounds the exact binary value half-to-even; Rust's fixed-precision
            // formatting is exact and rounds ties to even, so the texts agree.
            let text = format!("{x:.*}", places as usize);
            Ok(result(PyValue::Float(text.parse().unwrap_or(*x))))
        }
        PyValue::Int(_) | PyValue::Bool(_) | PyValue::Float(_) => {
            Err(CallError::Unsupported("round() with these digits".into()))
        }
        _ => Ok(error(message)),
    }
}

impl Backend for MathApi {
    fn class_name(&self) -> &'static str {
        "MathAPI"
    }

    fn methods(&self) -> &'static [Method] {
        METHODS
    }

    fn load_scenario(
        &mut self,
        _config: &PyValue,
        _long_context: &LongContext,
    ) -> Result<(), CallError> {
        Ok(())
    }

    fn call(&mut self, method: &str, args: Vec<PyValue>) -> Result<PyValue, CallError> {
        let arg = |index: usize| args.get(index).cloned().unwrap_or(PyValue::None);
        let (a, b) = (arg(0), arg(1));
        let both = "Both inputs must be numbers";
        match method {
            "logarithm" => {
                let number = |v: &PyValue| match v {
                    PyValue::Int(i) => Some(*i as f64),
                    PyValue::Float(f) => Some(*f),
                    _ => None,
                };
                let precision = match arg(2) {
                    PyValue::Int(p) => Some(p),
                    _ => None,
                };
                match (number(&a), number(&b), precision) {
                    (Some(value), Some(base), Some(precision)) => {
                        super::mpmath_log::logarithm_repr(value, base, precision)
                            .map(|repr| result(PyValue::Opaque(repr)))
                            .ok_or_else(|| {
                                CallError::Unsupported(
                                    "MathAPI.logarithm outside positive arguments, base != 1 and \
                                     precision 1..=10000 (mpmath's complex results and errors) \
                                     is not ported"
                                        .into(),
                                )
                            })
                    }
                    _ => Err(CallError::Unsupported(
                        "MathAPI.logarithm with non-numeric arguments (mpmath's errors) is not \
                         ported"
                            .into(),
                    )),
                }
            }
            "mean" => {
                if !truthy(&a) {
                    return Ok(error("Cannot calculate mean of an empty list"));
                }
                catching_type_error("All elements in the list must be numbers", || {
                    Ok(result(mean_of(&pyops::iterate(&a)?)?))
                })
            }
            "standard_deviation" => {
                if !truthy(&a) {
                    return Ok(error(
                        "Cannot calculate standard deviation of an empty list",
                    ));
                }
                catching_type_error("All elements in the list must be numbers", || {
                    let items = pyops::iterate(&a)?;
                    let mean = mean_of(&items)?;
                    let squares = items
                        .iter()
                        .map(|x| pyops::pow(&pyops::sub(x, &mean)?, &PyValue::Int(2)))
                        .collect::<Result<Vec<_>, _>>()?;
                    let variance = mean_of(&squares)?;
                    let variance = variance.as_number().unwrap_or(f64::NAN);
                    Ok(result(PyValue::Float(variance.sqrt())))
                })
            }
            "si_unit_conversion" => si_unit_conversion(&a, &b, &arg(2)),
            "imperial_si_conversion" => imperial_si_conversion(&a, &b, &arg(2)),
            "add" => catching_type_error(both, || Ok(result(pyops::add(&a, &b)?))),
            "subtract" => catching_type_error(both, || Ok(result(pyops::sub(&a, &b)?))),
            "multiply" => {
                if !is_number(&a) || !is_number(&b) {
                    return Ok(error(both));
                }
                Ok(result(pyops::mul(&a, &b)?))
            }
            "divide" => {
                if b == PyValue::Int(0) {
                    return Ok(error("Cannot divide by zero"));
                }
                catching_type_error(both, || Ok(result(pyops::truediv(&a, &b)?)))
            }
            "power" => match pyops::pow(&a, &b) {
                Err(CallError::Raised(text)) if text.starts_with("unsupported operand") => {
                    Ok(error(both))
                }
                other => Ok(result(other?)),
            },
            "square_root" => {
                let message =
                    "Input must be a number or computation resulted in an invalid operation";
                // `nan < 0` is false in Python: NaN goes on to `Decimal`.
                let is_nan = matches!(a, PyValue::Float(x) if x.is_nan());
                match pyops::compare(&a, &PyValue::Int(0)) {
                    Err(_) if !is_nan => Ok(error(message)),
                    Ok(Ordering::Less) => {
                        Ok(error("Cannot calculate square root of a negative number"))
                    }
                    _ => match super::decimal_sqrt::square_root_repr(&a, &b)? {
                        Some(repr) => Ok(result(PyValue::Opaque(repr))),
                        None => Ok(error(message)),
                    },
                }
            }
            "absolute_value" => match &a {
                PyValue::Int(n) => Ok(result(PyValue::Int(n.abs()))),
                PyValue::Bool(flag) => Ok(result(PyValue::Int(i64::from(*flag)))),
                PyValue::Float(x) => Ok(result(PyValue::Float(x.abs()))),
                _ => Ok(error("Input must be a number")),
            },
            "round_number" => round_number(&a, &b),
            "percentage" => {
                if b == PyValue::Int(0) {
                    return Ok(error("Whole value cannot be zero"));
                }
                catching_type_error(both, || {
                    let ratio = pyops::truediv(&a, &b)?;
                    Ok(result(pyops::mul(&ratio, &PyValue::Int(100))?))
                })
            }
            "min_value" => extreme(&a, Ordering::Less, "Cannot find minimum of an empty list"),
            "max_value" => extreme(
                &a,
                Ordering::Greater,
                "Cannot find maximum of an empty list",
            ),
            "sum_values" => {
                if !truthy(&a) {
                    return Ok(error("Cannot calculate sum of an empty list"));
                }
                catching_type_error("All elements in the list must be numbers", || {
                    Ok(result(pyops::sum(&pyops::iterate(&a)?)?))
                })
            }
            other => Err(CallError::raised(format!(
                "'MathAPI' object has no attribute '{other}'"
            ))),
        }
    }

    fn state(&self) -> Vec<(&'static str, PyValue)> {
        Vec::new()
    }
}
