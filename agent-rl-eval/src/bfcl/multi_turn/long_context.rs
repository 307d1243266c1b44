//! Long-context mode: the filler data bfcl-eval's backends add in the `long_context` (and
//! `composite`) categories — extra files and file text in `GorillaFileSystem`, extra cards and
//! bookings in `TravelAPI`, padded answers in `TradingBot` and `VehicleControlAPI`.
//!
//! The data is bfcl-eval's, not ours: it is read at run time from the user's installed copy of
//! `bfcl_eval/eval_checker/multi_turn_eval/func_source_code/long_context.py` (its module-level
//! literal assignments), given as [`LongContextData::load`], the CLI's `--long-context-data FILE`
//! or the environment variable [`LONG_CONTEXT_ENV`]. Without it, the calls and loads that need
//! it are reported unsupported (never scored), with a reason naming how to supply it.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::backend::CallError;
use super::execute::literal;
use super::value::PyValue;
use crate::bfcl::pyparse::parse_assignments;

/// The environment variable naming bfcl-eval's `long_context.py` (read by the CLI and the tests;
/// the library itself only reads it through [`LongContextData::from_env`]).
pub const LONG_CONTEXT_ENV: &str = "AGENT_RL_BFCL_LONG_CONTEXT";

/// Where the file lies inside an installed bfcl-eval (`site-packages/…`).
pub const LONG_CONTEXT_MODULE_PATH: &str =
    "bfcl_eval/eval_checker/multi_turn_eval/func_source_code/long_context.py";

/// bfcl-eval's long-context filler data, parsed from its `long_context.py`.
#[derive(Debug, Clone, PartialEq)]
pub struct LongContextData {
    path: PathBuf,
    /// `WATCH_LIST_EXTENSION`: appended to `TradingBot.get_watchlist`'s answer.
    pub(super) watch_list: Vec<PyValue>,
    /// `TRANSACTION_HISTORY_EXTENSION`: appended to `get_transaction_history`'s answer.
    pub(super) transaction_history: Vec<PyValue>,
    /// `MA_5_EXTENSION`: `get_stock_info`'s `MA(5)` in long-context mode.
    pub(super) ma_5: PyValue,
    /// `MA_20_EXTENSION`: `get_stock_info`'s `MA(20)`.
    pub(super) ma_20: PyValue,
    /// `TECHNOLOGY_EXTENSION`: appended to the `Technology` sector's stocks.
    pub(super) technology: Vec<PyValue>,
    /// `AUTOMOBILE_EXTENSION`: appended to the `Automobile` sector's stocks.
    pub(super) automobile: Vec<PyValue>,
    /// `ORDER_DETAIL_EXTENSION`: `get_order_details`' `metadata`, texts formatted with the
    /// order's symbol.
    pub(super) order_detail: Vec<(PyValue, String)>,
    /// `FILE_CONTENT_EXTENSION`: appended to the content of every loaded file not in
    /// `files_tail_used`.
    pub(super) file_content: String,
    /// `POPULATE_FILE_EXTENSION`: empty files added to every innermost directory.
    pub(super) populate_files: Vec<String>,
    /// `FILES_TAIL_USED`: files whose content is left as is.
    pub(super) files_tail_used: Vec<String>,
    /// `CAR_STATUS_METADATA_EXTENSION`: `displayCarStatus`' `metadata`, `check_tire_pressure`'s
    /// `car_info`.
    pub(super) car_status_metadata: PyValue,
    /// `LONG_WEATHER_EXTENSION`: `get_outside_temperature_from_google`'s answer (plus the
    /// temperature).
    pub(super) long_weather: PyValue,
    /// `PARKING_BRAKE_INSTRUCTION`: in `activateParkingBrake`'s answer.
    pub(super) parking_brake_instruction: PyValue,
    /// `INTERMEDIARY_CITIES`: in `estimate_distance`'s answer.
    pub(super) intermediary_cities: PyValue,
    /// `CREDIT_CARD_EXTENSION`: cards merged into `TravelAPI`'s (existing ids kept).
    pub(super) credit_cards: Vec<(PyValue, PyValue)>,
    /// `BOOKING_RECORD_EXTENSION`: bookings merged into `TravelAPI`'s.
    pub(super) booking_records: Vec<(PyValue, PyValue)>,
}

impl LongContextData {
    /// Reads and parses bfcl-eval's `long_context.py`.
    ///
    /// # Errors
    /// A message naming the file and what is wrong: unreadable, not a module of literal
    /// assignments, a constant missing or of the wrong type.
    pub fn load(path: &Path) -> Result<Self, String> {
        let text = std::fs::read_to_string(path).map_err(|error| {
            format!(
                "{}: cannot read bfcl-eval's long-context data: {error}",
                path.display()
            )
        })?;
        Self::parse(&text, path)
    }

    /// Reads the file named by [`LONG_CONTEXT_ENV`], when the variable is set (and not empty).
    ///
    /// # Errors
    /// As [`LongContextData::load`], the message also naming the variable.
    pub fn from_env() -> Result<Option<Self>, String> {
        match std::env::var_os(LONG_CONTEXT_ENV) {
            Some(path) if !path.is_empty() => Self::load(Path::new(&path))
                .map(Some)
                .map_err(|reason| format!("{LONG_CONTEXT_ENV}: {reason}")),
            _ => Ok(None),
        }
    }

    /// Parses the text of `long_context.py`; `path` only names it in messages.
    ///
    /// # Errors
    /// A message naming the file and the missing or malformed constant.
    pub fn parse(text: &str, path: &Path) -> Result<Self, String> {
        let shown = path.display();
        let assignments = parse_assignments(text).map_err(|reason| {
            format!("{shown}: not a module of literal assignments as bfcl-eval's long_context.py is: {reason}")
        })?;
        let mut values: Vec<(String, PyValue)> = Vec::with_capacity(assignments.len());
        for (name, line, expr) in assignments {
            let value = literal(&expr)
                .ok_or_else(|| format!("{shown}:{line}: `{name}` is not a Python literal"))?;
            // A later assignment rebinds the name, as in Python.
            values.retain(|(known, _)| *known != name);
            values.push((name, value));
        }
        let get = |name: &str| -> Result<PyValue, String> {
            values
                .iter()
                .find(|(known, _)| known == name)
                .map(|(_, value)| value.clone())
                .ok_or_else(|| format!("{shown}: the constant `{name}` is missing"))
        };
        let wrong = |name: &str, wanted: &str| format!("{shown}: `{name}` is not {wanted}");
        let list = |name: &str| match get(name)? {
            PyValue::List(items) => Ok(items),
            _ => Err(wrong(name, "a list")),
        };
        let strings = |name: &str| -> Result<Vec<String>, String> {
            list(name)?
                .into_iter()
                .map(|item| match item {
                    PyValue::Str(text) => Ok(text),
                    _ => Err(wrong(name, "a list of strings")),
                })
                .collect()
        };
        let dict = |name: &str| match get(name)? {
            PyValue::Dict(pairs) => Ok(pairs),
            _ => Err(wrong(name, "a dict")),
        };
        let order_detail = dict("ORDER_DETAIL_EXTENSION")?
            .into_iter()
            .map(|(key, value)| match value {
                PyValue::Str(text) => Ok((key, text)),
                _ => Err(wrong("ORDER_DETAIL_EXTENSION", "a dict of strings")),
            })
            .collect::<Result<_, String>>()?;
        let file_content = match get("FILE_CONTENT_EXTENSION")? {
            PyValue::Str(text) => text,
            _ => return Err(wrong("FILE_CONTENT_EXTENSION", "a string")),
        };
        Ok(Self {
            path: path.to_path_buf(),
            watch_list: list("WATCH_LIST_EXTENSION")?,
            transaction_history: list("TRANSACTION_HISTORY_EXTENSION")?,
            ma_5: get("MA_5_EXTENSION")?,
            ma_20: get("MA_20_EXTENSION")?,
            technology: list("TECHNOLOGY_EXTENSION")?,
            automobile: list("AUTOMOBILE_EXTENSION")?,
            order_detail,
            file_content,
            populate_files: strings("POPULATE_FILE_EXTENSION")?,
            files_tail_used: strings("FILES_TAIL_USED")?,
            car_status_metadata: get("CAR_STATUS_METADATA_EXTENSION")?,
            long_weather: PyValue::Dict(dict("LONG_WEATHER_EXTENSION")?),
            parking_brake_instruction: get("PARKING_BRAKE_INSTRUCTION")?,
            intermediary_cities: get("INTERMEDIARY_CITIES")?,
            credit_cards: dict("CREDIT_CARD_EXTENSION")?,
            booking_records: dict("BOOKING_RECORD_EXTENSION")?,
        })
    }

    /// The file the data was read from.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Whether an entry's backends run in long-context mode, and with which filler data.
#[derive(Debug, Clone, Default)]
pub enum LongContext {
    /// Normal mode.
    #[default]
    Off,
    /// Long-context mode, with bfcl-eval's filler data when it was supplied.
    On(Option<Arc<LongContextData>>),
}

impl LongContext {
    /// The mode of an entry, as bfcl-eval decides it: on when the entry's category (its id
    /// without the trailing `_N`) names `long_context` or `composite`.
    pub fn for_entry(entry_id: &str, data: Option<&Arc<LongContextData>>) -> Self {
        let category = entry_id
            .rsplit_once('_')
            .map_or(entry_id, |(prefix, _)| prefix);
        if category.contains("long_context") || category.contains("composite") {
            LongContext::On(data.cloned())
        } else {
            LongContext::Off
        }
    }

    /// True in long-context mode.
    pub fn is_on(&self) -> bool {
        matches!(self, LongContext::On(_))
    }

    /// The filler data when long-context mode is on; `None` when it is off.
    ///
    /// # Errors
    /// [`CallError::Unsupported`] naming `what` and how to supply the data, when the mode is on
    /// and the data was not given.
    pub(super) fn filler(&self, what: &str) -> Result<Option<&LongContextData>, CallError> {
        match self {
            LongContext::Off => Ok(None),
            LongContext::On(Some(data)) => Ok(Some(data)),
            LongContext::On(None) => Err(CallError::Unsupported(format!(
                "{what} in long-context mode needs bfcl-eval's filler data: give its \
                 {LONG_CONTEXT_MODULE_PATH} with --long-context-data FILE or {LONG_CONTEXT_ENV}"
            ))),
        }
    }
}

/// A stand-in with every constant, in the shapes bfcl-eval's file uses (our own values).
#[cfg(test)]
pub(super) const SAMPLE: &str = r#"WATCH_LIST_EXTENSION = ['AAA',  'BB', ...]
TRANSACTION_HISTORY_EXTENSION = [{'type': 'deposit', 'amount': 1.5, 'timestamp': '2024-01-01 00:00:00'}]
MA_5_EXTENSION = [1.0, 2.5]
MA_20_EXTENSION = [3.25]
TECHNOLOGY_EXTENSION = ['T1']
AUTOMOBILE_EXTENSION = ['A1', 'A2']
ORDER_DETAIL_EXTENSION = {
    "note": """
    {symbol} trades {{daily}}.
    """,
    "plain": "no symbol"
}
FILE_CONTENT_EXTENSION = "Padding " "text."
POPULATE_FILE_EXTENSION = ['x1.jpg', 'x2.jpg']
CAR_STATUS_METADATA_EXTENSION = "Car: test"
LONG_WEATHER_EXTENSION={"-1_day": {"windSpeed": 1.0}}
PARKING_BRAKE_INSTRUCTION = "Pull it."
INTERMEDIARY_CITIES = ['Here', 'There']
CREDIT_CARD_EXTENSION = {
    "1111": {"card_number": "1111", "balance": 10000.0},
}
BOOKING_RECORD_EXTENSION = {"booking_1": {"card_id": "1111", "travel_cost": 2.0}}
# a comment
FILES_TAIL_USED = ['keep.txt']
"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_constant() {
        let data = LongContextData::parse(SAMPLE, Path::new("lc.py")).expect("parses");
        assert_eq!(data.watch_list.len(), 3);
        assert_eq!(data.watch_list[2].repr(), "Ellipsis");
        assert_eq!(data.file_content, "Padding text.");
        assert_eq!(data.order_detail.len(), 2);
        assert!(
            data.order_detail[0]
                .1
                .contains("{symbol} trades {{daily}}.")
        );
        assert_eq!(data.populate_files, ["x1.jpg", "x2.jpg"]);
        assert_eq!(data.files_tail_used, ["keep.txt"]);
        assert_eq!(data.credit_cards.len(), 1);
        assert_eq!(data.path(), Path::new("lc.py"));
    }

    #[test]
    fn errors_name_the_file_and_the_constant() {
        let missing = SAMPLE.replace("FILES_TAIL_USED", "OTHER_NAME");
        let error = LongContextData::parse(&missing, Path::new("lc.py")).expect_err("rejected");
        assert!(
            error.contains("lc.py") && error.contains("`FILES_TAIL_USED` is missing"),
            "{error}"
        );
        let wrong = SAMPLE.replace(
            "FILE_CONTENT_EXTENSION = \"Padding \" \"text.\"",
            "FILE_CONTENT_EXTENSION = 3",
        );
        let error = LongContextData::parse(&wrong, Path::new("lc.py")).expect_err("rejected");
        assert!(
            error.contains("`FILE_CONTENT_EXTENSION` is not a string"),
            "{error}"
        );
        let code = format!("{SAMPLE}\nX = foo(1)\n");
        let error = LongContextData::parse(&code, Path::new("lc.py")).expect_err("rejected");
        assert!(
            error.contains("lc.py:26: `X` is not a Python literal"),
            "{error}"
        );
        let error =
            LongContextData::parse("import os\n", Path::new("lc.py")).expect_err("rejected");
        assert!(
            error.contains("lc.py") && error.contains("line 1"),
            "{error}"
        );
        let error = LongContextData::load(Path::new("/nonexistent/lc.py")).expect_err("rejected");
        assert!(error.contains("/nonexistent/lc.py"), "{error}");
    }

    #[test]
    fn mode_follows_the_category() {
        assert!(!LongContext::for_entry("multi_turn_base_3", None).is_on());
        assert!(LongContext::for_entry("multi_turn_long_context_3", None).is_on());
        let missing = LongContext::for_entry("multi_turn_long_context_3", None)
            .filler("X.y")
            .expect_err("rejected");
        assert!(
            matches!(&missing, CallError::Unsupported(reason) if reason.contains(LONG_CONTEXT_ENV) && reason.contains("--long-context-data")),
            "{missing:?}"
        );
    }
}
