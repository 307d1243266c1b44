//! Aggregating verdicts with BFCL's own formulas (v3 or v4), plus the training diagnostics:
//! tool-call format accuracy, argument match rate and end-to-end success.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::category::Category;
use super::data::BfclVersion;
use super::score::Verdict;
use crate::failure::ItemFailure;

/// Categories of BFCL's simple AST mean.
const SIMPLE_AST: [Category; 3] = [
    Category::SimplePython,
    Category::SimpleJava,
    Category::SimpleJavascript,
];
/// Categories of the v4 non-live mean besides the simple ones.
const NON_LIVE_REST: [Category; 3] = [
    Category::Multiple,
    Category::Parallel,
    Category::ParallelMultiple,
];
/// The v4 live categories (v3 adds live irrelevance and relevance).
const LIVE: [Category; 4] = [
    Category::LiveSimple,
    Category::LiveMultiple,
    Category::LiveParallel,
    Category::LiveParallelMultiple,
];
/// The hallucination categories.
const IRRELEVANCE: [Category; 2] = [Category::Irrelevance, Category::LiveIrrelevance];
/// The multi-turn categories.
const MULTI_TURN: [Category; 4] = [
    Category::MultiTurnBase,
    Category::MultiTurnMissFunc,
    Category::MultiTurnMissParam,
    Category::MultiTurnLongContext,
];

/// Results of one category.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CategoryReport {
    /// The category.
    pub category: Category,
    /// Entries scored.
    pub total: usize,
    /// Entries of the category in the dataset, when known; more than `total` means a partial
    /// run (`--limit`, or a partial result file), whose accuracy is over the scored entries.
    pub dataset_total: Option<usize>,
    /// Entries the checker accepted.
    pub correct: usize,
    /// Entries not scored (multi-turn entries needing a backend not ported yet); they count
    /// neither as correct nor as wrong.
    pub unsupported: usize,
    /// `correct / (total - unsupported)`; `None` when no entry of the category was scored.
    pub accuracy: Option<f64>,
    /// Entries whose output decoded into BFCL's call format.
    pub well_formed: usize,
    /// Mean argument score (AST categories only).
    pub argument_match_rate: Option<f64>,
}

/// The aggregate report. Aggregates count a category with no results as 0, like BFCL.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BfclReport {
    /// Which formulas were used.
    pub version: BfclVersion,
    /// Per category, in report order.
    pub categories: Vec<CategoryReport>,
    /// Categories present in the results none of whose entries could be scored.
    pub unsupported: Vec<Category>,
    /// Why entries were not scored (e.g. `backend TravelAPI is not implemented yet`), with
    /// how many entries each.
    pub unsupported_reasons: BTreeMap<String, usize>,
    /// Non-live AST overall (v4: mean of simple_ast, multiple, parallel, parallel_multiple;
    /// v3 also averages irrelevance in).
    pub non_live_overall: f64,
    /// Live overall (entry-weighted; v3 includes live (ir)relevance).
    pub live_overall: f64,
    /// Hallucination: mean of irrelevance and live_irrelevance accuracies.
    pub irrelevance_total: f64,
    /// live_relevance accuracy.
    pub relevance_total: f64,
    /// Mean of the four multi-turn categories (0 until they are supported).
    pub multi_turn_overall: f64,
    /// BFCL's overall score (v4: weights 10/10/10/30/40 over non-live, live, hallucination,
    /// multi-turn, agentic — agentic is not reproducible offline and counts 0, so the
    /// single-turn part is capped at 30 %; v3: mean of live, non-live, multi-turn).
    pub overall: f64,
    /// Fraction of AST entries whose output decoded into call format.
    pub format_accuracy: f64,
    /// Mean argument score over AST entries.
    pub argument_match_rate: f64,
    /// Fraction of supported entries judged correct.
    pub end_to_end_success: f64,
    /// Entries whose generation failed (a prompt too long for the model, an endpoint error),
    /// with the reason; they are judged wrong. Filled by [`BfclRunner`](super::BfclRunner).
    #[serde(default)]
    pub failures: Vec<ItemFailure>,
}

fn mean(values: &[f64]) -> f64 {
    if values.is_empty() {
        0.0
    } else {
        values.iter().sum::<f64>() / values.len() as f64
    }
}

fn ratio(numerator: usize, denominator: usize) -> f64 {
    if denominator == 0 {
        0.0
    } else {
        numerator as f64 / denominator as f64
    }
}

impl BfclReport {
    /// Aggregates verdicts. A live category without verdicts weighs nothing in `live_overall`;
    /// use [`BfclReport::with_dataset_counts`] for BFCL's rule.
    pub fn from_verdicts(verdicts: &[Verdict], version: BfclVersion) -> Self {
        Self::with_dataset_counts(verdicts, version, &BTreeMap::new())
    }

    /// Aggregates verdicts like BFCL: a category with no verdicts scores 0 and, in the
    /// entry-weighted live overall, weighs its full size from `dataset_counts` (entries per
    /// category in the dataset, e.g. from [`BfclDataset::counts`](super::BfclDataset::counts)).
    pub fn with_dataset_counts(
        verdicts: &[Verdict],
        version: BfclVersion,
        dataset_counts: &BTreeMap<Category, usize>,
    ) -> Self {
        let mut by_category: BTreeMap<Category, Vec<&Verdict>> = BTreeMap::new();
        for verdict in verdicts {
            by_category
                .entry(verdict.category)
                .or_default()
                .push(verdict);
        }
        let categories: Vec<CategoryReport> = by_category
            .iter()
            .map(|(&category, verdicts)| {
                let scored = verdicts.iter().filter(|v| v.supported).count();
                let scores: Vec<f64> = verdicts.iter().filter_map(|v| v.argument_score).collect();
                let correct = verdicts.iter().filter(|v| v.valid && v.supported).count();
                CategoryReport {
                    category,
                    total: verdicts.len(),
                    dataset_total: dataset_counts.get(&category).copied(),
                    correct,
                    unsupported: verdicts.len() - scored,
                    accuracy: (scored > 0).then(|| ratio(correct, scored)),
                    well_formed: verdicts.iter().filter(|v| v.well_formed).count(),
                    argument_match_rate: (!scores.is_empty()).then(|| mean(&scores)),
                }
            })
            .collect();
        let find = |category: Category| categories.iter().find(|c| c.category == category);
        let accuracy = |category: Category| find(category).and_then(|c| c.accuracy).unwrap_or(0.0);
        let weighted = |members: &[Category]| {
            let (correct, total) = members
                .iter()
                .map(|&c| match find(c) {
                    Some(report) => (report.correct, report.total),
                    None => (0, dataset_counts.get(&c).copied().unwrap_or(0)),
                })
                .fold((0, 0), |(correct, total), (c, t)| (correct + c, total + t));
            ratio(correct, total)
        };
        let simple_ast = mean(&SIMPLE_AST.map(accuracy));
        let mut non_live_terms = vec![simple_ast];
        non_live_terms.extend(NON_LIVE_REST.map(accuracy));
        let mut live_members = LIVE.to_vec();
        if version == BfclVersion::V3 {
            non_live_terms.push(accuracy(Category::Irrelevance));
            live_members.extend([Category::LiveIrrelevance, Category::LiveRelevance]);
        }
        let non_live_overall = mean(&non_live_terms);
        let live_overall = weighted(&live_members);
        let irrelevance_total = mean(&IRRELEVANCE.map(accuracy));
        let relevance_total = accuracy(Category::LiveRelevance);
        let multi_turn_overall = mean(&MULTI_TURN.map(accuracy));
        let overall = match version {
            BfclVersion::V4 => {
                let agentic = 0.0;
                (10.0 * non_live_overall
                    + 10.0 * live_overall
                    + 10.0 * irrelevance_total
                    + 30.0 * multi_turn_overall
                    + 40.0 * agentic)
                    / 100.0
            }
            BfclVersion::V3 => mean(&[live_overall, non_live_overall, multi_turn_overall]),
        };
        let ast: Vec<&Verdict> = verdicts
            .iter()
            .filter(|v| v.argument_score.is_some() && v.supported)
            .collect();
        let supported: Vec<&Verdict> = verdicts.iter().filter(|v| v.supported).collect();
        let mut unsupported_reasons = BTreeMap::new();
        for verdict in verdicts.iter().filter(|v| !v.supported) {
            let reason = verdict
                .error
                .clone()
                .unwrap_or_else(|| "not supported".into());
            *unsupported_reasons.entry(reason).or_insert(0) += 1;
        }
        Self {
            version,
            unsupported_reasons,
            unsupported: categories
                .iter()
                .filter(|c| c.accuracy.is_none())
                .map(|c| c.category)
                .collect(),
            categories,
            non_live_overall,
            live_overall,
            irrelevance_total,
            relevance_total,
            multi_turn_overall,
            overall,
            format_accuracy: ratio(ast.iter().filter(|v| v.well_formed).count(), ast.len()),
            argument_match_rate: mean(
                &ast.iter()
                    .filter_map(|v| v.argument_score)
                    .collect::<Vec<_>>(),
            ),
            end_to_end_success: ratio(
                supported.iter().filter(|v| v.valid).count(),
                supported.len(),
            ),
            failures: Vec::new(),
        }
    }

    /// The categories each aggregate row averages over (all for the overall score), for
    /// telling a row whose categories were not run (`n/a`) from a score of 0.
    fn aggregate_members(&self) -> [Vec<Category>; 6] {
        let mut non_live = [SIMPLE_AST.as_slice(), NON_LIVE_REST.as_slice()].concat();
        let mut live = LIVE.to_vec();
        if self.version == BfclVersion::V3 {
            non_live.push(Category::Irrelevance);
            live.extend([Category::LiveIrrelevance, Category::LiveRelevance]);
        }
        [
            non_live,
            live,
            IRRELEVANCE.to_vec(),
            vec![Category::LiveRelevance],
            MULTI_TURN.to_vec(),
            Category::ALL.to_vec(),
        ]
    }

    /// The report as a Markdown table (percentages), with the aggregates below it.
    pub fn to_markdown(&self) -> String {
        let percent = |value: f64| format!("{:.2}", 100.0 * value);
        let mut out = String::from(
            "| category | entries | accuracy % | format % | argument match % |\n|---|---:|---:|---:|---:|\n",
        );
        for c in &self.categories {
            let accuracy = c
                .accuracy
                .map_or_else(|| "not supported yet".to_owned(), percent);
            let arguments = c
                .argument_match_rate
                .map_or_else(|| "–".to_owned(), percent);
            let format = if c.argument_match_rate.is_some() {
                percent(ratio(c.well_formed, c.total))
            } else {
                "–".to_owned()
            };
            let mut entries = match c.dataset_total {
                Some(all) if all != c.total => format!("{} of {all}", c.total),
                _ => c.total.to_string(),
            };
            if c.unsupported > 0 && c.accuracy.is_some() {
                entries.push_str(&format!(" ({} not scored)", c.unsupported));
            }
            out.push_str(&format!(
                "| {} | {entries} | {accuracy} | {format} | {arguments} |\n",
                c.category
            ));
        }
        let ran = |members: &[Category]| {
            self.categories
                .iter()
                .any(|c| c.accuracy.is_some() && members.contains(&c.category))
        };
        let [non_live, live, irrelevance, relevance, multi_turn, all] = self.aggregate_members();
        let ast_ran = self
            .categories
            .iter()
            .any(|c| c.argument_match_rate.is_some());
        let rows = [
            ("non-live overall", self.non_live_overall, ran(&non_live)),
            ("live overall", self.live_overall, ran(&live)),
            (
                "irrelevance (hallucination)",
                self.irrelevance_total,
                ran(&irrelevance),
            ),
            ("relevance", self.relevance_total, ran(&relevance)),
            (
                "multi-turn overall",
                self.multi_turn_overall,
                ran(&multi_turn),
            ),
            ("overall (BFCL formula)", self.overall, ran(&all)),
            ("tool-call format accuracy", self.format_accuracy, ast_ran),
            ("argument match rate", self.argument_match_rate, ast_ran),
            ("end-to-end success", self.end_to_end_success, ran(&all)),
        ];
        out.push_str("\n| aggregate | % |\n|---|---:|\n");
        for (name, value, ran) in rows {
            let value = if ran { percent(value) } else { "n/a".into() };
            out.push_str(&format!("| {name} | {value} |\n"));
        }
        if rows.iter().any(|row| !row.2) {
            out.push_str(
                "\nn/a: none of the row's categories was run (the JSON report counts them \
                 as 0, as BFCL's formulas do).\n",
            );
        }
        if !self.failures.is_empty() {
            out.push_str(&format!(
                "\n{} entries failed and count as wrong (ids and reasons in the report's \
                 `failures`).\n",
                self.failures.len()
            ));
        }
        if !self.unsupported.is_empty() {
            let names: Vec<&str> = self.unsupported.iter().map(|c| c.name()).collect();
            out.push_str(&format!(
                "\nNot supported yet (counted as 0 in aggregates): {}\n",
                names.join(", ")
            ));
        }
        if !self.unsupported_reasons.is_empty() {
            out.push_str(
                "\nEntries not scored (left out of their category's accuracy, so the \
                 aggregates are not BFCL's official figures):\n",
            );
            for (reason, count) in &self.unsupported_reasons {
                out.push_str(&format!("- {count} × {reason}\n"));
            }
        }
        out
    }
}
