#!/usr/bin/env bash
# The workspace's layout rules that no compiler checks: examples/ holds what a user copies from,
# so no benchmark program lives there (they are agent-rl-bench's binaries) and no example
# pulls code in by #[path] from a shared folder.
set -euo pipefail
cd "$(dirname "$0")/.."
status=0
benches=$(find examples -name 'bench_*' -print)
if [[ -n "$benches" ]]; then
  echo "benchmark programs in examples/ (move them to agent-rl-bench/src/bin/):" >&2
  echo "$benches" >&2
  status=1
fi
declared=$(grep -A1 '^\[\[example\]\]' Cargo.toml | grep -E '^name = "bench_' || true)
if [[ -n "$declared" ]]; then
  echo "Cargo.toml declares a bench_* example: $declared" >&2
  status=1
fi
shared=$(grep -rln '#\[path *=' examples || true)
if [[ -n "$shared" ]]; then
  echo "examples that include code by #[path] (put shared code in a crate):" >&2
  echo "$shared" >&2
  status=1
fi
[[ $status == 0 ]] && echo "layout ok: no bench_* program and no #[path] include in examples/"
exit $status
