//! `agent-rl generate`: sample a completion and print it with its parsed tool calls.

use std::io::Write;

use agent_rl::core::{BurnPolicy, SamplingConfig};
use burn::prelude::Backend;
use serde_json::json;

use crate::conversation_args::ConversationArgs;
use crate::model_args::{AdapterArgs, ModelArgs, parse_ids, with_adapted_policy};
use agent_rl::backend::PolicyJob;

/// Generate from a raw text prompt, a chat conversation, or token ids.
#[derive(Debug, clap::Args)]
pub struct GenerateArgs {
    #[command(flatten)]
    model: ModelArgs,
    #[command(flatten)]
    adapter: AdapterArgs,
    /// Raw prompt text, encoded as is (no chat template).
    #[arg(long, conflicts_with_all = ["prompt_ids", "messages", "tools"])]
    prompt: Option<String>,
    #[command(flatten)]
    conversation: ConversationArgs,
    /// Prompt token ids, comma-separated (each below the model's vocabulary size).
    #[arg(long, conflicts_with_all = ["messages", "tools"])]
    prompt_ids: Option<String>,
    /// Greedy decoding (the default when no temperature is given).
    #[arg(long, conflicts_with = "temperature")]
    greedy: bool,
    /// Sampling temperature (> 0).
    #[arg(long)]
    temperature: Option<f32>,
    /// Nucleus sampling mass.
    #[arg(long, default_value_t = 1.0)]
    top_p: f32,
    /// Keep the k most likely tokens (0 = off).
    #[arg(long, default_value_t = 0)]
    top_k: usize,
    /// Minimum probability relative to the most likely token (0 = off).
    #[arg(long, default_value_t = 0.0)]
    min_p: f32,
    /// Sampler seed.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Do not stop at eos tokens.
    #[arg(long)]
    ignore_eos: bool,
    /// Stop strings (repeatable).
    #[arg(long = "stop")]
    stop: Vec<String>,
    /// Number of tokens to generate at most.
    #[arg(long)]
    max_new_tokens: usize,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

struct Job {
    args: GenerateArgs,
}

impl PolicyJob for Job {
    type Output = ();

    fn run<B: Backend>(self, policy: BurnPolicy<B>) -> anyhow::Result<()> {
        let args = self.args;
        let prompt = if let Some(ids) = &args.prompt_ids {
            parse_ids(ids)?
        } else if let Some(text) = &args.prompt {
            policy.tokenizer.encode(text)?
        } else {
            let (messages, tools) = args.conversation.load()?;
            policy.tokenizer.encode_chat(&messages, &tools, true)?
        };
        let sampling = SamplingConfig {
            max_new_tokens: args.max_new_tokens,
            temperature: if args.greedy {
                0.0
            } else {
                args.temperature.unwrap_or(0.0)
            },
            top_k: args.top_k,
            top_p: args.top_p,
            min_p: args.min_p,
            seed: args.seed,
            stop_token_ids: Vec::new(),
            stop_strings: args.stop.clone(),
            ignore_eos: args.ignore_eos,
            // One prompt: nothing to shard.
            decode_shards: 1,
        };
        let completion = policy.complete_ids(&[prompt], &sampling)?.remove(0);
        let mut stdout = std::io::stdout().lock();
        if args.json {
            let value = json!({
                "token_ids": completion.token_ids,
                "logprobs": completion.logprobs,
                "text": completion.text,
                "tool_calls": completion.parsed.tool_calls,
                "malformed_tool_calls": completion.parsed.malformed,
                "finish_reason": completion.finish_reason,
            });
            writeln!(stdout, "{value}")?;
        } else {
            writeln!(stdout, "{}", completion.text)?;
            for call in &completion.parsed.tool_calls {
                writeln!(stdout, "tool call: {} {}", call.name, call.arguments)?;
            }
            for bad in &completion.parsed.malformed {
                writeln!(stdout, "malformed tool call ({}): {}", bad.reason, bad.raw)?;
            }
            writeln!(
                stdout,
                "finish reason: {}",
                serde_json::to_value(completion.finish_reason)?
                    .as_str()
                    .unwrap_or("?")
            )?;
        }
        Ok(())
    }
}

/// Runs `generate`.
pub fn run(args: GenerateArgs) -> anyhow::Result<()> {
    let model = ModelArgs {
        model: args.model.model.clone(),
        device: args.model.device,
    };
    let adapter = args.adapter.clone();
    with_adapted_policy(&model, &adapter, Job { args })
}
