//! Replays the ground truth of the real splits and compares with the `gt_replay_*.json` files
//! made by the original package: every observation byte for byte, every final database hash,
//! and a reward of 1.0 for each ground-truth trajectory. Ignored unless run with
//! `--include-ignored` and `AGENT_RL_DATA`.
#![allow(clippy::print_stderr)]

use std::path::PathBuf;

use agent_rl_eval::tau::data::{ReplayFile, domain_dir, load_json};
use agent_rl_eval::tau::{CallStatus, Domain, TauDb, load_tasks, replay_actions, replay_task};

/// `$AGENT_RL_DATA/tau_bench`. The tests that read it are `#[ignore]`d (reported as ignored by
/// a plain `cargo test`); with `--include-ignored` a missing folder fails them.
fn tau_data() -> PathBuf {
    let root = std::env::var_os("AGENT_RL_DATA")
        .expect("AGENT_RL_DATA must name the benchmark data folder (e.g. ../shared/data)");
    let dir = PathBuf::from(root).join("tau_bench");
    assert!(
        dir.is_dir(),
        "AGENT_RL_DATA is set but {} does not exist",
        dir.display()
    );
    dir
}

fn check_split(domain: Domain, split: &str) {
    let data = tau_data();
    let dir = domain_dir(&data, domain.as_str()).expect("domain folder");
    let db = TauDb::load(domain, &dir).expect("database");
    let tasks = load_tasks(&dir, split).expect("tasks");
    let expected: ReplayFile =
        load_json(&dir.join(format!("gt_replay_{split}.json"))).expect("replay file");
    assert_eq!(
        Some(db.data_hash()),
        expected.initial_data_hash,
        "initial hash"
    );
    assert_eq!(tasks.len(), expected.tasks.len());
    let (mut observations, mut matched, mut rewards) = (0, 0, 0);
    let mut failures = Vec::new();
    for (index, (task, want)) in tasks.iter().zip(&expected.tasks).enumerate() {
        let got = replay_task(&db, index, task);
        assert_eq!(got.steps.len(), want.steps.len());
        for (step, (got_step, want_step)) in got.steps.iter().zip(&want.steps).enumerate() {
            observations += 1;
            if got_step.observation == want_step.observation {
                matched += 1;
            } else if failures.len() < 5 {
                failures.push(format!(
                    "task {index} step {step} {}:\n  got  {:?}\n  want {:?}",
                    got_step.name, got_step.observation, want_step.observation
                ));
            }
        }
        if got.gt_data_hash != want.gt_data_hash && failures.len() < 5 {
            failures.push(format!("task {index}: final hash differs"));
        }
        if got.reward == Some(1.0) && got.gt_data_hash == want.gt_data_hash {
            rewards += 1;
        }
    }
    eprintln!(
        "τ-bench {} {split}: observations {matched}/{observations}, reward 1.0 and hash {rewards}/{}",
        domain.as_str(),
        tasks.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert_eq!(matched, observations);
    assert_eq!(rewards, tasks.len());
}

#[test]
#[ignore = "needs the τ-bench data: set AGENT_RL_DATA and pass --include-ignored (.ci/run does)"]
fn retail_test_split_matches_original() {
    check_split(Domain::Retail, "test");
}

#[test]
#[ignore = "needs the τ-bench data: set AGENT_RL_DATA and pass --include-ignored (.ci/run does)"]
fn retail_dev_split_matches_original() {
    check_split(Domain::Retail, "dev");
}

#[test]
#[ignore = "needs the τ-bench data: set AGENT_RL_DATA and pass --include-ignored (.ci/run does)"]
fn airline_test_split_matches_original() {
    check_split(Domain::Airline, "test");
}

#[test]
#[ignore = "needs the τ-bench data: set AGENT_RL_DATA and pass --include-ignored (.ci/run does)"]
fn retail_train_split_replays_without_raised_errors() {
    let data = tau_data();
    let dir = domain_dir(&data, "retail").expect("retail folder");
    let db = TauDb::load(Domain::Retail, &dir).expect("database");
    let tasks = load_tasks(&dir, "train").expect("tasks");
    assert_eq!(tasks.len(), 500);
    let mut tool_errors = 0;
    for (index, task) in tasks.iter().enumerate() {
        let (_, steps, statuses) = replay_actions(&db, task);
        for (step, status) in steps.iter().zip(statuses) {
            match status {
                Some(CallStatus::Ok) | None => {}
                Some(CallStatus::ToolError) => tool_errors += 1,
                Some(other) => panic!(
                    "task {index} {}: {other:?} {:?}",
                    step.name, step.observation
                ),
            }
        }
    }
    eprintln!("τ-bench retail train: {tool_errors} tool errors returned by the tools themselves");
}
