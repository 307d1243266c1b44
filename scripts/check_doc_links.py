#!/usr/bin/env python3
"""Checks the Markdown links of README.md and the book under docs/.

Every relative link must name a file that exists (anchors are not checked), every chapter in
docs/src/SUMMARY.md must exist, and every page under docs/src must be listed in SUMMARY.md, so
that mdBook renders it. Code blocks and inline code are skipped. Exits 1 on the first report.
Usage: python3 scripts/check_doc_links.py  (from anywhere in the repository)
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


def links(text):
    in_fence = False
    for number, line in enumerate(text.split("\n"), 1):
        if line.lstrip().startswith("```"):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        line = re.sub(r"`[^`]*`", "", line)
        for match in LINK.finditer(line):
            yield number, match.group(1)


def main():
    problems = []
    pages = [ROOT / "README.md"] + sorted((ROOT / "docs").rglob("*.md"))
    for page in pages:
        for number, target in links(page.read_text(encoding="utf-8")):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
                continue  # http(s), mailto, in-page anchors
            path = target.split("#", 1)[0]
            if not (page.parent / path).exists():
                problems.append(f"{page.relative_to(ROOT)}:{number}: broken link `{target}`")
    src = ROOT / "docs" / "src"
    summary = src / "SUMMARY.md"
    listed = {(src / t.split("#", 1)[0]).resolve() for _, t in links(summary.read_text(encoding="utf-8"))}
    for page in sorted(src.rglob("*.md")):
        if page != summary and page.resolve() not in listed:
            problems.append(f"{page.relative_to(ROOT)}: not listed in docs/src/SUMMARY.md")
    for problem in problems:
        print(problem, file=sys.stderr)
    checked = len(pages)
    print(f"{checked} Markdown files checked, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
