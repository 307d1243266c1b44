//! The PPO learning proof on the toy tool task: after a short SFT warm-up, PPO with the rule
//! reward (format / arguments / outcome) and a KL penalty to the warm-up model raises the mean
//! reward and the held-out exact-call success (requests disjoint from training), on every seed
//! the test runs.

use std::sync::Arc;

use agent_rl_algos::toy::{
    toy_call_tasks, toy_model_config, toy_sft_dataset, toy_tasks, toy_tokenizer,
};
use agent_rl_algos::{
    LrSchedule, OptimizerConfig, PpoConfig, PpoTrainer, SftConfig, SftTrainer, ToolUseScores,
    evaluate_tool_use,
};
use agent_rl_core::weights::random_model;
use agent_rl_core::{
    AgentLoopConfig, ChatTokenizer, HermesToolCallParser, Qwen2Config, Qwen2ForCausalLm,
    SamplingConfig, Task,
};
use agent_rl_rewards::ToolUseReward;
use burn::module::AutodiffModule;

use crate::B;

/// Seeds the test runs; the assertions hold for each.
const SEEDS: [u64; 2] = [1, 2];
const STEPS: usize = 30;

fn held_out_scores(
    model: &Qwen2ForCausalLm<B>,
    tokenizer: &ChatTokenizer,
    tasks: &[Task],
) -> ToolUseScores {
    let config = AgentLoopConfig {
        sampling: SamplingConfig::greedy(64),
        max_tool_iterations: 1,
        ..AgentLoopConfig::default()
    };
    evaluate_tool_use(
        &model.valid(),
        tokenizer,
        &HermesToolCallParser::default(),
        tasks,
        None,
        config,
    )
    .expect("evaluation runs")
}

/// The SFT warm-up every seed starts from.
fn warm_up(tokenizer: &Arc<ChatTokenizer>) -> Qwen2ForCausalLm<B> {
    let config = Qwen2Config {
        max_position_embeddings: 512,
        ..toy_model_config()
    };
    let model = random_model::<B>(&config, 1, 0.05, &Default::default()).expect("model");
    let sft = SftConfig {
        max_steps: Some(100),
        batch_size: 16,
        eval_fraction: 0.0,
        seed: 1,
        optimizer: OptimizerConfig {
            learning_rate: 1e-2,
            lr_scheduler_type: LrSchedule::Constant,
            warmup_steps: 5,
            ..OptimizerConfig::default()
        },
        ..SftConfig::default()
    };
    let mut trainer = SftTrainer::builder(model, tokenizer.clone())
        .with_config(sft)
        .build()
        .expect("SFT trainer");
    trainer
        .train(&toy_sft_dataset(&toy_tasks(4000, 1)))
        .expect("SFT runs");
    trainer.into_model()
}

#[test]
fn ppo_after_sft_raises_reward_and_held_out_call_success() {
    let started = std::time::Instant::now();
    let tokenizer = Arc::new(toy_tokenizer().expect("tokenizer"));
    let warm = warm_up(&tokenizer);
    // Training requests (seed 1) and held-out ones (seed 1001) are drawn from disjoint streams.
    let train = toy_call_tasks(4000, 1);
    let held_out = toy_call_tasks(100, 1001);
    let train_ids: std::collections::HashSet<String> =
        train.iter().map(|t| format!("{:?}", t.messages)).collect();
    assert!(
        held_out
            .iter()
            .all(|t| !train_ids.contains(&format!("{:?}", t.messages)))
    );
    let before = held_out_scores(&warm, &tokenizer, &held_out);
    for seed in SEEDS {
        let mut config = PpoConfig {
            prompts_per_step: 16,
            max_steps: STEPS,
            num_ppo_epochs: 2,
            num_mini_batches: 2,
            kl_coef: 0.02,
            vf_coef: 0.5,
            sampling: SamplingConfig {
                temperature: 1.0,
                ..SamplingConfig::default()
            },
            critic_learning_rate: Some(3e-3),
            seed,
            ..PpoConfig::default()
        }
        .with_max_completion_length(64);
        config.optimizer.learning_rate = 1e-3;
        config.optimizer.lr_scheduler_type = LrSchedule::Constant;
        let mut trainer = PpoTrainer::builder(warm.clone(), tokenizer.clone())
            .with_config(config)
            .add_reward(ToolUseReward::default())
            .build()
            .expect("PPO trainer");
        let report = trainer.train(&train).expect("PPO runs");
        let window = STEPS / 3;
        let first = report.mean_reward(0..window).expect("steps");
        let last = report.mean_reward(STEPS - window..STEPS).expect("steps");
        let after = held_out_scores(trainer.model(), &tokenizer, &held_out);
        let ppo = report
            .steps
            .last()
            .and_then(|m| m.ppo)
            .expect("PPO metrics");
        eprintln!(
            "PPO seed {seed}: reward {first:.3} -> {last:.3}; held-out call success {:.3} -> {:.3} \
             (format {:.3} -> {:.3}); last objective/kl {:.3}, loss/value_avg {:.3}; {:.0} s",
            before.success_rate,
            after.success_rate,
            before.format_accuracy,
            after.format_accuracy,
            ppo.kl,
            ppo.value_loss_avg,
            started.elapsed().as_secs_f64()
        );
        assert!(report.steps.iter().all(|m| m.loss.is_finite()));
        assert!(
            last > first + 0.2,
            "seed {seed}: mean reward did not rise: {first} -> {last}"
        );
        assert!(
            after.success_rate >= before.success_rate + 0.05,
            "seed {seed}: held-out success did not rise: {} -> {}",
            before.success_rate,
            after.success_rate
        );
    }
}
