"""Fails when a crate embeds (include_str!/include_bytes!) a file outside its own directory:
such a file is missing from the published package, so `cargo publish` would break the build.

    python3 scripts/check_embedded_files.py
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
PATTERN = re.compile(r'include_(?:str|bytes)!\(\s*"([^"]+)"')


def crate_dir(path):
    for parent in path.parents:
        if (parent / "Cargo.toml").is_file():
            return parent
    return ROOT


bad = []
for source in ROOT.rglob("*.rs"):
    if "target" in source.parts or "tests" in source.relative_to(ROOT).parts:
        continue
    for line_no, line in enumerate(source.read_text(encoding="utf-8").splitlines(), 1):
        for match in PATTERN.finditer(line):
            embedded = (source.parent / match.group(1)).resolve()
            crate = crate_dir(source)
            if crate not in embedded.parents:
                bad.append(f"{source.relative_to(ROOT)}:{line_no}: {match.group(1)} lies outside {crate.name}")
for line in bad:
    print(line, file=sys.stderr)
sys.exit(1 if bad else 0)
