#!/usr/bin/env bash
# Every example in examples/ answers --help and runs in its quick form (dev profile, as CI builds).
# grpo_qwen's quick form is .ci/run's own step (it checks its figures), so here it only answers
# --help. An example without a quick form below fails this script: add one when adding an example.
#   bash scripts/run_examples.sh
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR=never
out=target/run_examples
rm -rf "$out"
mkdir -p "$out"
cargo build --examples --quiet

# The quick form of each example (arguments after the binary); `-` skips the run.
declare -A quick=(
  [grpo_qwen]="-"
  [policy_demo]=""
  [sft_tool_calls]="--quick"
  [rlhf_toy]="--quick --sft-steps 30 --rm-steps 20 --ppo-steps 2 --run-dir $out/rlhf_toy --summary $out/rlhf_toy.json"
  [convert_checkpoint]="agent-rl-core/tests/fixtures/qwen2_tiny/tied_f32 $out/converted bf16"
)

examples=()
for path in examples/*.rs examples/*/main.rs; do
  [[ -e "$path" ]] || continue
  name="$(basename "$path" .rs)"
  [[ "$name" == main ]] && name="$(basename "$(dirname "$path")")"
  examples+=("$name")
done

for name in "${examples[@]}"; do
  bin="target/debug/examples/$name"
  if [[ ! -v "quick[$name]" ]]; then
    echo "examples/$name has no quick form in scripts/run_examples.sh" >&2
    exit 1
  fi
  echo "== $name --help"
  "$bin" --help >"$out/$name.help" || { echo "$name --help failed" >&2; exit 1; }
  grep -qi '^usage:' "$out/$name.help" || { echo "$name --help printed no usage" >&2; exit 1; }
  [[ "${quick[$name]}" == "-" ]] && continue
  echo "== $name ${quick[$name]}"
  started=$SECONDS
  # shellcheck disable=SC2086 # the quick form is a list of words
  "$bin" ${quick[$name]}
  echo "($name: $((SECONDS - started)) s)"
done
echo "== converted checkpoint loads back"
cmp agent-rl-core/tests/fixtures/qwen2_tiny/tied_f32/tokenizer.json "$out/converted/tokenizer.json"
test -s "$out/converted/model.safetensors"
python3 - "$out/rlhf_toy.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
for stage in ("before", "after_sft", "after"):
    assert 0.0 <= s[stage]["success_rate"] <= 1.0, f"{stage}: {s[stage]}"
print("rlhf_toy summary:", {k: s[k]["success_rate"] for k in ("before", "after_sft", "after")})
PY
