#!/usr/bin/env bash
# The agent-length GRPO table (issue 22) in one run: for each (prompt, completion) shape in
# {(64, 64), (256, 256), (1024, 512)}, K = 8 completions of 4 prompts per step, agent-rl's
# GrpoTrainer and TRL's GRPOTrainer (gradient checkpointing off and on) on the same checkpoint and
# prompts, through benches/run_bench_grpo.sh. Then generation at 1,024-token prompts against
# transformers' generate (benches/run_bench.sh). Every line printed is one JSON record.
#   bash benches/run_bench_shapes.sh [steps for the two short shapes, default 4]
# The 1,024 + 512 shape runs 2 steps (one warm-up, one timed): it takes minutes per step on a CPU.
# Needs python3 with torch, transformers, trl and datasets.
set -euo pipefail
cd "$(dirname "$0")/.."
steps="${1:-4}"
for shape in "64 64 $steps" "256 256 $steps" "1024 512 2"; do
  read -r prompt completion shape_steps <<<"$shape"
  echo "## GRPO step, prompt $prompt, completion $completion, K 8, 4 prompts, $shape_steps steps"
  bash benches/run_bench_grpo.sh --steps "$shape_steps" --prompt-length "$prompt" \
    --completion-length "$completion" --num-generations 8 --prompts 4
done
echo "## generation, 64 sequences x 64 new tokens, 1,024-token prompts"
bash benches/run_bench.sh cpu 3 1024
