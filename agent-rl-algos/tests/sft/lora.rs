//! SFT with LoRA: the loss falls with only the adapters trained, the base stays as it was, and
//! the saved model is a PEFT adapter that loads back onto the base.

use agent_rl_algos::sft::SftTrainer;
use agent_rl_algos::{LrSchedule, OptimizerConfig, SftConfig};
use agent_rl_core::lora::{BaseDtype, LoraConfig, load_adapter};
use agent_rl_test_support::{tiny_qwen2, tiny_tokenizer};

use super::common::tool_call_dataset;
use crate::B;
use crate::grpo::parameters;

fn sft_config(dir: &std::path::Path) -> SftConfig {
    SftConfig {
        max_steps: Some(10),
        batch_size: 8,
        eval_fraction: 0.0,
        output_dir: Some(dir.to_owned()),
        optimizer: OptimizerConfig {
            learning_rate: 3e-2,
            lr_scheduler_type: LrSchedule::Constant,
            ..OptimizerConfig::default()
        },
        ..SftConfig::default()
    }
}

#[test]
fn lora_sft_learns_on_a_half_precision_base() {
    let data = tool_call_dataset(16);
    for base_dtype in [BaseDtype::Bf16, BaseDtype::F16] {
        let dir = tempfile::tempdir().expect("temp dir");
        let lora = LoraConfig {
            r: 8,
            alpha: 16.0,
            base_dtype,
            ..LoraConfig::default()
        };
        let mut trainer = SftTrainer::builder(
            tiny_qwen2::<B>(3, &Default::default()),
            tiny_tokenizer().expect("tokenizer"),
        )
        .with_config(sft_config(dir.path()))
        .with_lora(lora)
        .build()
        .expect("valid config");
        let base = parameters(&trainer.model().without_adapters());
        let before = trainer.evaluate(&data).expect("eval").loss;
        trainer.train(&data).expect("trains");
        let after = trainer.evaluate(&data).expect("eval").loss;
        eprintln!("lora sft, {base_dtype} base: loss {before:.3} -> {after:.3}");
        assert!(
            after < 0.8 * before,
            "{base_dtype}: loss {before} -> {after}"
        );
        assert_eq!(parameters(&trainer.model().without_adapters()), base);
        assert_ne!(
            trainer.model().base_weight_dtype(),
            burn::tensor::DType::F32,
            "{base_dtype}: the base was widened"
        );
        assert!(dir.path().join("adapter_model.safetensors").exists());
    }
}

#[test]
fn lora_sft_learns_with_a_frozen_base_and_saves_a_peft_adapter() {
    let dir = tempfile::tempdir().expect("temp dir");
    let config = SftConfig {
        max_steps: Some(10),
        batch_size: 8,
        eval_fraction: 0.0,
        output_dir: Some(dir.path().to_owned()),
        optimizer: OptimizerConfig {
            learning_rate: 3e-2,
            lr_scheduler_type: LrSchedule::Constant,
            ..OptimizerConfig::default()
        },
        ..SftConfig::default()
    };
    let lora = LoraConfig {
        r: 8,
        alpha: 16.0,
        ..LoraConfig::default()
    };
    let data = tool_call_dataset(16);
    let mut trainer = SftTrainer::builder(
        tiny_qwen2::<B>(3, &Default::default()),
        tiny_tokenizer().expect("tokenizer"),
    )
    .with_config(config)
    .with_lora(lora.clone())
    .build()
    .expect("valid config");
    let before = trainer.evaluate(&data).expect("eval").loss;
    trainer.train(&data).expect("trains");
    let after = trainer.evaluate(&data).expect("eval").loss;
    eprintln!("lora sft: loss {before:.3} -> {after:.3}");
    assert!(after < 0.8 * before, "loss {before} -> {after}");
    let base = tiny_qwen2::<B>(3, &Default::default());
    assert_eq!(
        parameters(&trainer.model().without_adapters()),
        parameters(&base)
    );
    assert!(dir.path().join("adapter_model.safetensors").exists());
    assert!(!dir.path().join("model.safetensors").exists());
    let (reloaded, saved) = load_adapter(base, dir.path()).expect("loads");
    assert_eq!(saved.resolved(), lora.resolved());
    assert_eq!(parameters(&reloaded), parameters(trainer.model()));
}
