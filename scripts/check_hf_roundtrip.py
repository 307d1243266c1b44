"""Dev-time check (not in CI): a checkpoint saved by agent-rl loads unchanged in transformers.

For each tiny fixture, runs examples/convert_checkpoint (f32, bf16, and sharded f32), loads the
result with transformers' Qwen2ForCausalLM.from_pretrained (and, if installed, vLLM's config
parser is not needed: the keys and config are what HF writes), and compares logits with the
original checkpoint. Usage (after `cargo build --example convert_checkpoint`):
    python3 scripts/check_hf_roundtrip.py [target/debug/examples/convert_checkpoint]
"""
import os
import subprocess
import sys
import tempfile

import torch
from transformers import Qwen2ForCausalLM

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIX = os.path.join(ROOT, "agent-rl-core/tests/fixtures/qwen2_tiny")


def logits(path):
    model = Qwen2ForCausalLM.from_pretrained(path, dtype=torch.float32).eval()
    with torch.no_grad():
        return model(input_ids=torch.tensor([[1, 5, 9, 200, 17, 3]])).logits


def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "target/debug/examples/convert_checkpoint")
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name in ("tied_f32", "untied_f32", "untied_bf16"):
            source = os.path.join(FIX, name)
            reference = logits(source)
            for dtype, shard, tol in (("f32", None, 0.0), ("bf16", None, 0.5), ("f32", "50000", 0.0)):
                out = os.path.join(tmp, f"{name}-{dtype}-{shard}")
                subprocess.run([binary, source, out, dtype] + ([shard] if shard else []), check=True)
                diff = (logits(out) - reference).abs().max().item()
                exact_storage = name == "untied_bf16" or dtype == "f32"
                ok = diff <= (1e-6 if exact_storage else tol)
                failures += not ok
                print(f"{'ok  ' if ok else 'FAIL'} {name} -> {dtype} shard={shard}: max |logit diff| {diff:.2e}")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
