//! Throughput of `agent-rl serve` for 1, 4 and 16 concurrent clients, next to the same prompts
//! through the library's `generate_ids` one at a time (what `agent-rl generate` does per call,
//! without its process start and model load) and as one batch.
//!
//! Model: the benchmark shape of `bench_policy` (hidden 256, 4 layers, random weights); 16
//! prompts of 16 token ids, 64 new tokens each (greedy, eos ignored). Output: a table and one
//! JSON line.
//!
//! ```text
//! cargo run --release -p agent-rl-bench --bin bench_serve
//! ```

use std::sync::Arc;
use std::time::Instant;

use agent_rl::algos::toy::toy_tokenizer;
use agent_rl::backend::CpuBackend;
use agent_rl::core::BurnPolicy;
use agent_rl::core::generation::{SamplingConfig, generate_ids};
use agent_rl::core::weights::random_model;
use agent_rl::serve::{ServeConfig, start};
use agent_rl_bench::{Lcg, bench_config};
use clap::Parser;
use serde_json::{Value, json};

const PROMPTS: usize = 16;
const NEW_TOKENS: usize = 64;

fn prompts(vocab: usize) -> Vec<Vec<u32>> {
    let mut lcg = Lcg::new(7);
    (0..PROMPTS)
        .map(|_| (0..16).map(|_| lcg.below(vocab as u64) as u32).collect())
        .collect()
}

/// The command line: no options (the workload is fixed).
#[derive(Debug, Parser)]
#[command(about = "Throughput of `agent-rl serve` for 1, 4 and 16 concurrent clients")]
struct Args {}

fn main() -> anyhow::Result<()> {
    Args::parse();
    let tokenizer = Arc::new(toy_tokenizer()?);
    let config = bench_config(tokenizer.id_bound());
    let model = random_model::<CpuBackend>(&config, 0, 0.02, &Default::default())?;
    let prompts = prompts(config.vocab_size);
    let sampling = SamplingConfig {
        ignore_eos: true,
        ..SamplingConfig::greedy(NEW_TOKENS)
    };
    let tokens = (PROMPTS * NEW_TOKENS) as f64;
    // Warm-up, then the library baselines.
    generate_ids(&model, &prompts[..2], &sampling, &[])?;
    let start_one = Instant::now();
    for prompt in &prompts {
        generate_ids(&model, std::slice::from_ref(prompt), &sampling, &[])?;
    }
    let one_at_a_time = tokens / start_one.elapsed().as_secs_f64();
    let start_batch = Instant::now();
    generate_ids(&model, &prompts, &sampling, &[])?;
    let one_batch = tokens / start_batch.elapsed().as_secs_f64();

    let server = start(
        BurnPolicy::new(model, tokenizer),
        ServeConfig {
            port: 0,
            model_name: "bench".into(),
            ..ServeConfig::default()
        },
    )?;
    let url = format!("{}/completions", server.base_url());
    let agent: ureq::Agent = ureq::Agent::config_builder().build().into();
    let ask = |prompt: &Vec<u32>| -> anyhow::Result<usize> {
        let answer: Value = agent
            .post(&url)
            .send_json(json!({"model": "bench", "prompt": prompt, "temperature": 0,
                "max_tokens": NEW_TOKENS, "ignore_eos": true}))?
            .body_mut()
            .read_json()?;
        Ok(answer["usage"]["completion_tokens"].as_u64().unwrap_or(0) as usize)
    };
    ask(&prompts[0])?;
    let mut served = Vec::new();
    for clients in [1usize, 4, 16] {
        let before = server.metrics();
        let started = Instant::now();
        let counted: anyhow::Result<Vec<usize>> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..clients)
                .map(|client| {
                    let ask = &ask;
                    let prompts = &prompts;
                    scope.spawn(move || -> anyhow::Result<usize> {
                        let mut total = 0;
                        for prompt in prompts.iter().skip(client).step_by(clients) {
                            total += ask(prompt)?;
                        }
                        Ok(total)
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().map_err(|_| anyhow::anyhow!("client panicked"))?)
                .collect()
        });
        let generated: usize = counted?.iter().sum();
        let seconds = started.elapsed().as_secs_f64();
        let after = server.metrics();
        served.push(
            json!({"clients": clients, "tokens": generated, "seconds": seconds,
            "tokens_per_second": generated as f64 / seconds,
            "batches": after.batches - before.batches}),
        );
    }
    let mut out = std::io::stdout().lock();
    use std::io::Write;
    writeln!(out, "| path | tokens/s |")?;
    writeln!(out, "|---|---|")?;
    writeln!(
        out,
        "| generate_ids, one prompt at a time | {one_at_a_time:.0} |"
    )?;
    writeln!(
        out,
        "| generate_ids, all 16 in one batch | {one_batch:.0} |"
    )?;
    for row in &served {
        writeln!(
            out,
            "| serve, {} concurrent client(s) ({} batches) | {:.0} |",
            row["clients"],
            row["batches"],
            row["tokens_per_second"].as_f64().unwrap_or(0.0)
        )?;
    }
    writeln!(
        out,
        "{}",
        json!({"one_at_a_time": one_at_a_time, "one_batch": one_batch, "served": served})
    )?;
    Ok(())
}
