#!/usr/bin/env bash
# GRPO step benchmark: agent-rl's GrpoTrainer and TRL's GRPOTrainer on the same model, tokenizer and
# prompts, in one run. Flags (all optional) go to both sides unchanged:
#   bash benches/run_bench_grpo.sh [--steps 4] [--prompt-length 64] [--completion-length 64] \
#       [--num-generations 8] [--prompts 8]
# TRL runs twice: gradient checkpointing off (agent-rl's setting here) and on (TRL's default).
# Needs python3 with torch, transformers, trl and datasets for the reference side.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=target/bench_grpo
cargo build --release -p agent-rl-bench --bin bench_grpo
echo "# agent-rl"
target/release/bench_grpo --out "$dir" "$@"
for checkpointing in off on; do
  echo "# TRL, gradient checkpointing $checkpointing"
  python3 benches/bench_grpo_trl.py --out "$dir" --gradient-checkpointing "$checkpointing" "$@" 2>/dev/null | tail -n 1
done
