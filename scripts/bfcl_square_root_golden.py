#!/usr/bin/env python3
"""Golden vectors for `MathAPI.square_root` (`Decimal(number).sqrt()` at
`getcontext().prec = precision`), made with the REAL bfcl-eval class: random integers (perfect
squares among them), short decimals and floats with all 53 bits used, tiny and huge magnitudes,
zeros, at precisions 1..60, plus precisions the context refuses or cannot take. Each call is
recorded as its Python call string and the text the official executor records for it (a dict
through `json.dumps`, else `str`; an uncaught exception as `Error during execution: …`).

    /work/venv-bfcl/bin/python scripts/bfcl_square_root_golden.py \
        --out agent-rl-eval/tests/fixtures/bfcl/square_root.jsonl
"""

import argparse
import json
import random


def number(rng):
    kind = rng.randrange(7)
    if kind == 0:
        return rng.randrange(0, 10**6)
    if kind == 1:
        return rng.randrange(1, 10**5) ** 2
    if kind == 2:
        return round(rng.uniform(0.0, 5000.0), rng.randrange(0, 4))
    if kind == 3:
        return rng.uniform(1e-6, 1e6)
    if kind == 4:
        return 10.0 ** rng.uniform(-300, 300)
    if kind == 5:
        return float(rng.randrange(1, 10**4) ** 2) * 10.0 ** rng.randrange(-8, 9)
    return rng.choice([0, 0.0, -0.0, 1, 2, 0.25, 1e-320, 5e-324, 1.7976931348623157e308, True])


def precision(rng):
    kind = rng.randrange(12)
    if kind == 0:
        return rng.choice([0, -3, 2.5, "5", None, True])
    return rng.choice([rng.randrange(1, 16), rng.randrange(1, 61)])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    parser.add_argument("--count", type=int, default=400)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    from bfcl_eval.eval_checker.multi_turn_eval.func_source_code.math_api import MathAPI

    rng = random.Random(args.seed)
    rows = []
    while len(rows) < args.count:
        n, p = number(rng), precision(rng)
        call = f"square_root(number={n!r}, precision={p!r})"
        try:
            result = MathAPI().square_root(number=n, precision=p)
            try:
                text = json.dumps(result)
            except Exception:
                text = str(result)
        except Exception as error:
            text = f"Error during execution: {error}"
        rows.append({"call": call, "result": text})
    with open(args.out, "w") as out:
        for row in rows:
            out.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
