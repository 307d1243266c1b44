//! The scaffold end to end on the `calc` family (no network, standard-library Python): a scripted
//! agent that inspects, edits and submits is resolved; a wrong fix is not; an agent that never
//! submits ends at the step limit with an empty patch; a hanging command is killed at its
//! limit; writes outside the workspace are refused.

use std::sync::Arc;

use agent_rl_core::{Action, Environment, Role, ToolCall};
use agent_rl_eval::swe::sandbox::sandbox_available;
use agent_rl_eval::swe::{
    GradeStatus, LocalGrader, SweEnvConfig, SweEnvironment, SweEpisode, SweFinish, SweReport,
    SweRunConfig, SweTask, predictions, read_predictions, run_swe, write_predictions,
};
use serde_json::json;

use super::fixture::{BUG, FIX, ScriptedPolicy, WRONG_FIX, calc_grader, calc_task, call};

fn run(
    task: &SweTask,
    grader: &Arc<LocalGrader>,
    script: Vec<agent_rl_core::ParsedOutput>,
    config: SweRunConfig,
) -> SweEpisode {
    let mut policy = ScriptedPolicy::new(script);
    let mut episodes = run_swe(
        &mut policy,
        std::slice::from_ref(task),
        &config,
        Some(Arc::clone(grader)),
        &mut |_, _| {},
    )
    .expect("run");
    assert_eq!(episodes.len(), 1);
    episodes.remove(0)
}

fn fix_script(replacement: &str) -> Vec<agent_rl_core::ParsedOutput> {
    vec![
        call("search", json!({"pattern": "def mean"})),
        call(
            "view",
            json!({"path": "calc/stats.py", "start_line": 4, "end_line": 9}),
        ),
        call(
            "bash",
            json!({"command": "python3 -c 'from calc.stats import mean; print(mean([1, 2, 3, 4]))'"}),
        ),
        call(
            "str_replace",
            json!({"path": "calc/stats.py", "old_str": BUG, "new_str": replacement}),
        ),
        call("submit", json!({})),
    ]
}

#[test]
fn a_scripted_fix_is_resolved_and_reported() {
    let dir = tempfile::tempdir().unwrap();
    let task = calc_task(dir.path());
    let grader = calc_grader(dir.path().join("envs"));
    let episode = run(&task, &grader, fix_script(FIX), SweRunConfig::default());
    let outcome = &episode.outcome;
    assert_eq!(
        outcome.finish_reason,
        SweFinish::Submitted,
        "{:?}",
        episode.messages
    );
    assert_eq!((outcome.steps, outcome.tool_calls), (5, 5));
    assert_eq!(episode.tokens, 50);
    assert!(
        outcome.patch.contains(&format!("+    {FIX}")),
        "{}",
        outcome.patch
    );
    assert!(outcome.patch.contains(&format!("-    {BUG}")));
    // What the agent saw: the search hit, numbered lines, the buggy output.
    let tool_text: Vec<&str> = episode
        .messages
        .iter()
        .filter(|m| m.role == Role::Tool)
        .filter_map(|m| m.content.as_deref())
        .collect();
    assert!(
        tool_text[0].contains("calc/stats.py:4: def mean(values):"),
        "{}",
        tool_text[0]
    );
    assert!(
        tool_text[1].contains("     9\t    return total / (len(values) - 1)"),
        "{}",
        tool_text[1]
    );
    assert!(tool_text[2].contains("3.33"), "{}", tool_text[2]);
    let grade = outcome.grade.as_ref().expect("graded");
    assert_eq!(grade.status, GradeStatus::Resolved, "{grade:#?}");
    assert_eq!(grade.fail_to_pass.success, task.instance.fail_to_pass);

    // The same patch through predictions on disk and the grader again, then the report.
    let preds = predictions(std::slice::from_ref(&episode), "scripted");
    let path = dir.path().join("preds.jsonl");
    write_predictions(&path, &preds).unwrap();
    let read = read_predictions(&path).unwrap();
    assert_eq!(read, preds);
    let regrade = grader.grade(&task.instance, &task.source, &read[0].model_patch);
    assert!(regrade.resolved);
    let report = SweReport::new(&[regrade], std::slice::from_ref(&episode));
    assert_eq!(report.resolved_rate, 1.0);
    assert_eq!(report.empty_patch_rate, 0.0);
    assert_eq!(report.avg_steps, Some(5.0));
    assert!(report.avg_time_to_patch_secs.is_some());
    let json = serde_json::to_value(&report).unwrap();
    assert_eq!(json["instances"][0]["instance_id"], "example__calc-1");
    assert_eq!(json["instances"][0]["status"], "resolved");
}

#[test]
fn a_wrong_fix_is_unresolved_and_the_gold_patch_resolved() {
    let dir = tempfile::tempdir().unwrap();
    let task = calc_task(dir.path());
    let grader = calc_grader(dir.path().join("envs"));
    let episode = run(
        &task,
        &grader,
        fix_script(WRONG_FIX),
        SweRunConfig::default(),
    );
    assert_eq!(episode.outcome.finish_reason, SweFinish::Submitted);
    let grade = episode.outcome.grade.as_ref().expect("graded");
    assert_eq!(grade.status, GradeStatus::Unresolved, "{grade:#?}");
    assert_eq!(grade.fail_to_pass.failure, task.instance.fail_to_pass);
    assert!(grade.pass_to_pass.all_passed());
    let gold = grader.grade(&task.instance, &task.source, &task.instance.patch);
    assert_eq!(gold.status, GradeStatus::Resolved, "{gold:#?}");
    let garbage = "diff --git a/calc/stats.py b/calc/stats.py\n--- a/calc/stats.py\n\
                   +++ b/calc/stats.py\n@@ -40,1 +40,1 @@\n-nothing here\n+x\n";
    let failed = grader.grade(&task.instance, &task.source, garbage);
    assert_eq!(failed.status, GradeStatus::PatchFailed, "{failed:#?}");
}

#[test]
fn an_agent_that_never_submits_ends_at_the_step_limit_with_an_empty_patch() {
    let dir = tempfile::tempdir().unwrap();
    let task = calc_task(dir.path());
    let grader = calc_grader(dir.path().join("envs"));
    let config = SweRunConfig {
        env: SweEnvConfig {
            max_steps: 4,
            ..SweEnvConfig::default()
        },
        ..SweRunConfig::default()
    };
    // It even edits the file, but never submits: only a submitted patch counts.
    let script = vec![call(
        "str_replace",
        json!({"path": "calc/stats.py", "old_str": BUG, "new_str": FIX}),
    )];
    let episode = run(&task, &grader, script, config);
    assert_eq!(episode.outcome.finish_reason, SweFinish::StepLimit);
    assert_eq!(episode.outcome.steps, 4);
    assert_eq!(episode.outcome.patch, "");
    let grade = episode.outcome.grade.clone().expect("graded");
    assert_eq!(grade.status, GradeStatus::EmptyPatch);
    let report = SweReport::new(&[grade], &[episode]);
    assert_eq!((report.resolved_rate, report.empty_patch_rate), (0.0, 1.0));
    assert_eq!(report.avg_time_to_patch_secs, None);

    let tokens = SweRunConfig {
        max_total_tokens: 25,
        ..SweRunConfig::default()
    };
    let episode = run(&task, &grader, Vec::new(), tokens);
    assert_eq!(episode.outcome.finish_reason, SweFinish::TokenLimit);
    assert_eq!((episode.tokens, episode.outcome.steps), (30, 3));
}

fn stepped(task: &SweTask, config: SweEnvConfig) -> SweEnvironment {
    let mut env = SweEnvironment::new(config, None);
    env.reset(&task.to_task("system")).expect("reset");
    env
}

fn tool(
    env: &mut SweEnvironment,
    name: &str,
    arguments: serde_json::Value,
) -> (String, serde_json::Value) {
    let outcome = env
        .step(&Action::ToolCall(ToolCall::new(name, arguments)))
        .expect("step");
    (
        outcome.observation.content.unwrap_or_default(),
        outcome.info,
    )
}

#[test]
fn a_hanging_command_is_killed_at_its_limit() {
    let dir = tempfile::tempdir().unwrap();
    let task = calc_task(dir.path());
    let mut config = SweEnvConfig::default();
    config.aci.command_timeout_secs = 1;
    let mut env = stepped(&task, config);
    let (text, info) = tool(
        &mut env,
        "bash",
        json!({"command": "echo started; sleep 600 & sleep 600; echo never"}),
    );
    assert_eq!(info["timed_out"], true, "{text}");
    assert!(
        text.contains("started") && text.contains("killed"),
        "{text}"
    );
    assert!(!text.contains("never"));
    // The episode goes on: the next command runs normally.
    let (text, info) = tool(&mut env, "bash", json!({"command": "echo alive"}));
    assert_eq!(info["failed"], false, "{text}");
    assert!(text.contains("alive"));
}

#[test]
fn writes_outside_the_workspace_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let task = calc_task(dir.path());
    let outside = tempfile::tempdir().unwrap();
    let target = |name: &str| outside.path().join(name).display().to_string();
    let mut env = stepped(&task, SweEnvConfig::default());
    let root = env.root().expect("workspace").to_path_buf();
    for (name, arguments) in [
        (
            "bash",
            json!({"command": format!("echo x > {}", target("redirect"))}),
        ),
        (
            "bash",
            json!({"command": format!("cp README.md {}", target("copy"))}),
        ),
        (
            "bash",
            json!({"command": format!("cd {} && touch cd", outside.path().display())}),
        ),
        ("create", json!({"path": target("create"), "content": "x"})),
        ("create", json!({"path": "../escape.py", "content": "x"})),
        (
            "str_replace",
            json!({"path": "../calc-repo/README.md", "old_str": "calc", "new_str": "x"}),
        ),
        (
            "insert",
            json!({"path": ".git/config", "line": 0, "text": "x"}),
        ),
    ] {
        let (text, info) = tool(&mut env, name, arguments.clone());
        assert_eq!(info["failed"], true, "{name} {arguments}: {text}");
        assert!(text.contains("refused"), "{name} {arguments}: {text}");
    }
    if sandbox_available() {
        // A write the static check cannot see is stopped by the read-only file system.
        let script = format!("open('{}', 'w').write('x')", target("python"));
        let (text, info) = tool(
            &mut env,
            "bash",
            json!({"command": format!("python3 -c \"{script}\"")}),
        );
        assert_eq!(info["failed"], true, "{text}");
        assert!(text.contains("Read-only file system"), "{text}");
    }
    let escaped: Vec<_> = std::fs::read_dir(outside.path()).unwrap().collect();
    assert!(escaped.is_empty(), "{escaped:?}");
    assert!(!dir.path().join("escape.py").exists());
    let readme = std::fs::read_to_string(task.source.repository.join("README.md")).unwrap();
    assert_eq!(readme, "calc: statistics helpers\n");
    // Inside the tree the same tools work.
    let (text, info) = tool(
        &mut env,
        "create",
        json!({"path": "notes/todo.txt", "content": "x\n"}),
    );
    assert_eq!(info["failed"], false, "{text}");
    assert!(root.join("notes/todo.txt").exists());
    let outcome = env
        .step(&Action::ToolCall(ToolCall::new("submit", json!({}))))
        .unwrap();
    assert!(outcome.done && outcome.reward.is_none());
    let patch = &env.outcome().expect("ended").patch;
    assert!(patch.contains("+++ b/notes/todo.txt"), "{patch}");
}
