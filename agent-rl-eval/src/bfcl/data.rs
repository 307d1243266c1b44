//! Loading BFCL question and possible-answer files (v3 and v4 layouts).
//!
//! A data directory holds `BFCL_v4_<category>.json` (or `BFCL_v3_<category>.json`) question files
//! and a `possible_answer/` folder with files of the same names. Every file is JSON Lines.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use agent_rl_core::Message;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::category::Category;
use super::multi_turn::{LongContextData, MultiTurnSetup};
use crate::error::{EvalError, Result};

/// The file-naming generation of a data directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BfclVersion {
    /// `BFCL_v3_*` files (`simple`, `java`, `javascript`).
    V3,
    /// `BFCL_v4_*` files (`simple_python`, `simple_java`, `simple_javascript`).
    V4,
}

impl BfclVersion {
    /// The file name of a category's question (and possible-answer) file.
    pub fn file_name(self, category: Category) -> String {
        match self {
            BfclVersion::V3 => format!("BFCL_v3_{}.json", category.v3_name()),
            BfclVersion::V4 => format!("BFCL_v4_{}.json", category.name()),
        }
    }
}

/// One chat message of a question turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BfclMessage {
    /// `system`, `user` or `assistant`.
    pub role: String,
    /// The text.
    pub content: String,
}

impl BfclMessage {
    /// The message as a chat message (an unknown role is taken as `user`).
    pub fn to_message(&self) -> Message {
        match self.role.as_str() {
            "system" => Message::system(self.content.clone()),
            "assistant" => Message::assistant(self.content.clone()),
            _ => Message::user(self.content.clone()),
        }
    }
}

/// One test entry: the question, the function docs and (for AST categories) the ground truth.
#[derive(Debug, Clone, PartialEq)]
pub struct BfclEntry {
    /// Entry id with the v4 category prefix as in the file (`simple_python_0`, `simple_0` in v3).
    pub id: String,
    /// The category.
    pub category: Category,
    /// Turns, each a list of messages (single-turn entries have exactly one turn).
    pub turns: Vec<Vec<BfclMessage>>,
    /// Function docs (BFCL schema: `name`, `description`, `parameters`); empty for multi-turn.
    pub functions: Vec<Value>,
    /// Expected calls `[{name: {param: [acceptable…]}}]` (multi-turn: call strings per turn);
    /// empty for the relevance/irrelevance categories.
    pub ground_truth: Vec<Value>,
    /// Multi-turn entries: the backends' initial state and held-back functions.
    pub multi_turn: Option<MultiTurnSetup>,
}

/// The entries of a data directory, by category.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct BfclDataset {
    /// Entries per category, in file order.
    pub categories: BTreeMap<Category, Vec<BfclEntry>>,
}

impl BfclDataset {
    /// Detects the layout of `dir`: `BFCL_v4_*` or `BFCL_v3_*` files directly in it, or in a
    /// `v4/` (preferred) or `v3/` subfolder, or the same under `bfcl/` (so that the benchmark
    /// data root, `AGENT_RL_DATA`, works too). Returns the folder holding the files.
    ///
    /// # Errors
    /// [`EvalError::Layout`] when neither layout is found.
    pub fn detect(dir: &Path) -> Result<(PathBuf, BfclVersion)> {
        let bfcl = dir.join("bfcl");
        let candidates = [
            dir.to_path_buf(),
            dir.join("v4"),
            dir.join("v3"),
            bfcl.join("v4"),
            bfcl.join("v3"),
            bfcl,
        ];
        for folder in candidates {
            for version in [BfclVersion::V4, BfclVersion::V3] {
                if folder.join(version.file_name(Category::Multiple)).is_file() {
                    return Ok((folder, version));
                }
            }
        }
        Err(EvalError::Layout {
            path: dir.to_path_buf(),
            reason: "no BFCL_v4_multiple.json or BFCL_v3_multiple.json here, in v4/ or v3/, \
                     or in bfcl/{v4,v3}/"
                .into(),
        })
    }

    /// Loads every category present in `dir` (see [`BfclDataset::detect`]).
    ///
    /// # Errors
    /// Unreadable files, malformed records (file and line named), answers without questions.
    pub fn load(dir: &Path) -> Result<Self> {
        Self::load_categories(dir, &Category::ALL)
    }

    /// Loads the given categories; a category whose question file is absent is skipped.
    ///
    /// # Errors
    /// As [`BfclDataset::load`].
    pub fn load_categories(dir: &Path, categories: &[Category]) -> Result<Self> {
        let (folder, version) = Self::detect(dir)?;
        let mut dataset = Self::default();
        for &category in categories {
            let path = folder.join(version.file_name(category));
            if !path.is_file() {
                continue;
            }
            let answer_path = folder
                .join("possible_answer")
                .join(version.file_name(category));
            let entries = load_category(category, &path, &answer_path)?;
            dataset.categories.insert(category, entries);
        }
        Ok(dataset)
    }

    /// All entries, category by category.
    pub fn entries(&self) -> impl Iterator<Item = &BfclEntry> {
        self.categories.values().flatten()
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.categories.values().map(Vec::len).sum()
    }

    /// True when no entry was loaded.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Gives every multi-turn entry bfcl-eval's long-context filler data
    /// ([`MultiTurnSetup::long_context`]), so that the long-context categories run in full.
    pub fn set_long_context(&mut self, data: Arc<LongContextData>) {
        for entry in self.categories.values_mut().flatten() {
            if let Some(setup) = &mut entry.multi_turn {
                setup.long_context = Some(Arc::clone(&data));
            }
        }
    }

    /// Entries per category.
    pub fn counts(&self) -> BTreeMap<Category, usize> {
        self.categories
            .iter()
            .map(|(category, entries)| (*category, entries.len()))
            .collect()
    }

    /// An index from id to entry.
    pub fn index(&self) -> HashMap<&str, &BfclEntry> {
        self.entries()
            .map(|entry| (entry.id.as_str(), entry))
            .collect()
    }
}

#[derive(Deserialize)]
struct QuestionRecord {
    id: String,
    question: Vec<Vec<BfclMessage>>,
    #[serde(default)]
    function: Vec<Value>,
    #[serde(flatten)]
    extra: serde_json::Map<String, Value>,
}

#[derive(Deserialize)]
struct AnswerRecord {
    id: String,
    ground_truth: Vec<Value>,
}

fn load_category(category: Category, path: &Path, answer_path: &Path) -> Result<Vec<BfclEntry>> {
    let questions: Vec<(usize, QuestionRecord)> = read_jsonl(path)?;
    let mut answers: HashMap<String, Vec<Value>> = HashMap::new();
    if category.has_answers() {
        if !answer_path.is_file() {
            return Err(EvalError::Layout {
                path: answer_path.to_path_buf(),
                reason: format!("possible-answer file of category {category} is missing"),
            });
        }
        for (_, record) in read_jsonl::<AnswerRecord>(answer_path)? {
            answers.insert(record.id, record.ground_truth);
        }
    }
    let mut entries = Vec::with_capacity(questions.len());
    for (line, record) in questions {
        let ground_truth = if category.has_answers() {
            answers
                .remove(&record.id)
                .ok_or_else(|| EvalError::Record {
                    path: path.to_path_buf(),
                    line,
                    reason: format!(
                        "no possible answer with id {:?} in {}",
                        record.id,
                        answer_path.display()
                    ),
                })?
        } else {
            Vec::new()
        };
        let multi_turn =
            MultiTurnSetup::from_record(&Value::Object(record.extra)).map_err(|reason| {
                EvalError::Record {
                    path: path.to_path_buf(),
                    line,
                    reason,
                }
            })?;
        entries.push(BfclEntry {
            id: record.id,
            category,
            turns: record.question,
            functions: record.function,
            ground_truth,
            multi_turn,
        });
    }
    Ok(entries)
}

/// Reads a JSON Lines file into records, with their 1-based line numbers; blank lines are skipped.
pub(crate) fn read_jsonl<T: for<'de> Deserialize<'de>>(path: &Path) -> Result<Vec<(usize, T)>> {
    let text = std::fs::read_to_string(path).map_err(|source| EvalError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let mut records = Vec::new();
    for (index, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let record = serde_json::from_str(line).map_err(|error| EvalError::Record {
            path: path.to_path_buf(),
            line: index + 1,
            reason: error.to_string(),
        })?;
        records.push((index + 1, record));
    }
    Ok(records)
}
