//! The policy layer end to end, with no download: load a tiny Qwen2 checkpoint in Hugging Face
//! layout, render a tool-use conversation with its chat template, sample a completion with the KV
//! cache, parse tool calls from it, and score the completion token by token.
//!
//! ```text
//! cargo run --release --example policy_demo
//! cargo run --release --example policy_demo -- --model ~/models/Qwen2.5-0.5B-Instruct --max-new-tokens 64
//! ```
//! The default weights are random (the committed test fixture), so the text is noise; everything
//! else — template, tokens, sampling, parsing, log-probabilities — is the real code path. The
//! fixture has 256 positions and the tool-use prompt takes most of them: the completion gets what
//! is left (at most `--max-new-tokens`).

use std::path::PathBuf;
use std::sync::Arc;

use agent_rl::backend::CpuBackend;
use agent_rl::core::generation::token_scores;
use agent_rl::core::weights::{LoadOptions, load_pretrained};
use agent_rl::core::{
    BurnPolicy, ChatRequest, ChatTokenizer, Message, Policy, SamplingConfig, ToolSpec,
};
use burn::prelude::*;
use clap::Parser;
use serde_json::json;

/// Command-line options.
#[derive(Debug, Parser)]
#[command(about = "The policy layer end to end: template, sampling, tool-call parsing, logprobs")]
struct Args {
    /// Hugging Face snapshot directory (default: the tiny random test fixture).
    #[arg(long)]
    model: Option<PathBuf>,
    /// Tokens to sample at most; fewer when the model's position window ends first.
    #[arg(long, default_value_t = 24)]
    max_new_tokens: usize,
    /// Sampling temperature (positive: the demo compares log-probabilities of the sampling
    /// distribution).
    #[arg(long, default_value_t = 0.8)]
    temperature: f32,
    /// Sampling seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

#[allow(clippy::print_stdout)]
fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    anyhow::ensure!(args.temperature > 0.0, "--temperature must be positive");
    let dir = args.model.unwrap_or_else(|| {
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("agent-rl-core/tests/fixtures/qwen2_tiny/tied_f32")
    });
    let device = Default::default();
    let (model, report) = load_pretrained::<CpuBackend>(&dir, LoadOptions::default(), &device)?;
    println!(
        "loaded {} tensors from {}",
        report.applied.len(),
        dir.display()
    );
    let tokenizer = Arc::new(ChatTokenizer::from_dir(&dir)?);
    let tools = vec![ToolSpec::new(
        "get_weather",
        "Current weather for a city.",
        json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}),
    )];
    let request = ChatRequest {
        messages: vec![Message::user("What is the weather in Paris?")],
        tools,
    };
    println!(
        "--- prompt as the model sees it ---\n{}",
        tokenizer.apply_chat_template(&request.messages, &request.tools, true)?
    );
    let prompt = tokenizer.encode_chat(&request.messages, &request.tools, true)?;
    // Prompt and completion share the model's position window.
    let window = model.config.max_position_embeddings;
    let room = window.saturating_sub(prompt.len());
    anyhow::ensure!(
        room > 0,
        "the prompt's {} tokens fill the model's {window} positions",
        prompt.len()
    );
    let max_new_tokens = args.max_new_tokens.min(room);
    println!(
        "prompt: {} tokens; completion: at most {max_new_tokens} of the {window} positions",
        prompt.len()
    );
    let mut policy = BurnPolicy::new(model, tokenizer.clone());
    let sampling = SamplingConfig {
        max_new_tokens,
        temperature: args.temperature,
        top_p: 0.95,
        seed: args.seed,
        ..SamplingConfig::default()
    };
    let completion = policy
        .generate(std::slice::from_ref(&request), &sampling)?
        .remove(0);
    println!(
        "--- completion ({:?}) ---\n{}",
        completion.finish_reason, completion.text
    );
    println!(
        "tool calls: {:?}; malformed: {}",
        completion.parsed.tool_calls,
        completion.parsed.malformed.len()
    );
    let full: Vec<i64> = prompt
        .iter()
        .chain(&completion.token_ids)
        .map(|&t| i64::from(t))
        .collect();
    let len = full.len();
    let ids = Tensor::<CpuBackend, 2, Int>::from_data(TensorData::new(full, [1, len]), &device);
    let scores = token_scores(
        &policy.model,
        ids,
        &[vec![true; len]],
        completion.token_ids.len(),
        args.temperature,
    );
    let teacher: Vec<f32> = scores
        .logprobs
        .into_data()
        .into_vec::<f32>()
        .map_err(|e| anyhow::anyhow!("{e:?}"))?;
    let gap = teacher
        .iter()
        .zip(&completion.logprobs)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0f32, f32::max);
    println!(
        "sampling vs teacher-forced logprobs: max |diff| = {gap:.2e} over {} tokens",
        teacher.len()
    );
    Ok(())
}
