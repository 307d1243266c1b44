"""Golden checks of the CUDA path, run on the GPU machine by scripts/gpu_check.sh.

Runs the prebuilt `agent-rl` binary with `--device cuda` on the committed tiny fixtures and
compares with the transformers golden values (stdlib only: no torch needed on the GPU machine):
per-position logsumexp / next-token logprob (tolerance 2e-3: GPU f32 matmuls may use TF32-like
reductions) and greedy ids (identical). Exits non-zero on any mismatch.
"""
import json
import math
import os
import struct
import subprocess
import sys

BIN = sys.argv[1]
FIX = sys.argv[2]


def read_safetensors(path, key):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        start, end = header[key]["data_offsets"]
        f.seek(8 + n + start)
        data = f.read(end - start)
    return header[key]["shape"], struct.unpack(f"<{len(data) // 4}f", data)


def run(*args):
    out = subprocess.run([BIN, *args], check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def main():
    expected = json.load(open(os.path.join(FIX, "expected.json")))
    failures = 0
    ids = expected["prompt_ids"]
    for name in ("tied_f32", "untied_f32", "untied_bf16"):
        shape, logits = read_safetensors(os.path.join(FIX, f"expected_{name}.safetensors"), "logits")
        vocab = shape[1]
        out = run("logprobs", "--model", os.path.join(FIX, name), "--ids", ",".join(map(str, ids)), "--device", "cuda", "--json")
        worst = 0.0
        for t, pos in enumerate(out["positions"]):
            row = logits[t * vocab:(t + 1) * vocab]
            m = max(row)
            lse = math.log(sum(math.exp(v - m) for v in row)) + m
            worst = max(worst, abs(pos["logsumexp"] - lse))
            if t + 1 < len(ids):
                worst = max(worst, abs(pos["next_token_logprob"] - (row[ids[t + 1]] - lse)))
        ok = worst < 2e-3
        failures += not ok
        print(f"{name}: logprobs max abs diff {worst:.2e} {'ok' if ok else 'FAIL'}")
        row = expected["batch_rows"][1]
        gen = run("generate", "--model", os.path.join(FIX, name), "--prompt-ids", ",".join(map(str, row)),
                  "--greedy", "--ignore-eos", "--max-new-tokens", "12", "--device", "cuda", "--json")
        same = gen["token_ids"] == expected["models"][name]["greedy_batch"][1]
        failures += not same
        print(f"{name}: greedy ids {'identical' if same else 'DIFFER: ' + str(gen['token_ids'])}")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
