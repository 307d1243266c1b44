//! Command-line values the benchmarks share (clap value parsers and enums).

use std::fmt;

/// A count flag that is not a positive integer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotPositive(String);

impl fmt::Display for NotPositive {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "expected a positive integer, got `{}`", self.0)
    }
}

impl std::error::Error for NotPositive {}

/// Parses a positive count (`value_parser = positive` on a `usize` flag).
///
/// # Errors
/// When `text` is not an integer of at least 1; clap adds the flag's name.
pub fn positive(text: &str) -> Result<usize, NotPositive> {
    match text.parse::<usize>() {
        Ok(count) if count > 0 => Ok(count),
        _ => Err(NotPositive(text.to_owned())),
    }
}

/// A setting switched `on` or `off` on the command line (as TRL's scripts take it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OnOff {
    /// Switched on.
    On,
    /// Switched off.
    Off,
}

impl OnOff {
    /// Whether the setting is on.
    pub fn is_on(self) -> bool {
        self == Self::On
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positive_takes_counts_from_one() {
        assert_eq!(positive("3"), Ok(3));
        for bad in ["0", "-1", "two", ""] {
            assert!(positive(bad).is_err(), "{bad}");
        }
        assert_eq!(
            positive("0").unwrap_err().to_string(),
            "expected a positive integer, got `0`"
        );
    }
}
