//! BFCL test categories, their v3 and v4 names, and how each is scored.

use serde::{Deserialize, Serialize};

/// The language a category's functions are written in; it decides the type rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Language {
    /// Python 3 (every category except the two below).
    Python,
    /// Java 8: arguments are Java source text.
    Java,
    /// JavaScript: arguments are JavaScript source text.
    JavaScript,
}

/// How entries of a category are scored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Scoring {
    /// Exactly one call, checked against the first function doc.
    Simple,
    /// Exactly one call, checked against the doc named by the ground truth.
    Multiple,
    /// As many calls as the ground truth, matched order-insensitively (greedy first fit).
    Parallel,
    /// Correct when the model makes no call.
    Irrelevance,
    /// Correct when the model makes at least one call (name and arguments unchecked).
    Relevance,
    /// Multi-turn, state-based: not supported yet.
    MultiTurn,
}

/// A BFCL test category (v4 naming; v3 names are accepted by [`Category::from_name`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[allow(missing_docs)]
pub enum Category {
    SimplePython,
    SimpleJava,
    SimpleJavascript,
    Multiple,
    Parallel,
    ParallelMultiple,
    Irrelevance,
    LiveSimple,
    LiveMultiple,
    LiveParallel,
    LiveParallelMultiple,
    LiveIrrelevance,
    LiveRelevance,
    MultiTurnBase,
    MultiTurnMissFunc,
    MultiTurnMissParam,
    MultiTurnLongContext,
}

impl Category {
    /// Every category, in report order.
    pub const ALL: [Category; 17] = [
        Category::SimplePython,
        Category::SimpleJava,
        Category::SimpleJavascript,
        Category::Multiple,
        Category::Parallel,
        Category::ParallelMultiple,
        Category::Irrelevance,
        Category::LiveSimple,
        Category::LiveMultiple,
        Category::LiveParallel,
        Category::LiveParallelMultiple,
        Category::LiveIrrelevance,
        Category::LiveRelevance,
        Category::MultiTurnBase,
        Category::MultiTurnMissFunc,
        Category::MultiTurnMissParam,
        Category::MultiTurnLongContext,
    ];

    /// The v4 name (`simple_python`, `live_multiple`, …).
    pub fn name(self) -> &'static str {
        match self {
            Category::SimplePython => "simple_python",
            Category::SimpleJava => "simple_java",
            Category::SimpleJavascript => "simple_javascript",
            Category::Multiple => "multiple",
            Category::Parallel => "parallel",
            Category::ParallelMultiple => "parallel_multiple",
            Category::Irrelevance => "irrelevance",
            Category::LiveSimple => "live_simple",
            Category::LiveMultiple => "live_multiple",
            Category::LiveParallel => "live_parallel",
            Category::LiveParallelMultiple => "live_parallel_multiple",
            Category::LiveIrrelevance => "live_irrelevance",
            Category::LiveRelevance => "live_relevance",
            Category::MultiTurnBase => "multi_turn_base",
            Category::MultiTurnMissFunc => "multi_turn_miss_func",
            Category::MultiTurnMissParam => "multi_turn_miss_param",
            Category::MultiTurnLongContext => "multi_turn_long_context",
        }
    }

    /// The v3 name: `simple`, `java` and `javascript` differ, the rest are the v4 names.
    pub fn v3_name(self) -> &'static str {
        match self {
            Category::SimplePython => "simple",
            Category::SimpleJava => "java",
            Category::SimpleJavascript => "javascript",
            other => other.name(),
        }
    }

    /// Parses a v4 or v3 category name.
    pub fn from_name(name: &str) -> Option<Category> {
        Category::ALL
            .into_iter()
            .find(|category| category.name() == name || category.v3_name() == name)
    }

    /// Parses v4 or v3 category names, in order (see [`Category::from_name`]).
    ///
    /// ```
    /// use agent_rl_eval::bfcl::Category;
    ///
    /// let names = ["simple", "live_multiple"];
    /// assert_eq!(
    ///     Category::from_names(names),
    ///     Ok(vec![Category::SimplePython, Category::LiveMultiple])
    /// );
    /// assert_eq!(Category::from_names(["simple", "nope"]), Err("nope"));
    /// ```
    ///
    /// # Errors
    /// The first name that names no category.
    pub fn from_names<'a>(
        names: impl IntoIterator<Item = &'a str>,
    ) -> Result<Vec<Category>, &'a str> {
        names
            .into_iter()
            .map(|name| Category::from_name(name).ok_or(name))
            .collect()
    }

    /// The category of an entry id: `simple_python_0`, `simple_0`, `live_simple_58-27-0`.
    pub fn from_id(id: &str) -> Option<Category> {
        let (prefix, suffix) = id.rsplit_once('_')?;
        let numeric = !suffix.is_empty() && suffix.chars().all(|c| c.is_ascii_digit() || c == '-');
        if numeric {
            Category::from_name(prefix)
        } else {
            None
        }
    }

    /// The language whose type rules apply.
    pub fn language(self) -> Language {
        match self {
            Category::SimpleJava => Language::Java,
            Category::SimpleJavascript => Language::JavaScript,
            _ => Language::Python,
        }
    }

    /// How entries are scored.
    pub fn scoring(self) -> Scoring {
        match self {
            Category::SimplePython
            | Category::SimpleJava
            | Category::SimpleJavascript
            | Category::LiveSimple => Scoring::Simple,
            Category::Multiple | Category::LiveMultiple => Scoring::Multiple,
            Category::Parallel
            | Category::ParallelMultiple
            | Category::LiveParallel
            | Category::LiveParallelMultiple => Scoring::Parallel,
            Category::Irrelevance | Category::LiveIrrelevance => Scoring::Irrelevance,
            Category::LiveRelevance => Scoring::Relevance,
            _ => Scoring::MultiTurn,
        }
    }

    /// True when the category has a possible-answer file.
    pub fn has_answers(self) -> bool {
        !matches!(self.scoring(), Scoring::Irrelevance | Scoring::Relevance)
    }

    /// True for the live (user-contributed) categories.
    pub fn is_live(self) -> bool {
        self.name().starts_with("live_")
    }
}

impl std::fmt::Display for Category {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
