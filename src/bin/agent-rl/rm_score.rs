//! `agent-rl rm-score`: a reward model's score of one conversation.

use std::io::Write;
use std::path::PathBuf;

use agent_rl::algos::reward_model::tokenize_messages;
use agent_rl::backend::{BackendJob, DeviceKind, with_backend};
use agent_rl::core::weights::LoadOptions;
use agent_rl::core::{ChatTokenizer, Message, Qwen2ForSequenceClassification, ToolSpec};
use anyhow::Context;
use burn::prelude::Backend;
use serde_json::json;

use crate::conversation_args::ConversationArgs;

/// Score a conversation with a reward model (`Qwen2ForSequenceClassification`, `num_labels = 1`):
/// the chat template without a generation prompt, the head read at the last token.
#[derive(Debug, clap::Args)]
pub struct RmScoreArgs {
    /// Reward-model directory (config.json with `Qwen2ForSequenceClassification`, safetensors
    /// with `score.weight`, tokenizer files), e.g. a run's `reward_model/`.
    #[arg(long)]
    model: PathBuf,
    /// Device: `cpu` (default) or `cuda` (binary built with `--features cuda`).
    #[arg(long, default_value = "cpu")]
    device: DeviceKind,
    #[command(flatten)]
    conversation: ConversationArgs,
    /// Print `{"score": x}` instead of the bare number.
    #[arg(long)]
    json: bool,
}

/// Loads the reward model on the chosen backend and scores the token ids.
struct Score {
    model: PathBuf,
    ids: Vec<u32>,
}

impl BackendJob for Score {
    type Output = f32;

    fn run<B: Backend>(self, device: B::Device) -> anyhow::Result<f32> {
        let (model, _) = Qwen2ForSequenceClassification::<B>::from_pretrained(
            &self.model,
            LoadOptions::default(),
            &device,
        )
        .with_context(|| format!("--model {}: loading the reward model", self.model.display()))?;
        let vocab = model.config().vocab_size;
        if let Some(bad) = self.ids.iter().find(|&&id| id as usize >= vocab) {
            anyhow::bail!(
                "--model {}: the tokenizer makes id {bad}, outside the model's vocabulary ({vocab})",
                self.model.display()
            );
        }
        let scores = model
            .score_ids(std::slice::from_ref(&self.ids), None)
            .into_data()
            .convert::<f32>()
            .into_vec::<f32>()
            .map_err(|err| anyhow::anyhow!("reading the score: {err:?}"))?;
        scores
            .first()
            .copied()
            .context("the model returned no score")
    }
}

/// The token ids a reward model reads for `messages`.
fn conversation_ids(
    tokenizer: &ChatTokenizer,
    messages: &[Message],
    tools: &[ToolSpec],
) -> anyhow::Result<Vec<u32>> {
    anyhow::ensure!(
        !messages.is_empty(),
        "--messages: the conversation is empty"
    );
    let ids = tokenize_messages(tokenizer, messages, tools)?;
    anyhow::ensure!(
        !ids.is_empty(),
        "--messages: the conversation renders to no tokens"
    );
    Ok(ids)
}

/// Runs `rm-score`.
pub fn run(args: RmScoreArgs) -> anyhow::Result<()> {
    let tokenizer = ChatTokenizer::from_dir(&args.model)
        .with_context(|| format!("--model {}: reading the tokenizer", args.model.display()))?;
    let (messages, tools) = args.conversation.load()?;
    let ids = conversation_ids(&tokenizer, &messages, &tools)?;
    let score = with_backend(
        args.device,
        Score {
            model: args.model.clone(),
            ids,
        },
    )?;
    let mut stdout = std::io::stdout().lock();
    if args.json {
        writeln!(stdout, "{}", json!({ "score": score }))?;
    } else {
        writeln!(stdout, "{score}")?;
    }
    Ok(())
}
