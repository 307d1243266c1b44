//! BFCL entries as training tasks: shape, split, and agreement of the training reward
//! ([`Outcome`], [`ToolCallFormat`]'s schema check) with the BFCL evaluator on each task's own
//! reference answer.

use std::collections::BTreeMap;

use agent_rl_core::Task;
use agent_rl_eval::bfcl::{
    BfclDataset, BfclEntry, Category, CheckOptions, is_trainable, score_decoded,
    split_train_held_out, tool_calls_to_value, training_task, training_tasks,
};
use agent_rl_rewards::{
    Outcome, Reward, Sample, Target, ToolUseReward, gold_trajectory, validate_arguments,
};

use super::checker::fixture;

/// Per category: (tasks, schema-valid reference, Outcome success, evaluator accepts, agree).
type Tally = BTreeMap<Category, [usize; 5]>;

fn tally(dataset: &BfclDataset, tasks: &[Task]) -> Tally {
    let index = dataset.index();
    let mut tally = Tally::new();
    for task in tasks {
        let entry: &BfclEntry = index[task.id.as_str()];
        let target = Target::from_task(task).expect("target parses");
        let trajectory = gold_trajectory(task, &target);
        let calls: Vec<_> = trajectory.tool_calls().cloned().collect();
        let schema_ok = calls.iter().all(|call| {
            let tool = task.tools.iter().find(|tool| tool.name() == call.name);
            tool.is_some_and(|tool| {
                validate_arguments(&call.name, tool.parameters(), &call.arguments)
                    .expect("schema is valid")
                    .is_empty()
            })
        });
        let success = Outcome::default()
            .succeeded(Sample::new(&trajectory, &target))
            .expect("outcome")
            .expect("calls are judged");
        let verdict = score_decoded(
            entry,
            Ok(tool_calls_to_value(&calls)),
            CheckOptions::default(),
        );
        if !(success && verdict.valid && schema_ok) {
            eprintln!(
                "{}: outcome {success}, evaluator {} ({:?}), schema {schema_ok}",
                task.id, verdict.valid, verdict.error
            );
        }
        let counts = tally.entry(entry.category).or_default();
        counts[0] += 1;
        counts[1] += usize::from(schema_ok);
        counts[2] += usize::from(success);
        counts[3] += usize::from(verdict.valid);
        counts[4] += usize::from(success == verdict.valid);
    }
    tally
}

fn report(tally: &Tally) -> [f64; 4] {
    let mut totals = [0usize; 5];
    eprintln!("| category | tasks | schema-valid | outcome success | evaluator valid | agree |");
    for (category, counts) in tally {
        eprintln!(
            "| {category} | {} | {} | {} | {} | {} |",
            counts[0], counts[1], counts[2], counts[3], counts[4]
        );
        for (total, count) in totals.iter_mut().zip(counts) {
            *total += count;
        }
    }
    let rate = |count: usize| count as f64 / totals[0].max(1) as f64;
    let rates = [
        rate(totals[1]),
        rate(totals[2]),
        rate(totals[3]),
        rate(totals[4]),
    ];
    eprintln!(
        "total {}: schema-valid {:.4}, outcome success {:.4}, evaluator valid {:.4}, agreement {:.4}",
        totals[0], rates[0], rates[1], rates[2], rates[3]
    );
    rates
}

#[test]
fn fixture_entries_become_tasks_whose_reference_answers_succeed() {
    let dataset = fixture();
    let tasks = training_tasks(&dataset, &[], CheckOptions::default()).expect("tasks");
    let trainable = dataset
        .entries()
        .filter(|entry| is_trainable(entry.category))
        .count();
    assert_eq!(tasks.len(), trainable);
    for task in &tasks {
        assert!(!task.messages.is_empty(), "{}", task.id);
        for tool in &task.tools {
            assert_eq!(tool.parameters()["type"], "object", "{}", task.id);
        }
    }
    let irrelevance = tasks
        .iter()
        .find(|task| task.id.starts_with("irrelevance"))
        .expect("an irrelevance task");
    assert_eq!(
        irrelevance.data["target"]["expected_calls"],
        serde_json::json!([])
    );
    let rates = report(&tally(&dataset, &tasks));
    assert_eq!(rates, [1.0; 4], "schema, outcome, evaluator, agreement");

    let error = training_tasks(
        &dataset,
        &[Category::MultiTurnBase],
        CheckOptions::default(),
    )
    .expect_err("multi-turn entries are not single-turn tasks");
    assert!(error.to_string().contains("categories"), "{error}");
}

#[test]
fn split_of_fixture_tasks_is_disjoint_and_complete() {
    let tasks = training_tasks(&fixture(), &[], CheckOptions::default()).expect("tasks");
    let (train, held_out) = split_train_held_out(tasks.clone(), 0.25, 3).expect("split");
    assert_eq!(train.len() + held_out.len(), tasks.len());
    assert!(train.iter().all(|task| !held_out.contains(task)));
}

#[test]
#[ignore = "needs the BFCL data: set AGENT_RL_DATA and pass --include-ignored (.ci/run does)"]
fn real_v4_tasks_reward_and_evaluator_agree() {
    let dir = super::data_dir();
    let dataset = BfclDataset::load(&dir).expect("BFCL data loads");
    let tasks: Vec<Task> = dataset
        .entries()
        .filter(|entry| is_trainable(entry.category))
        .filter_map(|entry| training_task(entry, CheckOptions::default()).ok())
        .collect();
    assert!(tasks.len() > 1000, "only {} tasks", tasks.len());
    let [schema, success, evaluator, agreement] = report(&tally(&dataset, &tasks));
    // BFCL's checker ignores `enum` and accepts `null` for optional parameters; about 5 % of its
    // possible answers (mostly live ones: `null`, "dontcare", "N/A") break their own schema.
    assert!(schema > 0.93, "schema-valid rate {schema}");
    assert!(success > 0.98, "outcome success rate {success}");
    assert!(evaluator > 0.98, "evaluator valid rate {evaluator}");
    assert!(agreement > 0.98, "agreement {agreement}");
}

/// Java entries whose possible answer no output can pass, in v3 and v4 alike: `parts` (36) and
/// `params` (65) are `ArrayList`s of `any` items whose answers hold an int / a bool, but the
/// converter leaves `any` items as strings; `meta` (64) lists a dict whose value is a bare string,
/// not a list of alternatives, so the dict check looks the model's value up among its characters.
const UNPASSABLE_JAVA: [usize; 3] = [36, 64, 65];

/// Every single-turn entry of BFCL v3 and v4 becomes a task but the three unpassable Java
/// entries, and every task's gold answer earns the default [`ToolUseReward`]'s maximum and passes
/// the evaluator.
#[test]
#[ignore = "needs the BFCL data: set AGENT_RL_DATA and pass --include-ignored (.ci/run does)"]
fn every_v3_and_v4_single_turn_entry_becomes_a_task_whose_gold_earns_the_maximum() {
    let reward = ToolUseReward::default();
    let config = reward.config();
    let maximum = config.format_weight + config.arguments_weight + config.outcome_weight;
    for version in ["v3", "v4"] {
        let dataset = BfclDataset::load(&super::data_dir().join(version)).expect("BFCL loads");
        let mut rejected = Vec::new();
        let mut tasks = Vec::new();
        for entry in dataset.entries().filter(|e| is_trainable(e.category)) {
            match training_task(entry, CheckOptions::default()) {
                Ok(task) => tasks.push(task),
                Err(error) => rejected.push((entry.id.clone(), error.to_string())),
            }
        }
        let prefix = if version == "v3" {
            "java"
        } else {
            "simple_java"
        };
        let unpassable: Vec<String> = UNPASSABLE_JAVA
            .iter()
            .map(|index| format!("{prefix}_{index}"))
            .collect();
        let rejected_ids: Vec<&String> = rejected.iter().map(|(id, _)| id).collect();
        assert_eq!(
            rejected_ids,
            unpassable.iter().collect::<Vec<_>>(),
            "{version}: rejected {rejected:#?}"
        );
        let categories: BTreeMap<Category, usize> = dataset
            .counts()
            .into_iter()
            .filter(|(category, _)| is_trainable(*category))
            .collect();
        assert_eq!(
            categories.len(),
            13,
            "{version}: every single-turn category"
        );
        assert_eq!(tasks.len() + 3, categories.values().sum::<usize>());
        let index = dataset.index();
        let mut below = Vec::new();
        for task in &tasks {
            let target = Target::from_task(task).expect("target parses");
            let trajectory = gold_trajectory(task, &target);
            let value = reward
                .score(Sample::new(&trajectory, &target))
                .expect("scores");
            let calls: Vec<_> = trajectory.tool_calls().cloned().collect();
            let verdict = score_decoded(
                index[task.id.as_str()],
                Ok(tool_calls_to_value(&calls)),
                CheckOptions::default(),
            );
            if value.score != Some(maximum) || !verdict.valid {
                below.push(format!(
                    "{}: reward {:?} {:?}, evaluator {:?}",
                    task.id,
                    value.score,
                    value
                        .components
                        .iter()
                        .map(|c| (c.name.as_str(), c.value))
                        .collect::<Vec<_>>(),
                    verdict.error
                ));
            }
        }
        eprintln!("{version}: {} tasks {categories:?}", tasks.len());
        eprintln!(
            "{version}: {} gold answers below the maximum {maximum}:\n{}",
            below.len(),
            below.join("\n")
        );
        // Open gaps (26 in v3): possible answers that break their own doc's schema (a required
        // parameter absent, a value of another type) and parallel answers that BFCL's greedy
        // first-fit matching rejects while the reward's optimal assignment accepts them.
        assert!(
            below.len() <= 30,
            "{version}: {} gold answers below the maximum, at most 30 known",
            below.len()
        );
    }
}
