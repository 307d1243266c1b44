//! Checkpoint and resume: a resumed run ends exactly where the uninterrupted one does.

use agent_rl_algos::{GrpoConfig, GrpoTrainer};
use agent_rl_test_support::{tiny_qwen2, tiny_tokenizer};

use super::common::{chars_per_token, parameters, prompts};
use crate::B;

fn config() -> GrpoConfig {
    let mut config = GrpoConfig {
        num_generations: 4,
        prompts_per_step: 2,
        max_steps: 4,
        beta: 0.04,
        seed: 9,
        ..GrpoConfig::default()
    }
    .with_max_completion_length(5);
    config.optimizer.learning_rate = 1e-2;
    config
}

#[test]
fn resumed_run_matches_the_uninterrupted_run() {
    let dir = tempfile::tempdir().expect("temp dir");
    let tasks = prompts(3);
    let mut full = GrpoTrainer::builder(
        tiny_qwen2::<B>(1, &Default::default()),
        tiny_tokenizer().expect("fixture tokenizer"),
    )
    .with_config(config())
    .add_reward(chars_per_token())
    .with_checkpointing(dir.path(), 2)
    .build()
    .expect("valid trainer");
    let report = full.train(&tasks).expect("training runs");
    let midway = dir.path().join("checkpoint-2");
    assert_eq!(
        report.checkpoints,
        vec![midway.clone(), dir.path().join("checkpoint-4")]
    );
    for file in [
        "model/config.json",
        "model/model.safetensors",
        "reference/model.safetensors",
        "optimizer.bin",
        "trainer_state.json",
        "config.json",
    ] {
        assert!(midway.join(file).exists(), "{file} missing");
    }

    // A different initial model: everything must come from the checkpoint.
    let mut resumed = GrpoTrainer::builder(
        tiny_qwen2::<B>(2, &Default::default()),
        tiny_tokenizer().expect("fixture tokenizer"),
    )
    .with_config(config())
    .add_reward(chars_per_token())
    .with_resume_from(&midway)
    .build()
    .expect("resumes");
    assert_eq!(resumed.global_step(), 2);
    let rest = resumed.train(&tasks).expect("training resumes");
    assert_eq!(rest.steps.len(), 2);
    for (a, b) in report.steps[2..].iter().zip(&rest.steps) {
        assert_eq!(a.reward, b.reward, "same rollouts after resuming");
        assert!((a.loss - b.loss).abs() < 1e-6, "{} vs {}", a.loss, b.loss);
    }
    for (a, b) in parameters(full.model())
        .iter()
        .zip(&parameters(resumed.model()))
    {
        for (x, y) in a.iter().zip(b) {
            assert!((x - y).abs() < 1e-6, "{x} vs {y}");
        }
    }

    let wrong_seed = GrpoTrainer::builder(
        tiny_qwen2::<B>(2, &Default::default()),
        tiny_tokenizer().expect("fixture tokenizer"),
    )
    .with_config(GrpoConfig {
        seed: 10,
        ..config()
    })
    .add_reward(chars_per_token())
    .with_resume_from(&midway)
    .build();
    assert!(wrong_seed.is_err_and(|e| e.to_string().contains("seed")));
}
