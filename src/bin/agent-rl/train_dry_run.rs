//! `agent-rl train grpo --config RUN.toml --dry-run [--json]`: everything the run would build
//! (model config, tokenizer, tasks, rewards, stages, memory plan) without weights or training,
//! and the reward each task's gold answer earns, which must be the reward's maximum.

use std::collections::BTreeMap;
use std::io::Write;

use agent_rl::algos::plan::{
    LoraPlan, MemoryPlan, MemoryPlanRequest, TargetModule, TrainMethod, WeightDtype, plan_memory,
};
use agent_rl::algos::toy::{toy_model_config, toy_tokenizer};
use agent_rl::core::lora::{BaseDtype, LoraConfig};
use agent_rl::core::{ChatTokenizer, Qwen2Config, Task};
use agent_rl::rewards::{Reward, Sample, Target, ToolUseReward, gold_trajectory};
use anyhow::Context;
use serde_json::{Value, json};

use crate::train_config::{EnvironmentKind, GrpoRunConfig};
use crate::train_grpo::{GrpoJob, grpo_tasks_and_rejected};

/// Runs the dry run of a GRPO job and prints its report (a table, or one JSON object).
///
/// # Errors
/// A model config or tokenizer that cannot be read, unreadable data, a reward that fails.
pub fn run(job: &GrpoJob, json_output: bool) -> anyhow::Result<()> {
    let report = dry_run(&job.config)?;
    let mut out = std::io::stdout().lock();
    if json_output {
        writeln!(out, "{}", serde_json::to_string_pretty(&report)?)?;
    } else {
        write!(out, "{}", text(&report))?;
    }
    Ok(())
}

fn dry_run(config: &GrpoRunConfig) -> anyhow::Result<Value> {
    let (model, tokenizer) = model_and_tokenizer(config)?;
    tokenizer.check_model_vocab(model.vocab_size)?;
    let data = &config.data;
    let multi_turn = data.environment == Some(EnvironmentKind::BfclMultiTurn);
    let (train, held_out, rejected) = if multi_turn {
        let factory = crate::train_grpo::bfcl_multi_turn_factory(data)?;
        (factory.tasks().to_vec(), Vec::new(), Vec::new())
    } else {
        grpo_tasks_and_rejected(data)?
    };
    let mut categories: BTreeMap<String, usize> = BTreeMap::new();
    for task in train.iter().chain(&held_out) {
        *categories.entry(category(task)).or_default() += 1;
    }
    let gold = if multi_turn {
        json!(null)
    } else {
        gold_rewards(config, train.iter().chain(&held_out))?
    };
    let plan = memory_plan(config, model.clone())?;
    let mut stages = Vec::new();
    if config.warmup.is_some() {
        stages.push("sft_warmup");
    }
    stages.push("grpo");
    if !held_out.is_empty() {
        stages.push("held_out_eval");
    }
    Ok(json!({
        "model": {
            "source": config.model.path.as_ref().map_or("tiny".into(), |p| p.display().to_string()),
            "layers": model.num_hidden_layers,
            "hidden_size": model.hidden_size,
            "vocab_size": model.vocab_size,
        },
        "tokenizer": {"ids": tokenizer.id_bound(), "chat_template": tokenizer.template().is_some()},
        "tasks": {
            "train": train.len(),
            "held_out": held_out.len(),
            "per_category": categories,
        },
        "rejected": rejected.iter().map(|(id, reason)| json!({"id": id, "reason": reason}))
            .collect::<Vec<_>>(),
        "gold_reward": gold,
        "stages": stages,
        "plan": plan,
        "plan_note": "the GRPO trainer runs each step's sequences in one micro-batch; \
                      `micro_batch_size` is the planner's choice",
    }))
}

/// The model config and tokenizer of `[model]`, without weights.
fn model_and_tokenizer(config: &GrpoRunConfig) -> anyhow::Result<(Qwen2Config, ChatTokenizer)> {
    match &config.model.path {
        Some(dir) => {
            let path = dir.join("config.json");
            let model = Qwen2Config::from_file(&path)
                .with_context(|| format!("[model] path: {}", path.display()))?;
            let tokenizer = ChatTokenizer::from_dir(dir)
                .with_context(|| format!("[model] path: the tokenizer of {}", dir.display()))?;
            Ok((model, tokenizer))
        }
        None => Ok((toy_model_config(), toy_tokenizer()?)),
    }
}

/// A task's category: BFCL's, else `tasks`.
fn category(task: &Task) -> String {
    task.data
        .get("bfcl")
        .and_then(|bfcl| bfcl.get("category"))
        .and_then(Value::as_str)
        .unwrap_or("tasks")
        .to_owned()
}

/// The `[reward]` score of every task's gold answer: min, mean, max, the reward's maximum, and
/// the tasks below it.
fn gold_rewards<'a>(
    config: &GrpoRunConfig,
    tasks: impl Iterator<Item = &'a Task>,
) -> anyhow::Result<Value> {
    let reward = ToolUseReward::new(config.reward.clone()).context("[reward]")?;
    let weights = reward.config();
    let maximum = weights.format_weight + weights.arguments_weight + weights.outcome_weight;
    let mut scores = Vec::new();
    let mut below = Vec::new();
    for task in tasks {
        let target = Target::from_task(task)?;
        if !target.judges_calls() {
            continue;
        }
        let trajectory = gold_trajectory(task, &target);
        let value = reward
            .score(Sample::new(&trajectory, &target))
            .with_context(|| format!("[reward] on the gold answer of task {}", task.id))?;
        let score = value.score.unwrap_or(f32::NAN);
        if score != maximum {
            below.push(json!({"id": task.id, "score": score}));
        }
        scores.push(score);
    }
    let count = scores.len();
    let min = scores.iter().copied().fold(f32::INFINITY, f32::min);
    let max = scores.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let mean = scores.iter().map(|&s| f64::from(s)).sum::<f64>() / count.max(1) as f64;
    Ok(json!({
        "tasks": count,
        "min": (count > 0).then_some(min),
        "mean": (count > 0).then_some(mean),
        "max": (count > 0).then_some(max),
        "maximum": maximum,
        "below_maximum": below,
    }))
}

/// The planner's estimate for the run's `[grpo]` and `[lora]`.
fn memory_plan(config: &GrpoRunConfig, model: Qwen2Config) -> anyhow::Result<MemoryPlan> {
    let grpo = &config.grpo;
    let lora = config.lora.as_ref().map(lora_plan).transpose()?;
    let request = MemoryPlanRequest {
        method: TrainMethod::Grpo,
        weight_dtype: match config.lora.as_ref().map(|l| l.base_dtype) {
            Some(BaseDtype::Bf16) => WeightDtype::Bf16,
            Some(BaseDtype::F16) => WeightDtype::F16,
            _ => WeightDtype::F32,
        },
        lora,
        prompts_per_step: grpo.prompts_per_step,
        num_generations: grpo.num_generations,
        max_prompt_length: grpo.max_prompt_length.unwrap_or(512),
        max_completion_length: grpo.max_completion_length,
        gradient_checkpointing: grpo.gradient_checkpointing,
        beta: grpo.beta,
        ..MemoryPlanRequest::new(model)
    };
    plan_memory(&request).context("the memory plan")
}

fn lora_plan(lora: &LoraConfig) -> anyhow::Result<LoraPlan> {
    Ok(LoraPlan {
        r: lora.r,
        target_modules: TargetModule::parse_list(&lora.target_modules.join(","))
            .context("[lora] target_modules")?,
    })
}

fn text(report: &Value) -> String {
    let mut out = String::from("dry run: nothing trained, no weights read\n");
    let model = &report["model"];
    out.push_str(&format!(
        "model {}: {} layers, hidden {}, vocab {}; tokenizer {} ids\n",
        model["source"].as_str().unwrap_or(""),
        model["layers"],
        model["hidden_size"],
        model["vocab_size"],
        report["tokenizer"]["ids"]
    ));
    let tasks = &report["tasks"];
    out.push_str(&format!(
        "tasks: {} train, {} held out\n",
        tasks["train"], tasks["held_out"]
    ));
    if let Some(per) = tasks["per_category"].as_object() {
        for (name, count) in per {
            out.push_str(&format!("  {name}: {count}\n"));
        }
    }
    let rejected = report["rejected"].as_array().map_or(&[][..], Vec::as_slice);
    out.push_str(&format!("rejected: {}\n", rejected.len()));
    for entry in rejected {
        out.push_str(&format!(
            "  {}: {}\n",
            entry["id"].as_str().unwrap_or(""),
            entry["reason"].as_str().unwrap_or("")
        ));
    }
    let gold = &report["gold_reward"];
    if gold.is_object() {
        out.push_str(&format!(
            "gold-answer reward over {} tasks: min {}, mean {}, max {} (the reward's maximum is {}); {} below it\n",
            gold["tasks"],
            gold["min"],
            gold["mean"],
            gold["max"],
            gold["maximum"],
            gold["below_maximum"].as_array().map_or(0, Vec::len)
        ));
    }
    out.push_str(&format!(
        "stages: {}\n",
        report["stages"]
            .as_array()
            .map(|s| s
                .iter()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join(" → "))
            .unwrap_or_default()
    ));
    let plan = &report["plan"];
    out.push_str(&format!(
        "memory plan: peak {} bytes ({:.2} GiB), {} sequences per micro-batch, {} micro-batches\n",
        plan["total_bytes"],
        plan["total_bytes"].as_f64().unwrap_or(0.0) / f64::from(1u32 << 30),
        plan["micro_batch_size"],
        plan["gradient_accumulation_steps"]
    ));
    out
}
