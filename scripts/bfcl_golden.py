#!/usr/bin/env python3
"""Golden vectors for the Rust BFCL checker, made with the REAL official checker.

Takes each single-turn v4 entry's ground truth, builds a model output from it (Java/JavaScript
arguments rendered as source text), applies mutations (wrong values, missing or extra arguments,
wrong types, int/float swaps, string case and punctuation, list and dict edits, name dots vs
underscores, extra/missing/shuffled calls, raw prompting text, ...), and records the official
verdict and error type of each. Vectors name the entry by id and carry only the mutated model
output, never the question or answer records.

    pip install bfcl-eval==2026.3.23
    python scripts/bfcl_golden.py --data $AGENT_RL_DATA/bfcl/v4 \
        --out agent-rl-eval/tests/fixtures/bfcl/golden.jsonl \
        --replay-out agent-rl-eval/tests/fixtures/bfcl/replay_v4.json \
        --v3-data $AGENT_RL_DATA/bfcl/v3 --replay-v3-out agent-rl-eval/tests/fixtures/bfcl/replay_v3.json \
        --decoder-out agent-rl-eval/tests/fixtures/bfcl/decoder.jsonl

bfcl-eval's model registry imports every model SDK; only the checker and the decoder are needed,
so the registry is replaced by a two-entry stub before import (`dot_model` has
`underscore_to_dot`, `plain` has not).
"""

import argparse
import copy
import json
import random
import sys
import types

_registry = types.ModuleType("bfcl_eval.constants.model_config")


class _ModelConfig:
    def __init__(self, underscore_to_dot):
        self.underscore_to_dot = underscore_to_dot


_registry.MODEL_CONFIG_MAPPING = {"dot/model": _ModelConfig(True), "plain": _ModelConfig(False)}
sys.modules["bfcl_eval.constants.model_config"] = _registry

from bfcl_eval.constants.enums import Language, ReturnFormat  # noqa: E402
from bfcl_eval.eval_checker.ast_eval.ast_checker import ast_checker  # noqa: E402
from bfcl_eval.model_handler.utils import default_decode_ast_prompting  # noqa: E402
from bfcl_eval.utils import is_empty_output, is_function_calling_format_output  # noqa: E402

AST_CATEGORIES = {
    "simple_python": 70, "simple_java": 80, "simple_javascript": 50, "multiple": 40,
    "parallel": 35, "parallel_multiple": 30, "live_simple": 45, "live_multiple": 40,
    "live_parallel": 16, "live_parallel_multiple": 24,
}
RELEVANCE_CATEGORIES = {"irrelevance": 25, "live_irrelevance": 25, "live_relevance": 16}


def load(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def language_of(category):
    return {"simple_java": Language.JAVA, "simple_javascript": Language.JAVASCRIPT}.get(
        category, Language.PYTHON)


def first_value(acceptable, rng, alternative):
    values = [v for v in acceptable if v != ""] if isinstance(acceptable, list) else [acceptable]
    if not values:
        return None, False
    return (rng.choice(values) if alternative else values[0]), True


def concrete(value, rng, alternative):
    """A model value from an acceptable value: dicts of alternatives become plain dicts."""
    if isinstance(value, dict):
        out = {}
        for key, acceptable in value.items():
            chosen, present = first_value(acceptable, rng, alternative)
            if present:
                out[key] = concrete(chosen, rng, alternative)
        return out
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        return [concrete(v, rng, alternative) for v in value]
    return value


def java_literal(value, java_type):
    if java_type in ("String", "char"):
        return '"%s"' % value
    return java_text(value, java_type, None)


def java_text(value, java_type, items_type):
    if java_type == "long":
        return f"{value}L"
    if java_type == "float":
        return f"{value}f"
    if java_type == "boolean" or isinstance(value, bool):
        return "true" if value else "false"
    if java_type == "Array" and isinstance(value, list):
        element = {"String": "String", "integer": "int", "long": "long"}.get(items_type, "Object")
        return "new %s[]{%s}" % (element, ", ".join(java_literal(v, items_type) for v in value))
    if java_type == "ArrayList" and isinstance(value, list):
        return "new ArrayList<>(Arrays.asList(%s))" % ", ".join(
            java_literal(v, items_type) for v in value)
    if java_type == "HashMap" and isinstance(value, dict):
        puts = " ".join(f'put("{k}", {json.dumps(v) if isinstance(v, str) else java_text(v, None, None)});'
                        for k, v in value.items())
        return "new HashMap<String, String>() {{ %s }}" % puts
    return str(value)


def js_text(value, js_type):
    if js_type == "Bigint":
        return f"{value}n"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[%s]" % ", ".join(json.dumps(v) if isinstance(v, str) else js_text(v, None) for v in value)
    if isinstance(value, dict):
        return "{%s}" % ", ".join(
            f"{k}: {json.dumps(v) if isinstance(v, str) else js_text(v, None)}" for k, v in value.items())
    return str(value)


def find_doc(docs, name):
    return next((d for d in docs if d["name"] == name), docs[0])


def build_output(entry, gt, rng, alternative=False):
    category = entry["category"]
    output = []
    for call in gt:
        name, params = next(iter(call.items()))
        doc = find_doc(entry["function"], name)
        props = doc["parameters"].get("properties", {})
        args = {}
        for param, acceptable in params.items():
            chosen, present = first_value(acceptable, rng, alternative)
            if not present:
                continue
            value = concrete(chosen, rng, alternative)
            schema = props.get(param, {})
            if category == "simple_java":
                value = value if isinstance(value, str) else java_text(
                    value, schema.get("type"), schema.get("items", {}).get("type"))
            elif category == "simple_javascript":
                value = value if isinstance(value, str) else js_text(value, schema.get("type"))
            args[param] = value
        output.append({name: args})
    return output


def rename(output, underscore):
    if not underscore or not isinstance(output, list):
        return output
    return [{k.replace(".", "_"): v for k, v in call.items()} if isinstance(call, dict) else call
            for call in output]


def to_text(output):
    calls = []
    for call in output:
        name, args = next(iter(call.items()))
        calls.append("%s(%s)" % (name, ", ".join(f"{k}={v!r}" for k, v in args.items())))
    return "[" + ", ".join(calls) + "]"


def to_source_text(entry, output):
    """Java/JavaScript prompting text: string-typed arguments quoted, the rest raw source."""
    calls = []
    for call in output:
        name, args = next(iter(call.items()))
        props = find_doc(entry["function"], name)["parameters"].get("properties", {})
        rendered = []
        for key, value in args.items():
            quoted = props.get(key, {}).get("type") in ("String", "char") or not isinstance(value, str)
            rendered.append(f"{key}={json.dumps(value) if quoted else value}")
        calls.append("%s(%s)" % (name, ", ".join(rendered)))
    return "[" + ", ".join(calls) + "]"


def pick_arg(output, rng, predicate=lambda v: True):
    slots = [(i, k) for i, call in enumerate(output) for k, v in next(iter(call.values())).items()
             if predicate(v)]
    if not slots:
        return None
    i, k = rng.choice(slots)
    return next(iter(output[i].values())), k


def mutate_value(pred, change):
    def mutation(output, rng, entry):
        slot = pick_arg(output, rng, pred)
        if slot is None:
            return None
        args, key = slot
        args[key] = change(args[key], rng)
        return output
    return mutation


is_str = lambda v: isinstance(v, str)  # noqa: E731
is_int = lambda v: isinstance(v, int) and not isinstance(v, bool)  # noqa: E731
is_float = lambda v: isinstance(v, float)  # noqa: E731
is_list = lambda v: isinstance(v, list) and len(v) > 0  # noqa: E731
is_dict = lambda v: isinstance(v, dict) and len(v) > 0  # noqa: E731
is_list_of_dicts = lambda v: is_list(v) and isinstance(v[0], dict) and len(v[0]) > 0  # noqa: E731


def drop_param(output, rng, entry):
    slot = pick_arg(output, rng)
    if slot is None:
        return None
    args, key = slot
    del args[key]
    return output


def extra_param(output, rng, entry):
    next(iter(output[0].values()))["unexpected_extra"] = rng.choice(["x", 1, True])
    return output


def first_dict_key(value, rng, action):
    value = dict(value)
    key = rng.choice(list(value))
    if action == "drop":
        del value[key]
    elif action == "wrong":
        value[key] = "wrong_value_zz"
    else:
        value["extra_key_zz"] = "v"
    return value


def list_of_dicts_edit(value, rng):
    value = copy.deepcopy(value)
    if rng.random() < 0.5:
        value.append(value[0])
    else:
        value[0] = first_dict_key(value[0], rng, "wrong")
    return value


MUTATIONS = {
    "drop_param": drop_param,
    "extra_param": extra_param,
    "str_upper": mutate_value(is_str, lambda v, r: v.upper()),
    "str_punct": mutate_value(is_str, lambda v, r: v.replace(" ", " - ", 1) + "."),
    "str_wrong": mutate_value(is_str, lambda v, r: v + "zz"),
    "str_quote": mutate_value(is_str, lambda v, r: "'%s'" % v),
    "str_dquote": mutate_value(is_str, lambda v, r: '"%s"' % v),
    "str_to_int": mutate_value(is_str, lambda v, r: 7),
    "int_to_float": mutate_value(is_int, lambda v, r: float(v)),
    "int_plus_one": mutate_value(is_int, lambda v, r: v + 1),
    "int_to_str": mutate_value(is_int, lambda v, r: str(v)),
    "float_to_int": mutate_value(lambda v: is_float(v) and v == int(v), lambda v, r: int(v)),
    "float_nudge": mutate_value(is_float, lambda v, r: v + 0.5),
    "bool_flip": mutate_value(lambda v: isinstance(v, bool), lambda v, r: not v),
    "bool_to_int": mutate_value(lambda v: isinstance(v, bool), lambda v, r: int(v)),
    "none_value": mutate_value(lambda v: True, lambda v, r: None),
    "list_reverse": mutate_value(lambda v: is_list(v) and len(v) > 1, lambda v, r: v[::-1]),
    "list_drop": mutate_value(is_list, lambda v, r: v[1:]),
    "list_str_elems": mutate_value(is_list, lambda v, r: [str(x) for x in v]),
    "list_upper": mutate_value(lambda v: is_list(v) and isinstance(v[0], str),
                               lambda v, r: [x.upper() if isinstance(x, str) else x for x in v]),
    "dict_drop_key": mutate_value(is_dict, lambda v, r: first_dict_key(v, r, "drop")),
    "dict_wrong_value": mutate_value(is_dict, lambda v, r: first_dict_key(v, r, "wrong")),
    "dict_extra_key": mutate_value(is_dict, lambda v, r: first_dict_key(v, r, "extra")),
    "list_dicts_edit": mutate_value(is_list_of_dicts, list_of_dicts_edit),
    "wrong_name": lambda o, r, e: [{k + "_v2": v for k, v in o[0].items()}] + o[1:],
    "extra_call": lambda o, r, e: o + [copy.deepcopy(o[0])],
    "drop_call": lambda o, r, e: o[:-1],
    "shuffle_calls": lambda o, r, e: r.sample(o, len(o)) if len(o) > 1 else None,
    "empty_list": lambda o, r, e: [],
    "args_not_dict": lambda o, r, e: [{next(iter(o[0])): "a=1"}],
}
def list_wrong_elements(value, rng):
    return [7 if isinstance(v, str) else "seven" for v in value]


MUTATIONS["list_wrong_elements"] = mutate_value(is_list, list_wrong_elements)
MUTATIONS["list_of_dicts_drop_key"] = mutate_value(
    is_list_of_dicts, lambda v, r: [first_dict_key(v[0], r, "drop")] + v[1:])
MUTATIONS["dict_value_case"] = mutate_value(
    is_dict, lambda v, r: {k: (x.upper() if isinstance(x, str) else x) for k, x in v.items()})
STRUCTURED = ["dict_drop_key", "dict_wrong_value", "dict_extra_key", "dict_value_case",
              "list_dicts_edit", "list_of_dicts_drop_key", "list_wrong_elements", "list_reverse"]
GENERIC = {"drop_param", "extra_param", "wrong_name", "extra_call", "drop_call", "empty_list",
           "args_not_dict", "none_value", "str_quote", "str_dquote", "str_to_int"}
JAVA_JS_MUTATIONS = {
    "java_strip_suffix": mutate_value(lambda v: is_str(v) and v[-1:] in ("L", "f"), lambda v, r: v[:-1]),
    "src_int_value": mutate_value(is_str, lambda v, r: 5),
    "src_true": mutate_value(is_str, lambda v, r: "true"),
}


def official(entry, gt, output, text, underscore):
    category = entry["category"]
    language = language_of(category)
    model = "dot_model" if underscore else "plain"
    fmt = {Language.JAVA: ReturnFormat.JAVA, Language.JAVASCRIPT: ReturnFormat.JAVASCRIPT}.get(
        language, ReturnFormat.PYTHON)
    decoded, failed = output, False
    if text is not None:
        try:
            decoded = default_decode_ast_prompting(text, fmt)
        except Exception:
            failed = True
    if category in RELEVANCE_CATEGORIES:
        has_call = not failed and not is_empty_output(decoded)
        if "irrelevance" in category:
            return (not has_call), (None if not has_call else "irrelevance_error:decoder_success")
        return has_call, (None if has_call else "relevance_error:decoder_failed")
    if failed:
        return False, "ast_decoder:decoder_failed"
    if not is_function_calling_format_output(decoded):
        return False, "ast_decoder:decoder_wrong_output_format"
    result = ast_checker(entry["function"], decoded, gt, language, category, model)
    return result["valid"], (None if result["valid"] else result["error_type"])


def vectors_for(entry, gt, rng):
    category = entry["category"]
    underscore = rng.random() < 0.25 and any("." in d["name"] for d in entry["function"])
    base = build_output(entry, gt, rng)
    cases = [("gt_first", base, None)]
    if rng.random() < 0.5:
        cases.append(("gt_alternative", build_output(entry, gt, rng, True), None))
    if category.startswith("simple_j"):
        pool = {**MUTATIONS, **JAVA_JS_MUTATIONS}
    else:
        pool = MUTATIONS
    applicable = []
    for name in sorted(pool):
        mutated = pool[name](copy.deepcopy(base), random.Random(rng.random()), entry)
        if mutated is not None:
            applicable.append((name, mutated, None))
    # value-specific mutations first (they are rarer), then generic ones up to five in all
    specific = [case for case in applicable if case[0] not in GENERIC]
    generic = [case for case in applicable if case[0] in GENERIC]
    chosen = rng.sample(specific, min(3, len(specific)))
    cases.extend(chosen + rng.sample(generic, min(5 - len(chosen), len(generic))))
    if base and "." in next(iter(base[0])) and rng.random() < 0.5:
        cases.append(("dotted_name_other_flag", rename(base, not underscore), None))
    text_output = rename(base, underscore)
    if rng.random() < 0.5:
        cases.append(("text_prompting", None, to_text(text_output)))
    if category in ("simple_java", "simple_javascript"):
        cases.append(("text_source", None, to_source_text(entry, text_output)))
    if rng.random() < 0.15:
        cases.append(("text_markdown", None, "```\n" + to_text(text_output) + "\n```"))
    if rng.random() < 0.1:
        cases.append(("text_prose", None, "I cannot answer that with the given functions."))
    if rng.random() < 0.1:
        cases.append(("text_broken", None, to_text(text_output)[:-2]))
    out = []
    for mutation, output, text in cases:
        output = rename(output, underscore) if mutation != "dotted_name_other_flag" else output
        try:
            valid, error_type = official(entry, gt, output, text, underscore)
        except Exception:
            continue  # the official checker crashed on this input: no verdict to compare
        vector = {"id": entry["id"], "mutation": mutation, "underscore_to_dot": underscore}
        vector["output" if text is None else "text"] = output if text is None else text
        vector.update({"valid": valid, "error_type": error_type})
        out.append(vector)
    return out


def structured_vectors(entry, gt, rng):
    """Dict, list-of-dicts and list mutations for entries that have such arguments (rare in a
    random sample, so every entry is considered)."""
    base = build_output(entry, gt, rng)
    out = []
    for name in rng.sample(STRUCTURED, len(STRUCTURED)):
        mutated = MUTATIONS[name](copy.deepcopy(base), random.Random(rng.random()), entry)
        if mutated is None:
            continue
        try:
            valid, error_type = official(entry, gt, mutated, None, False)
        except Exception:
            continue
        out.append({"id": entry["id"], "mutation": name, "underscore_to_dot": False,
                    "output": mutated, "valid": valid, "error_type": error_type})
        if len(out) == 2:
            break
    return out


def relevance_vectors(entry, rng):
    doc = entry["function"][0]
    required = doc["parameters"].get("required", [])
    call = [{doc["name"]: {p: "x" for p in required}}]
    cases = [("empty_list", [], None), ("empty_call", [{}], None), ("a_call", call, None),
             ("text_prose", None, "Sorry, none of these functions fit."),
             ("text_call", None, to_text(call)), ("text_empty_list", None, "[]"),
             ("args_not_dict", [{doc["name"]: "x"}], None)]
    out = []
    for mutation, output, text in cases:
        valid, error_type = official(entry, [], output, text, False)
        vector = {"id": entry["id"], "mutation": mutation, "underscore_to_dot": False}
        vector["output" if text is None else "text"] = output if text is None else text
        vector.update({"valid": valid, "error_type": error_type})
        out.append(vector)
    return out


# Prompting-mode texts for the decoder vectors: our own examples of what models write,
# including the decoder's odd corners (unary plus negates, `not x` negates, calls without
# keywords become their source text, names become strings).
DECODER_TEXTS = [
    "[f(a=1, b='x')]", "f(a=1)", "```\n[f(a=1)]\n```", "  [f(a=1)]\n", "'[f(a=1)]'",
    "[f(a=1), g(b=2.5)]", "[mod.sub.fn(x=True, y=None)]", "[f(a=-3, b=-2.5, c=+4)]",
    "[f(a=2*3, b=10/4, c=2**10, d=7//2, e=7%3, f=1+2.5, g='a'+'b')]",
    "[f(a=[1, [2, 3]], b={'k': [1, {'z': 0}]})]", "[f(a=(1, 2), b=())]",
    "[f(a=some_name, b=other.attr)]", "[f(a=g(x=1), b=h(1, 2), c=h())]", "[f(a=...)]",
    "[f(1, 2, a=3)]", r"""[f(a='it\'s', b="q\"d", c='''tri''')]""",
    r"[f(a='caf\u00e9', b='\\u00e9', c=r'\d+')]", "[f(a=1e3, b=1_000, c=0x1F, d=.5, e=5.)]",
    "[f(a={1: 'one', 'two': 2})]", "[f(a={'x', 'y'})]", "[f(a=not True)]", "[f(a=-x)]",
    "[f(a=[1, 2][0])]", "[f(a=1),]", "(f(a=1), g(b=2))", "[f(a=1) g(b=2)]", "[f(a=1]", "[]",
    "[1, 2]", "I cannot do that.", "[f(a='x', a='y')]", "[f(a=True, b=False)]", "[f(a=[])]",
    "[f(a={})]", '[f(a="multi word string, with punctuation!")]', "[f(a=f'x{1}')]",
    "[f(a=3j)]", "[f(a=1 if True else 2)]", "[f(a=-(1))]", "[f(a=-True)]",
    "[f(a=[x for x in y])]", "[get_weather(city='Paris, France', unit='celsius')]",
    "Here you go: [f(a=1)]", "[f(a=1)] Hope this helps", "[f(a=1)]\n[g(b=2)]",
    "[f(**kw)]", "[f(a=1, *args)]", "[f(a=None, b=[None])]", "[f(a=1.0, b=1, c=-0.0)]", "[f(a='x' 'y')]",
    "[f(a=(1))]", "[f(a=(1,))]", "[f(a=[1,2,3], b=[ 'x' , 'y' ])]", "[f(a=2-3*4, b=(1+2)*3)]",
]


# Java / JavaScript prompting outputs (arguments are source code).
SOURCE_TEXTS = {
    "java": [
        '[Cache.resize(cache=userCache, size=64, timeoutMs=30000L)]',
        '[Cache.resize(cache="userCache", flag=true, ratio=0.5f)]',
        '[A.b(list=new ArrayList<>(Arrays.asList("a", "b")), arr=new int[]{1, 2})]',
        '[A.b(map=new HashMap<String, Integer>() {{ put("k", 1); }})]',
        "[A.b(c='x', d=SomeClass.class, e=obj.method(1))]",
        '[A.b(x=1), C.d(y=2)]', '[A.b(1, 2)]', '[A.b(x=1, x=2)]', '[A.b(x=]', 'no call here',
        '[A.b(s="with, comma", t="with (paren)")]',
    ],
    "javascript": [
        "[showElement(selector='#menu', fade=0.5, visible=true)]",
        '[f(list=[1, 2, 3], obj={a: 1, b: "x"})]', '[f(x=someVar, y=-3)]',
        '[f(s="with, comma")]', '[f(x=1), g(y=2)]', '[f(x=]', '[f(a=new Array(1, 2))]',
    ],
}


def write_decoder_vectors(out):
    """The official prompting decoders on DECODER_TEXTS (Python) and SOURCE_TEXTS (Java,
    JavaScript): the decoded calls, or null on error."""
    cases = [("python", text, ReturnFormat.PYTHON) for text in DECODER_TEXTS]
    cases += [(lang, text, ReturnFormat.JAVA if lang == "java" else ReturnFormat.JAVASCRIPT)
              for lang, texts in SOURCE_TEXTS.items() for text in texts]
    with open(out, "w") as f:
        for language, text, fmt in cases:
            try:
                decoded = json.loads(json.dumps(default_decode_ast_prompting(text, fmt)))
            except Exception:
                decoded = None
            line = {"text": text, "decoded": decoded}
            if language != "python":
                line["language"] = language
            f.write(json.dumps(line, ensure_ascii=False) + "\n")


V3_NAMES = {"simple_python": "simple", "simple_java": "java", "simple_javascript": "javascript"}


def write_replay(data, out, version="v4"):
    """The official verdict of every AST entry's ground truth replayed with its first
    acceptable values (the baseline a re-implementation must reproduce, quirks included).
    Keys are v4 category names; v3 files are read under their v3 names."""
    summary = {}
    rng = random.Random(0)
    for category in AST_CATEGORIES:
        name = V3_NAMES.get(category, category) if version == "v3" else category
        prefix = f"BFCL_{version}_{name}.json"
        entries = load(f"{data}/{prefix}")
        answers = {a["id"]: a["ground_truth"] for a in load(f"{data}/possible_answer/{prefix}")}
        failing = {}
        for entry in entries:
            entry["category"] = category
            gt = answers[entry["id"]]
            try:
                valid, error_type = official(entry, gt, build_output(entry, gt, rng), None, False)
            except Exception as error:
                valid, error_type = False, f"exception:{type(error).__name__}"
            if not valid:
                failing[entry["id"]] = error_type
        summary[category] = {"total": len(entries), "failing": failing}
    with open(out, "w") as f:
        json.dump(summary, f, indent=1, sort_keys=True)
        f.write("\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", required=True, help="folder with the BFCL_v4_*.json files")
    parser.add_argument("--out", required=True)
    parser.add_argument("--seed", type=int, default=20260323)
    parser.add_argument("--replay-out", help="also write the official verdicts of every entry's "
                        "first acceptable values (per category: total, failing ids and error types)")
    parser.add_argument("--decoder-out", help="also write the prompting-decoder vectors")
    parser.add_argument("--v3-data", help="folder with the BFCL_v3_*.json files (with --replay-v3-out)")
    parser.add_argument("--replay-v3-out", help="the same replay summary for the v3 data")
    args = parser.parse_args()
    if args.replay_out:
        write_replay(args.data, args.replay_out)
    if args.decoder_out:
        write_decoder_vectors(args.decoder_out)
    if args.v3_data and args.replay_v3_out:
        write_replay(args.v3_data, args.replay_v3_out, "v3")
    rng = random.Random(args.seed)
    lines = []
    for category, count in {**AST_CATEGORIES, **RELEVANCE_CATEGORIES}.items():
        entries = load(f"{args.data}/BFCL_v4_{category}.json")
        answers = {}
        if category in AST_CATEGORIES:
            answers = {a["id"]: a["ground_truth"] for a in load(f"{args.data}/possible_answer/BFCL_v4_{category}.json")}
        if category in AST_CATEGORIES and category not in ("simple_java", "simple_javascript"):
            structured = [e for e in entries if any(
                isinstance(v, dict) or (isinstance(v, list) and v and isinstance(v[0], (dict, list)))
                for call in answers[e["id"]] for params in call.values() for v in params.values())]
            for entry in rng.sample(structured, min(25, len(structured))):
                entry["category"] = category
                lines.extend(structured_vectors(entry, answers[entry["id"]], rng))
        for entry in rng.sample(entries, min(count, len(entries))):
            entry["category"] = category
            if category in AST_CATEGORIES:
                lines.extend(vectors_for(entry, answers[entry["id"]], rng))
            else:
                lines.extend(relevance_vectors(entry, rng))
    with open(args.out, "w") as f:
        for line in lines:
            if not line["underscore_to_dot"]:
                del line["underscore_to_dot"]  # absent means false (keeps the file small)
            f.write(json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n")
    invalid = sum(not line["valid"] for line in lines)
    print(f"{len(lines)} vectors ({invalid} invalid) -> {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
