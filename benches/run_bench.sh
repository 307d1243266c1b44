#!/usr/bin/env bash
# Policy benchmark: agent-rl (burn) and transformers on the same model and workload, in one run.
#   bash benches/run_bench.sh [cpu|cuda] [repeats] [prompt_length]
# Needs python3 with torch + transformers for the reference side. On the GPU machine (no Rust
# toolchain), pass a prebuilt binary with AGENT_RL_BENCH_BIN=path/to/bench_policy.
set -euo pipefail
cd "$(dirname "$0")/.."
device="${1:-cpu}"
repeats="${2:-3}"
prompt_length="${3:-16}"
bin="${AGENT_RL_BENCH_BIN:-}"
if [[ -z "$bin" ]]; then
  features=""
  [[ "$device" == "cuda" ]] && features="--features cuda"
  cargo build --release -p agent-rl-bench --bin bench_policy $features
  bin=target/release/bench_policy
fi
echo "# agent-rl"
"$bin" --device "$device" --repeats "$repeats" --prompt-length "$prompt_length"
echo "# reference"
python3 benches/bench_reference.py "$device" "$repeats" "$prompt_length"
