//! The learning proof on tool use through the library's [`Pipeline`] (as the CLI and the demo
//! run it), training LoRA adapters (rank 8) on the frozen warm-up model: after an SFT warm-up on
//! a teacher that calls `get_time` for 70% of weather requests (`toy_biased_sft_dataset`), where
//! imitation alone answers weather requests with the wrong tool, single-turn GRPO with the
//! standard reward recipe (and a KL term to the warm-up model — the base with the adapters off)
//! raises the mean reward and the held-out exact-call success on every seed in `SEEDS`, and the
//! held-out success by [`MEAN_MARGIN`] on average over them; none is picked. Held-out requests
//! are phrased and numbered unlike any training one (`ToySplit::HeldOut`, checked disjoint in
//! `tests/toy.rs`). Full fine-tuning's gain, against a more-SFT control arm, is `gain.rs`.
//!
//! The run's last bits depend on the CPU (gemm's kernels and blocking follow its SIMD width and
//! cache sizes) and a last-bit change moves the sampled tokens, so one seed's gain differs between
//! machines: the per-seed bar is a rise beyond noise, the size of the gain is asserted on the mean
//! (figures per machine in docs/src/experiments/2026-12-08-learning-tests-across-cpus.md).

use std::sync::Arc;

use agent_rl_algos::pipeline::{GrpoStage, Pipeline, SftStage, ToolUseEvaluator};
use agent_rl_algos::toy::{
    ToySplit, call_only, toy_biased_sft_dataset, toy_model_config, toy_split_tasks, toy_tokenizer,
    toy_warmup_config,
};
use agent_rl_algos::{GrpoConfig, LrSchedule};
use agent_rl_core::lora::LoraConfig;
use agent_rl_core::weights::random_model;
use agent_rl_core::{AgentLoopConfig, SamplingConfig};
use agent_rl_rewards::ToolUseReward;

use crate::B;

/// Every seed run (model, tasks, teacher, sampling); no selection.
const SEEDS: [u64; 3] = [1, 2, 3];
/// GRPO steps (8 prompts × 8 completions each).
const GRPO_STEPS: usize = 30;
/// The held-out exact-call success GRPO must add to the warm-up's on every seed: three of the
/// 60 requests (one is 0.017).
const SEED_MARGIN: f32 = 0.05;
/// The held-out exact-call success GRPO must add to the warm-up's on average over `SEEDS`.
const MEAN_MARGIN: f32 = 0.15;
/// Tokens per completion, in GRPO and in the greedy evaluation.
const MAX_TOKENS: usize = 64;
/// LoRA's learning rate: four times full fine-tuning's 1e-3 in `gain.rs`, as LoRA's updates
/// are low-rank.
const LORA_LEARNING_RATE: f64 = 4e-3;

#[test]
fn lora_grpo_raises_held_out_call_success_on_every_seed_where_imitation_plateaus() {
    let lora = LoraConfig {
        r: 8,
        alpha: 16.0,
        ..LoraConfig::default()
    };
    let mut failures = Vec::new();
    let mut gains = Vec::new();
    for seed in SEEDS {
        let (gain, failed) = learns_tool_use(seed, &lora);
        gains.push(gain);
        failures.extend(failed);
    }
    let mean = gains.iter().sum::<f32>() / gains.len() as f32;
    if mean < MEAN_MARGIN {
        failures.push(format!(
            "held-out success rose by {mean} on average over the seeds ({gains:?}; needs +{MEAN_MARGIN})"
        ));
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

/// SFT warm-up on the biased teacher, then GRPO on LoRA adapters, all with `seed`; returns the
/// held-out success GRPO added and what did not rise.
fn learns_tool_use(seed: u64, lora: &LoraConfig) -> (f32, Vec<String>) {
    let started = std::time::Instant::now();
    let tokenizer = Arc::new(toy_tokenizer().expect("tokenizer"));
    let model =
        random_model::<B>(&toy_model_config(), seed, 0.05, &Default::default()).expect("model");
    let train = toy_split_tasks(ToySplit::Train, 4000, seed);
    let sft_rows = toy_biased_sft_dataset(&train, 0.7, seed);
    let held_out = call_only(toy_split_tasks(ToySplit::HeldOut, 60, seed + 1000));
    let sft = toy_warmup_config(300, 16, seed);
    let mut grpo = GrpoConfig {
        num_generations: 8,
        prompts_per_step: 8,
        max_steps: GRPO_STEPS,
        beta: 0.04,
        seed,
        ..GrpoConfig::default()
    }
    .with_max_completion_length(MAX_TOKENS);
    grpo.optimizer.learning_rate = LORA_LEARNING_RATE;
    grpo.optimizer.lr_scheduler_type = LrSchedule::Constant;
    grpo.sampling.decode_shards = 2;
    let evaluator = ToolUseEvaluator::new(held_out, MAX_TOKENS).with_loop_config(AgentLoopConfig {
        sampling: SamplingConfig::greedy(MAX_TOKENS),
        max_tool_iterations: 1,
        ..AgentLoopConfig::default()
    });
    let run = Pipeline::builder(model, tokenizer)
        .add_stage(SftStage::new(sft, sft_rows))
        .add_stage(
            GrpoStage::new(grpo, call_only(train))
                .add_reward(ToolUseReward::default())
                .with_lora(Some(lora.clone())),
        )
        .with_evaluator(evaluator)
        .build()
        .expect("pipeline")
        .run()
        .expect("pipeline runs");
    let before = *run.score("after_sft").expect("scored after the warm-up");
    let after = *run.score("after").expect("scored after GRPO");
    let report = run.grpo().expect("GRPO ran").clone();
    let third = GRPO_STEPS / 3;
    let first = report.mean_reward(0..third).expect("steps");
    let last = report
        .mean_reward(GRPO_STEPS - third..GRPO_STEPS)
        .expect("steps");
    eprintln!(
        "seed {seed}: LoRA GRPO reward {first:.3} -> {last:.3}; held-out call success {:.3} -> \
         {:.3} (format {:.3} -> {:.3}); {:.0} s",
        before.success_rate,
        after.success_rate,
        before.format_accuracy,
        after.format_accuracy,
        started.elapsed().as_secs_f64()
    );
    assert!(report.steps.iter().all(|m| m.loss.is_finite()));
    let logged = report.steps[0].to_json();
    for key in [
        "rewards/tool_use/mean",
        "rewards/format/mean",
        "rewards/arguments/mean",
        "rewards/outcome/mean",
    ] {
        assert!(logged.get(key).is_some(), "{key} not logged");
    }
    let mut failures = Vec::new();
    if last <= first {
        failures.push(format!(
            "seed {seed}: mean reward did not rise: {first} -> {last}"
        ));
    }
    if after.success_rate < before.success_rate + SEED_MARGIN {
        failures.push(format!(
            "seed {seed}: held-out success {} -> {} (needs +{SEED_MARGIN})",
            before.success_rate, after.success_rate
        ));
    }
    (after.success_rate - before.success_rate, failures)
}
