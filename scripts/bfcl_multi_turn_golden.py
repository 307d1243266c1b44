#!/usr/bin/env python3
"""Golden vectors for the Rust BFCL multi-turn backends and checker, made with the REAL official
bfcl-eval code (its Python backend classes, executor and multi-turn checker).

Two outputs:

* ``--exec-out`` (JSON Lines ``{"class", "call", "result"}``): single calls executed on a fresh
  instance of a stateless class by the official executor (``execute_multi_turn_func_call``),
  drawn from the data's ground truth plus perturbed and malformed calls (wrong types, missing,
  extra and positional arguments, empty lists, rounding ties, unknown and forbidden names).
* ``--stateful-out`` (JSON Lines ``{"id", "class", "calls", "results", "state"}``): for each
  entry and each stateful class it involves, one fresh instance loaded from the entry's
  ``initial_config`` (long-context mode for that category) runs a sequence of calls through the
  official executor: the class's ground-truth calls of all turns in order (referenced as
  ``[turn, index]``, never copied), altered copies of some of them, and probe calls (missing,
  extra and wrongly typed arguments). ``results`` holds, per call, the first 16 hex digits of
  the SHA-256 of the official result text; ``state`` the same digest of ``repr`` of each public
  attribute afterwards (a ``set`` as its sorted list).
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
        --verdicts-out agent-rl-eval/tests/fixtures/bfcl/multi_turn_verdicts.jsonl \\
        --stateful-out agent-rl-eval/tests/fixtures/bfcl/multi_turn_stateful.jsonl

bfcl-eval's model registry imports every model SDK; only the checker is needed, so the registry
is replaced by an empty stub before import.
"""

import argparse
import ast
import hashlib
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
# Call sequences on the stateful classes.

STATEFUL = ["MessageAPI", "TwitterAPI", "TicketAPI", "TradingBot", "TravelAPI",
            "VehicleControlAPI"]

PROBES = {
    "MessageAPI": ["message_login(user_id='USR999')", "get_user_id(user=['x'])", "list_users()",
                   "send_message(receiver_id='USR002')", "add_contact(user_name='Zed')",
                   "search_messages(keyword=5)", "view_messages_sent()", "get_message_stats()",
                   "delete_message(receiver_id='nobody')", "message_get_login_status()"],
    "TwitterAPI": ["authenticate_twitter(username='x', password='y')", "get_tweet(tweet_id='0')",
                   "get_tweet(tweet_id=[1])", "post_tweet(content='probe', tags=['#T'], mentions=[])",
                   "retweet(tweet_id=0)", "comment(tweet_id=0, comment_content='c')",
                   "mention(tweet_id=0, mentioned_usernames='ab')", "get_user_stats(username='john')",
                   "get_tweet_comments(tweet_id=0)", "search_tweets(keyword='PROBE')",
                   "unfollow_user(username_to_unfollow='nobody')", "list_all_following()"],
    "TicketAPI": ["create_ticket(title='p', priority=9)", "create_ticket(title='p', priority='x')",
                  "get_ticket(ticket_id=999)", "close_ticket(ticket_id=999)",
                  "edit_ticket(ticket_id=1, updates={'owner': 'x'})",
                  "get_user_tickets(status='open')", "logout()", "ticket_get_login_status()",
                  "ticket_login(username='', password='x')"],
    "TradingBot": ["get_stock_info(symbol='NOPE')", "get_order_details(order_id=1)",
                   "cancel_order(order_id=1)", "get_symbol_by_name(name='Zeta Corp')",
                   "place_order(order_type='Buy', symbol='AAPL', price=-1, amount=1)",
                   "place_order(order_type='Buy', symbol='AAPL', price=1e9, amount=3)",
                   "withdraw_funds(amount=1.5)", "fund_account(amount=0)",
                   "get_transaction_history(start_date='2024-9-1', end_date='2024-09-30')",
                   "get_transaction_history(start_date='09/01/2024')",
                   "filter_stocks_by_price(stocks=['AAPL', 'XX'], min_price=0, max_price=1000)",
                   "notify_price_change(stocks=['AAPL', 'TSLA'], threshold=0.1)",
                   "get_available_stocks(sector='Technology')", "add_to_watchlist(stock='ZETA')",
                   "remove_stock_from_watchlist(symbol='NOPE')", "get_watchlist()",
                   "get_order_history()", "trading_logout()", "get_account_info()"],
    "TravelAPI": ["get_flight_cost(travel_from='SFO', travel_to='LAX', travel_date='2024-11-15', "
                  "travel_class='first')",
                  "get_flight_cost(travel_from='SFO', travel_to='NOPE', travel_date='2024-11-15', "
                  "travel_class='first')",
                  "compute_exchange_rate(base_currency='EUR', target_currency='USD', value=100)",
                  "compute_exchange_rate(base_currency='USD', target_currency='XXX', value=1)",
                  "get_nearest_airport_by_city(location='Tokyo')", "list_all_airports()",
                  "get_credit_card_balance(access_token='bad', card_id='1')",
                  "book_flight(access_token='bad', card_id='1', travel_date='2024-1-1', "
                  "travel_from='SFO', travel_to='LAX', travel_class='economy')",
                  "retrieve_invoice(access_token='bad')", "get_budget_fiscal_year()",
                  "travel_get_login_status()",
                  "verify_traveler_information(first_name='A', last_name='B', "
                  "date_of_birth='1990-01-01', passport_number='US1')",
                  "contact_customer_support(booking_id='0', message='m')",
                  "get_all_credit_cards()"],
    "VehicleControlAPI": ["fillFuelTank(fuelAmount=-1)", "fillFuelTank(fuelAmount=100)",
                          "lockDoors(unlock=False, door=['driver', 'passenger'])",
                          "lockDoors(unlock=True, door=['trunk'])", "pressBrakePedal(pedalPosition=2)",
                          "pressBrakePedal(pedalPosition=0.5)", "releaseBrakePedal()",
                          "startEngine(ignitionMode='START')",
                          "setCruiseControl(speed=65, activate=True, distanceToNextVehicle=100)",
                          "adjustClimateControl(temperature=68, unit='fahrenheit')",
                          "adjustClimateControl(temperature=20, fanSpeed=120)",
                          "get_outside_temperature_from_google()", "get_current_speed()",
                          "setHeadlights(mode='auto')", "displayCarStatus(option='climate')",
                          "displayCarStatus(option='x')", "activateParkingBrake(mode='engage')",
                          "estimate_drive_feasibility_by_mileage(distance=300)",
                          "liter_to_gallon(liter=10)", "estimate_distance(cityA='83214', cityB='74532')",
                          "get_zipcode_based_on_city(city='Nowhere')", "set_navigation(destination=5)",
                          "check_tire_pressure()", "display_log(messages=['a'])"],
}


def digest(text):
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def public_state(instance):
    state = {}
    for name, value in vars(instance).items():
        if name.startswith("_"):
            continue
        if isinstance(value, set):
            value = sorted(value)
        state[name] = digest(repr(value))
    return state


def fresh_mutable_defaults():
    """`post_tweet`'s default lists are shared by the whole process and `mention` extends them;
    give each sequence fresh ones (the Rust port's pinned model of them)."""
    from bfcl_eval.eval_checker.multi_turn_eval.func_source_code.posting_api import TwitterAPI
    TwitterAPI.post_tweet.__defaults__ = ([], [])


def stateful_vectors(data, rng):
    lines = []
    for category in CATEGORIES:
        questions = load(f"{data}/BFCL_v4_multi_turn_{category}.json")
        answers = {a["id"]: a["ground_truth"] for a in load(
            f"{data}/possible_answer/BFCL_v4_multi_turn_{category}.json")}
        for question in questions:
            truth = answers[question["id"]]
            for class_name in question["involved_classes"]:
                if class_name not in STATEFUL:
                    continue
                methods = set(PROBES_METHODS[class_name])
                specs, calls = [], []
                for t, turn in enumerate(truth):
                    for i, call in enumerate(turn):
                        if call.split("(")[0].strip() not in methods:
                            continue
                        specs.append([t, i])
                        calls.append(call)
                        if rng.random() < 0.3:
                            bad = alter_call(call, rng)
                            if bad:
                                specs.append(bad)
                                calls.append(bad)
                if not calls:
                    continue
                if rng.random() < 0.25:
                    specs.extend(PROBES[class_name])
                    calls.extend(PROBES[class_name])
                forget_instances()
                fresh_mutable_defaults()
                results, instances = multi_turn_utils.execute_multi_turn_func_call(
                    calls, question["initial_config"], [class_name], "golden", "stateful_0",
                    long_context=category == "long_context", is_evaL_run=True)
                lines.append({"id": question["id"], "class": class_name, "calls": specs,
                              "results": [digest(r) for r in results],
                              "state": public_state(instances[class_name])})
    return lines


def _class_methods():
    import importlib
    from bfcl_eval.constants.executable_backend_config import CLASS_FILE_PATH_MAPPING
    out = {}
    for name in STATEFUL:
        cls = getattr(importlib.import_module(CLASS_FILE_PATH_MAPPING[name]), name)
        out[name] = [m for m in vars(cls) if not m.startswith("_") and callable(vars(cls)[m])]
    return out


PROBES_METHODS = _class_methods()


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
    parser.add_argument("--stateful-out", required=True)
    parser.add_argument("--seed", type=int, default=23)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    with open(args.exec_out, "w") as f:
        for vector in exec_vectors(args.data, rng):
            f.write(json.dumps(vector, ensure_ascii=False) + "\n")
    with open(args.verdicts_out, "w") as f:
        for line in verdict_vectors(args.data, rng):
            f.write(json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n")
    with open(args.stateful_out, "w") as f:
        for line in stateful_vectors(args.data, random.Random(args.seed + 1)):
            f.write(json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n")


if __name__ == "__main__":
    main()
