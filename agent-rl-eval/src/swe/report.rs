//! The SWE report: resolved rate, empty-patch rate, average time to patch, average steps and
//! tool calls, and one row per instance (`instance_id`, `resolved`, `status`), as JSON and
//! Markdown.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use super::env::SweFinish;
use super::grader::{GradeStatus, InstanceGrade};
use super::runner::SweEpisode;

/// One instance's row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweReportRow {
    /// The instance.
    pub instance_id: String,
    /// True when the patch resolved it.
    pub resolved: bool,
    /// How grading ended.
    pub status: GradeStatus,
    /// Why the episode ended (when the episode is known).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finish_reason: Option<SweFinish>,
    /// Steps of the episode (when known).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steps: Option<usize>,
    /// Tool calls of the episode (when known).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_calls: Option<usize>,
    /// Seconds from the start of the episode to its patch (when known).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_to_patch_secs: Option<f64>,
    /// Why grading did not run normally.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

/// The report over a set of graded predictions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweReport {
    /// Instances graded.
    pub total: usize,
    /// Instances resolved.
    pub resolved: usize,
    /// `resolved / total` (0 when there is nothing).
    pub resolved_rate: f64,
    /// Share of instances with an empty patch.
    pub empty_patch_rate: f64,
    /// Mean seconds to a non-empty submitted patch, over the episodes that produced one.
    pub avg_time_to_patch_secs: Option<f64>,
    /// Mean steps per episode (when the episodes are known).
    pub avg_steps: Option<f64>,
    /// Mean tool calls per episode (when the episodes are known).
    pub avg_tool_calls: Option<f64>,
    /// Instances per status.
    pub status_counts: BTreeMap<String, usize>,
    /// One row per instance, in the order graded.
    pub instances: Vec<SweReportRow>,
}

fn mean(values: impl Iterator<Item = f64>) -> Option<f64> {
    let (sum, count) = values.fold((0.0, 0usize), |(sum, count), v| (sum + v, count + 1));
    (count > 0).then(|| sum / count as f64)
}

impl SweReport {
    /// The report of `grades`, with the episode figures of `episodes` (matched by instance id;
    /// may be empty when only predictions are known).
    pub fn new(grades: &[InstanceGrade], episodes: &[SweEpisode]) -> Self {
        let episode = |id: &str| episodes.iter().find(|e| e.outcome.instance_id == id);
        let instances: Vec<SweReportRow> = grades
            .iter()
            .map(|grade| {
                let known = episode(&grade.instance_id).map(|e| &e.outcome);
                SweReportRow {
                    instance_id: grade.instance_id.clone(),
                    resolved: grade.resolved,
                    status: grade.status,
                    finish_reason: known.map(|o| o.finish_reason),
                    steps: known.map(|o| o.steps),
                    tool_calls: known.map(|o| o.tool_calls),
                    time_to_patch_secs: known.map(|o| o.time_to_patch_secs),
                    detail: grade.detail.clone(),
                }
            })
            .collect();
        let total = instances.len();
        let rate = |count: usize| {
            if total == 0 {
                0.0
            } else {
                count as f64 / total as f64
            }
        };
        let resolved = instances.iter().filter(|row| row.resolved).count();
        let empty = instances
            .iter()
            .filter(|row| row.status == GradeStatus::EmptyPatch)
            .count();
        let mut status_counts = BTreeMap::new();
        for row in &instances {
            *status_counts.entry(status_name(row.status)).or_insert(0) += 1;
        }
        Self {
            total,
            resolved,
            resolved_rate: rate(resolved),
            empty_patch_rate: rate(empty),
            avg_time_to_patch_secs: mean(
                instances
                    .iter()
                    .filter(|row| {
                        row.status != GradeStatus::EmptyPatch
                            && row.finish_reason == Some(SweFinish::Submitted)
                    })
                    .filter_map(|row| row.time_to_patch_secs),
            ),
            avg_steps: mean(
                instances
                    .iter()
                    .filter_map(|row| row.steps.map(|s| s as f64)),
            ),
            avg_tool_calls: mean(
                instances
                    .iter()
                    .filter_map(|row| row.tool_calls.map(|c| c as f64)),
            ),
            status_counts,
            instances,
        }
    }

    /// A Markdown summary and table.
    pub fn to_markdown(&self) -> String {
        let figure = |value: Option<f64>| value.map_or("–".to_string(), |v| format!("{v:.2}"));
        let mut out = String::from("| metric | value |\n|---|---|\n");
        let _ = writeln!(out, "| instances | {} |", self.total);
        let _ = writeln!(
            out,
            "| resolved | {} ({:.1}%) |",
            self.resolved,
            100.0 * self.resolved_rate
        );
        let _ = writeln!(
            out,
            "| empty patches | {:.1}% |",
            100.0 * self.empty_patch_rate
        );
        let _ = writeln!(
            out,
            "| avg time to patch (s) | {} |",
            figure(self.avg_time_to_patch_secs)
        );
        let _ = writeln!(out, "| avg steps | {} |", figure(self.avg_steps));
        let _ = writeln!(out, "| avg tool calls | {} |", figure(self.avg_tool_calls));
        out.push_str("\n| instance | status | finish | steps | tool calls | time to patch (s) |\n");
        out.push_str("|---|---|---|---|---|---|\n");
        for row in &self.instances {
            let finish = row.finish_reason.map_or("–".to_string(), |f| {
                serde_json::to_value(f)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default()
            });
            let count = |value: Option<usize>| value.map_or("–".to_string(), |v| v.to_string());
            let _ = writeln!(
                out,
                "| {} | {} | {finish} | {} | {} | {} |",
                row.instance_id,
                status_name(row.status),
                count(row.steps),
                count(row.tool_calls),
                figure(row.time_to_patch_secs)
            );
        }
        out
    }
}

/// The status as written in the JSON (`resolved`, `patch_failed`, …).
pub fn status_name(status: GradeStatus) -> String {
    serde_json::to_value(status)
        .ok()
        .and_then(|value| value.as_str().map(str::to_string))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::swe::verdict::TestOutcomes;

    fn grade(id: &str, status: GradeStatus) -> InstanceGrade {
        InstanceGrade {
            instance_id: id.into(),
            resolved: status == GradeStatus::Resolved,
            status,
            fail_to_pass: TestOutcomes::default(),
            pass_to_pass: TestOutcomes::default(),
            detail: None,
            test_secs: 0.0,
        }
    }

    #[test]
    fn rates_and_rows() {
        let grades = [
            grade("a", GradeStatus::Resolved),
            grade("b", GradeStatus::EmptyPatch),
            grade("c", GradeStatus::PatchFailed),
            grade("d", GradeStatus::Unresolved),
        ];
        let report = SweReport::new(&grades, &[]);
        assert_eq!((report.total, report.resolved), (4, 1));
        assert!((report.resolved_rate - 0.25).abs() < 1e-12);
        assert!((report.empty_patch_rate - 0.25).abs() < 1e-12);
        assert_eq!(report.avg_steps, None);
        let json = serde_json::to_value(&report).expect("json");
        assert_eq!(json["instances"][2]["status"], "patch_failed");
        assert_eq!(json["instances"][0]["resolved"], true);
        assert_eq!(json["status_counts"]["empty_patch"], 1);
        assert!(report.to_markdown().contains("| c | patch_failed |"));
        assert_eq!(SweReport::new(&[], &[]).resolved_rate, 0.0);
    }
}
