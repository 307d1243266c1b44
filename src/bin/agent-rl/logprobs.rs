//! `agent-rl logprobs`: per-position argmax, logsumexp and next-token log-probability.

use std::io::Write;

use agent_rl::core::BurnPolicy;
use burn::prelude::Backend;
use serde_json::{Value, json};

use crate::model_args::{AdapterArgs, ModelArgs, parse_ids, with_adapted_policy};
use agent_rl::backend::PolicyJob;

/// Score a token sequence with the model.
#[derive(Debug, clap::Args)]
pub struct LogprobsArgs {
    #[command(flatten)]
    model: ModelArgs,
    #[command(flatten)]
    adapter: AdapterArgs,
    /// Token ids, comma-separated.
    #[arg(long)]
    ids: String,
    /// Print JSON (the only output format; accepted for symmetry with `generate`).
    #[arg(long)]
    json: bool,
}

struct Job {
    ids: Vec<u32>,
}

impl PolicyJob for Job {
    type Output = ();

    fn run<B: Backend>(self, policy: BurnPolicy<B>) -> anyhow::Result<()> {
        anyhow::ensure!(!self.ids.is_empty(), "--ids is empty");
        let vocab = policy.model.config().vocab_size;
        if let Some(bad) = self.ids.iter().find(|&&id| id as usize >= vocab) {
            anyhow::bail!("token id {bad} is outside the vocabulary ({vocab})");
        }
        let logits = policy
            .model
            .forward_ids(std::slice::from_ref(&self.ids), None);
        let host = logits
            .into_data()
            .convert::<f32>()
            .into_vec::<f32>()
            .map_err(|e| anyhow::anyhow!("{e:?}"))?;
        let positions: Vec<Value> = host
            .chunks_exact(vocab)
            .enumerate()
            .map(|(t, row)| {
                let max = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
                let argmax = row.iter().position(|&v| v == max).unwrap_or(0);
                let sum: f64 = row.iter().map(|&v| f64::from(v - max).exp()).sum();
                let logsumexp = sum.ln() as f32 + max;
                let next = self.ids.get(t + 1).map(|&id| row[id as usize] - logsumexp);
                json!({"token_id": self.ids[t], "argmax": argmax, "logsumexp": logsumexp, "next_token_logprob": next})
            })
            .collect();
        writeln!(
            std::io::stdout().lock(),
            "{}",
            json!({ "positions": positions })
        )?;
        Ok(())
    }
}

/// Runs `logprobs`.
pub fn run(args: LogprobsArgs) -> anyhow::Result<()> {
    let _ = args.json;
    with_adapted_policy(
        &args.model,
        &args.adapter,
        Job {
            ids: parse_ids(&args.ids)?,
        },
    )
}
