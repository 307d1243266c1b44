//! SftTrainer end to end on the tiny model: learning, held-out loss, accumulation, packing.

use agent_rl_algos::sft::{SftDataset, SftTrainer};
use agent_rl_algos::{LrSchedule, OptimizerConfig, SftConfig, StepMetrics};
use agent_rl_test_support::{tiny_qwen2, tiny_tokenizer};
use std::sync::{Arc, Mutex};

use super::common::{HELD_OUT_CITIES, held_out_tool_call_dataset, tool_call_dataset};
use crate::B;

fn config(max_steps: usize) -> SftConfig {
    SftConfig {
        max_steps: Some(max_steps),
        batch_size: 8,
        eval_fraction: 0.0,
        optimizer: OptimizerConfig {
            learning_rate: 1e-2,
            lr_scheduler_type: LrSchedule::Cosine,
            warmup_steps: 5,
            ..OptimizerConfig::default()
        },
        ..SftConfig::default()
    }
}

fn trainer(config: SftConfig, seed: u64) -> SftTrainer<B> {
    SftTrainer::builder(
        tiny_qwen2::<B>(seed, &Default::default()),
        tiny_tokenizer().expect("tokenizer"),
    )
    .with_config(config)
    .build()
    .expect("valid config")
}

#[test]
fn assistant_loss_falls_on_train_and_held_out_rows() {
    let data = tool_call_dataset(16);
    let held_out: SftDataset = held_out_tool_call_dataset(24);
    // Held out means unseen: no held-out row, and no held-out city, occurs in training.
    let rendered = |rows: &SftDataset| -> Vec<String> {
        rows.examples()
            .iter()
            .map(|row| format!("{row:?}"))
            .collect()
    };
    let (seen, unseen) = (rendered(&data), rendered(&held_out));
    assert!(unseen.iter().all(|row| !seen.contains(row)));
    assert!(
        HELD_OUT_CITIES
            .iter()
            .all(|city| seen.iter().all(|row| !row.contains(city)))
    );
    let losses = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&losses);
    let mut trainer = SftTrainer::builder(
        tiny_qwen2::<B>(3, &Default::default()),
        tiny_tokenizer().expect("tokenizer"),
    )
    .with_config(config(40))
    .with_observer(move |m: &StepMetrics| {
        if let Ok(mut losses) = seen.lock() {
            losses.push(m.loss);
        }
    })
    .build()
    .expect("valid config");
    let before = trainer.evaluate(&held_out).expect("eval");
    let report = trainer.train(&data).expect("trains");
    let after = trainer.evaluate(&held_out).expect("eval");
    assert_eq!(report.steps, 40);
    let losses = losses.lock().expect("observer lock").clone();
    assert_eq!(losses.len(), 40);
    assert!(losses.iter().all(|l| l.is_finite()));
    let first: f32 = losses[..5].iter().sum::<f32>() / 5.0;
    let last: f32 = losses[35..].iter().sum::<f32>() / 5.0;
    eprintln!(
        "sft: train loss {first:.3} -> {last:.3}; held-out {:.3} -> {:.3}, token accuracy {:.3} -> {:.3}",
        before.loss, after.loss, before.mean_token_accuracy, after.mean_token_accuracy
    );
    assert!(
        last < 0.5 * first,
        "train loss did not halve: {first} -> {last}"
    );
    assert!(
        after.loss < 0.6 * before.loss,
        "held-out loss: {} -> {}",
        before.loss,
        after.loss
    );
    assert!(after.mean_token_accuracy > before.mean_token_accuracy + 0.3);
}

#[test]
fn accumulation_equals_one_big_batch_and_packing_trains() {
    let data = tool_call_dataset(8);
    let big = {
        let mut t = trainer(config(2), 1);
        t.train(&data).expect("trains");
        t
    };
    let accumulated = {
        let mut c = config(2);
        c.batch_size = 4;
        c.optimizer.gradient_accumulation_steps = 2;
        let mut t = trainer(c, 1);
        t.train(&data).expect("trains");
        t
    };
    // Same rows per step (shuffled order within the step does not matter to the sum).
    let a = big.evaluate(&data).expect("eval");
    let b = accumulated.evaluate(&data).expect("eval");
    assert!((a.loss - b.loss).abs() < 1e-4, "{} vs {}", a.loss, b.loss);

    let mut packed = config(5);
    packed.packing = true;
    packed.max_length = 1024;
    let mut t = trainer(packed, 2);
    let before = t.evaluate(&data).expect("eval");
    let report = t.train(&data).expect("trains");
    assert!(
        report.num_train_sequences < report.num_train_examples,
        "rows were packed"
    );
    assert!(t.evaluate(&data).expect("eval").loss < before.loss);
}

#[test]
fn checkpoints_are_written_whole_with_a_manifest() {
    use agent_rl_algos::checkpoint_dir::{latest_complete_checkpoint, verify_checkpoint_dir};
    let out = tempfile::tempdir().expect("temp dir");
    let mut trainer = trainer(
        SftConfig {
            output_dir: Some(out.path().to_path_buf()),
            save_steps: Some(1),
            ..config(2)
        },
        3,
    );
    let report = trainer.train(&tool_call_dataset(8)).expect("trains");
    for step in 1..=2 {
        let dir = out.path().join(format!("checkpoint-{step}"));
        assert!(report.checkpoints.contains(&dir));
        let manifest = verify_checkpoint_dir(&dir).expect("complete");
        assert!(manifest.files.iter().any(|f| f.path == "model.safetensors"));
    }
    let latest = latest_complete_checkpoint(out.path()).expect("readable");
    assert_eq!(latest.map(|c| c.step), Some(2));
    // The final model in output_dir itself is written the same way, beside the config.
    let final_files = verify_checkpoint_dir(out.path()).expect("final model complete");
    assert!(
        final_files
            .files
            .iter()
            .any(|f| f.path == "model.safetensors")
    );
    assert!(out.path().join("sft_config.json").is_file());
}

#[test]
fn gradient_checkpointing_trains_like_the_plain_forward() {
    let data = tool_call_dataset(8);
    let run = |gradient_checkpointing: bool| {
        let mut c = config(3);
        c.packing = true;
        c.max_length = 512;
        c.gradient_checkpointing = gradient_checkpointing;
        let mut t = trainer(c, 4);
        let report = t.train(&data).expect("trains");
        let losses: Vec<f32> = report.history.iter().map(|m| m.loss).collect();
        (losses, t.evaluate(&data).expect("eval").loss)
    };
    let (plain_losses, plain_eval) = run(false);
    let (losses, eval) = run(true);
    assert_eq!(losses.len(), 3);
    for (a, b) in losses.iter().zip(&plain_losses) {
        assert!(
            (a - b).abs() <= 1e-4 * b.abs().max(1.0),
            "step loss {a} vs {b}"
        );
    }
    assert!(
        (eval - plain_eval).abs() <= 1e-4 * plain_eval.abs().max(1.0),
        "{eval} vs {plain_eval}"
    );
}

/// Rows with nothing the loss covers would train with loss 0 and report success.
#[test]
fn data_without_trainable_tokens_is_refused() {
    use agent_rl_algos::sft::SftExample;

    use super::common::{prompt, tools};
    let user_only = SftDataset::from_examples(vec![
        SftExample::Conversation {
            messages: prompt("get_weather", "Paris"),
            tools: tools(),
        };
        4
    ]);
    let cut_short = SftConfig {
        max_length: 8,
        ..config(2)
    };
    for (rows, config) in [(user_only, config(2)), (tool_call_dataset(4), cut_short)] {
        let error = trainer(config, 0)
            .train(&rows)
            .expect_err("nothing to train on")
            .to_string();
        assert!(error.contains("no token to train on"), "{error}");
    }
}
