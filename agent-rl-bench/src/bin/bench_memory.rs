//! The memory planner against measured peak memory: full fine-tuning SFT and GRPO steps on
//! random models of a few sizes, on the CPU backend, each case in its own process.
//!
//! Each case builds its model and trainer and runs two optimiser steps (the second one has the
//! AdamW moments allocated while its activations are alive, as every later step does). Two
//! figures are taken: the peak of the bytes allocated and not yet freed (a counting global
//! allocator around the system one; the CPU analogue of `torch.cuda.max_memory_allocated`,
//! and what the planner estimates), and the peak resident set (`VmHWM` in
//! `/proc/self/status`), both minus their values just before the model was built. The resident
//! peak is higher: glibc's allocator keeps freed blocks of up to its (adaptive) mmap threshold in
//! per-thread heaps instead of returning them, so fragmentation adds to the live data.
//!
//! ```text
//! cargo run --release -p agent-rl-bench --bin bench_memory            # every case, a Markdown table
//! cargo run --release -p agent-rl-bench --bin bench_memory -- --case sft-wide-vocab   # one case, JSON
//! cargo run --release -p agent-rl-bench --bin bench_memory -- --cases q05   # the cases named q05…
//! cargo run --release -p agent-rl-bench --bin bench_memory -- --cases rl-    # PPO against GRPO
//! ```
//!
//! The `rl-` pair measures what dropping the critic saves: one PPO step (policy, critic, the
//! reference, a reward model scoring the episodes) against one GRPO step (policy, reference,
//! the same reward model) on the same model, prompts and completions. The planner models
//! neither the reward model nor PPO's critic, so these two rows have no estimate.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use agent_rl::algos::plan::{
    LoraPlan, MemoryPlanRequest, TrainMethod, WeightDtype, format_bytes, plan_memory,
};
use agent_rl::algos::sft::SftTrainer;
use agent_rl::algos::{
    GrpoConfig, GrpoTrainer, LrSchedule, PpoConfig, PpoTrainer, RewardModelScorer, SftConfig,
    SftDataset,
};
use agent_rl::backend::{CpuBackend, CpuTrainBackend};
use agent_rl::core::lora::{BaseDtype, LoraConfig};
use agent_rl::core::weights::random_model;
use agent_rl::core::{ChatTokenizer, Message, Qwen2Config, Qwen2ForSequenceClassification, Task};
use agent_rl::rewards::{FnReward, LearnedReward, Reward, Sample};
use agent_rl_bench::{peak_rss_bytes, plain_toy_tokenizer, rss_bytes};
use anyhow::Context;
use clap::Parser;
use serde_json::json;

/// The system allocator, counting the bytes live now and at most.
struct Counting;

static LIVE: AtomicU64 = AtomicU64::new(0);
static PEAK: AtomicU64 = AtomicU64::new(0);

fn grew(bytes: usize) {
    let now = LIVE.fetch_add(bytes as u64, Ordering::Relaxed) + bytes as u64;
    PEAK.fetch_max(now, Ordering::Relaxed);
}

// SAFETY: every call is forwarded to `System` unchanged; only counters are updated beside it.
// (A counting global allocator cannot be written without `unsafe`; the workspace denies it
// elsewhere.)
#[allow(unsafe_code)]
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: same contract as `System::alloc`.
        let ptr = unsafe { System.alloc(layout) };
        if !ptr.is_null() {
            grew(layout.size());
        }
        ptr
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: same contract as `System::alloc_zeroed`.
        let ptr = unsafe { System.alloc_zeroed(layout) };
        if !ptr.is_null() {
            grew(layout.size());
        }
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as `System::dealloc`.
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size() as u64, Ordering::Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: same contract as `System::realloc`.
        let moved = unsafe { System.realloc(ptr, layout, new_size) };
        if !moved.is_null() {
            LIVE.fetch_sub(layout.size() as u64, Ordering::Relaxed);
            grew(new_size);
        }
        moved
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// What a case trains.
#[derive(Clone, Copy, PartialEq)]
enum Method {
    /// As the planner's method of that name, with its estimate.
    Planned(TrainMethod),
    /// GRPO scored by a reward model (no estimate: the planner has no reward model).
    GrpoLearned,
    /// PPO scored by a reward model, with a critic from the policy (no estimate).
    PpoLearned,
}

/// One measured configuration.
struct Case {
    name: &'static str,
    method: Method,
    /// hidden, intermediate, layers, heads, kv heads, vocab (0 = the tokenizer's)
    shape: (usize, usize, usize, usize, usize, usize),
    /// SFT: sequences per micro-batch; GRPO: prompts per step.
    batch: usize,
    prompt: usize,
    completion: usize,
    accumulation: usize,
    /// LoRA rank on every projection (0: full fine-tuning).
    lora_r: usize,
    /// Activation checkpointing per decoder layer.
    checkpointing: bool,
    /// The frozen base in bf16 (LoRA only).
    half_base: bool,
}

const GROUP: usize = 8;

/// Full fine-tuning of every weight in f32, no LoRA, no checkpointing.
const FULL: (usize, bool, bool) = (0, false, false);

/// Qwen2.5-0.5B's layer shapes (hidden 896, intermediate 4864, 14 heads, 2 KV heads), 4 of its
/// 24 layers, the demo tokenizer's vocabulary: the GPU check's GRPO step (4 prompts × K 8,
/// 128 + 128 tokens, micro-batches of 8 sequences) under three memory settings.
const QWEN05: (usize, usize, usize, usize, usize, usize) = (896, 4864, 4, 14, 2, 0);

/// The PPO-against-GRPO pair: the `grpo` case's model, prompts and completions.
const RL_PAIR: (usize, usize, usize, usize, usize, usize) = (512, 1408, 6, 8, 2, 0);

const CASES: [Case; 9] = [
    Case {
        name: "sft-wide-vocab",
        method: Method::Planned(TrainMethod::Sft),
        shape: (256, 704, 4, 4, 2, 32768),
        batch: 4,
        prompt: 128,
        completion: 384,
        accumulation: 1,
        lora_r: FULL.0,
        checkpointing: FULL.1,
        half_base: FULL.2,
    },
    Case {
        name: "sft-deep",
        method: Method::Planned(TrainMethod::Sft),
        shape: (512, 1408, 8, 8, 2, 4096),
        batch: 4,
        prompt: 64,
        completion: 192,
        accumulation: 1,
        lora_r: FULL.0,
        checkpointing: FULL.1,
        half_base: FULL.2,
    },
    Case {
        name: "grpo",
        method: Method::Planned(TrainMethod::Grpo),
        shape: (512, 1408, 6, 8, 2, 0),
        batch: 4,
        prompt: 64,
        completion: 128,
        accumulation: 1,
        lora_r: FULL.0,
        checkpointing: FULL.1,
        half_base: FULL.2,
    },
    Case {
        name: "grpo-accum4",
        method: Method::Planned(TrainMethod::Grpo),
        shape: (512, 1408, 6, 8, 2, 0),
        batch: 4,
        prompt: 64,
        completion: 128,
        accumulation: 4,
        lora_r: FULL.0,
        checkpointing: FULL.1,
        half_base: FULL.2,
    },
    Case {
        name: "q05-full",
        method: Method::Planned(TrainMethod::Grpo),
        shape: QWEN05,
        batch: 4,
        prompt: 128,
        completion: 128,
        accumulation: 4,
        lora_r: FULL.0,
        checkpointing: FULL.1,
        half_base: FULL.2,
    },
    Case {
        name: "q05-lora16",
        method: Method::Planned(TrainMethod::Grpo),
        shape: QWEN05,
        batch: 4,
        prompt: 128,
        completion: 128,
        accumulation: 4,
        lora_r: 16,
        checkpointing: false,
        half_base: false,
    },
    Case {
        name: "q05-lora16-ckpt-bf16",
        method: Method::Planned(TrainMethod::Grpo),
        shape: QWEN05,
        batch: 4,
        prompt: 128,
        completion: 128,
        accumulation: 4,
        lora_r: 16,
        checkpointing: true,
        half_base: true,
    },
    Case {
        name: "rl-grpo-rm",
        method: Method::GrpoLearned,
        shape: RL_PAIR,
        batch: 4,
        prompt: 64,
        completion: 128,
        accumulation: 1,
        lora_r: FULL.0,
        checkpointing: FULL.1,
        half_base: FULL.2,
    },
    Case {
        name: "rl-ppo-rm",
        method: Method::PpoLearned,
        shape: RL_PAIR,
        batch: 4,
        prompt: 64,
        completion: 128,
        accumulation: 1,
        lora_r: FULL.0,
        checkpointing: FULL.1,
        half_base: FULL.2,
    },
];

fn model_config(case: &Case, tokenizer_vocab: usize) -> Qwen2Config {
    let (hidden, intermediate, layers, heads, kv_heads, vocab) = case.shape;
    Qwen2Config {
        vocab_size: if vocab == 0 { tokenizer_vocab } else { vocab },
        hidden_size: hidden,
        intermediate_size: intermediate,
        num_hidden_layers: layers,
        num_attention_heads: heads,
        num_key_value_heads: Some(kv_heads),
        max_position_embeddings: 4096,
        tie_word_embeddings: true,
        ..Qwen2Config::tiny()
    }
}

fn request(case: &Case, method: TrainMethod, model: Qwen2Config) -> MemoryPlanRequest {
    MemoryPlanRequest {
        method,
        batch_size: case.batch,
        prompts_per_step: case.batch,
        num_generations: GROUP,
        gradient_accumulation_steps: Some(case.accumulation),
        max_prompt_length: case.prompt,
        max_completion_length: case.completion,
        weight_dtype: if case.half_base {
            WeightDtype::Bf16
        } else {
            WeightDtype::F32
        },
        lora: (case.lora_r > 0).then(|| LoraPlan::all_linear(case.lora_r)),
        gradient_checkpointing: case.checkpointing,
        beta: 0.04,
        ..MemoryPlanRequest::new(model)
    }
}

/// Text of at least `tokens` tokens.
fn long_text(tokenizer: &ChatTokenizer, tokens: usize, salt: usize) -> anyhow::Result<String> {
    const WORDS: [&str; 8] = [
        "the", "tool", "call", "weather", "paris", "returns", "value", "answer",
    ];
    let mut text = String::new();
    let mut index = salt;
    while tokenizer.encode(&text)?.len() < tokens {
        text.push_str(WORDS[index % WORDS.len()]);
        text.push(' ');
        index = index.wrapping_mul(2_654_435_761).wrapping_add(7) >> 3;
    }
    Ok(text)
}

/// A text of exactly `tokens` tokens (checked by re-encoding).
fn exact_text(tokenizer: &ChatTokenizer, tokens: usize, salt: usize) -> anyhow::Result<String> {
    for attempt in 0..64 {
        let text = long_text(tokenizer, tokens + 8, salt * 64 + attempt)?;
        let ids = tokenizer.encode(&text)?;
        let cut = tokenizer.decode(&ids[..tokens], false)?;
        if tokenizer.encode(&cut)?.len() == tokens {
            return Ok(cut);
        }
    }
    anyhow::bail!("no text of exactly {tokens} tokens")
}

fn run_sft(case: &Case, tokenizer: ChatTokenizer, config: &Qwen2Config) -> anyhow::Result<()> {
    let length = case.prompt + case.completion;
    let mut rows = String::new();
    for index in 0..case.batch * 2 {
        let row = json!({
            "prompt": long_text(&tokenizer, case.prompt, index)?,
            "completion": long_text(&tokenizer, length, index + 100)?,
        });
        rows.push_str(&row.to_string());
        rows.push('\n');
    }
    let dataset = SftDataset::from_jsonl_str(&rows, "bench_memory")?;
    let model = random_model::<CpuTrainBackend>(config, 0, 0.02, &Default::default())?;
    let mut sft = SftConfig {
        max_steps: Some(2),
        batch_size: case.batch,
        max_length: length,
        ..SftConfig::default()
    };
    sft.optimizer.gradient_accumulation_steps = case.accumulation;
    let mut trainer = SftTrainer::builder(model, Arc::new(tokenizer))
        .with_config(sft)
        .build()?;
    trainer.train(&dataset)?;
    Ok(())
}

/// The case's prompts, each exactly `case.prompt` tokens.
fn rl_tasks(case: &Case, tokenizer: &ChatTokenizer) -> anyhow::Result<Vec<Task>> {
    (0..case.batch)
        .map(|index| {
            Ok(Task {
                id: format!("prompt-{index}"),
                messages: vec![Message::user(exact_text(tokenizer, case.prompt, index)?)],
                tools: Vec::new(),
                data: serde_json::Value::Null,
            })
        })
        .collect()
}

/// The episodes' reward: a reward model (a random one of the policy's shape, on the inner
/// backend, as the pipeline holds it) for the `rl-` pair, else a rule that differs within a
/// group, so every completion enters the loss.
fn rl_reward(
    case: &Case,
    tokenizer: &Arc<ChatTokenizer>,
    config: &Qwen2Config,
) -> anyhow::Result<Box<dyn Reward>> {
    if case.method == Method::Planned(TrainMethod::Grpo) {
        return Ok(Box::new(FnReward::new(
            "length_of_text",
            |sample: Sample<'_>| {
                let text: usize = sample.trajectory.turns.iter().map(|t| t.text.len()).sum();
                Some((text % 7) as f32)
            },
        )));
    }
    let backbone = random_model::<CpuBackend>(config, 1, 0.02, &Default::default())?;
    let model = Qwen2ForSequenceClassification::from_policy(backbone, tokenizer.pad_id, 2);
    let scorer = RewardModelScorer::new(model, Arc::clone(tokenizer))?;
    Ok(Box::new(LearnedReward::new("reward_model", scorer)))
}

fn run_grpo(case: &Case, tokenizer: ChatTokenizer, config: &Qwen2Config) -> anyhow::Result<()> {
    let tasks = rl_tasks(case, &tokenizer)?;
    let tokenizer = Arc::new(tokenizer);
    let reward = rl_reward(case, &tokenizer, config)?;
    let model = random_model::<CpuTrainBackend>(config, 0, 0.02, &Default::default())?;
    let mut grpo = GrpoConfig {
        num_generations: GROUP,
        prompts_per_step: case.batch,
        max_steps: 2,
        beta: 0.04,
        seed: 0,
        gradient_checkpointing: case.checkpointing,
        ..GrpoConfig::default()
    }
    .with_max_completion_length(case.completion);
    grpo.sampling.ignore_eos = true;
    grpo.sampling.decode_shards = std::thread::available_parallelism().map_or(1, usize::from);
    grpo.optimizer.lr_scheduler_type = LrSchedule::Constant;
    grpo.optimizer.gradient_accumulation_steps = case.accumulation;
    let lora = (case.lora_r > 0).then(|| LoraConfig {
        r: case.lora_r,
        alpha: 2.0 * case.lora_r as f64,
        base_dtype: if case.half_base {
            BaseDtype::Bf16
        } else {
            BaseDtype::F32
        },
        ..LoraConfig::default()
    });
    let mut trainer = GrpoTrainer::builder(model, tokenizer)
        .with_config(grpo)
        .with_lora(lora)
        .add_reward(reward)
        .build()?;
    trainer.train(&tasks)?;
    Ok(())
}

/// PPO on the `grpo` arm's batch: the same prompts × K completions per step, one PPO epoch
/// over one mini-batch, the critic started from the policy (the builder's default).
fn run_ppo(case: &Case, tokenizer: ChatTokenizer, config: &Qwen2Config) -> anyhow::Result<()> {
    let tasks = rl_tasks(case, &tokenizer)?;
    let tokenizer = Arc::new(tokenizer);
    let reward = rl_reward(case, &tokenizer, config)?;
    let model = random_model::<CpuTrainBackend>(config, 0, 0.02, &Default::default())?;
    let mut ppo = PpoConfig {
        num_generations: GROUP,
        prompts_per_step: case.batch,
        max_steps: 2,
        num_ppo_epochs: 1,
        num_mini_batches: 1,
        seed: 0,
        ..PpoConfig::default()
    }
    .with_max_completion_length(case.completion);
    ppo.sampling.ignore_eos = true;
    ppo.sampling.decode_shards = std::thread::available_parallelism().map_or(1, usize::from);
    ppo.optimizer.lr_scheduler_type = LrSchedule::Constant;
    ppo.optimizer.gradient_accumulation_steps = case.accumulation;
    let mut trainer = PpoTrainer::builder(model, tokenizer)
        .with_config(ppo)
        .add_reward(reward)
        .build()?;
    trainer.train(&tasks)?;
    Ok(())
}

fn run_case(case: &Case) -> anyhow::Result<serde_json::Value> {
    let tokenizer = plain_toy_tokenizer()?;
    let config = model_config(case, tokenizer.vocab_size());
    let plan = match case.method {
        Method::Planned(method) => Some(plan_memory(&request(case, method, config.clone()))?),
        Method::GrpoLearned | Method::PpoLearned => None,
    };
    let baseline = rss_bytes()?;
    let live_before = LIVE.load(Ordering::Relaxed);
    PEAK.store(live_before, Ordering::Relaxed);
    let started = std::time::Instant::now();
    match case.method {
        Method::Planned(TrainMethod::Sft) => run_sft(case, tokenizer, &config)?,
        Method::Planned(TrainMethod::Grpo) | Method::GrpoLearned => {
            run_grpo(case, tokenizer, &config)?;
        }
        Method::PpoLearned => run_ppo(case, tokenizer, &config)?,
    }
    let peak = peak_rss_bytes()?;
    let measured = PEAK.load(Ordering::Relaxed).saturating_sub(live_before);
    let rss = peak.saturating_sub(baseline);
    let estimate = plan.as_ref().map(|plan| plan.total_bytes);
    Ok(json!({
        "case": case.name,
        "estimate_bytes": estimate,
        "measured_bytes": measured,
        "ratio": estimate.map(|bytes| bytes as f64 / measured as f64),
        "rss_bytes": rss,
        "rss_ratio": estimate.map(|bytes| bytes as f64 / rss as f64),
        "baseline_rss_bytes": baseline,
        "peak_rss_bytes": peak,
        "seconds": started.elapsed().as_secs_f64(),
        "breakdown": plan.as_ref().map(|plan| &plan.breakdown),
        "micro_batch_size": plan.as_ref().map(|plan| plan.micro_batch_size),
    }))
}

/// The command line.
#[derive(Debug, Parser)]
#[command(about = "The memory planner's estimates against measured peaks, case by case")]
struct Args {
    /// Run this one case in this process and print its JSON.
    #[arg(long, conflicts_with = "cases")]
    case: Option<String>,
    /// Run the cases whose names start with this prefix (each in its own process); default all.
    #[arg(long, default_value = "")]
    cases: String,
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    if let Some(name) = &args.case {
        let case = CASES
            .iter()
            .find(|case| case.name == name)
            .with_context(|| format!("--case {name}: unknown case"))?;
        let result = run_case(case)?;
        #[allow(clippy::print_stdout)]
        {
            println!("{result}");
        }
        return Ok(());
    }
    let prefix = args.cases.as_str();
    let exe = std::env::current_exe()?;
    let mut lines = vec![
        "| case | model (H / I / layers / heads / kv / vocab) | batch | estimate | peak allocated | \
         estimate / allocated | peak RSS | estimate / RSS |"
            .to_owned(),
        "|---|---|---|---:|---:|---:|---:|---:|".to_owned(),
    ];
    for case in CASES.iter().filter(|case| case.name.starts_with(prefix)) {
        let output = std::process::Command::new(&exe)
            .args(["--case", case.name])
            .output()?;
        anyhow::ensure!(
            output.status.success(),
            "case {}: {}",
            case.name,
            String::from_utf8_lossy(&output.stderr)
        );
        let result: serde_json::Value = serde_json::from_slice(&output.stdout)?;
        let bytes = |key: &str| result[key].as_u64().unwrap_or(0);
        let (hidden, intermediate, layers, heads, kv, vocab) = case.shape;
        let trainer = match case.method {
            Method::Planned(TrainMethod::Grpo) => "GRPO",
            Method::GrpoLearned => "GRPO + reward model",
            Method::PpoLearned => "PPO + critic + reward model",
            Method::Planned(TrainMethod::Sft) => "SFT",
        };
        let batch = match case.method {
            Method::Planned(TrainMethod::Sft) => format!(
                "SFT {} × {} tokens",
                case.batch,
                case.prompt + case.completion
            ),
            Method::Planned(TrainMethod::Grpo) | Method::GrpoLearned | Method::PpoLearned => {
                format!(
                    "{trainer} {} prompts × K {}, {} + {} tokens, {} micro-batch(es), β 0.04{}{}{}",
                    case.batch,
                    GROUP,
                    case.prompt,
                    case.completion,
                    case.accumulation,
                    if case.lora_r > 0 {
                        format!(", LoRA r {}", case.lora_r)
                    } else {
                        String::new()
                    },
                    if case.checkpointing {
                        ", checkpointing"
                    } else {
                        ""
                    },
                    if case.half_base { ", bf16 base" } else { "" },
                )
            }
        };
        let vocab = if vocab == 0 {
            "384".to_owned()
        } else {
            vocab.to_string()
        };
        // Cases without an estimate show a dash in the estimate columns.
        let estimated = |text: String| {
            if result["estimate_bytes"].is_null() {
                "—".to_owned()
            } else {
                text
            }
        };
        lines.push(format!(
            "| {} | {hidden} / {intermediate} / {layers} / {heads} / {kv} / {vocab} | {batch} | \
             {} | {} | {} | {} | {} |",
            case.name,
            estimated(format_bytes(bytes("estimate_bytes"))),
            format_bytes(bytes("measured_bytes")),
            estimated(format!(
                "{:.2}",
                result["ratio"].as_f64().unwrap_or(f64::NAN)
            )),
            format_bytes(bytes("rss_bytes")),
            estimated(format!(
                "{:.2}",
                result["rss_ratio"].as_f64().unwrap_or(f64::NAN)
            )),
        ));
        #[allow(clippy::print_stderr)]
        {
            eprintln!("{result}");
        }
    }
    #[allow(clippy::print_stdout)]
    {
        println!("{}", lines.join("\n"));
    }
    Ok(())
}
