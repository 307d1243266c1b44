//! `MathAPI.square_root`'s success path: Python's `Decimal(number).sqrt()` at
//! `getcontext().prec = precision`, printed as `repr` prints it (`Decimal('1.414')`,
//! `Decimal('9.3E+2')`). `Decimal(x)` of a float is its exact decimal expansion; the square root
//! is correctly rounded half-even to `precision` digits, an exact root keeps the ideal exponent
//! (half the operand's), as the General Decimal Arithmetic specification (and CPython's
//! `decimal`) define it.

use num_bigint::BigUint;
use num_traits::{One, Zero};

use super::backend::CallError;
use super::value::PyValue;

/// The largest precision a `decimal` context takes (64-bit `MAX_PREC`).
const MAX_PREC: i64 = 999_999_999_999_999_999;

/// The largest precision computed here; beyond it the call is reported unsupported.
const PORTED_PREC: i64 = 10_000;

/// The context's exponent limits (`Emin`, `Emax`) of CPython's default context.
const E_MIN: i64 = -999_999;
const E_MAX: i64 = 999_999;

/// A finite decimal `(-1)^negative × coefficient × 10^exponent`.
struct Finite {
    negative: bool,
    coefficient: BigUint,
    exponent: i64,
}

/// `{'result': Decimal(number).sqrt()}` at `precision` for a `number` that is not below zero
/// (`Ok(None)`: the precision is not an integer, which the original answers with its error
/// dict).
///
/// # Errors
/// `Raised` for a precision outside `[1, MAX_PREC]` (the original's uncaught `ValueError`);
/// `Unsupported` above [`PORTED_PREC`] digits or for a result outside the context's exponents.
pub(super) fn square_root_repr(
    number: &PyValue,
    precision: &PyValue,
) -> Result<Option<String>, CallError> {
    let precision = match precision {
        PyValue::Int(p) => *p,
        PyValue::Bool(flag) => i64::from(*flag),
        _ => return Ok(None),
    };
    if !(1..=MAX_PREC).contains(&precision) {
        return Err(CallError::raised("valid range for prec is [1, MAX_PREC]"));
    }
    if precision > PORTED_PREC {
        return Err(CallError::Unsupported(format!(
            "MathAPI.square_root at precision {precision} (above {PORTED_PREC}) is not ported"
        )));
    }
    let value = match number {
        PyValue::Int(n) => Finite {
            negative: *n < 0,
            coefficient: BigUint::from(n.unsigned_abs()),
            exponent: 0,
        },
        PyValue::Bool(flag) => Finite {
            negative: false,
            coefficient: BigUint::from(u8::from(*flag)),
            exponent: 0,
        },
        PyValue::Float(x) if x.is_nan() => return Ok(Some("Decimal('NaN')".into())),
        PyValue::Float(x) if x.is_infinite() => {
            return Ok(Some("Decimal('Infinity')".into()));
        }
        PyValue::Float(x) => from_float(*x),
        other => {
            return Err(CallError::Unsupported(format!(
                "MathAPI.square_root of a {}",
                other.type_name()
            )));
        }
    };
    let root = sqrt(&value, precision as usize)?;
    Ok(Some(format!("Decimal('{}')", to_sci_string(&root))))
}

/// `Decimal.from_float`: the exact value of a finite float.
fn from_float(x: f64) -> Finite {
    let negative = x.is_sign_negative();
    let bits = x.abs().to_bits();
    let raw_exponent = (bits >> 52) as i64;
    let fraction = bits & ((1 << 52) - 1);
    let (mut mantissa, mut exponent) = if raw_exponent == 0 {
        (fraction, -1074)
    } else {
        (fraction | (1 << 52), raw_exponent - 1075)
    };
    if mantissa == 0 {
        return Finite {
            negative,
            coefficient: BigUint::zero(),
            exponent: 0,
        };
    }
    let zeros = mantissa.trailing_zeros();
    mantissa >>= zeros;
    exponent += i64::from(zeros);
    let mantissa = BigUint::from(mantissa);
    if exponent >= 0 {
        Finite {
            negative,
            coefficient: mantissa << exponent as usize,
            exponent: 0,
        }
    } else {
        let k = (-exponent) as u32;
        Finite {
            negative,
            coefficient: mantissa * BigUint::from(5u8).pow(k),
            exponent: -i64::from(k),
        }
    }
}

fn ten_pow(n: usize) -> BigUint {
    BigUint::from(10u8).pow(n as u32)
}

/// `Decimal.sqrt` of a non-negative (or negative-zero) finite value at `precision` digits.
fn sqrt(value: &Finite, precision: usize) -> Result<Finite, CallError> {
    if value.coefficient.is_zero() {
        return Ok(Finite {
            negative: value.negative,
            coefficient: BigUint::zero(),
            exponent: value.exponent.div_euclid(2),
        });
    }
    let digits = value.coefficient.to_string().len() as i64;
    let working = precision as i64 + 1;
    let mut exponent = value.exponent.div_euclid(2);
    let (mut c, length) = if value.exponent.rem_euclid(2) == 1 {
        (&value.coefficient * 10u8, (digits >> 1) + 1)
    } else {
        (value.coefficient.clone(), (digits + 1) >> 1)
    };
    let shift = working - length;
    let mut exact = if shift >= 0 {
        c *= BigUint::from(100u8).pow(shift as u32);
        true
    } else {
        let divisor = BigUint::from(100u8).pow((-shift) as u32);
        let remainder = &c % &divisor;
        c /= &divisor;
        remainder.is_zero()
    };
    exponent -= shift;
    let mut n = c.sqrt();
    exact = exact && &n * &n == c;
    if exact {
        if shift >= 0 {
            n /= ten_pow(shift as usize);
        } else {
            n *= ten_pow((-shift) as usize);
        }
        exponent += shift;
    } else if (&n % 5u8).is_zero() {
        n += 1u8;
    }
    fix(
        Finite {
            negative: false,
            coefficient: n,
            exponent,
        },
        precision,
    )
}

/// `Decimal._fix`: rounds a non-zero value to `precision` digits, half-even.
fn fix(value: Finite, precision: usize) -> Result<Finite, CallError> {
    let digits = value.coefficient.to_string();
    let p = precision as i64;
    let e_tiny = E_MIN - p + 1;
    let e_top = E_MAX - p + 1;
    let exp_min = digits.len() as i64 + value.exponent - p;
    if exp_min > e_top || exp_min < e_tiny {
        return Err(CallError::Unsupported(
            "MathAPI.square_root outside the decimal context's exponents".into(),
        ));
    }
    if value.exponent >= exp_min {
        return Ok(value);
    }
    let keep = &digits[..precision];
    let dropped = &digits[precision..];
    let first = dropped.as_bytes()[0];
    let exactly_half = first == b'5' && dropped[1..].bytes().all(|d| d == b'0');
    let last_even = keep
        .as_bytes()
        .last()
        .is_some_and(|d| (d - b'0').is_multiple_of(2));
    let up = first >= b'5' && !(exactly_half && last_even);
    let mut coefficient: BigUint = keep.parse().unwrap_or_default();
    let mut exponent = exp_min;
    if up {
        coefficient += BigUint::one();
        if coefficient.to_string().len() > precision {
            coefficient /= 10u8;
            exponent += 1;
        }
    }
    Ok(Finite {
        negative: value.negative,
        coefficient,
        exponent,
    })
}

/// `Decimal.__str__` (the specification's to-scientific-string).
fn to_sci_string(value: &Finite) -> String {
    let digits = value.coefficient.to_string();
    let length = digits.len() as i64;
    let left_digits = value.exponent + length;
    let dot = if value.exponent <= 0 && left_digits > -6 {
        left_digits
    } else {
        1
    };
    let (int_part, frac_part) = if dot <= 0 {
        (
            "0".to_owned(),
            format!(".{}{digits}", "0".repeat((-dot) as usize)),
        )
    } else if dot >= length {
        (
            format!("{digits}{}", "0".repeat((dot - length) as usize)),
            String::new(),
        )
    } else {
        let split = dot as usize;
        (digits[..split].to_owned(), format!(".{}", &digits[split..]))
    };
    let exponent = if left_digits == dot {
        String::new()
    } else {
        format!("E{:+}", left_digits - dot)
    };
    let sign = if value.negative { "-" } else { "" };
    format!("{sign}{int_part}{frac_part}{exponent}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root(number: PyValue, precision: i64) -> String {
        square_root_repr(&number, &PyValue::Int(precision))
            .expect("a valid precision")
            .expect("an integer precision")
    }

    #[test]
    fn exact_roots_keep_the_ideal_exponent_and_inexact_ones_round_half_even() {
        assert_eq!(root(PyValue::Int(16), 28), "Decimal('4')");
        assert_eq!(root(PyValue::Float(0.25), 5), "Decimal('0.5')");
        assert_eq!(root(PyValue::Int(100_000_000), 3), "Decimal('1.00E+4')");
        assert_eq!(root(PyValue::Int(2), 5), "Decimal('1.4142')");
        assert_eq!(root(PyValue::Float(-0.0), 3), "Decimal('-0')");
        assert!(matches!(
            square_root_repr(&PyValue::Int(2), &PyValue::Int(0)),
            Err(CallError::Raised(_))
        ));
        assert_eq!(
            square_root_repr(&PyValue::Int(2), &PyValue::Float(2.5)).expect("no exception"),
            None
        );
    }
}
