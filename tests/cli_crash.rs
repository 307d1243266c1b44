//! A training run killed (SIGKILL) at several points, among them in the middle of a checkpoint
//! write, then resumed, ends with the same final weights and the same metrics file as the run
//! that was never interrupted.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

const STEPS: usize = 4;

/// A named moment at which to kill the run, read off its run directory.
type KillPoint = (&'static str, Box<dyn Fn(&Path) -> bool>);

fn run_file(dir: &Path, run: &Path) -> PathBuf {
    let path = dir.join(format!(
        "{}.toml",
        run.file_name().unwrap().to_str().unwrap()
    ));
    let text = format!(
        "[model]\ntiny = true\n[data]\ntoy = 16\ntoy_held_out = 2\n\
         [run]\ndir = {:?}\ncheckpoint_every = 1\n\
         [warmup]\nmax_steps = 40\nbatch_size = 8\neval_fraction = 0.0\n\
         [warmup.optimizer]\nlearning_rate = 1e-2\nlr_scheduler_type = \"constant\"\n\
         [grpo]\nnum_generations = 4\nprompts_per_step = 2\nmax_steps = {STEPS}\n\
         max_completion_length = 48\nmax_tool_iterations = 1\n\
         [grpo.optimizer]\nlearning_rate = 1e-3\nlr_scheduler_type = \"constant\"\n\
         [grpo.sampling]\nmax_new_tokens = 48\n",
        run.to_str().unwrap()
    );
    std::fs::write(&path, text).unwrap();
    path
}

fn spawn(config: &Path, resume: Option<&Path>) -> Child {
    let mut command = Command::new(env!("CARGO_BIN_EXE_agent-rl"));
    command.args(["train", "grpo", "--config", config.to_str().unwrap()]);
    if let Some(run) = resume {
        command.args(["--resume", run.to_str().unwrap()]);
    }
    command
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

fn finish(mut child: Child, what: &str) {
    let status = child.wait().unwrap();
    assert!(status.success(), "{what}: {status}");
}

/// Kills `child` as soon as `now` holds (polled every millisecond) or when it exits by itself.
/// Returns whether it was killed.
fn kill_when(mut child: Child, now: impl Fn() -> bool) -> bool {
    let deadline = Instant::now() + Duration::from_secs(600);
    loop {
        if child.try_wait().unwrap().is_some() {
            return false;
        }
        if now() {
            child.kill().unwrap();
            child.wait().unwrap();
            return true;
        }
        assert!(
            Instant::now() < deadline,
            "the run neither finished nor reached the kill point"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// The metrics file without its wall-clock fields, one JSON object per step.
fn metrics(run: &Path) -> Vec<Value> {
    std::fs::read_to_string(run.join("grpo_metrics.jsonl"))
        .unwrap()
        .lines()
        .map(|line| {
            let mut row: serde_json::Map<String, Value> = serde_json::from_str(line).unwrap();
            row.retain(|key, _| {
                !(key == "step_time" || key == "tokens/s" || key.starts_with("timing/"))
            });
            Value::Object(row)
        })
        .collect()
}

fn final_weights(run: &Path) -> Vec<u8> {
    std::fs::read(run.join("final_model/model.safetensors")).unwrap()
}

fn metrics_lines(run: &Path) -> usize {
    std::fs::read_to_string(run.join("grpo_metrics.jsonl")).map_or(0, |text| text.lines().count())
}

#[test]
fn killed_runs_resume_to_the_uninterrupted_result() {
    let dir = tempfile::tempdir().unwrap();
    let reference = dir.path().join("uninterrupted");
    finish(
        spawn(&run_file(dir.path(), &reference), None),
        "uninterrupted run",
    );
    let expected = (metrics(&reference), final_weights(&reference));
    assert_eq!(expected.0.len(), STEPS);
    assert!(
        expected
            .0
            .iter()
            .any(|row| row["grad_norm"].as_f64().unwrap() > 0.0),
        "the run must update the weights, or equal weights prove nothing: {:?}",
        expected.0
    );

    // Kill points: while checkpoint-2 is being written (its staging directory exists), right
    // after step 3 was logged (before its checkpoint), and while the final model is written.
    let kill_points: [KillPoint; 3] = [
        (
            "checkpoint write",
            Box::new(|run| run.join(".checkpoint-2.partial").exists()),
        ),
        (
            "after a logged step",
            Box::new(|run| metrics_lines(run) >= 3),
        ),
        (
            "final model write",
            Box::new(|run| run.join(".final_model.partial").exists()),
        ),
    ];
    let mut killed = 0;
    for (name, point) in kill_points {
        let run = dir.path().join(name.replace(' ', "_"));
        let config = run_file(dir.path(), &run);
        let first = spawn(&config, None);
        if kill_when(first, || point(&run)) {
            killed += 1;
            finish(
                spawn(&config, Some(&run)),
                &format!("resume after a kill at {name}"),
            );
        }
        assert_eq!(metrics(&run), expected.0, "metrics after a kill at {name}");
        assert!(
            final_weights(&run) == expected.1,
            "final weights after a kill at {name}"
        );
    }
    // Polling can miss a short write; the run must still have been interrupted at least once.
    assert!(killed >= 1, "no run was killed");
}

fn sft_lines(run: &Path) -> usize {
    std::fs::read_to_string(run.join("sft_metrics.jsonl")).map_or(0, |text| text.lines().count())
}

/// A run killed during its SFT warm-up (before any checkpoint) could not be resumed ("no
/// checkpoint"): it now starts over in its directory; one killed after the warm-up, before its
/// first GRPO checkpoint, continues from the kept SFT model without a second warm-up. Both end
/// as the uninterrupted run does.
#[test]
fn runs_killed_around_the_sft_warm_up_resume_to_the_uninterrupted_result() {
    let dir = tempfile::tempdir().unwrap();
    let reference = dir.path().join("uninterrupted");
    finish(
        spawn(&run_file(dir.path(), &reference), None),
        "uninterrupted run",
    );
    let expected = (metrics(&reference), final_weights(&reference));
    let warm_up_steps = sft_lines(&reference);
    let kill_points: [KillPoint; 2] = [
        ("during the warm-up", Box::new(|run| sft_lines(run) >= 1)),
        (
            "after the warm-up",
            Box::new(|run| run.join("sft_model").is_dir() && !run.join("checkpoint-1").exists()),
        ),
    ];
    let mut killed = Vec::new();
    for (name, point) in kill_points {
        let run = dir.path().join(name.replace(' ', "_"));
        let config = run_file(dir.path(), &run);
        if kill_when(spawn(&config, None), || point(&run)) {
            killed.push(name);
            finish(
                spawn(&config, Some(&run)),
                &format!("resume after a kill {name}"),
            );
        }
        assert_eq!(metrics(&run), expected.0, "metrics after a kill {name}");
        assert!(
            final_weights(&run) == expected.1,
            "final weights after a kill {name}"
        );
        if name == "after the warm-up" && killed.contains(&name) {
            assert_eq!(sft_lines(&run), warm_up_steps, "no second warm-up");
        }
    }
    assert!(
        killed.contains(&"during the warm-up"),
        "the warm-up ({warm_up_steps} steps) was not interrupted"
    );
}
