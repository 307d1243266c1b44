//! τ-bench's reward: database state after the episode vs after the ground truth, plus the
//! required outputs; and `pass^k` over repeated trials.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::data::TauTask;
use super::domain::TauDb;

/// The terminate tool, skipped when the reward replays the ground truth.
pub const TERMINATE_TOOL: &str = "transfer_to_human_agents";

/// The reward of one episode and how it was reached.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RewardInfo {
    /// 1.0 when the final database equals the ground truth's and every output was said.
    pub reward: f32,
    /// Whether the database hashes matched.
    pub r_actions: bool,
    /// Hash of the database after the ground-truth replay.
    pub gt_data_hash: String,
    /// Hash of the database the agent left.
    pub data_hash: String,
    /// For each required output, whether some response contained it (empty when none).
    pub outputs: Map<String, Value>,
}

/// Replays the task's ground-truth actions (except the terminate tool) on `db` in place.
pub fn apply_ground_truth(db: &mut TauDb, task: &TauTask) {
    for action in &task.actions {
        if action.name != TERMINATE_TOOL && action.name != "respond" {
            db.call(&action.name, &action.kwargs);
        }
    }
}

/// Whether `output` occurs in `response` as the original checks it: lower-cased output in the
/// lower-cased response with its commas removed.
pub fn output_said(output: &str, response: &str) -> bool {
    response
        .to_lowercase()
        .replace(',', "")
        .contains(&output.to_lowercase())
}

/// Computes the reward of an episode that left `final_db`, given a fresh `initial` database and
/// the agent's `responses` (texts of its `respond` actions).
pub fn compute_reward(
    initial: &TauDb,
    task: &TauTask,
    final_db: &TauDb,
    responses: &[String],
) -> RewardInfo {
    let data_hash = final_db.data_hash();
    let mut ground_truth = initial.clone();
    apply_ground_truth(&mut ground_truth, task);
    let gt_data_hash = ground_truth.data_hash();
    let r_actions = data_hash == gt_data_hash;
    let mut outputs = Map::new();
    for output in &task.outputs {
        let found = responses
            .iter()
            .any(|response| output_said(output, response));
        outputs.insert(output.clone(), Value::Bool(found));
    }
    let all_said = outputs.values().all(|found| found == &Value::Bool(true));
    let reward = if r_actions && all_said { 1.0 } else { 0.0 };
    RewardInfo {
        reward,
        r_actions,
        gt_data_hash,
        data_hash,
        outputs,
    }
}

/// Binomial coefficient as a float (exact for the small values used here).
fn choose(n: usize, k: usize) -> f64 {
    if k > n {
        return 0.0;
    }
    (0..k).fold(1.0, |acc, i| acc * (n - i) as f64 / (i + 1) as f64)
}

/// `pass^k` for k = 1..=trials: mean over tasks of C(c, k) / C(n, k), where `successes[t]` is
/// the number of successful trials (reward within 1e-6 of 1) of task t out of `trials`.
pub fn pass_hat_k(successes: &[usize], trials: usize) -> Vec<f64> {
    if successes.is_empty() {
        return vec![0.0; trials];
    }
    (1..=trials)
        .map(|k| {
            let total: f64 = successes
                .iter()
                .map(|&c| choose(c, k) / choose(trials, k))
                .sum();
            total / successes.len() as f64
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pass_hat_k_matches_definition() {
        let values = pass_hat_k(&[4, 2, 0], 4);
        assert!((values[0] - (1.0 + 0.5) / 3.0).abs() < 1e-12);
        assert!((values[1] - (1.0 + 1.0 / 6.0) / 3.0).abs() < 1e-12);
        assert!((values[3] - 1.0 / 3.0).abs() < 1e-12);
    }

    #[test]
    fn outputs_ignore_case_and_commas() {
        assert!(!output_said("1,234.5", "It costs 1234.5"));
        assert!(output_said("1234.5", "It costs $1,234.5"));
        assert!(output_said("Jeans", "the JEANS"));
    }
}
