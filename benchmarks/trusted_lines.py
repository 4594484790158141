"""The trusted base's size: lines of each file of src/novikoff/kernel/ (docs/trust.md's table).

Counts every line of each file and its lines of code (neither blank, nor a comment, nor a
docstring).  Prints the table's rows; --write puts the counts into docs/trust.md's table (a
test compares the two, so the doc never states a size by hand).
Usage: python benchmarks/trusted_lines.py [--write]
"""

from __future__ import annotations

import argparse
import ast
import io
import re
import sys
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KERNEL = ROOT / "src" / "novikoff" / "kernel"
TRUST = ROOT / "docs" / "trust.md"
# A row of the table: | `src/novikoff/kernel/NAME.py` | LINES | CODE | ...
ROW = re.compile(r"^\| `(src/novikoff/kernel/[a-z_]+\.py)` \| ([0-9,]+) \| ([0-9,]+) \|",
                 re.M)


def code_lines(text: str) -> int:
    """Lines holding code: not blank, not only a comment, not part of a docstring."""
    docstrings = set()
    for node in ast.walk(ast.parse(text)):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) \
                and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
            docstrings.update(range(body[0].lineno, body[0].end_lineno + 1))
    lines = set()
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type not in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT,
                              tokenize.DEDENT, tokenize.ENDMARKER):
            lines.update(range(token.start[0], token.end[0] + 1))
    return len(lines - docstrings)


def sizes() -> dict:
    """path (from the root) -> (lines, lines of code) of every file of the kernel."""
    out = {}
    for path in sorted(KERNEL.glob("*.py")):
        text = path.read_text(encoding="utf-8")
        out[str(path.relative_to(ROOT))] = (len(text.splitlines()), code_lines(text))
    return out


def documented() -> dict:
    """path -> (lines, lines of code) as docs/trust.md's table states them."""
    return {m.group(1): (int(m.group(2).replace(",", "")), int(m.group(3).replace(",", "")))
            for m in ROW.finditer(TRUST.read_text(encoding="utf-8"))}


def write() -> None:
    measured = sizes()
    text = TRUST.read_text(encoding="utf-8")

    def row(m):
        lines, code = measured[m.group(1)]
        return f"| `{m.group(1)}` | {lines:,} | {code:,} |"
    TRUST.write_text(ROW.sub(row, text), encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--write", action="store_true", help="update docs/trust.md's table")
    args = parser.parse_args()
    if args.write:
        write()
    measured = sizes()
    for path, (lines, code) in measured.items():
        print(f"{path}: {lines} lines, {code} of code")
    total = [sum(v[i] for v in measured.values()) for i in (0, 1)]
    print(f"total: {total[0]} lines, {total[1]} of code in {len(measured)} files")
    return 0 if documented() == measured else 1


if __name__ == "__main__":
    sys.exit(main())
