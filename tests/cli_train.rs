//! `agent-rl train sft|grpo`: run files, run directories, resuming.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

fn agent_rl(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_agent-rl"))
        .args(args)
        .output()
        .unwrap()
}

fn succeed(args: &[&str]) -> String {
    let output = agent_rl(args);
    assert!(
        output.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn lines(path: &Path) -> usize {
    std::fs::read_to_string(path).unwrap().lines().count()
}

fn write_run_file(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

fn assert_final_model(run: &Path) {
    for file in ["config.json", "model.safetensors", "tokenizer.json"] {
        assert!(
            run.join("final_model").join(file).is_file(),
            "final_model/{file}"
        );
    }
}

#[test]
fn train_run_file_with_misspelled_key_fails_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_run_file(
        dir.path(),
        "typo.toml",
        "[model]\ntiny = true\n[data]\ntoy = 4\n[grpo]\nnum_generation = 8\n",
    );
    let output = agent_rl(&["train", "grpo", "--config", path.to_str().unwrap()]);
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("unknown field `num_generation`"),
        "{stderr}"
    );
    assert!(
        stderr.contains("typo.toml") && stderr.contains("line 6"),
        "{stderr}"
    );
}

#[test]
fn train_committed_example_configs_resolve() {
    let configs = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples/configs");
    for (trainer, file) in [
        ("sft", "sft_toy.toml"),
        ("grpo", "grpo_toy.toml"),
        ("grpo", "grpo_qwen25.toml"),
    ] {
        let path = configs.join(file);
        let out = succeed(&[
            "train",
            trainer,
            "--config",
            path.to_str().unwrap(),
            "--print-config",
        ]);
        let resolved: Value = serde_json::from_str(&out).unwrap();
        assert!(resolved["run"]["dir"].is_string(), "{file}: {resolved}");
        if trainer == "grpo" {
            assert_eq!(resolved["grpo"]["num_generations"], 8, "{file}");
            assert_eq!(resolved["reward"]["outcome_weight"], 2.0, "{file}");
        }
    }
}

#[test]
fn train_sft_writes_config_metrics_and_final_model() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    let path = write_run_file(
        dir.path(),
        "sft.toml",
        &format!(
            "[model]\ntiny = true\nseed = 3\n[data]\ntoy = 24\ntoy_held_out = 4\n\
             [run]\ndir = {:?}\n[sft]\nmax_steps = 2\nbatch_size = 4\n",
            run.to_str().unwrap()
        ),
    );
    let out = succeed(&["train", "sft", "--config", path.to_str().unwrap()]);
    assert!(out.contains("SFT: 2 steps"), "{out}");
    let config = read_json(&run.join("config.json"));
    assert_eq!(config["sft"]["max_steps"], 2);
    assert_eq!(
        config["sft"]["num_train_epochs"], 3,
        "defaults are filled in: {config}"
    );
    assert_eq!(lines(&run.join("sft_metrics.jsonl")), 2);
    assert_eq!(lines(&run.join("sft_metrics.csv")), 3, "header + 2 steps");
    assert!(read_json(&run.join("summary.json"))["sft"]["last_eval_loss"].is_number());
    assert_final_model(&run);
}

fn grpo_run_file(dir: &Path, run: &Path, max_steps: usize) -> PathBuf {
    write_run_file(
        dir,
        &format!("grpo_{max_steps}.toml"),
        &format!(
            "[model]\ntiny = true\n[data]\ntoy = 8\ntoy_held_out = 2\n\
             [run]\ndir = {:?}\ncheckpoint_every = 1\n\
             [warmup]\nmax_steps = 1\nbatch_size = 4\neval_fraction = 0.0\n\
             [grpo]\nnum_generations = 2\nprompts_per_step = 2\nmax_steps = {max_steps}\n\
             max_completion_length = 16\nmax_tool_iterations = 1\n\
             [grpo.sampling]\nmax_new_tokens = 16\n",
            run.to_str().unwrap()
        ),
    )
}

#[test]
fn train_grpo_writes_run_dir_and_resume_continues_the_global_step() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    let first = grpo_run_file(dir.path(), &run, 2);
    succeed(&["train", "grpo", "--config", first.to_str().unwrap()]);
    for file in [
        "config.json",
        "grpo_metrics.csv",
        "reward_curve.svg",
        "sft_metrics.jsonl",
    ] {
        assert!(run.join(file).is_file(), "{file}");
    }
    assert_eq!(read_json(&run.join("config.json"))["grpo"]["max_steps"], 2);
    assert_eq!(lines(&run.join("grpo_metrics.jsonl")), 2);
    assert!(run.join("checkpoint-1").is_dir() && run.join("checkpoint-2").is_dir());
    assert_final_model(&run);

    // A kill after step 2 was logged but before its checkpoint was complete: resume must go
    // back to checkpoint-1 and log step 2 once, not twice.
    std::fs::remove_dir_all(run.join("checkpoint-2")).unwrap();
    let longer = grpo_run_file(dir.path(), &run, 3);
    let out = succeed(&[
        "train",
        "grpo",
        "--config",
        longer.to_str().unwrap(),
        "--resume",
        run.to_str().unwrap(),
    ]);
    assert!(out.contains("global step 3"), "{out}");
    let state = read_json(&run.join("checkpoint-3/trainer_state.json"));
    assert_eq!(state["global_step"], 3);
    let steps: Vec<u64> = std::fs::read_to_string(run.join("grpo_metrics.jsonl"))
        .unwrap()
        .lines()
        .map(|line| {
            serde_json::from_str::<serde_json::Value>(line).unwrap()["step"]
                .as_f64()
                .unwrap() as u64
        })
        .collect();
    assert_eq!(steps, [1, 2, 3], "step 1 kept, steps 2-3 logged once each");
    let curve = std::fs::read_to_string(run.join("reward_curve.svg")).unwrap();
    assert!(curve.contains("step 3"), "the curve covers the whole run");
    assert_eq!(lines(&run.join("grpo_metrics.csv")), 4, "one header");
    assert_eq!(
        lines(&run.join("sft_metrics.jsonl")),
        1,
        "no second warm-up"
    );
    let summary = read_json(&run.join("summary.json"));
    assert!(
        summary["before"].is_object()
            && summary["after_sft"].is_object()
            && summary["after"].is_object(),
        "scores measured before the interruption are kept: {summary}"
    );
    assert_eq!(summary["grpo"]["global_step"], 3);
    assert!(run.join("config.resumed.json").is_file());
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// A fresh run into a used run directory kept the old run's checkpoints, and `--resume` then
/// continued from the old run's newest one.
#[test]
fn train_grpo_fresh_run_refuses_a_used_directory_and_resume_refuses_another_runs_checkpoint() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    let two = grpo_run_file(dir.path(), &run, 2);
    succeed(&["train", "grpo", "--config", two.to_str().unwrap()]);
    let old_checkpoint = dir.path().join("old-checkpoint-2");
    copy_dir(&run.join("checkpoint-2"), &old_checkpoint);

    let refused = agent_rl(&["train", "grpo", "--config", two.to_str().unwrap()]);
    assert!(!refused.status.success());
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains("checkpoint-1") && stderr.contains("--overwrite"),
        "{stderr}"
    );

    let one = grpo_run_file(dir.path(), &run, 1);
    succeed(&[
        "train",
        "grpo",
        "--config",
        one.to_str().unwrap(),
        "--overwrite",
    ]);
    assert!(
        !run.join("checkpoint-2").exists(),
        "the old run's checkpoint is cleared"
    );
    assert_eq!(lines(&run.join("grpo_metrics.jsonl")), 1, "no old rows");
    let run_id = std::fs::read_to_string(run.join("run_id")).unwrap();
    let state = read_json(&run.join("checkpoint-1/trainer_state.json"));
    assert_eq!(state["run_id"].as_str(), Some(run_id.trim()));

    // The old run's checkpoint-2 put back beside the new run's checkpoint-1.
    std::fs::rename(&old_checkpoint, run.join("checkpoint-2")).unwrap();
    let resumed = agent_rl(&[
        "train",
        "grpo",
        "--config",
        two.to_str().unwrap(),
        "--resume",
        run.to_str().unwrap(),
    ]);
    assert!(!resumed.status.success());
    let stderr = String::from_utf8_lossy(&resumed.stderr);
    assert!(stderr.contains("another run's checkpoint"), "{stderr}");
}

#[test]
fn train_grpo_resume_without_checkpoint_names_the_directory() {
    let dir = tempfile::tempdir().unwrap();
    let path = grpo_run_file(dir.path(), &dir.path().join("run"), 2);
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let output = agent_rl(&[
        "train",
        "grpo",
        "--config",
        path.to_str().unwrap(),
        "--resume",
        empty.to_str().unwrap(),
    ]);
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("no checkpoint-<step>/") && stderr.contains("empty"),
        "{stderr}"
    );
}

/// `[data] environment = "bfcl_multi_turn"`: GRPO on the multi-turn entries of a BFCL data folder
/// (the hand-written fixture), rewarded by the environment; held-out scoring is refused.
#[test]
fn train_grpo_on_bfcl_multi_turn_entries() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    let data = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("agent-rl-eval/tests/fixtures/bfcl/multi_turn_env");
    let text = format!(
        "[model]\ntiny = true\n[data]\nbfcl = {:?}\nenvironment = \"bfcl_multi_turn\"\n\
         [run]\ndir = {:?}\n\
         [grpo]\nnum_generations = 2\nprompts_per_step = 2\nmax_steps = 1\n\
         max_completion_length = 8\nmax_tool_iterations = 2\nmax_prompt_length = 900\n\
         [grpo.sampling]\nmax_new_tokens = 8\n",
        data.to_str().unwrap(),
        run.to_str().unwrap()
    );
    let path = write_run_file(dir.path(), "bfcl_mt.toml", &text);
    let output = agent_rl(&["train", "grpo", "--config", path.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(
        stderr.contains("BFCL multi-turn: 5 tasks, 0 entries left out"),
        "{stderr}"
    );
    assert_eq!(lines(&run.join("grpo_metrics.jsonl")), 1);

    let held_out = text.replace("[run]", "held_out_fraction = 0.5\n[run]");
    let path = write_run_file(dir.path(), "bfcl_mt_held_out.toml", &held_out);
    let output = agent_rl(&["train", "grpo", "--config", path.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    assert!(
        stderr.contains("bfcl_multi_turn") && stderr.contains("held_out_fraction"),
        "{stderr}"
    );
}

/// A GRPO checkpoint's `model/` is a model directory: tokenizer and generation config beside
/// the weights, accepted as `--model` by `generate` and `eval bfcl`.
#[test]
fn grpo_checkpoint_model_dir_is_accepted_by_generate_and_eval_bfcl() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    let path = write_run_file(
        dir.path(),
        "grpo.toml",
        &format!(
            "[model]\ntiny = true\n[data]\ntoy = 4\n[run]\ndir = {:?}\ncheckpoint_every = 1\n\
             [grpo]\nnum_generations = 2\nprompts_per_step = 2\nmax_steps = 1\n\
             max_completion_length = 8\nmax_tool_iterations = 1\n\
             [grpo.sampling]\nmax_new_tokens = 8\n",
            run.to_str().unwrap()
        ),
    );
    succeed(&["train", "grpo", "--config", path.to_str().unwrap()]);
    let model = run.join("checkpoint-1/model");
    for file in [
        "config.json",
        "model.safetensors",
        "tokenizer.json",
        "tokenizer_config.json",
        "generation_config.json",
    ] {
        assert!(model.join(file).is_file(), "checkpoint-1/model/{file}");
    }
    let model = model.to_str().unwrap();
    let out = succeed(&[
        "generate",
        "--model",
        model,
        "--prompt",
        "hello",
        "--max-new-tokens",
        "3",
        "--json",
    ]);
    let generated: Value = serde_json::from_str(&out).unwrap();
    assert!(generated.is_object(), "{out}");
    let data =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("agent-rl-eval/tests/fixtures/bfcl/data");
    let out = succeed(&[
        "eval",
        "bfcl",
        "--data",
        data.to_str().unwrap(),
        "--model",
        model,
        "--categories",
        "irrelevance",
        "--limit",
        "1",
        "--max-new-tokens",
        "4",
    ]);
    assert!(out.contains("irrelevance"), "{out}");
}
