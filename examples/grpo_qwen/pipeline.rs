//! The demo's run: the tiny model, the toy tasks, an SFT warm-up and GRPO, as one library
//! [`Pipeline`] (the same one `agent-rl train grpo` runs).

use std::sync::Arc;

use agent_rl::algos::pipeline::{GrpoStage, Pipeline, SftStage, ToolUseEvaluator};
use agent_rl::algos::toy::{
    ToySplit, toy_biased_sft_dataset, toy_environments, toy_model_config, toy_split_tasks,
    toy_tokenizer, toy_warmup_config,
};
use agent_rl::algos::{GrpoConfig, LrSchedule};
use agent_rl::core::weights::random_model;
use agent_rl::core::{AgentLoopConfig, EnvironmentFactory, SamplingConfig};
use agent_rl::rewards::ToolUseReward;
use burn::tensor::backend::AutodiffBackend;
use serde_json::json;

use super::Args;

/// Runs every stage, writing the run directory, and reports.
pub fn run<B: AutodiffBackend>(args: &Args) -> anyhow::Result<()> {
    let sft_steps = args.sft_steps.unwrap_or(300);
    let grpo_steps = args.grpo_steps.unwrap_or(if args.quick { 40 } else { 80 });
    let held_out_count = if args.quick { 60 } else { 90 };
    anyhow::ensure!(
        (0.0..=1.0).contains(&args.teacher_confusion),
        "--teacher-confusion must be a share in [0, 1], got {}",
        args.teacher_confusion
    );
    let device = B::Device::default();
    let tokenizer = Arc::new(toy_tokenizer()?);
    let model = random_model::<B>(&toy_model_config(), args.seed, 0.05, &device)?;
    // Held-out requests are phrased and numbered unlike any training request (`ToySplit`).
    let train = toy_split_tasks(ToySplit::Train, 4000, args.seed);
    let held_out = toy_split_tasks(
        ToySplit::HeldOut,
        held_out_count,
        args.seed.wrapping_add(1000),
    );
    // The teacher calls `get_time` on a share of weather requests: imitation alone answers them
    // with the wrong tool, and GRPO's reward on the target is what corrects it.
    let demonstrations = toy_biased_sft_dataset(&train, args.teacher_confusion, args.seed);
    let environments: Arc<dyn EnvironmentFactory> = Arc::new(toy_environments());

    let sft = toy_warmup_config(sft_steps, 16, args.seed);
    let mut grpo = GrpoConfig {
        num_generations: 8,
        prompts_per_step: args.prompts_per_step,
        max_steps: grpo_steps,
        max_tool_iterations: 2,
        beta: args.beta,
        seed: args.seed,
        ..GrpoConfig::default()
    }
    .with_max_completion_length(96);
    grpo.optimizer.learning_rate = args.grpo_lr;
    grpo.optimizer.lr_scheduler_type = LrSchedule::Constant;
    // CPU run: decode one shard of each step's rollouts per core.
    grpo.sampling.decode_shards = std::thread::available_parallelism().map_or(1, usize::from);

    let record = json!({
        "model": serde_json::to_value(toy_model_config())?, "sft": serde_json::to_value(&sft)?,
        "grpo": serde_json::to_value(&grpo)?,
        "reward": "ToolUseReward::default() (format 1, arguments 1, outcome 2, guards on)",
        "teacher_confusion": args.teacher_confusion,
        "train_tasks": train.len(), "held_out_tasks": held_out.len(), "seed": args.seed,
    });
    let evaluator = ToolUseEvaluator::new(held_out, 96)
        .with_loop_config(AgentLoopConfig {
            sampling: SamplingConfig::greedy(96),
            max_tool_iterations: 2,
            ..AgentLoopConfig::default()
        })
        .with_environment(Arc::clone(&environments));
    let pipeline = Pipeline::builder(model, tokenizer)
        .add_stage(SftStage::new(sft, demonstrations))
        .add_stage(
            GrpoStage::new(grpo, train)
                .with_lora(args.lora())
                .add_reward(ToolUseReward::default())
                .with_environment(environments),
        )
        .with_evaluator(evaluator);
    super::run_and_report(pipeline, args, record)
}
