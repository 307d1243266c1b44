//! The slice of Python's `datetime` the backends use: `strptime` with `%Y-%m-%d` and
//! `%Y-%m-%d %H:%M:%S` (CPython's field patterns, prefix match, its `ValueError` texts), adding
//! seconds to a naive date-time, and today's date for ages.

use std::sync::OnceLock;

use regex::Regex;

use super::backend::CallError;
use super::value::PyValue;

/// A naive date-time, compared field by field (year first).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct DateTime {
    /// Year.
    pub year: i64,
    /// Month, `1..=12`.
    pub month: u32,
    /// Day of the month.
    pub day: u32,
    /// Hour, `0..=23`.
    pub hour: u32,
    /// Minute.
    pub minute: u32,
    /// Second.
    pub second: u32,
}

const DATE: &str = r"(\d\d\d\d)-(1[0-2]|0[1-9]|[1-9])-(3[01]|[12]\d|0[1-9]|[1-9]| [1-9])";
const TIME: &str = r" (2[0-3]|[0-1]\d|\d):([0-5]\d|\d):(6[0-1]|[0-5]\d|\d)";

fn date_pattern() -> &'static Regex {
    static PATTERN: OnceLock<Regex> = OnceLock::new();
    PATTERN.get_or_init(|| Regex::new(&format!("^(?:{DATE})")).expect("constant pattern"))
}

fn date_time_pattern() -> &'static Regex {
    static PATTERN: OnceLock<Regex> = OnceLock::new();
    PATTERN.get_or_init(|| Regex::new(&format!("^(?:{DATE}{TIME})")).expect("constant pattern"))
}

fn is_leap(year: i64) -> bool {
    year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
}

fn days_in_month(year: i64, month: u32) -> u32 {
    match month {
        2 if is_leap(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Why `strptime` rejected its input: a `ValueError` (its text) or a `TypeError`.
#[derive(Debug, Clone, PartialEq)]
pub enum StrptimeError {
    /// `ValueError` with Python's text.
    Value(String),
    /// `TypeError` with Python's text (the argument is not a `str`).
    Type(String),
}

impl From<StrptimeError> for CallError {
    fn from(error: StrptimeError) -> Self {
        match error {
            StrptimeError::Value(text) | StrptimeError::Type(text) => CallError::Raised(text),
        }
    }
}

/// `datetime.strptime(value, format)` for `%Y-%m-%d` (`with_time == false`) or
/// `%Y-%m-%d %H:%M:%S`.
///
/// # Errors
/// CPython's `ValueError`/`TypeError` texts.
pub fn strptime(value: &PyValue, with_time: bool) -> Result<DateTime, StrptimeError> {
    let format = if with_time {
        "%Y-%m-%d %H:%M:%S"
    } else {
        "%Y-%m-%d"
    };
    let PyValue::Str(text) = value else {
        return Err(StrptimeError::Type(format!(
            "strptime() argument 1 must be str, not {}",
            value.type_name()
        )));
    };
    let pattern = if with_time {
        date_time_pattern()
    } else {
        date_pattern()
    };
    let Some(found) = pattern.captures(text) else {
        return Err(StrptimeError::Value(format!(
            "time data {} does not match format {}",
            value.repr(),
            PyValue::str(format).repr()
        )));
    };
    let whole = found.get(0).map_or(0, |m| m.end());
    if whole != text.len() {
        return Err(StrptimeError::Value(format!(
            "unconverted data remains: {}",
            &text[whole..]
        )));
    }
    let number = |index: usize| -> Result<i64, StrptimeError> {
        found
            .get(index)
            .map_or("0", |m| m.as_str())
            .trim()
            .parse::<i64>()
            .map_err(|_| StrptimeError::Value(format!("non-ASCII digits in {text:?}")))
    };
    let year = number(1)?;
    let month = number(2)? as u32;
    let day = number(3)? as u32;
    if year < 1 {
        return Err(StrptimeError::Value(format!("year {year} is out of range")));
    }
    if day > days_in_month(year, month) {
        return Err(StrptimeError::Value("day is out of range for month".into()));
    }
    let (hour, minute, second) = if with_time {
        (number(4)? as u32, number(5)? as u32, number(6)? as u32)
    } else {
        (0, 0, 0)
    };
    if second > 59 {
        return Err(StrptimeError::Value("second must be in 0..59".into()));
    }
    Ok(DateTime {
        year,
        month,
        day,
        hour,
        minute,
        second,
    })
}

impl DateTime {
    /// A date at midnight.
    pub fn date(year: i64, month: u32, day: u32) -> Self {
        Self {
            year,
            month,
            day,
            hour: 0,
            minute: 0,
            second: 0,
        }
    }

    /// The date-time `seconds` later (no time zones: a naive Python `datetime`).
    pub fn plus_seconds(self, seconds: i64) -> Self {
        let mut total = i64::from(self.hour) * 3600
            + i64::from(self.minute) * 60
            + i64::from(self.second)
            + seconds;
        let mut days = total.div_euclid(86_400);
        total = total.rem_euclid(86_400);
        let (mut year, mut month, mut day) = (self.year, self.month, self.day);
        while days > 0 {
            day += 1;
            if day > days_in_month(year, month) {
                day = 1;
                month += 1;
                if month > 12 {
                    month = 1;
                    year += 1;
                }
            }
            days -= 1;
        }
        Self {
            year,
            month,
            day,
            hour: (total / 3600) as u32,
            minute: (total / 60 % 60) as u32,
            second: (total % 60) as u32,
        }
    }

    /// `strftime('%Y-%m-%d %H:%M:%S')`.
    pub fn format(&self) -> String {
        format!(
            "{:04}-{:02}-{:02} {:02}:{:02}:{:02}",
            self.year, self.month, self.day, self.hour, self.minute, self.second
        )
    }

    /// Today's date (UTC) for `datetime.today()`'s year, month and day.
    pub fn today() -> Self {
        let seconds = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |elapsed| elapsed.as_secs() as i64);
        Self::date(1970, 1, 1).plus_seconds(seconds)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value_error(text: &str, with_time: bool) -> String {
        match strptime(&PyValue::str(text), with_time) {
            Err(StrptimeError::Value(message)) => message,
            other => format!("{other:?}"),
        }
    }

    /// Texts and results as CPython 3.11's `datetime.strptime` gives them.
    #[test]
    fn parses_like_cpython() {
        assert_eq!(
            strptime(&PyValue::str("2024-9-5"), false),
            Ok(DateTime::date(2024, 9, 5))
        );
        assert_eq!(
            value_error("2024/09/05", false),
            "time data '2024/09/05' does not match format '%Y-%m-%d'"
        );
        assert_eq!(
            value_error("2024-01-011", false),
            "unconverted data remains: 1"
        );
        assert_eq!(
            value_error("2023-02-29", false),
            "day is out of range for month"
        );
        assert_eq!(
            strptime(&PyValue::Int(5), false),
            Err(StrptimeError::Type(
                "strptime() argument 1 must be str, not int".into()
            ))
        );
        let at = strptime(&PyValue::str("2024-09-01 10:30:00"), true).expect("a valid time");
        assert_eq!(at.plus_seconds(86_400 - 1).format(), "2024-09-02 10:29:59");
        assert_eq!(
            DateTime::date(2024, 12, 31).plus_seconds(86_400).format(),
            "2025-01-01 00:00:00"
        );
    }
}
