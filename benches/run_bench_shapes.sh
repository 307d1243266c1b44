#!/usr/bin/env bash
# The agent-length GRPO table (issue 22): for each (prompt, completion) shape in
# {(64, 64), (256, 256), (1024, 512)}, K = 8 completions of 4 prompts per step, agent-rl's
# GrpoTrainer and TRL's GRPOTrainer (gradient checkpointing off and on) on the same checkpoint and
# prompts, through benches/run_bench_grpo.sh. The shapes run in rounds (every shape once per
# round, each side right after the other), and benches/summarize_rounds.py reads the rounds back:
# median seconds per step per side, the ratio of the medians, and the smallest and largest ratio
# within one round (TRL's own step varies by up to 45% between runs on a 2-core machine, so one
# round alone does not carry a speed-up). Then generation at 1,024-token prompts against
# transformers' generate (benches/run_bench.sh). Every record printed is one JSON line; the
# GRPO records are also kept in target/bench_shapes.jsonl.
#   bash benches/run_bench_shapes.sh [steps for the two short shapes, default 4] [rounds, default 3]
# The 1,024 + 512 shape runs 2 steps (one warm-up, one timed): it takes minutes per step on a CPU.
# Needs python3 with torch, transformers, trl and datasets.
set -euo pipefail
cd "$(dirname "$0")/.."
steps="${1:-4}"
rounds="${2:-3}"
log=target/bench_shapes.jsonl
mkdir -p target
: >"$log"
for round in $(seq 1 "$rounds"); do
  for shape in "64 64 $steps" "256 256 $steps" "1024 512 2"; do
    read -r prompt completion shape_steps <<<"$shape"
    echo "## round $round of $rounds: GRPO step, prompt $prompt, completion $completion, K 8, 4 prompts, $shape_steps steps"
    bash benches/run_bench_grpo.sh --steps "$shape_steps" --prompt-length "$prompt" \
      --completion-length "$completion" --num-generations 8 --prompts 4 | tee -a "$log"
  done
done
echo "## summary of $rounds rounds"
python3 benches/summarize_rounds.py <"$log"
echo "## generation, 64 sequences x 64 new tokens, 1,024-token prompts"
bash benches/run_bench.sh cpu 3 1024
