//! Fault and mutation cases per tool family on a small hand-written database
//! (`tests/fixtures/tau/`). Expected observations were produced by running the original tools
//! (`make_fault_cases.py`); where the original leaves the database unchanged, so must we.

use std::path::PathBuf;

use agent_rl_eval::tau::data::load_json;
use agent_rl_eval::tau::{Domain, TauDb};
use serde::Deserialize;
use serde_json::Value;

#[derive(Deserialize)]
struct Setup {
    name: String,
    kwargs: Value,
}

#[derive(Deserialize)]
struct Case {
    domain: Domain,
    family: String,
    setup: Vec<Setup>,
    name: String,
    kwargs: Value,
    observation: String,
    unchanged: bool,
}

/// The hand-written fixture folder.
pub fn fixture_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tau")
}

#[test]
fn tool_faults_match_original_and_leave_database_unchanged() {
    let dir = fixture_dir();
    let cases: Vec<Case> = load_json(&dir.join("fault_cases.json")).expect("cases");
    let retail = TauDb::load(Domain::Retail, &dir.join("retail")).expect("retail fixture");
    let airline = TauDb::load(Domain::Airline, &dir.join("airline")).expect("airline fixture");
    let mut failures = Vec::new();
    for (index, case) in cases.iter().enumerate() {
        let mut db = match case.domain {
            Domain::Retail => retail.clone(),
            Domain::Airline => airline.clone(),
        };
        for action in &case.setup {
            db.call(&action.name, &action.kwargs);
        }
        let before = db.clone();
        let outcome = db.call(&case.name, &case.kwargs);
        if outcome.observation != case.observation {
            failures.push(format!(
                "case {index} ({} {}):\n  got  {}\n  want {}",
                case.family, case.name, outcome.observation, case.observation
            ));
        }
        if case.unchanged && (db != before || db.data_hash() != before.data_hash()) {
            failures.push(format!(
                "case {index} ({} {}): database changed",
                case.family, case.name
            ));
        }
        if !case.unchanged && db == before {
            failures.push(format!(
                "case {index} ({} {}): database not changed",
                case.family, case.name
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A ground-truth action naming no tool changes no database, so the hash comparison alone would
/// score the replay a success.
#[test]
fn replay_with_an_unknown_action_scores_zero() {
    use agent_rl_eval::tau::data::TauAction;
    use agent_rl_eval::tau::{load_tasks, replay_task};

    let dir = fixture_dir().join("retail");
    let db = TauDb::load(Domain::Retail, &dir).expect("retail fixture");
    let mut task = load_tasks(&dir, "test").expect("tasks").remove(0);
    assert_eq!(replay_task(&db, 0, &task).reward, Some(1.0));
    task.actions.push(TauAction {
        name: "no_such_tool".into(),
        kwargs: serde_json::json!({}),
    });
    assert_eq!(replay_task(&db, 0, &task).reward, Some(0.0));
}

#[test]
fn an_empty_task_list_is_an_error_naming_the_file() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("tasks_test.json"), "[]").expect("write");
    let error = agent_rl_eval::tau::load_tasks(dir.path(), "test")
        .expect_err("no tasks")
        .to_string();
    assert!(
        error.contains("tasks_test.json") && error.contains("empty"),
        "{error}"
    );
}
