//! Bad input through the CLI: a clear error and a non-zero exit, never a panic or a hang; and
//! the output a newcomer expects off a terminal.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use agent_rl::core::Qwen2Config;
use agent_rl::core::weights::{SaveOptions, random_model, save_pretrained};

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("agent-rl-core/tests/fixtures/qwen2_tiny")
}

fn bfcl_data() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("agent-rl-eval/tests/fixtures/bfcl/data")
}

fn agent_rl(args: &[&str], env: &[(&str, &Path)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_agent-rl"));
    command.args(args).env_remove("AGENT_RL_DATA");
    for (key, value) in env {
        command.env(key, value);
    }
    command.output().unwrap()
}

/// Runs a command that must fail cleanly; returns its stderr.
fn fails(args: &[&str]) -> String {
    let started = Instant::now();
    let output = agent_rl(args, &[]);
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(!output.status.success(), "{args:?} succeeded");
    assert!(
        !stderr.contains("panicked") && output.status.code().is_some(),
        "{args:?} panicked or was killed: {stderr}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "{args:?} took {:?}",
        started.elapsed()
    );
    stderr
}

fn model() -> String {
    fixtures().join("tied_f32").to_str().unwrap().to_owned()
}

#[test]
fn token_ids_outside_the_vocabulary_are_refused() {
    let model = model();
    for ids in ["1,2,99999", "4294967295", "384"] {
        let stderr = fails(&[
            "generate",
            "--model",
            &model,
            "--prompt-ids",
            ids,
            "--max-new-tokens",
            "2",
        ]);
        let bad = ids.rsplit(',').next().unwrap();
        assert!(
            stderr.contains(&format!("token id {bad}")) && stderr.contains("384"),
            "{ids}: {stderr}"
        );
        let stderr = fails(&["logprobs", "--model", &model, "--ids", ids]);
        assert!(
            stderr.contains(bad) && stderr.contains("384"),
            "{ids}: {stderr}"
        );
    }
    let stderr = fails(&["logprobs", "--model", &model, "--ids", "4294967296"]);
    assert!(stderr.contains("not a token id"), "{stderr}");
}

#[test]
fn a_tokenizer_larger_than_the_embedding_is_refused_at_load() {
    let dir = tempfile::tempdir().unwrap();
    let config = Qwen2Config {
        vocab_size: 256,
        ..Qwen2Config::tiny()
    };
    let model = random_model::<burn::backend::Flex>(&config, 0, 0.1, &Default::default()).unwrap();
    save_pretrained(&model, dir.path(), SaveOptions::default()).unwrap();
    for file in [
        "tokenizer.json",
        "tokenizer_config.json",
        "chat_template.jinja",
    ] {
        std::fs::copy(
            fixtures().join("tied_f32").join(file),
            dir.path().join(file),
        )
        .unwrap();
    }
    let stderr = fails(&[
        "generate",
        "--model",
        dir.path().to_str().unwrap(),
        "--prompt",
        "hello",
        "--max-new-tokens",
        "2",
    ]);
    assert!(
        stderr.contains("384") && stderr.contains("256") && stderr.contains("tokenizer.json"),
        "{stderr}"
    );
}

#[test]
fn prompt_sources_are_mutually_exclusive() {
    let dir = tempfile::tempdir().unwrap();
    let messages = dir.path().join("messages.json");
    std::fs::write(&messages, r#"[{"role": "user", "content": "hi"}]"#).unwrap();
    let model = model();
    let messages = messages.to_str().unwrap();
    for extra in [
        ["--prompt", "hi", "--messages", messages],
        ["--prompt-ids", "1,2", "--messages", messages],
        ["--prompt", "hi", "--prompt-ids", "1"],
    ] {
        let mut args = vec!["generate", "--model", &model, "--max-new-tokens", "1"];
        args.extend(extra);
        let output = agent_rl(&args, &[]);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{extra:?}: {stderr}");
        assert!(stderr.contains("cannot be used with"), "{stderr}");
    }
}

#[test]
fn an_endless_chat_template_fails_naming_its_file() {
    let dir = tempfile::tempdir().unwrap();
    for file in ["tokenizer.json", "tokenizer_config.json"] {
        std::fs::copy(
            fixtures().join("tied_f32").join(file),
            dir.path().join(file),
        )
        .unwrap();
    }
    std::fs::write(
        dir.path().join("chat_template.jinja"),
        "{% for a in range(100000) %}{% for b in range(100000) %}{{ a }}{% endfor %}{% endfor %}",
    )
    .unwrap();
    let messages = dir.path().join("messages.json");
    std::fs::write(&messages, r#"[{"role": "user", "content": "hi"}]"#).unwrap();
    let stderr = fails(&[
        "chat-template",
        "--model",
        dir.path().to_str().unwrap(),
        "--messages",
        messages.to_str().unwrap(),
    ]);
    assert!(
        stderr.contains("chat_template.jinja") && stderr.contains("fuel"),
        "{stderr}"
    );
}

#[test]
fn bfcl_results_with_duplicate_ids_or_none_fail() {
    let dir = tempfile::tempdir().unwrap();
    let data = bfcl_data();
    let verdicts = dir.path().join("verdicts.jsonl");
    let score = |results: &Path| {
        fails(&[
            "eval",
            "bfcl",
            "--data",
            data.to_str().unwrap(),
            "--results",
            results.to_str().unwrap(),
            "--verdicts",
            verdicts.to_str().unwrap(),
        ])
    };
    let duplicate = dir.path().join("duplicate.jsonl");
    std::fs::write(
        &duplicate,
        "{\"id\": \"irrelevance_0\", \"result\": \"no\"}\n{\"id\": \"irrelevance_0\", \"result\": \"no\"}\n",
    )
    .unwrap();
    let stderr = score(&duplicate);
    assert!(
        stderr.contains("duplicate id \"irrelevance_0\"") && stderr.contains("duplicate.jsonl:2"),
        "{stderr}"
    );
    let empty = dir.path().join("empty.jsonl");
    std::fs::write(&empty, "").unwrap();
    let stderr = score(&empty);
    assert!(stderr.contains("no results"), "{stderr}");
}

#[test]
fn agent_rl_data_stands_in_for_data() {
    // A benchmark root laid out like ../shared/data: bfcl/<files>, tau_bench/<domain>/.
    let root = tempfile::tempdir().unwrap();
    copy_dir(&bfcl_data(), &root.path().join("bfcl"));
    copy_dir(
        &PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("agent-rl-eval/tests/fixtures/tau"),
        &root.path().join("tau_bench"),
    );
    let results = root.path().join("results.jsonl");
    std::fs::write(
        &results,
        "{\"id\": \"irrelevance_0\", \"result\": \"no call\"}\n",
    )
    .unwrap();
    let verdicts = root.path().join("verdicts.jsonl");
    let output = agent_rl(
        &[
            "eval",
            "bfcl",
            "--results",
            results.to_str().unwrap(),
            "--verdicts",
            verdicts.to_str().unwrap(),
        ],
        &[("AGENT_RL_DATA", root.path())],
    );
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(String::from_utf8_lossy(&output.stdout).contains("irrelevance"));

    // `eval tau replay` with the variable only, printing a result line on success.
    let out = root.path().join("replay.json");
    let output = agent_rl(
        &[
            "eval",
            "tau",
            "replay",
            "--domain",
            "retail",
            "--out",
            out.to_str().unwrap(),
        ],
        &[("AGENT_RL_DATA", root.path())],
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        stdout.starts_with("replayed ") && stdout.contains("mean reward 1.0000"),
        "{stdout}"
    );
    assert!(out.is_file());

    // Without the variable or the flag: clap names the missing flag.
    let output = agent_rl(
        &[
            "eval", "tau", "replay", "--domain", "retail", "--out", "x.json",
        ],
        &[],
    );
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("--data"));
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

#[test]
fn run_files_with_impossible_sizes_fail_at_once() {
    let dir = tempfile::tempdir().unwrap();
    for (name, text, expected) in [
        (
            "generations.toml",
            "[model]\ntiny = true\n[data]\ntoy = 4\n[grpo]\nnum_generations = 1000000000\n",
            "num_generations",
        ),
        (
            "toy.toml",
            "[model]\ntiny = true\n[data]\ntoy = 1000000000000\n",
            "toy = 1000000000000",
        ),
        (
            "every.toml",
            "[model]\ntiny = true\n[data]\ntoy = 4\n[run]\ncheckpoint_every = 0\n",
            "checkpoint_every = 0",
        ),
    ] {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        let stderr = fails(&["train", "grpo", "--config", path.to_str().unwrap()]);
        assert!(
            stderr.contains(expected) && stderr.contains(name),
            "{name}: {stderr}"
        );
    }
}

/// Off a terminal (stderr piped), training writes plain progress lines to stderr.
#[test]
fn progress_is_reported_off_a_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let run_dir = dir.path().join("run");
    let path = dir.path().join("sft.toml");
    std::fs::write(
        &path,
        format!(
            "[model]\ntiny = true\n[data]\ntoy = 8\n[run]\ndir = {:?}\n[sft]\nmax_steps = 3\n\
             batch_size = 4\neval_fraction = 0.0\n",
            run_dir.to_str().unwrap()
        ),
    )
    .unwrap();
    let output = agent_rl(&["train", "sft", "--config", path.to_str().unwrap()], &[]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    for step in 1..=3 {
        assert!(
            stderr
                .lines()
                .any(|line| line.starts_with(&format!("SFT {step}/3 loss "))),
            "step {step}: {stderr}"
        );
    }
}
