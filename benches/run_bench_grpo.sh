#!/usr/bin/env bash
# GRPO step benchmark: agent-rl's GrpoTrainer and TRL's GRPOTrainer on the same model, tokenizer and
# prompts, in one run (K = 8, 8 prompts, 64 prompt + 64 forced completion tokens, beta 0.04).
#   bash benches/run_bench_grpo.sh [steps]
# Needs python3 with torch, transformers, trl and datasets for the reference side.
set -euo pipefail
cd "$(dirname "$0")/.."
steps="${1:-4}"
dir=target/bench_grpo
cargo build --release --example bench_grpo
echo "# agent-rl"
target/release/examples/bench_grpo --out "$dir" --steps "$steps"
echo "# TRL"
python3 benches/bench_grpo_trl.py "$dir" "$steps" 2>/dev/null | tail -n 1
