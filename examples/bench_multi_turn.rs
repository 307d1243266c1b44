//! Multi-turn rollout throughput with and without the key/value cache carried across turns.
//!
//! A τ-bench-shaped episode (issue 22): a 2,000-token system prompt, then 4 model turns of
//! 100 tokens, each followed by a 200-token tool result, for `--episodes` episodes decoded in
//! one batch (temperature 1, eos ignored so every turn has exactly 100 tokens). Both paths
//! produce the episode token by token as `AgentLoop` does:
//!
//! - **re-prefill**: every turn generates from the whole conversation so far
//!   (`generate_ids_with_stop`, one decoding shard), so turn `t` prefills everything again;
//! - **cache reuse**: every turn feeds only what was appended since the last one
//!   (`generate_continuations`, what `AgentLoop` does by default).
//!
//! The model is the benchmarks' Qwen2 (hidden 256, 4 layers; see `shared/bench_model.rs`) with
//! room for 4,096 positions. The example checks that both paths sample the same tokens, then
//! prints one JSON line with seconds per rollout and generated tokens per second for each.
//!
//! ```text
//! cargo run --release --example bench_multi_turn -- [--episodes 8] [--repeats 3]
//! ```

use std::time::Instant;

use agent_rl::backend::CpuBackend;
use agent_rl::core::generation::{SamplingConfig, generate_continuations, generate_ids_with_stop};
use agent_rl::core::model::{KvCache, Qwen2ForCausalLm};
use agent_rl::core::weights::random_model;
use serde_json::json;

#[path = "shared/bench_model.rs"]
mod bench_model;
use bench_model::{bench_config, median};

const SYSTEM_TOKENS: usize = 2_000;
const TURNS: usize = 4;
const TURN_TOKENS: usize = 100;
const RESULT_TOKENS: usize = 200;
const VOCAB: usize = 384;

/// Deterministic pseudo-random ids (a tool result's tokens).
fn ids(count: usize, seed: u64) -> Vec<u32> {
    let mut state = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..count)
        .map(|_| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            ((state >> 33) % VOCAB as u64) as u32
        })
        .collect()
}

fn turn_sampling(turn: usize) -> SamplingConfig {
    SamplingConfig {
        max_new_tokens: TURN_TOKENS,
        temperature: 1.0,
        ignore_eos: true,
        seed: 1_000 + turn as u64,
        ..SamplingConfig::default()
    }
}

/// Each episode's token ids after all turns, re-prefilling the conversation at every turn.
fn re_prefill(
    model: &Qwen2ForCausalLm<CpuBackend>,
    prompts: &[Vec<u32>],
) -> anyhow::Result<Vec<Vec<u32>>> {
    let mut episodes = prompts.to_vec();
    for turn in 0..TURNS {
        let generations =
            generate_ids_with_stop(model, &episodes, &turn_sampling(turn), &[], None)?;
        for (row, (episode, generation)) in episodes.iter_mut().zip(generations).enumerate() {
            episode.extend(generation.token_ids);
            if turn + 1 < TURNS {
                episode.extend(ids(RESULT_TOKENS, (turn * 100 + row) as u64));
            }
        }
    }
    Ok(episodes)
}

/// The same episodes, feeding only the new tokens at every turn.
fn cache_reuse(
    model: &Qwen2ForCausalLm<CpuBackend>,
    prompts: &[Vec<u32>],
) -> anyhow::Result<Vec<Vec<u32>>> {
    let mut episodes = prompts.to_vec();
    let mut segments = prompts.to_vec();
    let mut cache: Option<KvCache<CpuBackend>> = None;
    for turn in 0..TURNS {
        let continued = generate_continuations(
            model,
            cache.take(),
            &segments,
            &turn_sampling(turn),
            &[],
            None,
        )?;
        cache = Some(continued.cache);
        for (row, (episode, generation)) in
            episodes.iter_mut().zip(continued.generations).enumerate()
        {
            let mut segment: Vec<u32> = generation.token_ids.last().copied().into_iter().collect();
            episode.extend(generation.token_ids);
            if turn + 1 < TURNS {
                let result = ids(RESULT_TOKENS, (turn * 100 + row) as u64);
                episode.extend(&result);
                segment.extend(result);
            }
            segments[row] = segment;
        }
    }
    Ok(episodes)
}

/// mimalloc with purging off (`agent_rl::host_allocator`): stable peak memory from run to run.
#[global_allocator]
static ALLOCATOR: agent_rl::host_allocator::HostAllocator = agent_rl::host_allocator::HostAllocator;

fn main() -> anyhow::Result<()> {
    agent_rl::host_allocator::tune_host_allocator();
    agent_rl::host_threads::on_compute_pool(run_main)
}

/// The example, run on a worker of the compute pool (`agent_rl::host_threads`).
#[allow(clippy::print_stdout)]
fn run_main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let value_of = |flag: &str| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let episodes: usize = value_of("--episodes").map_or(Ok(8), |s| s.parse())?;
    let repeats: usize = value_of("--repeats").map_or(Ok(3), |s| s.parse())?;
    anyhow::ensure!(
        episodes > 0 && repeats > 0,
        "--episodes and --repeats must be positive"
    );
    let config = agent_rl::core::Qwen2Config {
        max_position_embeddings: 4_096,
        ..bench_config(VOCAB)
    };
    let model = random_model::<CpuBackend>(&config, 0, 0.02, &Default::default())?;
    let prompts: Vec<Vec<u32>> = (0..episodes)
        .map(|e| ids(SYSTEM_TOKENS, 10_000 + e as u64))
        .collect();

    let mut timings = [Vec::new(), Vec::new()];
    let mut outputs = [Vec::new(), Vec::new()];
    for _ in 0..repeats {
        for (path, (timing, output)) in timings.iter_mut().zip(&mut outputs).enumerate() {
            let start = Instant::now();
            *output = if path == 0 {
                re_prefill(&model, &prompts)?
            } else {
                cache_reuse(&model, &prompts)?
            };
            timing.push(start.elapsed().as_secs_f64());
        }
    }
    anyhow::ensure!(
        outputs[0] == outputs[1],
        "the two paths sampled different tokens"
    );
    let generated = (episodes * TURNS * TURN_TOKENS) as f64;
    let [re_prefill_s, reuse_s] = timings.map(median);
    println!(
        "{}",
        json!({
            "episodes": episodes,
            "system_tokens": SYSTEM_TOKENS,
            "turns": TURNS,
            "turn_tokens": TURN_TOKENS,
            "result_tokens": RESULT_TOKENS,
            "repeats": repeats,
            "re_prefill_seconds_per_rollout": re_prefill_s,
            "cache_reuse_seconds_per_rollout": reuse_s,
            "re_prefill_generated_tokens_per_second": generated / re_prefill_s,
            "cache_reuse_generated_tokens_per_second": generated / reuse_s,
            "speedup": re_prefill_s / reuse_s,
            "identical_tokens": true,
        })
    );
    Ok(())
}
