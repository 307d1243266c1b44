//! Multi-turn rollout throughput with and without the key/value cache carried across turns.
//!
//! A τ-bench-shaped episode (the defaults): a 2,000-token system prompt, then 4 model
//! turns of 100 tokens, each followed by a 200-token tool result, for `--episodes` episodes
//! decoded in one batch (temperature 1, eos ignored so every turn has exactly its number of
//! tokens). Both paths produce the episode token by token as `AgentLoop` does:
//!
//! - **re-prefill**: every turn generates from the whole conversation so far
//!   (`generate_ids_with_stop`, one decoding shard), so turn `t` prefills everything again;
//! - **cache reuse**: every turn feeds only what was appended since the last one
//!   (`generate_continuations`, what `AgentLoop` does by default).
//!
//! The model is the benchmarks' Qwen2 (hidden 256, 4 layers; `agent_rl_bench::bench_config`) with
//! room for 4,096 positions, or the episode's length when longer. The program checks that both
//! paths sample the same tokens, then prints one JSON line with seconds per rollout, generated
//! tokens per second and the seconds of each turn (medians over the repeats) for each path.
//! `--turn-tokens 1` leaves each turn with its prefill (or append) and one sampled token: what
//! the cache-reuse path's turns cost before decoding.
//!
//! ```text
//! cargo run --release -p agent-rl-bench --bin bench_multi_turn -- [--episodes 8] [--repeats 3] [--turns 4] \
//!     [--system-tokens 2000] [--turn-tokens 100] [--result-tokens 200]
//! ```

use std::time::Instant;

use agent_rl::backend::CpuBackend;
use agent_rl::core::generation::{SamplingConfig, generate_continuations, generate_ids_with_stop};
use agent_rl::core::model::{KvCache, Qwen2ForCausalLm};
use agent_rl::core::weights::random_model;
use agent_rl_bench::{Lcg, bench_config, median, positive};
use clap::Parser;
use serde_json::json;

const VOCAB: usize = 384;

/// The episode's shape.
#[derive(Debug, Clone, Copy)]
struct Shape {
    /// Model turns.
    turns: usize,
    /// Tokens sampled per turn.
    turn_tokens: usize,
    /// Tokens of the tool result after every turn but the last.
    result_tokens: usize,
}

/// Deterministic pseudo-random ids (a tool result's tokens).
fn ids(count: usize, seed: u64) -> Vec<u32> {
    let mut lcg = Lcg::new(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    (0..count).map(|_| lcg.below(VOCAB as u64) as u32).collect()
}

/// The tool result episode `row` receives after turn `turn`.
fn tool_result(shape: Shape, turn: usize, row: usize) -> Vec<u32> {
    ids(shape.result_tokens, (turn * 100 + row) as u64)
}

/// Turn `turn`'s sampling: its token budget, temperature 1, eos ignored, its own seed.
fn turn_sampling(shape: Shape, turn: usize) -> SamplingConfig {
    SamplingConfig {
        max_new_tokens: shape.turn_tokens,
        temperature: 1.0,
        ignore_eos: true,
        seed: 1_000 + turn as u64,
        ..SamplingConfig::default()
    }
}

/// Each episode's token ids after all turns, re-prefilling the conversation at every turn, and
/// the seconds each turn took.
fn re_prefill(
    model: &Qwen2ForCausalLm<CpuBackend>,
    prompts: &[Vec<u32>],
    shape: Shape,
) -> anyhow::Result<(Vec<Vec<u32>>, Vec<f64>)> {
    let mut episodes = prompts.to_vec();
    let mut seconds = Vec::new();
    for turn in 0..shape.turns {
        let start = Instant::now();
        let generations =
            generate_ids_with_stop(model, &episodes, &turn_sampling(shape, turn), &[], None)?;
        seconds.push(start.elapsed().as_secs_f64());
        for (row, (episode, generation)) in episodes.iter_mut().zip(generations).enumerate() {
            episode.extend(generation.token_ids);
            if turn + 1 < shape.turns {
                episode.extend(tool_result(shape, turn, row));
            }
        }
    }
    Ok((episodes, seconds))
}

/// The same episodes, feeding only the new tokens at every turn, and the seconds each turn took.
fn cache_reuse(
    model: &Qwen2ForCausalLm<CpuBackend>,
    prompts: &[Vec<u32>],
    shape: Shape,
) -> anyhow::Result<(Vec<Vec<u32>>, Vec<f64>)> {
    let mut episodes = prompts.to_vec();
    let mut segments = prompts.to_vec();
    let mut cache: Option<KvCache<CpuBackend>> = None;
    let mut seconds = Vec::new();
    for turn in 0..shape.turns {
        let start = Instant::now();
        let continued = generate_continuations(
            model,
            cache.take(),
            &segments,
            &turn_sampling(shape, turn),
            &[],
            None,
        )?;
        seconds.push(start.elapsed().as_secs_f64());
        cache = Some(continued.cache);
        for (row, (episode, generation)) in
            episodes.iter_mut().zip(continued.generations).enumerate()
        {
            let mut segment: Vec<u32> = generation.token_ids.last().copied().into_iter().collect();
            episode.extend(generation.token_ids);
            if turn + 1 < shape.turns {
                let result = tool_result(shape, turn, row);
                episode.extend(&result);
                segment.extend(result);
            }
            segments[row] = segment;
        }
    }
    Ok((episodes, seconds))
}

/// The command line.
#[derive(Debug, Parser)]
#[command(about = "Multi-turn rollouts with and without the key/value cache carried across turns")]
struct Args {
    /// Episodes decoded in one batch.
    #[arg(long, default_value_t = 8, value_parser = positive)]
    episodes: usize,
    /// Timed repeats of each path (medians are reported).
    #[arg(long, default_value_t = 3, value_parser = positive)]
    repeats: usize,
    /// Model turns per episode.
    #[arg(long, default_value_t = 4, value_parser = positive)]
    turns: usize,
    /// Tokens of the system prompt.
    #[arg(long, default_value_t = 2_000, value_parser = positive)]
    system_tokens: usize,
    /// Tokens sampled per turn.
    #[arg(long, default_value_t = 100, value_parser = positive)]
    turn_tokens: usize,
    /// Tokens of the tool result after every turn but the last.
    #[arg(long, default_value_t = 200, value_parser = positive)]
    result_tokens: usize,
}

agent_rl_bench::tuned_main!(run_main);

/// The benchmark, run on a worker of the compute pool.
#[allow(clippy::print_stdout)]
fn run_main() -> anyhow::Result<()> {
    let args = Args::parse();
    let (episodes, repeats, system_tokens) = (args.episodes, args.repeats, args.system_tokens);
    let shape = Shape {
        turns: args.turns,
        turn_tokens: args.turn_tokens,
        result_tokens: args.result_tokens,
    };
    let positions =
        system_tokens + shape.turns * shape.turn_tokens + (shape.turns - 1) * shape.result_tokens;
    let config = agent_rl::core::Qwen2Config {
        max_position_embeddings: positions.max(4_096),
        ..bench_config(VOCAB)
    };
    let model = random_model::<CpuBackend>(&config, 0, 0.02, &Default::default())?;
    let prompts: Vec<Vec<u32>> = (0..episodes)
        .map(|e| ids(system_tokens, 10_000 + e as u64))
        .collect();

    let mut timings = [Vec::new(), Vec::new()];
    let mut turn_timings = [vec![Vec::new(); shape.turns], vec![Vec::new(); shape.turns]];
    let mut outputs = [Vec::new(), Vec::new()];
    for _ in 0..repeats {
        for path in 0..2 {
            let start = Instant::now();
            let (output, turns) = if path == 0 {
                re_prefill(&model, &prompts, shape)?
            } else {
                cache_reuse(&model, &prompts, shape)?
            };
            timings[path].push(start.elapsed().as_secs_f64());
            for (timing, seconds) in turn_timings[path].iter_mut().zip(turns) {
                timing.push(seconds);
            }
            outputs[path] = output;
        }
    }
    anyhow::ensure!(
        outputs[0] == outputs[1],
        "the two paths sampled different tokens"
    );
    let generated = (episodes * shape.turns * shape.turn_tokens) as f64;
    let [re_prefill_s, reuse_s] = timings.map(median);
    let [re_prefill_turns, reuse_turns] =
        turn_timings.map(|turns| turns.into_iter().map(median).collect::<Vec<f64>>());
    println!(
        "{}",
        json!({
            "episodes": episodes,
            "system_tokens": system_tokens,
            "turns": shape.turns,
            "turn_tokens": shape.turn_tokens,
            "result_tokens": shape.result_tokens,
            "repeats": repeats,
            "re_prefill_seconds_per_rollout": re_prefill_s,
            "cache_reuse_seconds_per_rollout": reuse_s,
            "re_prefill_generated_tokens_per_second": generated / re_prefill_s,
            "cache_reuse_generated_tokens_per_second": generated / reuse_s,
            "re_prefill_turn_seconds": re_prefill_turns,
            "cache_reuse_turn_seconds": reuse_turns,
            "speedup": re_prefill_s / reuse_s,
            "identical_tokens": true,
        })
    );
    Ok(())
}
