//! The policy layer end to end, with no download: load a tiny Qwen2 checkpoint in Hugging Face
//! layout, render a tool-use conversation with its chat template, sample a completion with the KV
//! cache, parse tool calls from it, and score the completion token by token.
//!
//! ```text
//! cargo run --release --example policy_demo
//! ```
//! The weights are random (the committed test fixture), so the text is noise; everything else —
//! template, tokens, sampling, parsing, log-probabilities — is the real code path.

use std::sync::Arc;

use agent_rl::backend::CpuBackend;
use agent_rl::core::generation::token_scores;
use agent_rl::core::weights::{LoadOptions, load_pretrained};
use agent_rl::core::{
    BurnPolicy, ChatRequest, ChatTokenizer, Message, Policy, SamplingConfig, ToolSpec,
};
use burn::prelude::*;
use serde_json::json;

#[allow(clippy::print_stdout)]
fn main() -> anyhow::Result<()> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("agent-rl-core/tests/fixtures/qwen2_tiny/tied_f32");
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
    let mut policy = BurnPolicy::new(model, tokenizer.clone());
    let sampling = SamplingConfig {
        max_new_tokens: 24,
        temperature: 0.8,
        top_p: 0.95,
        seed: 1,
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
    let prompt = tokenizer.encode_chat(&request.messages, &request.tools, true)?;
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
        0.8,
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
