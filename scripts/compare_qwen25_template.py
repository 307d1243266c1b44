"""Dev-time check: real chat templates render byte-identically in agent-rl and in transformers.

Takes the templates TRL's PyPI package ships (trl/chat_templates/: Qwen2.5-Instruct's own and
others; not committed here), installs each beside the fixture tokenizer in a temp directory, renders
the fixture conversations (system, user, assistant tool calls, tool results, tools list; with and
without the generation prompt) with transformers' apply_chat_template and with
`agent-rl chat-template`, and diffs. Usage (after `cargo build`):
    python3 scripts/compare_qwen25_template.py [target/debug/agent-rl] [template names...]
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

import trl
from transformers import AutoTokenizer

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIX = os.path.join(ROOT, "agent-rl-core/tests/fixtures/qwen2_tiny")


def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "target/debug/agent-rl")
    names = sys.argv[2:] or ["qwen2_5", "qwen2_5_training", "qwen3", "qwen3_instruct_2507", "llama3_1"]
    conversations = json.load(open(os.path.join(FIX, "conversations.json")))
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            model = os.path.join(tmp, name)
            os.makedirs(model)
            for f in ("tokenizer.json", "tokenizer_config.json"):
                shutil.copy(os.path.join(FIX, "tied_f32", f), model)
            shutil.copy(os.path.join(os.path.dirname(trl.__file__), "chat_templates", f"{name}.jinja"),
                        os.path.join(model, "chat_template.jinja"))
            tok = AutoTokenizer.from_pretrained(model)
            for conv in conversations:
                for gen in (False, True):
                    try:
                        want = tok.apply_chat_template(conv["messages"], tools=conv.get("tools"),
                                                       add_generation_prompt=gen, tokenize=False)
                    except Exception as err:  # the template itself refuses this conversation
                        want = f"<error {type(err).__name__}>"
                    path = os.path.join(tmp, "conv.json")
                    json.dump({"messages": conv["messages"], "tools": conv.get("tools")}, open(path, "w"))
                    args = [binary, "chat-template", "--model", model, "--messages", path]
                    if gen:
                        args.append("--add-generation-prompt")
                    out = subprocess.run(args, capture_output=True, text=True)
                    got = out.stdout if out.returncode == 0 else "<error>"
                    same = got == want or (want.startswith("<error") and got == "<error>")
                    failures += not same
                    print(f"{'ok  ' if same else 'DIFF'} {name:24} {conv['name']:28} gen={gen}")
                    if not same:
                        print("--- transformers\n" + want + "\n--- agent-rl\n" + got + out.stderr)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
