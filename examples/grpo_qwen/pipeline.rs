//! The demo's stages: model, tasks, SFT warm-up, GRPO, evaluations.

use std::sync::Arc;

use agent_rl::algos::sft::SftTrainer;
use agent_rl::algos::toy::{
    toy_environments, toy_model_config, toy_sft_dataset, toy_tasks, with_toy_template,
};
use agent_rl::algos::{
    GrpoConfig, GrpoTrainer, LrSchedule, OptimizerConfig, SftConfig, ToolUseScores,
    evaluate_tool_use,
};
use agent_rl::core::test_utils::tiny_tokenizer;
use agent_rl::core::weights::random_model;
use agent_rl::core::{
    AgentLoopConfig, ChatTokenizer, HermesToolCallParser, Qwen2ForCausalLm, SamplingConfig,
};
use agent_rl::progress::{progress_bar, progress_observer};
use agent_rl::rewards::ToolUseReward;
use burn::module::AutodiffModule;
use burn::tensor::backend::AutodiffBackend;
use serde_json::{Value, json};

use super::Args;
use agent_rl::run_dir::RunDir;

/// Held-out scores at the three stages.
#[derive(serde::Serialize)]
pub struct Outcome {
    pub before: ToolUseScores,
    pub after_sft: ToolUseScores,
    pub after: ToolUseScores,
}

impl Outcome {
    /// The `--summary` file's content: `{"before": {…}, "after_sft": {…}, "after": {…}}`.
    pub fn summary(&self) -> serde_json::Result<Value> {
        serde_json::to_value(self)
    }

    /// A Markdown table of the three stages.
    pub fn table(&self) -> String {
        let mut out = String::from(
            "| held-out tasks | format accuracy | argument match | success rate |\n|---|---:|---:|---:|\n",
        );
        for (name, s) in [
            ("before training", &self.before),
            ("after SFT warm-up", &self.after_sft),
            ("after GRPO", &self.after),
        ] {
            out.push_str(&format!(
                "| {name} | {:.1}% | {:.1}% | {:.1}% |\n",
                100.0 * s.format_accuracy,
                100.0 * s.argument_match,
                100.0 * s.success_rate
            ));
        }
        out
    }
}

fn evaluate<B: AutodiffBackend>(
    model: &Qwen2ForCausalLm<B>,
    tokenizer: &ChatTokenizer,
    tasks: &[agent_rl::core::Task],
) -> anyhow::Result<ToolUseScores> {
    let config = AgentLoopConfig {
        sampling: SamplingConfig::greedy(96),
        max_tool_iterations: 2,
        max_prompt_length: None,
        max_tool_calls_per_turn: None,
    };
    let env = toy_environments();
    Ok(evaluate_tool_use(
        &model.valid(),
        tokenizer,
        &HermesToolCallParser::default(),
        tasks,
        Some(&env),
        config,
    )?)
}

/// Runs every stage, writing the run directory.
pub fn run<B: AutodiffBackend>(args: &Args) -> anyhow::Result<Outcome> {
    let sft_steps = args.sft_steps.unwrap_or(100);
    let grpo_steps = args.grpo_steps.unwrap_or(if args.quick { 12 } else { 80 });
    let held_out_count = if args.quick { 60 } else { 90 };
    let device = B::Device::default();
    let tokenizer = Arc::new(with_toy_template(&tiny_tokenizer()?)?);
    let model = random_model::<B>(&toy_model_config(), args.seed, 0.05, &device)?;
    let train = toy_tasks(4000, args.seed);
    let held_out = toy_tasks(held_out_count, args.seed.wrapping_add(1000));

    let sft = SftConfig {
        max_steps: Some(sft_steps),
        batch_size: 16,
        eval_fraction: 0.0,
        seed: args.seed,
        optimizer: OptimizerConfig {
            learning_rate: 1e-2,
            lr_scheduler_type: LrSchedule::Constant,
            warmup_steps: 5,
            ..OptimizerConfig::default()
        },
        ..SftConfig::default()
    };
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

    let mut run_dir = RunDir::create(&args.run_dir)?;
    run_dir.write_json("config.json", &json!({
        "model": serde_json::to_value(toy_model_config())?, "sft": serde_json::to_value(&sft)?, "grpo": serde_json::to_value(&grpo)?,
        "reward": "ToolUseReward::default() (format 1, arguments 1, outcome 2, guards on)",
        "train_tasks": train.len(), "held_out_tasks": held_out.len(), "seed": args.seed,
    }))?;

    let before = evaluate(&model, &tokenizer, &held_out)?;
    let progress = progress_bar(sft_steps, "SFT");
    let mut trainer = SftTrainer::builder(model, Arc::clone(&tokenizer))
        .with_config(sft)
        .with_observer(progress_observer(
            &progress,
            run_dir.metrics_sink("sft")?,
            |m| format!("loss {:.3}", m.loss),
        ))
        .build()?;
    trainer.train(&toy_sft_dataset(&train))?;
    progress.finish();
    let model = trainer.into_model();
    let after_sft = evaluate(&model, &tokenizer, &held_out)?;

    let progress = progress_bar(grpo_steps, "GRPO");
    let mut trainer = GrpoTrainer::builder(model, Arc::clone(&tokenizer))
        .with_config(grpo)
        .add_reward(ToolUseReward::default())
        .with_environment(toy_environments())
        .with_observer(progress_observer(
            &progress,
            run_dir.metrics_sink("grpo")?,
            |m| format!("reward {:.2}", m.reward),
        ))
        .build()?;
    trainer.train(&train)?;
    progress.finish();
    let model = trainer.into_model();
    let after = evaluate(&model, &tokenizer, &held_out)?;
    run_dir.finish(&model.valid(), &tokenizer)?;
    let outcome = Outcome {
        before,
        after_sft,
        after,
    };
    run_dir.write_json("summary.json", &outcome.summary()?)?;
    Ok(outcome)
}
