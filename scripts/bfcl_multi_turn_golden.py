#!/usr/bin/env python3
"""Golden vectors for the Rust BFCL multi-turn backends and checker, made with the REAL official
bfcl-eval code (its Python backend classes, executor and multi-turn checker).

Two outputs:

* ``--exec-out`` (JSON Lines ``{"class", "call", "result"}``): single calls executed on a fresh
  instance of a stateless class by the official executor (``execute_multi_turn_func_call``),
  drawn from the data's ground truth plus perturbed and malformed calls (wrong types, missing,
  extra and positional arguments, empty lists, rounding ties, unknown and forbidden names).
* ``--verdicts-out`` (JSON Lines, one line per multi-turn entry): the official checker's verdict
  on the ground truth replayed as the model's result and on perturbations of it. A perturbation
  is stored as an edit of the ground truth (``["drop", turn, index]`` ...), never as data; the
  Rust test reads the ground truth from ``AGENT_RL_DATA`` and applies the same edit. Each vector
  is ``[edit, valid, error_type]``, the error type without its ``multi_turn:`` prefix.

Edits (turn and call indices are 0-based; the ground truth is replayed as one step per turn,
no step for an empty turn):
    ["gt"]                        the ground truth unchanged
    ["split"]                     every call its own step (the same calls)
    ["empty"]                     no step in any turn
    ["truncate", n]               only the first n turns (force-terminated)
    ["clear", t]                  no step in turn t
    ["drop", t, i]                call i of turn t left out
    ["dup", t, i]                 call i of turn t made twice
    ["swap", t, i, j]             calls i and j of turn t exchanged
    ["replace", t, i, "call"]     call i of turn t replaced (an argument altered)
    ["step", t, ["call", ...]]    an extra step appended to turn t (for miss_func: the next
                                  turn's calls made early, in the turn whose function is held
                                  back)

    python3 -m venv --system-site-packages /work/venv-bfcl
    /work/venv-bfcl/bin/pip install bfcl-eval==2026.3.23 --no-deps && /work/venv-bfcl/bin/pip install mpmath
    /work/venv-bfcl/bin/python scripts/bfcl_multi_turn_golden.py --data $AGENT_RL_DATA/bfcl/v4 \\
        --exec-out agent-rl-eval/tests/fixtures/bfcl/multi_turn_exec.jsonl \\
        --verdicts-out agent-rl-eval/tests/fixtures/bfcl/multi_turn_verdicts.jsonl

bfcl-eval's model registry imports every model SDK; only the checker is needed, so the registry
is replaced by an empty stub before import.
"""

import argparse
import ast
import json
import random
import sys
import types

_registry = types.ModuleType("bfcl_eval.constants.model_config")
_registry.MODEL_CONFIG_MAPPING = {}
sys.modules["bfcl_eval.constants.model_config"] = _registry

from bfcl_eval.eval_checker.multi_turn_eval import multi_turn_utils  # noqa: E402
from bfcl_eval.eval_checker.multi_turn_eval.multi_turn_checker import (  # noqa: E402
    multi_turn_checker,
)

CATEGORIES = ["base", "miss_func", "miss_param", "long_context"]


def load(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def forget_instances():
    """The executor keeps instances in its module globals by name; drop them between runs."""
    for name in [n for n in vars(multi_turn_utils) if n.endswith("_instance")]:
        del vars(multi_turn_utils)[name]


def execute(calls, classes):
    forget_instances()
    results, _ = multi_turn_utils.execute_multi_turn_func_call(
        calls, {}, classes, "golden", "exec_0", long_context=False, is_evaL_run=True)
    return results


def render(name, keywords):
    return f"{name}(" + ",".join(f"{k}={v!r}" for k, v in keywords) + ")"


def parse_call(text):
    node = ast.parse(text.strip(), mode="eval").body
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
        return None
    if node.args:
        return None
    try:
        keywords = [(k.arg, ast.literal_eval(k.value)) for k in node.keywords]
    except ValueError:
        return None
    return node.func.id, keywords


def altered(value, rng):
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + rng.choice([1, -1, 10])
    if isinstance(value, float):
        return value * 2 + 0.5
    if isinstance(value, str):
        return rng.choice([value + "_x", value.upper(), "", value[:-1]])
    if isinstance(value, list):
        return value[:-1] if value else [1]
    if isinstance(value, dict):
        return {}
    return "x"


def alter_call(text, rng):
    parsed = parse_call(text)
    if not parsed or not parsed[1]:
        return None
    name, keywords = parsed
    index = rng.randrange(len(keywords))
    key, value = keywords[index]
    keywords = list(keywords)
    keywords[index] = (key, altered(value, rng))
    return render(name, keywords)


# ---------------------------------------------------------------------------------------------
# Single calls on the stateless class.

MATH_EXTRA = [
    "add(a=1, b=2)", "add(a=1.5, b=2)", "add(a='x', b='y')", "add(a='x', b=1)", "add(a=[1], b=[2])",
    "add(a=True, b=2)", "add(a=None, b=1)", "add(1, 2)", "add(a=1)", "add(a=1, b=2, c=3)",
    "add(1, a=2)", "add(1, 2, 3)", "add()", "subtract(a=5, b=7.25)", "subtract(a='x', b=1)",
    "multiply(a=3, b=4)", "multiply(a=0.1, b=3)", "multiply(a='x', b=3)", "multiply(a=True, b=2.5)",
    "divide(a=1, b=3)", "divide(a=1, b=0)", "divide(a=1, b=0.0)", "divide(a=7, b=2)",
    "divide(a='x', b=2)", "divide(a=1, b=None)", "divide(a=10**2, b=3)",
    "power(base=2, exponent=10)", "power(base=2, exponent=-1)", "power(base=2.5, exponent=2)",
    "power(base=9, exponent=0.5)", "power(base='x', exponent=2)", "power(base=0, exponent=-1)",
    "absolute_value(number=-3)", "absolute_value(number=-2.5)", "absolute_value(number='x')",
    "absolute_value(number=True)", "round_number(number=2.675, decimal_places=2)",
    "round_number(number=0.125, decimal_places=2)", "round_number(number=0.375, decimal_places=2)",
    "round_number(number=2.5)", "round_number(number=3.5)", "round_number(number=7)",
    "round_number(number=1.23456, decimal_places=3)", "round_number(number='x')",
    "round_number(number=1.5, decimal_places=1.0)", "round_number(number=12345.6789, decimal_places=0)",
    "percentage(part=1, whole=3)", "percentage(part=5, whole=0)", "percentage(part='x', whole=2)",
    "percentage(part=45.5, whole=200)", "mean(numbers=[1, 2, 3, 4])", "mean(numbers=[0.1, 0.2, 0.3])",
    "mean(numbers=[])", "mean(numbers=['a', 'b'])", "mean(numbers=5)", "mean(numbers=[1, 2.5])",
    "standard_deviation(numbers=[2, 4, 4, 4, 5, 5, 7, 9])", "standard_deviation(numbers=[1.5, 2.5])",
    "standard_deviation(numbers=[])", "standard_deviation(numbers=['a'])",
    "min_value(numbers=[3, 1.0, 1, 2])", "min_value(numbers=[])", "min_value(numbers=['b', 'a'])",
    "min_value(numbers=[1, 'a'])", "max_value(numbers=[3, 7.5, 7.5, 2])", "max_value(numbers=[])",
    "max_value(numbers=[1, None])", "sum_values(numbers=[1, 2, 3])", "sum_values(numbers=[0.1, 0.2])",
    "sum_values(numbers=[])", "sum_values(numbers=[1, 'a'])",
    "si_unit_conversion(value=5, unit_in='km', unit_out='m')",
    "si_unit_conversion(value=2.5, unit_in='cm', unit_out='um')",
    "si_unit_conversion(value=3, unit_in='nm', unit_out='km')",
    "si_unit_conversion(value=3, unit_in='mi', unit_out='km')",
    "si_unit_conversion(value='3', unit_in='m', unit_out='km')",
    "si_unit_conversion(value=True, unit_in='m', unit_out='mm')",
    "imperial_si_conversion(value=100, unit_in='celsius', unit_out='fahrenheit')",
    "imperial_si_conversion(value=212, unit_in='fahrenheit', unit_out='celsius')",
    "imperial_si_conversion(value=3, unit_in='m', unit_out='ft')",
    "imperial_si_conversion(value=3, unit_in='kg', unit_out='kg')",
    "imperial_si_conversion(value=3, unit_in='kg', unit_out='stone')",
    "imperial_si_conversion(value='3', unit_in='kg', unit_out='lb')",
    "imperial_si_conversion(value=2.2, unit_in='lb', unit_out='kg')",
    "square_root(number=-4, precision=5)", "square_root(number='x', precision=5)",
    "nonexistent_function(x=1)", "exit()", "remove(x=1)", "add(a=1, b=2",
    "add(a=-5, b=+3)", "add(a=1e20, b=1)", "multiply(a=1e200, b=1e200)",
    "mean(numbers=(1, 2, 3))", "add(a=(1,), b=(2,))", "sum_values(numbers={'a': 1})",
]


def exec_vectors(data, rng):
    calls = []
    for category in CATEGORIES:
        questions = load(f"{data}/BFCL_v4_multi_turn_{category}.json")
        answers = {a["id"]: a["ground_truth"] for a in load(
            f"{data}/possible_answer/BFCL_v4_multi_turn_{category}.json")}
        for question in questions:
            if "MathAPI" not in question["involved_classes"]:
                continue
            math_methods = {n for n in dir(_math_class()) if not n.startswith("_")}
            for turn in answers[question["id"]]:
                for call in turn:
                    if call.split("(")[0].strip() in math_methods:
                        calls.append(call)
                        bad = alter_call(call, rng)
                        if bad:
                            calls.append(bad)
    calls = list(dict.fromkeys(calls + MATH_EXTRA))
    return [{"class": "MathAPI", "call": call, "result": execute([call], ["MathAPI"])[0]}
            for call in calls]


def _math_class():
    from bfcl_eval.eval_checker.multi_turn_eval.func_source_code.math_api import MathAPI
    return MathAPI


# ---------------------------------------------------------------------------------------------
# Checker verdicts on edits of the ground truth.

def apply_edit(truth, edit):
    """The model result (turns -> steps -> calls) that an edit of the ground truth gives."""
    turns = [list(turn) for turn in truth]
    op = edit[0]
    if op == "empty":
        return [[] for _ in turns]
    if op == "truncate":
        return [[turn] if turn else [] for turn in turns[: edit[1]]]
    if op == "split":
        return [[[call] for call in turn] for turn in turns]
    extra_step = None
    if op == "drop":
        del turns[edit[1]][edit[2]]
    elif op == "dup":
        turns[edit[1]].insert(edit[2], turns[edit[1]][edit[2]])
    elif op == "swap":
        t, i, j = edit[1], edit[2], edit[3]
        turns[t][i], turns[t][j] = turns[t][j], turns[t][i]
    elif op == "replace":
        turns[edit[1]][edit[2]] = edit[3]
    elif op == "step":
        extra_step = (edit[1], list(edit[2]))
    steps = [[turn] if turn else [] for turn in turns]
    if op == "clear":
        steps[edit[1]] = []
    if extra_step:
        steps[extra_step[0]].append(extra_step[1])
    return steps


def edits_for(question, truth, rng):
    edits = [["gt"], ["split"], ["empty"]]
    if len(truth) > 1:
        edits.append(["truncate", len(truth) - 1])
    calls = [(t, i) for t, turn in enumerate(truth) for i in range(len(turn))]
    nonempty = [t for t, turn in enumerate(truth) if turn]
    if nonempty:
        edits.append(["clear", rng.choice(nonempty)])
    if calls:
        for op in ("drop", "dup"):
            t, i = rng.choice(calls)
            edits.append([op, t, i])
        t, i = rng.choice(calls)
        new = alter_call(truth[t][i], rng)
        if new and new != truth[t][i]:
            edits.append(["replace", t, i, new])
    multi = [t for t, turn in enumerate(truth) if len(turn) > 1]
    if multi:
        t = rng.choice(multi)
        edits.append(["swap", t, 0, len(truth[t]) - 1])
    for turn in question.get("missed_function", {}):
        t = int(turn)
        if t + 1 < len(truth) and truth[t + 1]:
            edits.append(["step", t, truth[t + 1]])
    if calls:
        t, _ = rng.choice(calls)
        edits.append(["step", t, ["nonexistent_function(x=1)"]])
    return edits


def verdict_vectors(data, rng):
    lines = []
    for category in CATEGORIES:
        questions = load(f"{data}/BFCL_v4_multi_turn_{category}.json")
        answers = {a["id"]: a["ground_truth"] for a in load(
            f"{data}/possible_answer/BFCL_v4_multi_turn_{category}.json")}
        for question in questions:
            truth = answers[question["id"]]
            vectors = []
            for edit in edits_for(question, truth, rng):
                result = apply_edit(truth, edit)
                forget_instances()
                if len(result) != len(truth):
                    outcome = {"valid": False, "error_type": "multi_turn:force_terminated"}
                else:
                    outcome = multi_turn_checker(
                        result, truth, question, f"multi_turn_{category}", "golden")
                error_type = outcome.get("error_type")
                if error_type:
                    error_type = error_type.removeprefix("multi_turn:")
                vectors.append([edit, outcome["valid"], error_type])
            lines.append({"id": question["id"], "vectors": vectors})
    return lines


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", required=True, help="the v4 data folder")
    parser.add_argument("--exec-out", required=True)
    parser.add_argument("--verdicts-out", required=True)
    parser.add_argument("--seed", type=int, default=23)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    with open(args.exec_out, "w") as f:
        for vector in exec_vectors(args.data, rng):
            f.write(json.dumps(vector, ensure_ascii=False) + "\n")
    with open(args.verdicts_out, "w") as f:
        for line in verdict_vectors(args.data, rng):
            f.write(json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n")


if __name__ == "__main__":
    main()
