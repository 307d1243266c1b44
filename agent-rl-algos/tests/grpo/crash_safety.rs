//! Crash-safe checkpoints: damaged or interrupted checkpoints are detected and skipped, write
//! errors stop the run with the last good checkpoint intact, and a run interrupted at any point
//! (mid-write included) resumes to the same final weights as the uninterrupted run.
#![allow(clippy::unwrap_used, clippy::err_expect)]

use std::path::{Path, PathBuf};

use agent_rl_algos::checkpoint_dir::{
    MANIFEST_FILE, latest_complete_checkpoint, verify_checkpoint_dir, write_checkpoint_dir,
};
use agent_rl_algos::{AlgoError, GrpoConfig, GrpoTrainer};
use agent_rl_test_support::{tiny_qwen2, tiny_tokenizer};

use super::common::{chars_per_token, parameters, prompts};
use crate::B;

const STEPS: usize = 4;

fn config() -> GrpoConfig {
    let mut config = GrpoConfig {
        num_generations: 2,
        prompts_per_step: 2,
        max_steps: STEPS,
        beta: 0.04,
        seed: 5,
        ..GrpoConfig::default()
    }
    .with_max_completion_length(4);
    config.optimizer.learning_rate = 1e-2;
    config
}

fn trainer(run_dir: &Path, resume: Option<&Path>) -> Result<GrpoTrainer<B>, AlgoError> {
    let mut builder = GrpoTrainer::builder(
        tiny_qwen2::<B>(1, &Default::default()),
        tiny_tokenizer().expect("fixture tokenizer"),
    )
    .with_config(config())
    .add_reward(chars_per_token())
    .with_checkpointing(run_dir, 1);
    if let Some(dir) = resume {
        builder = builder.with_resume_from(dir);
    }
    builder.build()
}

/// Trains the whole run with a checkpoint after every step; returns the final parameters.
fn full_run(run_dir: &Path) -> Vec<Vec<f32>> {
    let mut trainer = trainer(run_dir, None).expect("valid trainer");
    let report = trainer.train(&prompts(3)).expect("training runs");
    assert_eq!(report.checkpoints.len(), STEPS);
    parameters(trainer.model())
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

fn checkpoint(run_dir: &Path, step: usize) -> PathBuf {
    run_dir.join(format!("checkpoint-{step}"))
}

fn assert_same_weights(a: &[Vec<f32>], b: &[Vec<f32>], what: &str) {
    assert_eq!(a.len(), b.len());
    for (x, y) in a.iter().zip(b) {
        assert_eq!(x, y, "{what}: weights differ");
    }
}

#[test]
fn damaged_checkpoints_are_refused_and_skipped() {
    let run = tempfile::tempdir().unwrap();
    full_run(run.path());
    assert!(
        !std::fs::read_dir(run.path()).unwrap().any(|e| e
            .unwrap()
            .file_name()
            .to_string_lossy()
            .contains("partial")),
        "no temporary directory is left behind"
    );
    for step in 1..=STEPS {
        let manifest = verify_checkpoint_dir(&checkpoint(run.path(), step)).unwrap();
        assert!(manifest.files.iter().any(|f| f.path == "optimizer.bin"));
        assert!(
            manifest
                .files
                .iter()
                .any(|f| f.path == "model/model.safetensors")
        );
    }

    // Zeros over the optimizer state, same size: loaded silently before manifests.
    let zeroed = checkpoint(run.path(), 4).join("optimizer.bin");
    let size = std::fs::metadata(&zeroed).unwrap().len() as usize;
    std::fs::write(&zeroed, vec![0u8; size]).unwrap();
    let err = trainer(run.path(), Some(&checkpoint(run.path(), 4)))
        .err()
        .expect("refused");
    let text = err.to_string();
    assert!(
        text.contains("optimizer.bin") && text.contains("SHA-256"),
        "{text}"
    );

    // A truncated optimizer file: named as truncated, not blamed on a burn version.
    let truncated = checkpoint(run.path(), 3).join("optimizer.bin");
    let bytes = std::fs::read(&truncated).unwrap();
    std::fs::write(&truncated, &bytes[..bytes.len() / 2]).unwrap();
    let err = trainer(run.path(), Some(&checkpoint(run.path(), 3)))
        .err()
        .expect("refused");
    let text = err.to_string();
    assert!(
        text.contains("optimizer.bin") && text.contains("truncated") && !text.contains("version"),
        "{text}"
    );

    // An empty directory, as a kill right after mkdir left it with the old writer.
    std::fs::create_dir(checkpoint(run.path(), 5)).unwrap();
    let found = latest_complete_checkpoint(run.path())
        .unwrap()
        .expect("one is complete");
    assert_eq!(found.step, 2);
    let skipped: Vec<&Path> = found.skipped.iter().map(|s| s.dir.as_path()).collect();
    assert_eq!(
        skipped,
        [
            checkpoint(run.path(), 5),
            checkpoint(run.path(), 4),
            checkpoint(run.path(), 3)
        ]
    );
    assert!(
        found.skipped[0].reason.contains(MANIFEST_FILE),
        "{:?}",
        found.skipped
    );
    assert!(
        found.skipped[1].reason.contains("SHA-256"),
        "{:?}",
        found.skipped
    );
    assert!(
        found.skipped[2].reason.contains("bytes"),
        "{:?}",
        found.skipped
    );

    // Nothing complete: an error naming each directory's problem; no directory at all: None.
    for step in 1..=2 {
        std::fs::remove_file(checkpoint(run.path(), step).join(MANIFEST_FILE)).unwrap();
    }
    let err = latest_complete_checkpoint(run.path())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("no complete checkpoint") && err.contains("checkpoint-1"),
        "{err}"
    );
    let empty = tempfile::tempdir().unwrap();
    assert_eq!(latest_complete_checkpoint(empty.path()).unwrap(), None);
}

#[test]
fn a_failed_write_leaves_the_previous_checkpoint_usable() {
    let run = tempfile::tempdir().unwrap();
    let target = checkpoint(run.path(), 7);
    let good = write_checkpoint_dir(&target, |tmp| {
        std::fs::write(tmp.join("a.bin"), b"first").map_err(|e| io(tmp, e))
    })
    .unwrap();
    // A second write of the same step that fails half-way (as a full disk would).
    let err = write_checkpoint_dir(&target, |tmp| {
        std::fs::write(tmp.join("a.bin"), b"sec").map_err(|e| io(tmp, e))?;
        Err(io(tmp, std::io::Error::other("No space left on device")))
    })
    .unwrap_err();
    assert!(err.to_string().contains("No space left"), "{err}");
    assert_eq!(verify_checkpoint_dir(&target).unwrap(), good);
    assert_eq!(std::fs::read(target.join("a.bin")).unwrap(), b"first");
    let names: Vec<String> = std::fs::read_dir(run.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        names,
        ["checkpoint-7"],
        "the temporary directory is removed"
    );

    // In training: the write of checkpoint-2 fails (its temporary path is taken by a file),
    // the run stops with the error, checkpoint-1 stays complete and resumable.
    let run = tempfile::tempdir().unwrap();
    std::fs::write(run.path().join(".checkpoint-2.partial"), b"in the way").unwrap();
    let mut first = trainer(run.path(), None).unwrap();
    let err = first.train(&prompts(3)).unwrap_err();
    assert!(err.to_string().contains(".checkpoint-2.partial"), "{err}");
    assert_eq!(first.global_step(), 2);
    assert!(!checkpoint(run.path(), 2).exists());
    let found = latest_complete_checkpoint(run.path()).unwrap().unwrap();
    assert_eq!((found.step, found.skipped.len()), (1, 0));
    let resumed = trainer(run.path(), Some(&found.dir)).unwrap();
    assert_eq!(resumed.global_step(), 1);
}

fn io(path: &Path, err: std::io::Error) -> AlgoError {
    AlgoError::Checkpoint {
        path: path.to_owned(),
        reason: err.to_string(),
    }
}

/// A run killed after step `k` (its checkpoint-k complete) or while writing checkpoint-(k+1)
/// (a `.partial` directory, or with the pre-manifest writer an unfinished `checkpoint-(k+1)/`),
/// then resumed from [`latest_complete_checkpoint`], ends with exactly the weights of the
/// uninterrupted run.
#[test]
fn interrupted_runs_resume_to_the_uninterrupted_weights() {
    let reference = tempfile::tempdir().unwrap();
    let expected = full_run(reference.path());
    for (kept, leftover) in [(1, "partial"), (2, "unfinished"), (3, "none")] {
        let run = tempfile::tempdir().unwrap();
        for step in 1..=kept {
            copy_dir(
                &checkpoint(reference.path(), step),
                &checkpoint(run.path(), step),
            );
        }
        let next = kept + 1;
        match leftover {
            "partial" => {
                // Killed while the model was being written into the temporary directory.
                let partial = run.path().join(format!(".checkpoint-{next}.partial"));
                copy_dir(
                    &checkpoint(reference.path(), next).join("model"),
                    &partial.join("model"),
                );
                let weights = partial.join("model/model.safetensors");
                let bytes = std::fs::read(&weights).unwrap();
                std::fs::write(&weights, &bytes[..bytes.len() / 3]).unwrap();
            }
            "unfinished" => {
                let unfinished = checkpoint(run.path(), next);
                copy_dir(&checkpoint(reference.path(), next), &unfinished);
                std::fs::remove_file(unfinished.join(MANIFEST_FILE)).unwrap();
                std::fs::write(unfinished.join("optimizer.bin"), b"").unwrap();
            }
            _ => {}
        }
        let found = latest_complete_checkpoint(run.path()).unwrap().unwrap();
        assert_eq!(found.step, kept, "{leftover}");
        assert_eq!(found.skipped.len(), usize::from(leftover == "unfinished"));
        let mut resumed = trainer(run.path(), Some(&found.dir)).unwrap();
        let report = resumed.train(&prompts(3)).unwrap();
        assert_eq!(report.steps.len(), STEPS - kept);
        assert_same_weights(&parameters(resumed.model()), &expected, leftover);
        verify_checkpoint_dir(&checkpoint(run.path(), STEPS)).unwrap();
        assert!(
            !run.path()
                .join(format!(".checkpoint-{next}.partial"))
                .exists()
        );
    }
}
