#!/usr/bin/env python3
"""Golden vectors for `MathAPI.logarithm` (mpmath at a chosen precision), made with the REAL
bfcl-eval class: random positive values and bases (integers, short decimals and floats with all
53 bits used, tiny and huge magnitudes) at precisions 1..40, each executed on a fresh `MathAPI`
and recorded as the text the official executor records for a result (`str` of the returned
dict).

    python3 -m venv --system-site-packages /work/venv-bfcl
    /work/venv-bfcl/bin/pip install bfcl-eval
    /work/venv-bfcl/bin/python scripts/bfcl_logarithm_golden.py \
        --out agent-rl-eval/tests/fixtures/bfcl/logarithm.jsonl
"""

import argparse
import json
import random


def values(rng):
    kind = rng.randrange(5)
    if kind == 0:
        return rng.randrange(2, 100000)
    if kind == 1:
        return round(rng.uniform(0.01, 5000.0), rng.randrange(1, 4))
    if kind == 2:
        return rng.uniform(1e-6, 1e6)
    if kind == 3:
        return 10.0 ** rng.uniform(-300, 300)
    return rng.choice([0.5, 2, 2.0, 10, 100.0, 1e-3, 1.0000001, 0.9999999])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    parser.add_argument("--count", type=int, default=400)
    parser.add_argument("--seed", type=int, default=5)
    args = parser.parse_args()
    from bfcl_eval.eval_checker.multi_turn_eval.func_source_code.math_api import MathAPI

    rng = random.Random(args.seed)
    rows = []
    while len(rows) < args.count:
        value, base = values(rng), values(rng)
        if base == 1:
            continue
        precision = rng.choice([rng.randrange(1, 16), rng.randrange(1, 41)])
        result = MathAPI().logarithm(value=value, base=base, precision=precision)
        rows.append({"value": value, "base": base, "precision": precision,
                     "result": str(result)})
    with open(args.out, "w") as out:
        for row in rows:
            out.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
