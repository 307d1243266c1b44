#!/usr/bin/env python3
"""Writes agent-rl-eval/tests/fixtures/bfcl/multi_turn_env/: a few hand-written BFCL multi-turn
entries (base, miss_func, miss_param) in bfcl-eval's v4 layout, with their ground truth and short
function docs of our own wording, for the tests of the multi-turn training environment
(`agent-rl-eval/tests/bfcl/environment.rs`). No benchmark data: every question, state and doc
below is written here. Ground-truth calls use keyword arguments only (a tool call carries
nothing else). Run from the repository root: python3 scripts/bfcl_multi_turn_env_fixture.py
"""
import json
import os

OUT = os.path.join("agent-rl-eval", "tests", "fixtures", "bfcl", "multi_turn_env")


def doc(name, description, properties, required):
    return {
        "name": name,
        "description": description,
        "parameters": {"type": "dict", "properties": properties, "required": required},
    }


def prop(kind, description, **extra):
    return dict({"type": kind, "description": description}, **extra)


DOCS = {
    "gorilla_file_system.json": [
        doc("cd", "Change the current directory.", {"folder": prop("string", "Folder to enter.")}, ["folder"]),
        doc("mkdir", "Make a directory in the current one.", {"dir_name": prop("string", "New directory name.")}, ["dir_name"]),
        doc("touch", "Make an empty file in the current directory.", {"file_name": prop("string", "New file name.")}, ["file_name"]),
        doc("cat", "Show a file of the current directory.", {"file_name": prop("string", "File to show.")}, ["file_name"]),
    ],
    "math_api.json": [
        doc("add", "Sum of two numbers.", {"a": prop("float", "First."), "b": prop("float", "Second.")}, ["a", "b"]),
        doc("multiply", "Product of two numbers.", {"a": prop("float", "First."), "b": prop("float", "Second.")}, ["a", "b"]),
    ],
    "message_api.json": [],
    "posting_api.json": [],
    "ticket_api.json": [],
    "trading_bot.json": [
        doc("get_stock_info", "Price and volume of a stock.", {"symbol": prop("string", "Ticker.")}, ["symbol"]),
        doc("fund_account", "Move money from the bound card into the account.", {"amount": prop("float", "Amount.")}, ["amount"]),
    ],
    "travel_booking.json": [],
    "vehicle_control.json": [
        doc("lockDoors", "Lock or unlock doors.", {
            "unlock": prop("boolean", "True to unlock."),
            "door": prop("array", "Doors.", items={"type": "string", "enum": ["driver", "passenger", "rear_left", "rear_right"]}),
        }, ["unlock", "door"]),
        doc("setHeadlights", "Switch the headlights.", {"mode": prop("string", "on, off or auto.", enum=["on", "off", "auto"])}, ["mode"]),
        doc("fillFuelTank", "Add fuel, in gallons.", {"fuelAmount": prop("float", "Gallons to add.")}, ["fuelAmount"]),
    ],
}

FILES = {"ana": {"type": "directory", "contents": {
    "docs": {"type": "directory", "contents": {
        "plan.txt": {"type": "file", "content": "first draft of the plan"}}}}}}


def user(text):
    return [{"role": "user", "content": text}]


ENTRIES = {
    "multi_turn_base": [
        ({"id": "multi_turn_base_0", "question": [
            user("Create a folder named archive."),
            user("Go into docs and make an empty file called todo.txt."),
            user("Show me what plan.txt says."),
        ], "initial_config": {"GorillaFileSystem": {"root": FILES}},
            "involved_classes": ["GorillaFileSystem"]},
         [["mkdir(dir_name='archive')"], ["cd(folder='docs')", "touch(file_name='todo.txt')"],
          ["cat(file_name='plan.txt')"]]),
        ({"id": "multi_turn_base_1", "question": [
            user("What is 3 plus 4.5?"), user("And 2 times 8?")],
            "initial_config": {}, "involved_classes": ["MathAPI"]},
         [["add(a=3, b=4.5)"], ["multiply(a=2, b=8)"]]),
        ({"id": "multi_turn_base_2", "question": [
            user("Unlock the driver door and switch the headlights on."),
            user("Put 15 gallons in the tank.")],
            "initial_config": {"VehicleControlAPI": {"fuelLevel": 20.0}},
            "involved_classes": ["VehicleControlAPI"]},
         [["lockDoors(unlock=True, door=['driver'])", "setHeadlights(mode='on')"],
          ["fillFuelTank(fuelAmount=15.0)"]]),
    ],
    "multi_turn_miss_func": [
        ({"id": "multi_turn_miss_func_0", "question": [
            user("Make a folder called reports."),
            user("Now put an empty file summary.txt in reports."),
            [],
        ], "initial_config": {"GorillaFileSystem": {"root": FILES}},
            "involved_classes": ["GorillaFileSystem"], "missed_function": {"2": ["touch"]}},
         [["mkdir(dir_name='reports')"], [], ["cd(folder='reports')", "touch(file_name='summary.txt')"]]),
    ],
    "multi_turn_miss_param": [
        ({"id": "multi_turn_miss_param_0", "question": [
            user("What does NVDA trade at?"),
            user("Add some money to my trading account."),
            user("500 dollars, please."),
        ], "initial_config": {"TradingBot": {"account_info": {
            "account_id": 7, "balance": 100.0, "binding_card": 4111222233334444},
            "authenticated": True}},
            "involved_classes": ["TradingBot"]},
         [["get_stock_info(symbol='NVDA')"], [], ["fund_account(amount=500.0)"]]),
    ],
}


def write_lines(path, records):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as out:
        for record in records:
            out.write(json.dumps(record) + "\n")


def main():
    # The layout is recognised by its multiple-category file; this fixture has no such entries.
    write_lines(os.path.join(OUT, "BFCL_v4_multiple.json"), [])
    for category, entries in ENTRIES.items():
        name = f"BFCL_v4_{category}.json"
        write_lines(os.path.join(OUT, name), [question for question, _ in entries])
        write_lines(os.path.join(OUT, "possible_answer", name),
                    [{"id": question["id"], "ground_truth": truth} for question, truth in entries])
    for name, docs in DOCS.items():
        write_lines(os.path.join(OUT, "multi_turn_func_doc", name), docs)


if __name__ == "__main__":
    main()
