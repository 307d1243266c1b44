#!/usr/bin/env python3
"""Golden aggregates for the Rust BFCL report, made by the REAL bfcl-eval leaderboard code
(``eval_runner_helper.generate_leaderboard_csv``, v4 formulas) on a fixed mixed score table.

The table gives per category ``correct`` of ``total`` entries; some categories are left out, as
a partial run leaves them (the official code then counts them 0 at their dataset size). The
leaderboard writer's I/O is replaced by capture: the model registry gets one stub model, cost
and latency are N/A, missing categories' dataset sizes come from the data folder, and the rows
are taken before they are formatted as percentages.

    python3 -m venv --system-site-packages /work/venv-bfcl
    /work/venv-bfcl/bin/pip install bfcl-eval==2026.3.23 --no-deps && /work/venv-bfcl/bin/pip install numpy pandas
    /work/venv-bfcl/bin/python scripts/bfcl_aggregate_golden.py --data $AGENT_RL_DATA/bfcl/v4 \\
        --out agent-rl-eval/tests/fixtures/bfcl/aggregate_v4.json
"""

import argparse
import json
import sys
import types
from pathlib import Path

registry = types.ModuleType("bfcl_eval.constants.model_config")
registry.MODEL_CONFIG_MAPPING = {
    "golden/model": types.SimpleNamespace(display_name="golden", url="-", org="-", license="-")}
sys.modules["bfcl_eval.constants.model_config"] = registry

from bfcl_eval.eval_checker import eval_runner_helper as helper  # noqa: E402

# correct, total per category; categories missing from the table were "not run".
TABLE = {
    "simple_python": (331, 400), "simple_java": (57, 100), "simple_javascript": (31, 50),
    "multiple": (171, 200), "parallel": (160, 200), "parallel_multiple": (143, 200),
    "irrelevance": (201, 240), "live_simple": (190, 258), "live_multiple": (700, 1053),
    "live_parallel_multiple": (13, 24), "live_irrelevance": (650, 884),
    "live_relevance": (11, 16), "multi_turn_base": (23, 200), "multi_turn_miss_func": (11, 200),
    "multi_turn_miss_param": (17, 200),
}


# Scored categories of v4 the table leaves out (counted 0 at their dataset size).
MISSING = ["live_parallel", "multi_turn_long_context"]


def dataset_size(data, category):
    with open(f"{data}/BFCL_v4_{category}.json") as f:
        return sum(1 for line in f if line.strip())


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", required=True, help="the v4 data folder")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()

    captured = {}

    def capture(data, file_path, header, sort_column_index, no_conversion_numeric_column_index=[]):
        captured[Path(file_path).stem] = dict(zip(header, data[0])) if data else {}

    def fake_entries(category, **_):
        try:
            return [None] * dataset_size(args.data, category)
        except FileNotFoundError:  # agentic categories, not in the data folder
            return [None] * {"web_search_base": 100, "web_search_no_snippet": 100,
                             "memory_kv": 155, "memory_vector": 155,
                             "memory_rec_sum": 155}.get(category, 1)

    helper.write_score_csv_file = capture
    helper.get_cost_latency_info = lambda *a: ("N/A", "N/A", "N/A", "N/A")
    helper.load_dataset_entry = fake_entries
    helper.get_all_format_sensitivity_configs = lambda: []
    helper.MODEL_CONFIG_MAPPING = registry.MODEL_CONFIG_MAPPING

    scores = {c: {"accuracy": k / n, "correct_count": k, "total_count": n}
              for c, (k, n) in TABLE.items()}
    helper.generate_leaderboard_csv({"golden_model": scores}, Path("/nonexistent"))

    overall = captured["data_overall"]
    want = {
        "table": {c: {"correct": k, "total": n} for c, (k, n) in TABLE.items()},
        "missing": {c: dataset_size(args.data, c) for c in MISSING},
        "overall": overall["Overall Acc"],
        "non_live_overall": captured["data_non_live"]["Non-Live Overall Acc"],
        "live_overall": captured["data_live"]["Live Overall Acc"],
        "multi_turn_overall": captured["data_multi_turn"]["Multi Turn Overall Acc"],
    }
    with open(args.out, "w") as f:
        json.dump(want, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
