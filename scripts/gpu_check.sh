#!/usr/bin/env bash
# One command on the GPU machine: CUDA golden checks, the benchmark next to transformers, then one
# LoRA GRPO step (r 16, bf16 base) on a Qwen2.5-0.5B-shaped model with its peak GPU memory.
# Run from the bundle made by scripts/build_gpu_bundle.sh (or from a checkout with gpu-bundle/).
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
[[ -d "$here/gpu-bundle" ]] && here="$here/gpu-bundle"
echo "## CUDA golden checks"
python3 "$here/scripts/gpu_golden_check.py" "$here/bin/agent-rl" "$here/fixtures/qwen2_tiny"
echo "## benchmark (cuda)"
"$here/bin/bench_policy" --device cuda --repeats 3
if python3 -c "import torch, transformers" 2>/dev/null; then
  python3 "$here/benches/bench_reference.py" cuda 3
else
  echo "reference skipped: torch/transformers not installed here"
fi
echo "## LoRA GRPO step (Qwen2.5-0.5B shapes, r 16, bf16 base, cuda)"
# Peak GPU memory: nvidia-smi sampled every 0.2 s while the step runs (memory.used of GPU 0,
# this process and any other on the device; run it on an otherwise idle GPU).
peak_file="$(mktemp)"
echo 0 > "$peak_file"
if command -v nvidia-smi > /dev/null; then
  (
    peak=0
    while true; do
      used="$(nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -i 0 2>/dev/null | head -1)"
      if [[ "$used" =~ ^[0-9]+$ ]] && (( used > peak )); then peak="$used"; echo "$peak" > "$peak_file"; fi
      sleep 0.2
    done
  ) &
  sampler=$!
fi
timeout 280 "$here/bin/bench_lora_step" --device cuda --steps 2 --base-dtype bf16
[[ -n "${sampler:-}" ]] && kill "$sampler" 2>/dev/null || true
echo "peak GPU memory used: $(cat "$peak_file") MiB (nvidia-smi)"
rm -f "$peak_file"
