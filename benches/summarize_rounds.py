"""Summarises repeated GRPO benchmark rounds (issue 22): one JSON line per run in, per shape out.

Reads the JSON lines that benches/run_bench_grpo.sh prints (agent-rl, then TRL with gradient
checkpointing off and on), in the order they were run: the k-th agent-rl line of a shape and the
k-th TRL lines of the same shape form round k. For each shape it prints the median seconds per
step of each side over the rounds, the ratio of those medians, and the smallest and largest
ratio within one round, so that a speed-up is read against the spread of both sides, never
from runs of different rounds divided by each other.

    python3 benches/summarize_rounds.py < shapes.jsonl
"""

import json
import statistics
import sys


def side(record):
    """agent-rl, TRL off or TRL on."""
    if record["impl"].startswith("agent-rl"):
        return "agent-rl"
    return "TRL on" if record["gradient_checkpointing"] else "TRL off"


def main():
    runs = {}
    for number, line in enumerate(sys.stdin, start=1):
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            record = json.loads(line)
            if "num_generations" not in record:
                continue  # another benchmark's record (the generation bench of the same log)
            shape = (record["prompt_length"], record["completion_length"])
            seconds = float(record["seconds_per_step"])
            name = side(record)
        except (ValueError, KeyError) as error:
            sys.exit(f"summarize_rounds.py: line {number} is not a benchmark record: {error}")
        runs.setdefault(shape, {}).setdefault(name, []).append(seconds)
    if not runs:
        sys.exit("summarize_rounds.py: no benchmark records on stdin")
    print("| shape | rounds | agent-rl s/step median (range) | TRL off | TRL on "
          "| median ratio off / on | per-round ratio off, min-max | on, min-max |")
    print("|---|---:|---|---|---|---|---|---|")
    for (prompt, completion), sides in sorted(runs.items()):
        ours = sides.get("agent-rl", [])
        cells, ratios = [], []
        for name in ("agent-rl", "TRL off", "TRL on"):
            values = sides.get(name, [])
            cells.append(
                f"{statistics.median(values):.3f} ({min(values):.3f}-{max(values):.3f})"
                if values else "-"
            )
        for name in ("TRL off", "TRL on"):
            pairs = list(zip(sides.get(name, []), ours))
            ratios.append([theirs / mine for theirs, mine in pairs])
        medians = [
            statistics.median(sides[name]) / statistics.median(ours)
            if sides.get(name) and ours else float("nan")
            for name in ("TRL off", "TRL on")
        ]
        spread = [f"{min(r):.2f}-{max(r):.2f}x" if r else "-" for r in ratios]
        print(f"| {prompt} + {completion} | {len(ours)} | {' | '.join(cells)} "
              f"| {medians[0]:.2f}x / {medians[1]:.2f}x | {spread[0]} | {spread[1]} |")


if __name__ == "__main__":
    main()
