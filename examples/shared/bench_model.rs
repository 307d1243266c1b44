//! What the benchmark examples share: the benchmarked model's shape, the median of timings and
//! the process's peak memory.

use agent_rl::core::Qwen2Config;

/// The benchmarked Qwen2 (hidden 256, intermediate 704, 4 layers, 4 heads, 2 KV heads, tied
/// embeddings) over `vocab_size` ids; `benches/bench_reference.py` builds the same model.
pub fn bench_config(vocab_size: usize) -> Qwen2Config {
    Qwen2Config {
        vocab_size,
        hidden_size: 256,
        intermediate_size: 704,
        num_hidden_layers: 4,
        num_attention_heads: 4,
        num_key_value_heads: Some(2),
        max_position_embeddings: 1024,
        tie_word_embeddings: true,
        ..Qwen2Config::tiny()
    }
}

/// The median of `values` (the upper one of the middle two for an even count); NaN when empty.
#[allow(dead_code)] // not every bench including this file takes a median
pub fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(f64::NAN)
}

/// The process's peak resident set so far, in bytes (`VmHWM` in `/proc/self/status`; Linux).
///
/// # Errors
/// When `/proc/self/status` cannot be read or has no `VmHWM` line.
#[allow(dead_code)] // not every example that includes this file reports memory
pub fn peak_rss_bytes() -> anyhow::Result<u64> {
    let status = std::fs::read_to_string("/proc/self/status")
        .map_err(|err| anyhow::anyhow!("reading /proc/self/status: {err}"))?;
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|rest| {
            rest.trim()
                .trim_end_matches("kB")
                .trim()
                .parse::<u64>()
                .ok()
        })
        .map(|kib| kib * 1024)
        .ok_or_else(|| anyhow::anyhow!("no VmHWM line in /proc/self/status"))
}

/// The value after `flag` in the command line `args`, when given.
#[allow(dead_code)] // not every bench including this file reads flags through it
pub fn flag_value(args: &[String], flag: &str) -> Option<String> {
    args.iter()
        .position(|a| a == flag)
        .and_then(|i| args.get(i + 1))
        .cloned()
}

/// The positive count after `flag` in `args`, or `default` when the flag is absent.
///
/// # Errors
/// When the value is not a positive integer (the message names the flag).
#[allow(dead_code)] // not every bench including this file reads flags through it
pub fn positive_flag(args: &[String], flag: &str, default: usize) -> anyhow::Result<usize> {
    let value = flag_value(args, flag).map_or(Ok(default), |s| s.parse::<usize>());
    let value = value.map_err(|err| anyhow::anyhow!("{flag}: {err}"))?;
    anyhow::ensure!(value > 0, "{flag} must be positive");
    Ok(value)
}
