//! `agent-rl plan`: the memory planner (`agent_rl::algos::plan`) from flags; a table or JSON.

use std::io::Write;
use std::path::PathBuf;

use agent_rl::algos::plan::{
    LoraPlan, MemoryPlan, MemoryPlanRequest, PRESETS, TargetModule, TrainMethod, WeightDtype,
    format_bytes, parse_bytes, plan_memory, preset,
};
use agent_rl::core::Qwen2Config;
use anyhow::Context;

/// Estimate the device memory of a training run, per component, and whether it fits.
#[derive(Debug, clap::Args)]
#[command(group(clap::ArgGroup::new("shape").required(true).args(["preset", "config"])))]
pub struct PlanArgs {
    /// A named model shape: qwen2.5-0.5b, -1.5b, -3b, -7b, -14b or -32b.
    #[arg(long, value_parser = parse_preset)]
    preset: Option<String>,
    /// A Hugging Face `config.json` (Qwen2).
    #[arg(long)]
    config: Option<PathBuf>,
    /// Training method.
    #[arg(long, value_enum, default_value = "grpo")]
    method: Method,
    /// LoRA rank; omit for full fine-tuning.
    #[arg(long)]
    lora_r: Option<usize>,
    /// Projections LoRA adapts: comma-separated q,k,v,o,gate,up,down, or all-linear.
    #[arg(long, default_value = "all-linear", value_parser = parse_targets)]
    lora_targets: Targets,
    /// GRPO: completions per prompt (K).
    #[arg(long, default_value_t = 8)]
    num_generations: usize,
    /// GRPO: prompts per optimiser step.
    #[arg(long, default_value_t = 8)]
    prompts_per_step: usize,
    /// SFT: sequences per micro-batch.
    #[arg(long, default_value_t = 8)]
    batch_size: usize,
    /// Micro-batches per optimiser step; default: the fewest that fit (GRPO), 1 (SFT).
    #[arg(long)]
    gradient_accumulation_steps: Option<usize>,
    /// Prompt tokens (SFT: tokens before the completion).
    #[arg(long, default_value_t = 512)]
    max_prompt_length: usize,
    /// Completion tokens.
    #[arg(long, default_value_t = 1024)]
    max_completion_length: usize,
    /// Weight dtype: f32, bf16 or f16 (the frozen base under LoRA; everything in full fine-tuning).
    #[arg(long, default_value = "f32", value_parser = parse_dtype)]
    dtype: WeightDtype,
    /// Recompute each decoder layer in the backward pass.
    #[arg(long)]
    gradient_checkpointing: bool,
    /// GRPO: KL coefficient; a reference model is kept when > 0.
    #[arg(long, default_value_t = 0.04)]
    beta: f32,
    /// Device memory to check against, e.g. 80GB, 24GiB.
    #[arg(long, value_parser = parse_memory)]
    device_memory: Option<u64>,
    /// Print the plan as one JSON object.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum Method {
    Sft,
    Grpo,
}

/// The projections of `--lora-targets`.
#[derive(Debug, Clone)]
struct Targets(Vec<TargetModule>);

fn parse_preset(name: &str) -> Result<String, String> {
    match preset(name) {
        Some(_) => Ok(name.to_ascii_lowercase()),
        None => Err(format!("unknown preset; known: {}", PRESETS.join(", "))),
    }
}

fn parse_targets(text: &str) -> Result<Targets, String> {
    TargetModule::parse_list(text)
        .map(Targets)
        .map_err(|error| error.to_string())
}

fn parse_dtype(text: &str) -> Result<WeightDtype, String> {
    WeightDtype::parse(text).map_err(|error| error.to_string())
}

fn parse_memory(text: &str) -> Result<u64, String> {
    parse_bytes(text).map_err(|error| error.to_string())
}

/// Runs `agent-rl plan`.
pub fn run(args: PlanArgs) -> anyhow::Result<()> {
    let (model, name) = match (&args.preset, &args.config) {
        (Some(name), _) => (
            preset(name).context("--preset: unknown preset")?,
            name.clone(),
        ),
        (None, Some(path)) => (
            Qwen2Config::from_file(path).with_context(|| format!("--config {}", path.display()))?,
            path.display().to_string(),
        ),
        (None, None) => anyhow::bail!("give --preset NAME or --config config.json"),
    };
    let request = MemoryPlanRequest {
        model,
        method: match args.method {
            Method::Sft => TrainMethod::Sft,
            Method::Grpo => TrainMethod::Grpo,
        },
        lora: args.lora_r.map(|r| LoraPlan {
            r,
            target_modules: args.lora_targets.0.clone(),
        }),
        batch_size: args.batch_size,
        prompts_per_step: args.prompts_per_step,
        num_generations: args.num_generations,
        gradient_accumulation_steps: args.gradient_accumulation_steps,
        max_prompt_length: args.max_prompt_length,
        max_completion_length: args.max_completion_length,
        weight_dtype: args.dtype,
        gradient_checkpointing: args.gradient_checkpointing,
        beta: args.beta,
        device_memory: args.device_memory,
    };
    let plan = plan_memory(&request).map_err(|error| anyhow::anyhow!("{}", flag_named(error)))?;
    let mut out = std::io::stdout().lock();
    if args.json {
        writeln!(out, "{}", serde_json::to_string(&plan)?)?;
    } else {
        write!(out, "{}", table(&plan, &request, &name))?;
    }
    Ok(())
}

/// The library's error with its field written as the flag that sets it.
fn flag_named(error: agent_rl::algos::AlgoError) -> String {
    let text = error.to_string();
    let flags = [
        ("`lora.r`", "--lora-r"),
        ("`lora.target_modules`", "--lora-targets"),
        ("`batch_size`", "--batch-size"),
        ("`prompts_per_step`", "--prompts-per-step"),
        ("`num_generations`", "--num-generations"),
        ("`max_completion_length`", "--max-completion-length"),
        (
            "`gradient_accumulation_steps`",
            "--gradient-accumulation-steps",
        ),
        ("`beta`", "--beta"),
        ("`model`", "the model config"),
    ];
    flags
        .iter()
        .find(|(field, _)| text.contains(field))
        .map_or(text.clone(), |(field, flag)| {
            text.replace(field, &format!("{field} ({flag})"))
        })
}

fn table(plan: &MemoryPlan, request: &MemoryPlanRequest, name: &str) -> String {
    let breakdown = &plan.breakdown;
    let mut text = format!(
        "memory plan: {name}, {}, {}, {} weights{}\n",
        match request.method {
            TrainMethod::Sft => "SFT",
            TrainMethod::Grpo => "GRPO",
        },
        request
            .lora
            .as_ref()
            .map_or("full fine-tuning".to_owned(), |lora| format!(
                "LoRA r = {} on {} projections",
                lora.r,
                lora.target_modules.len()
            )),
        match request.weight_dtype {
            WeightDtype::F32 => "f32",
            WeightDtype::Bf16 => "bf16",
            WeightDtype::F16 => "f16",
        },
        if request.gradient_checkpointing {
            ", gradient checkpointing"
        } else {
            ""
        },
    );
    text.push_str(&format!(
        "parameters {:.3} B (trainable {:.2} M); {} sequences per micro-batch, {} micro-batches per \
         optimiser step\n\n",
        plan.parameters as f64 / 1e9,
        plan.trainable_parameters as f64 / 1e6,
        plan.micro_batch_size,
        plan.gradient_accumulation_steps,
    ));
    text.push_str("| component | bytes | size |\n|---|---:|---:|\n");
    let rows = [
        ("weights", breakdown.weights),
        ("gradients", breakdown.gradients),
        ("optimizer (AdamW)", breakdown.optimizer),
        ("reference model", breakdown.reference),
        ("activations", breakdown.activations),
        ("logits", breakdown.logits),
        ("rollout KV cache", breakdown.rollout_kv_cache),
        ("total (peak)", plan.total_bytes),
    ];
    for (component, bytes) in rows {
        text.push_str(&format!(
            "| {component} | {bytes} | {} |\n",
            format_bytes(bytes)
        ));
    }
    text.push_str(
        "\npeak = weights + optimizer + reference + the largest of: activations + logits (+ the \
         gradients alive when the backward pass starts), gradients + optimiser step, rollout KV \
         cache\n",
    );
    if let Some(memory) = plan.device_memory {
        let verdict = if plan.fits == Some(true) {
            "fits"
        } else {
            "does NOT fit"
        };
        text.push_str(&format!(
            "device memory {}: {verdict} ({:.0}% used)\n",
            format_bytes(memory),
            100.0 * plan.total_bytes as f64 / memory as f64
        ));
    }
    text
}
