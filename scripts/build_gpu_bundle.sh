#!/usr/bin/env bash
# Builds, on this (Rust) machine, everything the GPU machine needs to verify the CUDA path:
# release binaries with `--features cuda`, the fixtures and the scripts, in gpu-bundle/.
# Then, on the GPU machine (CUDA driver + toolkit, no Rust, no internet):
#   bash gpu-bundle/scripts/gpu_check.sh
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --features cuda --bin agent-rl
cargo build --release -p agent-rl-bench --features cuda --bin bench_policy --bin bench_lora_step
rm -rf gpu-bundle
mkdir -p gpu-bundle/bin gpu-bundle/fixtures gpu-bundle/scripts gpu-bundle/benches
cp target/release/agent-rl target/release/bench_policy target/release/bench_lora_step \
  gpu-bundle/bin/
cp -r agent-rl-core/tests/fixtures/qwen2_tiny gpu-bundle/fixtures/
cp scripts/gpu_check.sh scripts/gpu_golden_check.py gpu-bundle/scripts/
cp benches/bench_reference.py gpu-bundle/benches/
echo "gpu-bundle/ ready ($(du -sh gpu-bundle | cut -f1))"
