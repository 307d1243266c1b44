//! `MathAPI.logarithm` as bfcl-eval computes and prints it: with `mpmath.mp.dps = precision`,
//! `log(value) / log(base)` in binary floating point of the context's precision (each
//! logarithm and the quotient rounded to nearest, ties to even), shown as `repr` shows an `mpf`.
//!
//! The logarithms are computed here in big-integer fixed point with 64 guard bits beyond the
//! target precision (an `atanh` series on the mantissa reduced to `[1/√2, √2]`, plus `k·ln 2`),
//! then rounded; the quotient is rounded exactly. The decimal form follows mpmath's printing
//! rules: `repr` digits from the precision, truncation to three extra digits then one rounding
//! step, fixed notation near unit magnitude, trailing zeros stripped.

use num_bigint::{BigInt, BigUint, Sign};
use num_traits::{One, Signed, Zero};

/// `log2(10)`, mpmath's conversion factor between binary and decimal precision.
const LOG2_10: f64 = 3.321_928_094_887_362_6;

/// A finite nonzero binary float `(-1)^negative · mantissa · 2^exponent`, or zero.
#[derive(Debug, Clone, PartialEq)]
struct BinaryFloat {
    negative: bool,
    mantissa: BigUint,
    exponent: i64,
}

impl BinaryFloat {
    fn zero() -> Self {
        Self {
            negative: false,
            mantissa: BigUint::zero(),
            exponent: 0,
        }
    }

    /// The exact value of a positive finite `f64`.
    fn from_f64(value: f64) -> Self {
        let bits = value.to_bits();
        let raw_exponent = ((bits >> 52) & 0x7ff) as i64;
        let fraction = bits & ((1u64 << 52) - 1);
        let (mantissa, exponent) = if raw_exponent == 0 {
            (fraction, -1074)
        } else {
            (fraction | (1u64 << 52), raw_exponent - 1075)
        };
        Self {
            negative: value < 0.0,
            mantissa: BigUint::from(mantissa),
            exponent,
        }
    }
}

/// Python's `round` on a float to an integer (ties to even).
fn py_round(x: f64) -> i64 {
    x.round_ties_even() as i64
}

/// mpmath's `dps_to_prec`.
fn dps_to_prec(dps: i64) -> u64 {
    py_round((dps as f64 + 1.0) * LOG2_10).max(1) as u64
}

/// mpmath's `prec_to_dps`.
fn prec_to_dps(prec: u64) -> usize {
    (py_round(prec as f64 / LOG2_10) - 1).max(1) as usize
}

/// mpmath's `repr_dps`: the digits `repr` shows at binary precision `prec`.
fn repr_dps(prec: u64) -> usize {
    match prec_to_dps(prec) {
        15 => 17,
        dps => dps + 3,
    }
}

/// Rounds `|value| · 2^exponent` to `prec` significant bits, to nearest with ties to even;
/// `sticky` says whether nonzero bits lie below `value` (they break ties upwards).
fn round_bits(
    negative: bool,
    value: BigUint,
    exponent: i64,
    prec: u64,
    sticky: bool,
) -> BinaryFloat {
    if value.is_zero() {
        return BinaryFloat::zero();
    }
    let bits = value.bits();
    if bits <= prec {
        return BinaryFloat {
            negative,
            mantissa: value,
            exponent,
        };
    }
    let shift = bits - prec;
    let mut kept: BigUint = &value >> shift;
    let dropped = &value - (&kept << shift);
    let half = BigUint::one() << (shift - 1);
    let round_up = match dropped.cmp(&half) {
        std::cmp::Ordering::Greater => true,
        std::cmp::Ordering::Less => false,
        std::cmp::Ordering::Equal => sticky || kept.bit(0),
    };
    let mut exponent = exponent + shift as i64;
    if round_up {
        kept += 1u32;
        if kept.bits() > prec {
            kept >>= 1;
            exponent += 1;
        }
    }
    BinaryFloat {
        negative,
        mantissa: kept,
        exponent,
    }
}

/// `atanh(z)` for the fixed-point `z = z_fixed / 2^width`, `|z| < 1/2`, in the same fixed point
/// (summed on the magnitude, so every term truncates toward zero and the series ends).
fn atanh_fixed(z_fixed: &BigInt, width: u64) -> BigInt {
    let magnitude = z_fixed.abs().to_biguint().unwrap_or_default();
    let z_squared: BigUint = (&magnitude * &magnitude) >> width;
    let mut power = magnitude;
    let mut sum = BigUint::zero();
    let mut k: u64 = 1;
    while !power.is_zero() {
        sum += &power / BigUint::from(k);
        power = (&power * &z_squared) >> width;
        k += 2;
    }
    let sum = BigInt::from(sum);
    if z_fixed.sign() == Sign::Minus {
        -sum
    } else {
        sum
    }
}

/// `ln(x)` of a positive binary float, rounded to `prec` bits.
fn ln_rounded(x: &BinaryFloat, prec: u64) -> BinaryFloat {
    let width = prec.max(64) + 64;
    // x = m · 2^k with m in [1, 2) as fixed point of `width` fraction bits (exact: the
    // mantissa has at most 64 bits).
    let bits = x.mantissa.bits();
    let mut k = x.exponent + bits as i64 - 1;
    let m = BigInt::from(x.mantissa.clone() << (width + 1 - bits));
    let one = BigInt::one() << width;
    // Reduce to [1/√2, √2]: m > √2 ⇔ m² > 2.
    if (&m * &m) > (BigInt::from(2u32) << (2 * width)) {
        k += 1;
        // ln(m / 2): z = (m/2 - 1) / (m/2 + 1) = (m - 2) / (m + 2).
        let z = ((&m - (&one << 1)) << width) / (&m + (&one << 1));
        return finish_ln(z, k, width, prec);
    }
    let z = ((&m - &one) << width) / (&m + &one);
    finish_ln(z, k, width, prec)
}

/// `2·atanh(z) + k·ln 2`, rounded to `prec` bits.
fn finish_ln(z: BigInt, k: i64, width: u64, prec: u64) -> BinaryFloat {
    let ln_m: BigInt = atanh_fixed(&z, width) << 1;
    let third: BigInt = (BigInt::one() << width) / BigInt::from(3u32);
    let ln2: BigInt = atanh_fixed(&third, width) << 1;
    let total: BigInt = ln_m + ln2 * BigInt::from(k);
    let negative = total.sign() == Sign::Minus;
    let magnitude = total.abs().to_biguint().unwrap_or_default();
    // The fixed point carries a few ulps of series error; `sticky` stands for it.
    round_bits(negative, magnitude, -(width as i64), prec, true)
}

/// `a / b` rounded to `prec` bits (`b` nonzero).
fn divide_rounded(a: &BinaryFloat, b: &BinaryFloat, prec: u64) -> BinaryFloat {
    if a.mantissa.is_zero() {
        return BinaryFloat::zero();
    }
    let shift = (prec + 2 + b.mantissa.bits()).saturating_sub(a.mantissa.bits());
    let numerator = &a.mantissa << shift;
    let quotient = &numerator / &b.mantissa;
    let remainder = numerator - &quotient * &b.mantissa;
    round_bits(
        a.negative != b.negative,
        quotient,
        a.exponent - b.exponent - shift as i64,
        prec,
        !remainder.is_zero(),
    )
}

/// `floor(|x| · 10^power)` for a binary float.
fn scaled_floor(x: &BinaryFloat, power: i64) -> BigUint {
    let mut numerator = x.mantissa.clone();
    let mut denominator = BigUint::one();
    if x.exponent >= 0 {
        numerator <<= x.exponent as u64;
    } else {
        denominator <<= (-x.exponent) as u64;
    }
    let ten = BigUint::from(10u32);
    if power >= 0 {
        numerator *= ten.pow(power as u32);
    } else {
        denominator *= ten.pow((-power) as u32);
    }
    numerator / denominator
}

/// The first `count` decimal digits of `|x|` (truncated) and the decimal exponent of the
/// first one.
fn digits_floor(x: &BinaryFloat, count: usize) -> (String, i64) {
    // An estimate of floor(log10 |x|), corrected below.
    let log2 = x.mantissa.bits() as f64 - 1.0 + x.exponent as f64;
    let mut exponent = (log2 / LOG2_10).floor() as i64;
    loop {
        let digits = scaled_floor(x, count as i64 - 1 - exponent).to_string();
        match digits.len().cmp(&count) {
            std::cmp::Ordering::Greater => exponent += 1,
            std::cmp::Ordering::Less => exponent -= 1,
            std::cmp::Ordering::Equal => return (digits, exponent),
        }
    }
}

/// mpmath's `to_str(x, dps)` with its defaults (`strip_zeros`, `min_fixed`, `max_fixed`).
fn to_str(x: &BinaryFloat, dps: usize) -> String {
    if x.mantissa.is_zero() {
        return "0.0".into();
    }
    let sign = if x.negative { "-" } else { "" };
    let (all, mut exponent) = digits_floor(x, dps + 3);
    let mut digits: Vec<u8> = all.as_bytes()[..dps].to_vec();
    if all.as_bytes()[dps] >= b'5' {
        let mut i = dps;
        loop {
            if i == 0 {
                digits = std::iter::once(b'1')
                    .chain(std::iter::repeat_n(b'0', dps - 1))
                    .collect();
                exponent += 1;
                break;
            }
            i -= 1;
            if digits[i] == b'9' {
                digits[i] = b'0';
            } else {
                digits[i] += 1;
                break;
            }
        }
    }
    let mut digits = String::from_utf8(digits).unwrap_or_default();
    let min_fixed = (-((dps / 3) as i64)).min(-5);
    let max_fixed = dps as i64;
    let split = if min_fixed < exponent && exponent < max_fixed {
        let split = if exponent < 0 {
            digits.insert_str(0, &"0".repeat((-exponent) as usize));
            1
        } else {
            let split = exponent as usize + 1;
            if split > dps {
                digits.push_str(&"0".repeat(split - dps));
            }
            split
        };
        exponent = 0;
        split
    } else {
        1
    };
    let mut text = format!("{}.{}", &digits[..split], &digits[split..]);
    while text.ends_with('0') {
        text.pop();
    }
    if text.ends_with('.') {
        text.push('0');
    }
    match exponent {
        0 => format!("{sign}{text}"),
        e if e > 0 => format!("{sign}{text}e+{e}"),
        e => format!("{sign}{text}e{e}"),
    }
}

/// A positive finite argument as an exact binary float.
fn exact(value: f64) -> Option<BinaryFloat> {
    (value.is_finite() && value > 0.0).then(|| BinaryFloat::from_f64(value))
}

/// `repr(mpmath.log(value) / mpmath.log(base))` after `mpmath.mp.dps = precision`, e.g.
/// `mpf('1.3027')` for `(20, 10, 2)`; `None` outside what is ported (non-positive or
/// non-finite arguments, base 1, precision below 1 or above 10,000 digits).
pub(crate) fn logarithm_repr(value: f64, base: f64, precision: i64) -> Option<String> {
    if !(1..=10_000).contains(&precision) || base == 1.0 {
        return None;
    }
    let prec = dps_to_prec(precision);
    let (value, base) = (exact(value)?, exact(base)?);
    let quotient = divide_rounded(&ln_rounded(&value, prec), &ln_rounded(&base, prec), prec);
    Some(format!("mpf('{}')", to_str(&quotient, repr_dps(prec))))
}

#[cfg(test)]
mod tests {
    use num_traits::ToPrimitive;

    use super::*;

    #[test]
    fn precision_conversions_follow_mpmath() {
        // mp.dps = 15 is mpmath's default: 53 bits, repr with 17 digits.
        assert_eq!(dps_to_prec(15), 53);
        assert_eq!(repr_dps(53), 17);
        assert_eq!(dps_to_prec(2), 10);
        assert_eq!(repr_dps(10), 5);
    }

    #[test]
    fn exact_results_and_printing() {
        assert_eq!(logarithm_repr(36.0, 6.0, 4).as_deref(), Some("mpf('2.0')"));
        assert_eq!(logarithm_repr(1.0, 10.0, 5).as_deref(), Some("mpf('0.0')"));
        assert_eq!(logarithm_repr(-1.0, 10.0, 5), None);
        assert_eq!(logarithm_repr(5.0, 1.0, 5), None);
        assert_eq!(logarithm_repr(5.0, 2.0, 0), None);
    }

    #[test]
    fn natural_log_is_close_to_f64_at_double_precision() {
        for x in [0.3, 1.0, 1.5, 2.0, 7.25, 1e-9, 123_456.789, 1e300] {
            let ln = ln_rounded(&BinaryFloat::from_f64(x), 53);
            let value = ln.mantissa.to_f64().unwrap_or(f64::NAN) * 2f64.powi(ln.exponent as i32);
            let value = if ln.negative { -value } else { value };
            assert!(
                (value - x.ln()).abs() <= 4.0 * f64::EPSILON * x.ln().abs().max(1e-300),
                "{x}: {value} vs {}",
                x.ln()
            );
        }
    }
}
