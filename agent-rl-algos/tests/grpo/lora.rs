//! GRPO with LoRA: only the adapters move, the KL reference is the base with the adapters off,
//! checkpoints hold the adapter in PEFT's layout, and a resumed run ends where the uninterrupted
//! one does.

use agent_rl_algos::{GrpoConfig, GrpoTrainer};
use agent_rl_core::lora::{BaseDtype, LoraConfig};
use agent_rl_test_support::{tiny_qwen2, tiny_tokenizer};
use burn::tensor::DType;

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
    config.optimizer.learning_rate = 5e-2;
    config
}

fn lora() -> LoraConfig {
    LoraConfig {
        r: 4,
        alpha: 8.0,
        ..LoraConfig::default()
    }
}

fn trainer(resume: Option<&std::path::Path>, dir: &std::path::Path) -> GrpoTrainer<B> {
    trainer_with(lora(), resume, dir)
}

fn trainer_with(
    lora: LoraConfig,
    resume: Option<&std::path::Path>,
    dir: &std::path::Path,
) -> GrpoTrainer<B> {
    let builder = GrpoTrainer::builder(
        tiny_qwen2::<B>(1, &Default::default()),
        tiny_tokenizer().expect("fixture tokenizer"),
    )
    .with_config(config())
    .with_lora(lora)
    .add_reward(chars_per_token())
    .with_checkpointing(dir, 2);
    match resume {
        Some(from) => builder.with_resume_from(from),
        None => builder,
    }
    .build()
    .expect("valid trainer")
}

#[test]
fn lora_run_trains_adapters_only_and_resumes_exactly() {
    let dir = tempfile::tempdir().expect("temp dir");
    let tasks = prompts(3);
    let mut full = trainer(None, dir.path());
    assert!(full.model().has_adapters());
    let report = full.train(&tasks).expect("training runs");

    // The reference is the base: identical to the policy while B = 0 (first step), then apart.
    let kl = |i: usize| {
        report.steps[i]
            .loss_metrics
            .kl
            .expect("beta > 0 logs the KL")
    };
    assert!(kl(0).abs() < 1e-6, "first-step KL {}", kl(0));
    assert!(kl(3) > 0.0, "the adapters moved the policy from the base");

    // Frozen base: every base weight is the initial model's.
    let initial = parameters(&tiny_qwen2::<B>(1, &Default::default()));
    assert_eq!(parameters(&full.model().without_adapters()), initial);

    let midway = dir.path().join("checkpoint-2");
    for file in [
        "adapter/adapter_config.json",
        "adapter/adapter_model.safetensors",
        "optimizer.bin",
        "trainer_state.json",
    ] {
        assert!(midway.join(file).exists(), "{file} missing");
    }
    for absent in ["model", "reference"] {
        assert!(!midway.join(absent).exists(), "{absent}/ written with LoRA");
    }

    let mut resumed = trainer(Some(&midway), &dir.path().join("resumed"));
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

    // A checkpoint of other adapters is refused, naming the adapter directory.
    let other = GrpoTrainer::builder(
        tiny_qwen2::<B>(1, &Default::default()),
        tiny_tokenizer().expect("fixture tokenizer"),
    )
    .with_config(config())
    .with_lora(LoraConfig { r: 2, ..lora() })
    .add_reward(chars_per_token())
    .with_resume_from(&midway)
    .build();
    assert!(other.is_err_and(|e| e.to_string().contains("adapter")));
}

#[test]
fn lora_on_a_bf16_base_trains_and_resumes() {
    let dir = tempfile::tempdir().expect("temp dir");
    let tasks = prompts(3);
    let half = LoraConfig {
        base_dtype: BaseDtype::Bf16,
        ..lora()
    };
    let mut full = trainer_with(half.clone(), None, dir.path());
    assert_eq!(full.model().base_weight_dtype(), DType::BF16);
    let base = parameters(&full.model().without_adapters());
    let report = full.train(&tasks).expect("training runs");
    let kl = report.steps[3]
        .loss_metrics
        .kl
        .expect("beta > 0 logs the KL");
    assert!(kl > 0.0, "the adapters moved the policy from the bf16 base");
    assert_eq!(full.model().base_weight_dtype(), DType::BF16);
    assert_eq!(parameters(&full.model().without_adapters()), base);

    let midway = dir.path().join("checkpoint-2");
    let mut resumed = trainer_with(half, Some(&midway), &dir.path().join("resumed"));
    assert_eq!(resumed.model().base_weight_dtype(), DType::BF16);
    let rest = resumed.train(&tasks).expect("training resumes");
    for (a, b) in report.steps[2..].iter().zip(&rest.steps) {
        assert_eq!(a.reward, b.reward, "same rollouts after resuming");
        assert!((a.loss - b.loss).abs() < 1e-6, "{} vs {}", a.loss, b.loss);
    }
}

#[test]
fn lora_with_reference_sync_is_refused() {
    let mut config = config();
    config.sync_ref_model = true;
    let built = GrpoTrainer::builder(
        tiny_qwen2::<B>(1, &Default::default()),
        tiny_tokenizer().expect("fixture tokenizer"),
    )
    .with_config(config)
    .with_lora(lora())
    .add_reward(chars_per_token())
    .build();
    assert!(built.is_err_and(|e| e.to_string().contains("sync_ref_model")));
    let bad_rank = GrpoTrainer::builder(
        tiny_qwen2::<B>(1, &Default::default()),
        tiny_tokenizer().expect("fixture tokenizer"),
    )
    .with_lora(LoraConfig { r: 0, ..lora() })
    .add_reward(chars_per_token())
    .build();
    assert!(bad_rank.is_err_and(|e| e.to_string().contains("lora.r")));
}
