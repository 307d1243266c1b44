#!/usr/bin/env bash
# One command on the GPU machine: CUDA golden checks, then the benchmark next to transformers.
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
