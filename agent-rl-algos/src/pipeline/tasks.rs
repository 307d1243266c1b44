//! [`read_tasks`]: GRPO tasks from a JSONL file, one [`Task`] per line.

use std::path::Path;

use agent_rl_core::Task;

use crate::error::{AlgoError, Result};

/// Reads one [`Task`] per line of a JSONL file (blank lines skipped).
///
/// # Errors
/// [`AlgoError::DatasetRead`] for a file that cannot be read; [`AlgoError::DatasetRow`] naming
/// the file and line of a row that is not a task, or the file when it holds no task.
pub fn read_tasks(path: &Path) -> Result<Vec<Task>> {
    let text = std::fs::read_to_string(path).map_err(|source| AlgoError::DatasetRead {
        path: path.to_owned(),
        source,
    })?;
    let mut tasks = Vec::new();
    for (index, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let task: Task = serde_json::from_str(line).map_err(|err| AlgoError::DatasetRow {
            path: path.to_owned(),
            line: index + 1,
            reason: format!("not a task: {err}"),
        })?;
        tasks.push(task);
    }
    if tasks.is_empty() {
        return Err(AlgoError::DatasetRow {
            path: path.to_owned(),
            line: 0,
            reason: "the file has no tasks".into(),
        });
    }
    Ok(tasks)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_line_is_named() -> std::io::Result<()> {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("tasks.jsonl");
        std::fs::write(&path, "\n{\"id\": 1\n")?;
        let err = read_tasks(&path)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(err.contains("tasks.jsonl:2"), "{err}");
        std::fs::write(&path, "\n\n")?;
        let err = read_tasks(&path)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(err.contains("no tasks"), "{err}");
        Ok(())
    }
}
