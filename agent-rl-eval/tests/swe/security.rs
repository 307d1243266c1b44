//! The scaffold against a hostile agent, through the tool-call path a policy uses: git config
//! written by the agent runs nothing on the host at `submit`; links out of the tree (dangling
//! ones included) are not followed by the file tools; the agent's commands see none of the
//! host's variables; FIFOs are refused at once and the wall-time budget bounds an episode; a
//! flood of output does not grow the process's memory; no process outlives its command.

use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use agent_rl_core::{Action, Environment, ToolCall};
use agent_rl_eval::swe::sandbox::sandbox_available;
use agent_rl_eval::swe::{SweEnvConfig, SweEnvironment, SweFinish, SweRunConfig, SweTask, run_swe};
use serde_json::{Value, json};

use super::fixture::{BUG, FIX, ScriptedPolicy, calc_grader, calc_task, call};

/// Set in a child test process started by [`in_child`].
const CHILD: &str = "AGENT_RL_SECURITY_TEST_CHILD";

fn stepped(task: &SweTask, config: SweEnvConfig) -> SweEnvironment {
    let mut env = SweEnvironment::new(config, None);
    env.reset(&task.to_task("system")).expect("reset");
    env
}

fn tool(env: &mut SweEnvironment, name: &str, arguments: Value) -> (String, bool) {
    let outcome = env
        .step(&Action::ToolCall(ToolCall::new(name, arguments)))
        .expect("step");
    let failed = outcome.info["failed"] == true;
    (outcome.observation.content.unwrap_or_default(), failed)
}

fn submit(env: &mut SweEnvironment) -> String {
    let outcome = env
        .step(&Action::ToolCall(ToolCall::new("submit", json!({}))))
        .expect("submit");
    assert!(outcome.done);
    env.outcome().expect("ended").patch.clone()
}

/// True when the namespace sandbox runs here; where it does not, the tests that need it are
/// skipped with a note, except on CI (`CI` set), where they fail.
fn sandboxed_or_skip(test: &str) -> bool {
    if sandbox_available() {
        return true;
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "{test}: user namespaces (unshare -Urmn --pid) are unavailable on CI"
    );
    eprintln!("{test}: skipped, user namespaces are unavailable on this machine");
    false
}

/// Runs the test `name` of this binary alone in a child process with `envs` (and [`CHILD`] set)
/// and asserts that it passes; returns false, so the caller returns, unless this is the child.
fn in_child(name: &str, envs: &[(&str, &str)]) -> bool {
    if std::env::var_os(CHILD).is_some() {
        return true;
    }
    let exe = std::env::current_exe().expect("the test binary");
    let out = Command::new(exe)
        .args([name, "--exact", "--nocapture", "--test-threads", "1"])
        .env(CHILD, "1")
        .envs(envs.iter().copied())
        .output()
        .expect("the test binary runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{name} in a child process:\n{text}");
    assert!(text.contains("1 passed"), "{name} did not run:\n{text}");
    false
}

#[test]
fn git_config_written_by_the_agent_runs_nothing_on_the_host_at_submit() {
    let dir = tempfile::tempdir().unwrap();
    let task = calc_task(dir.path());
    let outside = tempfile::tempdir().unwrap();
    let marker = |name: &str| outside.path().join(name).display().to_string();
    let hooks = outside.path().join("hooks");
    std::fs::create_dir_all(&hooks).unwrap();
    for hook in ["pre-commit", "post-index-change", "reference-transaction"] {
        let file = hooks.join(hook);
        std::fs::write(&file, format!("#!/bin/sh\ntouch {}\n", marker(hook))).unwrap();
        let status = Command::new("chmod").arg("+x").arg(&file).status().unwrap();
        assert!(status.success());
    }
    let mut env = stepped(&task, SweEnvConfig::default());
    let commands = [
        format!("git config core.fsmonitor 'touch {}'", marker("fsmonitor")),
        format!(
            "git config filter.evil.clean 'touch {}; cat'",
            marker("clean")
        ),
        format!(
            "git config filter.evil.smudge 'touch {}; cat'",
            marker("smudge")
        ),
        format!(
            "git config diff.evil.textconv 'touch {}; cat'",
            marker("textconv")
        ),
        format!("git config diff.external 'touch {}'", marker("external")),
        format!("git config core.hooksPath {}", hooks.display()),
        "printf '* filter=evil diff=evil\\n' > .gitattributes".into(),
        "printf '* filter=evil diff=evil\\n' > .git/info/attributes".into(),
    ];
    for command in &commands {
        let (text, failed) = tool(&mut env, "bash", json!({ "command": command }));
        assert!(!failed, "{command}: {text}");
    }
    let (text, failed) = tool(
        &mut env,
        "str_replace",
        json!({"path": "calc/stats.py", "old_str": BUG, "new_str": FIX}),
    );
    assert!(!failed, "{text}");
    let patch = submit(&mut env);
    let ran: Vec<String> = std::fs::read_dir(outside.path())
        .unwrap()
        .filter_map(Result::ok)
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .filter(|name| name != "hooks")
        .collect();
    assert!(
        ran.is_empty(),
        "the host ran the agent's git commands: {ran:?}"
    );
    // The patch is still the agent's change, computed without its config.
    assert!(patch.contains(&format!("+    {FIX}")), "{patch}");
    assert!(patch.contains("+++ b/.gitattributes"), "{patch}");
}

#[test]
fn links_out_of_the_tree_are_not_followed_by_the_file_tools() {
    let dir = tempfile::tempdir().unwrap();
    let task = calc_task(dir.path());
    let outside = tempfile::tempdir().unwrap();
    let secret = outside.path().join("secret.txt");
    std::fs::write(&secret, "secret = 1\n").unwrap();
    let mut env = stepped(&task, SweEnvConfig::default());
    let out = outside.path().display();
    // `sh -c` hides the link targets from the static check of commands.
    let links = format!(
        "sh -c 'ln -s {out}/evil.py evil.py; ln -s {out}/newdir/x.py deep.py; ln -s {out} outdir; \
         ln -s {out}/secret.txt secret.txt; ln -s calc/stats.py inside.py'"
    );
    let (text, failed) = tool(&mut env, "bash", json!({ "command": links }));
    assert!(!failed, "{text}");
    for (name, arguments) in [
        ("create", json!({"path": "evil.py", "content": "x = 1\n"})),
        ("create", json!({"path": "deep.py", "content": "x = 1\n"})),
        (
            "create",
            json!({"path": "outdir/new.py", "content": "x = 1\n"}),
        ),
        (
            "create",
            json!({"path": "outdir/sub/new.py", "content": "x = 1\n"}),
        ),
        ("view", json!({"path": "secret.txt"})),
        ("view", json!({"path": "outdir"})),
        ("view", json!({"path": "outdir/secret.txt"})),
        (
            "str_replace",
            json!({"path": "secret.txt", "old_str": "1", "new_str": "2"}),
        ),
        (
            "insert",
            json!({"path": "outdir/secret.txt", "line": 0, "text": "x"}),
        ),
        ("search", json!({"pattern": "secret", "path": "outdir"})),
    ] {
        let (text, failed) = tool(&mut env, name, arguments.clone());
        assert!(failed, "{name} {arguments}: {text}");
        assert!(!text.contains("secret = "), "{name} {arguments}: {text}");
    }
    let (text, _) = tool(&mut env, "search", json!({"pattern": "secret ="}));
    assert!(text.starts_with("no match"), "{text}");
    let left: Vec<_> = std::fs::read_dir(outside.path()).unwrap().collect();
    assert_eq!(left.len(), 1, "{left:?}");
    assert_eq!(std::fs::read_to_string(&secret).unwrap(), "secret = 1\n");
    // A link that stays in the tree is followed.
    let (text, failed) = tool(
        &mut env,
        "view",
        json!({"path": "inside.py", "end_line": 4}),
    );
    assert!(!failed && text.contains("def mean"), "{text}");
}

#[test]
fn the_agent_commands_see_no_host_variable() {
    let key = "sk-agent-rl-test-4d1c";
    if !in_child(
        "swe::security::the_agent_commands_see_no_host_variable",
        &[("AGENT_RL_API_KEY", key), ("SOME_HOST_TOKEN", key)],
    ) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let task = calc_task(dir.path());
    let mut env = stepped(&task, SweEnvConfig::default());
    let (text, failed) = tool(&mut env, "bash", json!({"command": "env; echo end-of-env"}));
    assert!(!failed && text.contains("end-of-env"), "{text}");
    assert!(!text.contains(key), "{text}");
    let names: Vec<&str> = text
        .lines()
        .filter_map(|line| line.split_once('=').map(|(name, _)| name))
        .collect();
    for (name, value) in std::env::vars() {
        let passed = ["PATH", "LANG", "LC_ALL", "LC_CTYPE", "PWD", "SHLVL", "_"];
        if !passed.contains(&name.as_str()) && value.len() > 3 {
            assert!(
                !text.contains(&format!("{name}={value}")),
                "{name} reached the agent: {text}"
            );
        }
    }
    assert!(names.contains(&"HOME"), "{text}");
    let home = text
        .lines()
        .find_map(|line| line.strip_prefix("HOME="))
        .unwrap_or_default();
    assert!(
        Path::new(home).starts_with(env.root().unwrap().parent().unwrap()),
        "HOME={home}"
    );
}

/// Runs `steps` on a fresh environment in a thread; panics when they take more than `limit`.
fn within(limit: Duration, steps: impl FnOnce() + Send + 'static) {
    let (done, finished) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        steps();
        let _ = done.send(());
    });
    match finished.recv_timeout(limit) {
        Ok(()) => {}
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
            panic!("the tools did not return within {limit:?}")
        }
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => panic!("the tools panicked"),
    }
}

#[test]
fn fifos_are_refused_at_once_and_the_wall_time_bounds_an_episode() {
    within(Duration::from_secs(30), || {
        let dir = tempfile::tempdir().unwrap();
        let task = calc_task(dir.path());
        let mut env = stepped(&task, SweEnvConfig::default());
        let (text, failed) = tool(&mut env, "bash", json!({"command": "mkfifo p calc/q"}));
        assert!(!failed, "{text}");
        for (name, arguments) in [
            ("view", json!({"path": "p"})),
            (
                "str_replace",
                json!({"path": "p", "old_str": "a", "new_str": "b"}),
            ),
            ("insert", json!({"path": "calc/q", "line": 0, "text": "x"})),
            ("search", json!({"pattern": "x", "path": "p"})),
        ] {
            let (text, failed) = tool(&mut env, name, arguments.clone());
            assert!(failed, "{name} {arguments}: {text}");
            assert!(text.contains("FIFO"), "{name} {arguments}: {text}");
        }
        let (text, failed) = tool(&mut env, "search", json!({"pattern": "def mean"}));
        assert!(!failed && text.contains("calc/stats.py:4"), "{text}");
        submit(&mut env);
    });
    // An episode whose command would run for minutes ends at its wall-time budget.
    within(Duration::from_secs(30), || {
        let dir = tempfile::tempdir().unwrap();
        let task = calc_task(dir.path());
        let grader = calc_grader(dir.path().join("envs"));
        let mut config = SweRunConfig::default();
        config.env.max_wall_secs = 2;
        let script = vec![call("bash", json!({"command": "sleep 300"}))];
        let mut policy = ScriptedPolicy::new(script);
        let started = Instant::now();
        let episodes = run_swe(
            &mut policy,
            std::slice::from_ref(&task),
            &config,
            Some(Arc::clone(&grader)),
            &mut |_, _| {},
        )
        .expect("run");
        assert_eq!(episodes[0].outcome.finish_reason, SweFinish::TimeLimit);
        assert!(started.elapsed() < Duration::from_secs(30));
    });
}

/// The process's peak resident memory in kB (`VmHWM`).
fn peak_rss_kb() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmHWM in /proc/self/status")
}

#[test]
fn a_flood_of_output_does_not_grow_memory() {
    // Alone in a child process, so that no other test's memory counts.
    if !in_child("swe::security::a_flood_of_output_does_not_grow_memory", &[]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let task = calc_task(dir.path());
    let mut env = stepped(&task, SweEnvConfig::default());
    let (text, _) = tool(&mut env, "bash", json!({"command": "echo warm"}));
    assert!(text.contains("warm"), "{text}");
    let before = peak_rss_kb();
    let (text, failed) = tool(
        &mut env,
        "bash",
        json!({"command": "echo first; head -c 200000000 /dev/zero | tr '\\0' x; echo; echo last"}),
    );
    let grown_kb = peak_rss_kb().saturating_sub(before);
    assert!(!failed, "{}", &text[..text.len().min(500)]);
    assert!(text.starts_with("first") && text.trim_end().ends_with("last"));
    assert!(text.contains("bytes cut") && text.len() < 20_000);
    assert!(
        grown_kb < 32 << 10,
        "200 MB of output grew the peak memory by {grown_kb} kB"
    );
}

/// Host processes whose command line holds `needle` as an argument.
fn processes_with_argument(needle: &str) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .filter_map(|entry| std::fs::read(entry.path().join("cmdline")).ok())
        .filter(|cmdline| {
            cmdline
                .split(|&byte| byte == 0)
                .any(|arg| arg == needle.as_bytes())
        })
        .map(|cmdline| String::from_utf8_lossy(&cmdline).replace('\0', " "))
        .collect()
}

#[test]
fn no_process_outlives_its_command() {
    if !sandboxed_or_skip("no_process_outlives_its_command") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let task = calc_task(dir.path());
    let mut env = stepped(&task, SweEnvConfig::default());
    let seconds = format!("{}", 280 + std::process::id() % 1000);
    let command = format!(
        "setsid sleep {seconds} > /dev/null 2>&1 < /dev/null & \
         nohup sleep {seconds} > /dev/null 2>&1 & (sleep {seconds} &) ; echo started"
    );
    let (text, failed) = tool(&mut env, "bash", json!({ "command": command }));
    assert!(!failed && text.contains("started"), "{text}");
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut left = processes_with_argument(&seconds);
    while !left.is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
        left = processes_with_argument(&seconds);
    }
    assert!(left.is_empty(), "outlived the command: {left:?}");
}
