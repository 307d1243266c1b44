//! Ground-truth replay: each task's actions on a fresh database, with the observations and the
//! reward — the data of `agent-rl eval tau replay` and of the conformance tests.

use std::path::Path;

use super::data::{ReplayStep, ReplayTask, TauTask, load_json};
use super::domain::{CallStatus, TauDb};
pub use super::reward::TERMINATE_TOOL;
use super::reward::compute_reward;
use crate::Result;

/// Loads `tasks_<split>.json` from a domain folder.
///
/// # Errors
/// [`crate::EvalError::Io`] / [`crate::EvalError::Record`] naming the file.
pub fn load_tasks(domain_dir: &Path, split: &str) -> Result<Vec<TauTask>> {
    load_json(&domain_dir.join(format!("tasks_{split}.json")))
}

/// Replays the task's actions on a copy of `initial`, as the reward does: the terminate tool is
/// skipped (observation `None`). Returns the final database, the steps and each call's status.
pub fn replay_actions(
    initial: &TauDb,
    task: &TauTask,
) -> (TauDb, Vec<ReplayStep>, Vec<Option<CallStatus>>) {
    let mut db = initial.clone();
    let mut steps = Vec::with_capacity(task.actions.len());
    let mut statuses = Vec::with_capacity(task.actions.len());
    for action in &task.actions {
        let (observation, status) = if action.name == TERMINATE_TOOL {
            (None, None)
        } else {
            let outcome = db.call(&action.name, &action.kwargs);
            (Some(outcome.observation), Some(outcome.status))
        };
        steps.push(ReplayStep {
            name: action.name.clone(),
            kwargs: action.kwargs.clone(),
            observation,
        });
        statuses.push(status);
    }
    (db, steps, statuses)
}

/// Replays one task and scores the ground-truth trajectory; the trajectory is taken to say every
/// required output (the ground truth lists only tool calls, its messages are implied).
pub fn replay_task(initial: &TauDb, task_index: usize, task: &TauTask) -> ReplayTask {
    let (db, steps, _) = replay_actions(initial, task);
    let info = compute_reward(initial, task, &db, &task.outputs);
    ReplayTask {
        task_index,
        gt_data_hash: Some(info.gt_data_hash),
        reward: Some(info.reward),
        steps,
    }
}

/// Replays every task of a split.
pub fn replay_split(initial: &TauDb, tasks: &[TauTask]) -> Vec<ReplayTask> {
    tasks
        .iter()
        .enumerate()
        .map(|(index, task)| replay_task(initial, index, task))
        .collect()
}
