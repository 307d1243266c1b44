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
