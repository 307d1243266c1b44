//! The multi-turn fields of an entry: the backends' initial state and the held-back functions.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value;

use super::long_context::LongContextData;

/// What a multi-turn entry adds to a question: `initial_config`, `involved_classes`,
/// `missed_function`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct MultiTurnSetup {
    /// Per class name, its `_load_scenario` config.
    pub initial_config: Value,
    /// The classes instantiated for the entry, in order (a later class wins a shared method
    /// name).
    pub involved_classes: Vec<String>,
    /// `miss_func`: per turn index, the functions held back until that turn (withheld from the
    /// model before it; the ground truth of that turn is empty).
    pub missed_function: BTreeMap<usize, Vec<String>>,
    /// bfcl-eval's long-context filler data, for entries of the long-context categories (not
    /// part of the record: set by [`BfclDataset::set_long_context`](crate::bfcl::BfclDataset::set_long_context)
    /// or directly). Without it such entries run only as far as they need no filler.
    pub long_context: Option<Arc<LongContextData>>,
}

impl MultiTurnSetup {
    /// Reads the fields from a question record.
    ///
    /// # Errors
    /// A message naming the malformed field.
    pub fn from_record(record: &Value) -> Result<Option<Self>, String> {
        let Some(involved) = record.get("involved_classes") else {
            return Ok(None);
        };
        let involved_classes = involved
            .as_array()
            .and_then(|items| {
                items
                    .iter()
                    .map(|v| v.as_str().map(str::to_owned))
                    .collect()
            })
            .ok_or("`involved_classes` must be a list of class names")?;
        let mut missed_function = BTreeMap::new();
        if let Some(missed) = record.get("missed_function") {
            let map = missed
                .as_object()
                .ok_or("`missed_function` must map turn indices to function names")?;
            for (turn, names) in map {
                let turn: usize = turn
                    .parse()
                    .map_err(|_| format!("`missed_function` key {turn:?} is not a turn index"))?;
                let names = names
                    .as_array()
                    .and_then(|items| {
                        items
                            .iter()
                            .map(|v| v.as_str().map(str::to_owned))
                            .collect()
                    })
                    .ok_or("`missed_function` values must be lists of names")?;
                missed_function.insert(turn, names);
            }
        }
        Ok(Some(Self {
            initial_config: record.get("initial_config").cloned().unwrap_or(Value::Null),
            involved_classes,
            missed_function,
            long_context: None,
        }))
    }
}
