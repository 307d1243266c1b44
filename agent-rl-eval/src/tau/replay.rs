//! Ground-truth replay: each task's actions on a fresh database, with the observations and the
//! reward — the data of `agent-rl eval tau replay` and of the conformance tests.

use std::path::Path;

use super::data::{ReplayStep, ReplayTask, TauTask, load_json};
use super::domain::{CallStatus, TauDb};
pub use super::reward::TERMINATE_TOOL;
use super::reward::compute_reward;
use crate::{EvalError, Result};

/// Loads `tasks_<split>.json` from a domain folder.
///
/// # Errors
/// [`crate::EvalError::Io`] / [`crate::EvalError::Record`] naming the file, also when it holds
/// no task (a run over nothing would report success).
pub fn load_tasks(domain_dir: &Path, split: &str) -> Result<Vec<TauTask>> {
    let path = domain_dir.join(format!("tasks_{split}.json"));
    let tasks: Vec<TauTask> = load_json(&path)?;
    if tasks.is_empty() {
        return Err(EvalError::Record {
            path,
            line: 1,
            reason: "the task list is empty".into(),
        });
    }
    Ok(tasks)
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
/// required output (the ground truth lists only tool calls, its messages are implied). An action
/// naming no tool of the domain scores 0: it changes nothing on either side of the database
/// comparison, so the hashes alone would call a trajectory that cannot run a success.
pub fn replay_task(initial: &TauDb, task_index: usize, task: &TauTask) -> ReplayTask {
    let (db, steps, statuses) = replay_actions(initial, task);
    let info = compute_reward(initial, task, &db, &task.outputs);
    let unknown_tool = task.actions.iter().zip(&statuses).any(|(action, status)| {
        action.name != "respond" && *status == Some(CallStatus::UnknownTool)
    });
    ReplayTask {
        task_index,
        gt_data_hash: Some(info.gt_data_hash),
        reward: Some(if unknown_tool { 0.0 } else { info.reward }),
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
