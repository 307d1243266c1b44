//! Byte sizes as people write them: `80GB`, `24GiB`, `512MB`, `1e9`.

use crate::error::{AlgoError, Result};

/// Parses a memory size: a number with an optional unit, `B`, `KB`/`MB`/`GB`/`TB` (powers of
/// 1000) or `KiB`/`MiB`/`GiB`/`TiB` (powers of 1024), case-insensitive, spaces allowed. `80GB`
/// is 80e9 bytes, the cautious reading of a card's advertised size; `80GiB` is 85.9e9.
///
/// # Errors
/// [`AlgoError::InvalidInput`] naming `device_memory` for text that is not a positive size.
///
/// ```
/// use agent_rl_algos::plan::parse_bytes;
/// assert_eq!(parse_bytes("80GB")?, 80_000_000_000);
/// assert_eq!(parse_bytes("1.5 GiB")?, 1_610_612_736);
/// # Ok::<(), agent_rl_algos::AlgoError>(())
/// ```
pub fn parse_bytes(text: &str) -> Result<u64> {
    let bad = |reason: &str| AlgoError::InvalidInput {
        name: "device_memory".into(),
        reason: format!("`{text}`: {reason} (write e.g. `80GB`, `24GiB` or `512MB`)"),
    };
    let trimmed = text.trim();
    let split = trimmed
        .find(|c: char| c.is_ascii_alphabetic() && c != 'e' && c != 'E')
        .unwrap_or(trimmed.len());
    let (number, unit) = trimmed.split_at(split);
    let value: f64 = number
        .trim()
        .parse()
        .map_err(|_| bad("not a number followed by a unit"))?;
    let scale: f64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1.0,
        "kb" | "k" => 1e3,
        "mb" | "m" => 1e6,
        "gb" | "g" => 1e9,
        "tb" | "t" => 1e12,
        "kib" => 1024.0,
        "mib" => 1024.0 * 1024.0,
        "gib" => 1024.0 * 1024.0 * 1024.0,
        "tib" => 1024.0 * 1024.0 * 1024.0 * 1024.0,
        _ => return Err(bad("unknown unit")),
    };
    let bytes = value * scale;
    if !bytes.is_finite() || !(1.0..=1e18).contains(&bytes) {
        return Err(bad("must be a positive size"));
    }
    Ok(bytes.round() as u64)
}

/// `bytes` in GiB/MiB/KiB with two decimals (`15.23 GiB`).
pub fn format_bytes(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["GiB", "MiB", "KiB", "B"];
    let mut scale = 1u64 << 30;
    for unit in UNITS {
        if bytes >= scale || unit == "B" {
            return if unit == "B" {
                format!("{bytes} B")
            } else {
                format!("{:.2} {unit}", bytes as f64 / scale as f64)
            };
        }
        scale >>= 10;
    }
    format!("{bytes} B")
}

#[cfg(test)]
mod tests {
    use super::{format_bytes, parse_bytes};

    #[test]
    fn parses_units_and_refuses_nonsense() {
        assert_eq!(parse_bytes("80GB").ok(), Some(80_000_000_000));
        assert_eq!(parse_bytes("80 gb").ok(), Some(80_000_000_000));
        assert_eq!(parse_bytes("24GiB").ok(), Some(24 << 30));
        assert_eq!(parse_bytes("512MiB").ok(), Some(512 << 20));
        assert_eq!(parse_bytes("1e9").ok(), Some(1_000_000_000));
        assert_eq!(parse_bytes("4096").ok(), Some(4096));
        for bad in ["", "GB", "-3GB", "0", "80XB", "eighty"] {
            let error = parse_bytes(bad).expect_err(bad).to_string();
            assert!(error.contains("device_memory"), "{error}");
        }
    }

    #[test]
    fn formats_binary_units() {
        assert_eq!(format_bytes(512), "512 B");
        assert_eq!(format_bytes(3 << 20), "3.00 MiB");
        assert_eq!(format_bytes(80_000_000_000), "74.51 GiB");
    }
}
