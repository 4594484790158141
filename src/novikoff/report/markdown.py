"""Write a report document as GitHub-flavoured Markdown, for issue trackers.

Math is GitHub's (and GitLab's) `` $`...`$ ``: LaTeX inside a code span, so Markdown never
touches it; the LaTeX of boxes has no backtick and no '|'.  Each item ends with a collapsed plain
text version (Unicode math) for renderers without math.  Text from the proof file is escaped with
backslashes (every character Markdown could read as markup), code spans get a fence longer than
any backtick run they contain.
"""

from __future__ import annotations

from urllib.parse import quote

from . import latex
from .boxes import BigOp, Fenced, Frac, Op, Row, Scripts, Sqrt, Text, joined, plain, substitutions
from .model import Cite, Document, Item, Row as DocRow

__all__ = ["write", "text", "code", "math"]

MARKS = {"verified": "✅ verified", "failed": "❌ failed",
         "expected_failure": "⚠️ expected failure", "unknown": "❔ unknown",
         "unchecked": "➖ not checked"}
PLAIN_MARKS = {"verified": "✓ verified", "failed": "✗ FAILED",
               "expected_failure": "✗ expected failure", "unknown": "? unknown",
               "unchecked": "- not checked"}
_SPECIAL = frozenset("\\`*_{}[]()<>#+-.!|~&$@")


def text(value: str) -> str:
    """Text from a proof file as Markdown text: no markup, no HTML, one line."""
    out = []
    for c in str(value).replace("\r", " ").replace("\n", " "):
        out.append("\\" + c if c in _SPECIAL else c)
    return "".join(out)


def code(value: str, cell: bool = False) -> str:
    """A code span holding value as written; in a table cell, '|' is escaped as GFM wants."""
    value = str(value).replace("\r", " ").replace("\n", " ")
    run = longest = 0
    for c in value:
        run = run + 1 if c == "`" else 0
        longest = max(longest, run)
    fence = "`" * (longest + 1)
    pad = " " if value.startswith("`") or value.endswith("`") or not value.strip() else ""
    body = value.replace("|", "\\|") if cell else value
    return f"{fence}{pad}{body}{pad}{fence}"


def math(box) -> str:
    """GitHub math, or the plain Unicode text in a code span when the box holds source text
    (LaTeX's \\text does not survive every Markdown math renderer)."""
    if _has_text(box):
        return code(plain(box), cell=True)
    return f"$`{latex.math(box)}`$"


def _has_text(box) -> bool:
    if isinstance(box, Text):
        return True
    if isinstance(box, Row):
        return any(_has_text(i) for i in box.items)
    if isinstance(box, Scripts):
        return any(_has_text(b) for b in (box.base, box.sub, box.sup) if b is not None)
    if isinstance(box, Frac):
        return _has_text(box.num) or _has_text(box.den)
    if isinstance(box, (Sqrt, Fenced)):
        return _has_text(box.body)
    if isinstance(box, BigOp):
        return _has_text(box.under) or _has_text(box.over)
    return False


def write(doc: Document) -> str:
    out = [f"# {text(doc.title)}", ""]
    out += [f"{code(doc.path)} — {_verdict(doc)}", ""]
    out += ["Marks: " + " · ".join(MARKS[s] for s in ("verified", "failed", "expected_failure",
                                                       "unknown")), ""]
    if doc.summary:
        out += _summary(doc)
    if doc.error is not None:
        out += _error(doc.error)
    out += _quote(doc.intro)
    for item in doc.items:
        out += _item(item)
    if doc.listing:
        out += ["## Source", ""] + _listing(doc.listing, doc.error)
    out += ["---", "", "_Written by `novikoff report`; every status is the checker's._"]
    return "\n".join(out) + "\n"


def _verdict(doc: Document) -> str:
    if doc.status == "not-checked":
        return f"**⚠ not checked**: {text(doc.not_checked)}"
    c = doc.counts
    words = {"ok": "✅ every lemma verified or failing as expected",
             "failed": "❌ a check failed or could not be decided",
             "malformed": "❌ the file is malformed"}[doc.status]
    return (f"**{words}**. {c['lemmas']} lemmas: {c['verified']} verified, "
            f"{c['failing_as_expected']} failing as expected, {c['not_verified']} not verified; "
            f"{c['checks']} checks: {c['checks_verified']} verified, "
            f"{c['checks_expected_failures']} expected failures, {c['checks_failed']} failed, "
            f"{c['checks_unknown']} unknown.")


def _summary(doc: Document) -> list:
    out = ["## Grading summary", "", "| lemma | points | max | note |", "|---|--:|--:|---|"]
    for name, earned, maximum, note, anchor in doc.summary:
        shown = code(name, cell=True)
        if anchor is not None:
            shown = f"[{shown}](#{anchor})"
        out.append(f"| {shown} | {text(earned)} | {text(maximum)} | {text(note)} |")
    return out + [""]


def _error(error) -> list:
    where = f"{error.file}:{error.line}:{error.column}"
    out = [f"> **❌ malformed** {code(where)}: {text(error.message)}"]
    if error.text:
        out += [">", f"> {code(error.text)}"]
    return out + [""]


def _quote(paragraphs: list) -> list:
    if not paragraphs:
        return []
    out = []
    for p in paragraphs:
        out += [">"] if out else []
        out.append(f"> {text(p)}")
    return out + [""]


def _listing(listing: list, error) -> list:
    lines = []
    for number, line in listing:
        bad = error is not None and number == error.line
        lines.append(f"{'→' if bad else ' '}{number:>4}  {line}")
        if bad:  # a caret under the column of the error
            lines.append(" " * (6 + max(0, error.column)) + f"^ {error.message}")
    fence = "`" * max(3, 1 + max((_run(line) for line in lines), default=0))
    return [fence + "text"] + lines + [fence, ""]


def _run(value: str) -> int:
    run = longest = 0
    for c in value:
        run = run + 1 if c == "`" else 0
        longest = max(longest, run)
    return longest


_KINDS = {"setting": "Setting", "lemma": "Lemma", "theorem": "Theorem", "claim": "Claim"}


def _item(item: Item) -> list:
    if item.kind == "import":
        links = ", ".join(_cite(c) for row in item.rows for c in row.cites)
        return [f'<a id="{item.anchor}"></a>from {code(item.name)} import {links}', ""]
    mark = f" — {MARKS.get(item.status, text(item.status))}" if item.status else ""
    out = [f'## <a id="{item.anchor}"></a>{_KINDS.get(item.kind, text(item.kind))} '
           f"{code(item.name)}{mark}", ""]
    out += _quote(item.comments)
    if item.prose:
        out += [f"_“{text(item.prose)}”_", ""]
    if item.status in ("failed", "expected_failure", "unknown") and item.reason:
        out += [f"Not verified: {text(item.reason)}", ""]
    rows = item.head + item.rows
    if rows:
        out += ["| line | | | by | status |", "|--:|--:|:--|:--|:--|"]
        out += [_row(row) for row in rows]
        out.append("")
    if item.error is not None:  # a lemma that did not parse: the error, then its source
        out += _error(item.error)
    if item.listing:
        out += _listing(item.listing, item.error)
    for row in rows:
        out += _notes([c for c in row.checks if c.status != "verified"])
    if item.other_checks:
        out += [f"Other checks of this {text(item.kind)}:", ""] + _notes(item.other_checks)
    if item.kind != "setting":  # a setting's lines have no status to read
        out += _plain(item)
    return out


def _row(row: DocRow) -> str:
    anchor = f'<a id="{row.anchor}"></a>' if row.anchor else ""
    lhs, rhs = "", ""
    if row.kind in ("chain", "continue"):
        label = f"_{text(row.label)}:_ " if row.label else ""
        lhs = label + (math(row.lhs) if row.lhs is not None else "")
        rhs = math(row.rhs)
    elif row.kind == "statement":
        lhs = "_statement_"
        rhs = math(row.rhs) if row.rhs is not None else f"_{text(row.label)}_ " + code(
            row.source, cell=True)
    elif row.kind == "given":
        lhs, rhs = f"_given_ {code(row.label, cell=True)}", math(row.rhs)
    elif row.kind == "setting":
        name = code(row.label, cell=True) if row.anchor else f"_{text(row.label)}_"
        lhs, rhs = anchor + name, math(row.rhs)
    elif row.kind in ("heading", "case", "formula"):
        lhs = f"_{text(row.label)}_" if row.label else ""
        rhs = math(row.rhs) if row.rhs is not None else ""
    elif row.cites and not row.source:
        rhs = ", ".join(_cite(c) for c in row.cites)
    else:
        rhs = code(row.source, cell=True)
    if row.remark:
        rhs += f" _{text(row.remark)}_"
    by = ""
    if row.cites and row.kind != "text":
        by = "by " + ", ".join(_cite(c) for c in row.cites)
    if row.xfail:
        by += " `xfail`"
    mark = MARKS.get(row.status, text(row.status)) if row.status else ""
    line = row.line if row.line is not None else ""
    return f"| {line} | {lhs} | {rhs} | {by} | {mark} |"


def _cite(cite: Cite) -> str:
    shown = code(cite.name, cell=True)
    if cite.href is not None:
        where, anchor = cite.href
        target = f"#{anchor}" if where == "here" else f"{quote(where, safe='')}.md#{anchor}"
        shown = f"[{shown}]({target})"
    if cite.at is not None:
        shown += " " + math(substitutions(cite.at))
    if cite.args:
        shown += " " + math(Fenced("(", joined(cite.args), ")"))
    return shown



def _notes(checks: list) -> list:
    out = []
    for check in checks:
        s = check.step
        where = code(f"{s.file}:{s.line}:{s.column}")
        head = f"**{MARKS.get(s.status, text(s.status))}** at {where}"
        if check.context:
            head += f": {code(check.context)}"
        out += [head, ""]
        if check.why:
            out.append(f"- why: {text(check.why)}")
        if check.domain is not None:
            out.append(f"- condition of meaning that may fail: {math(check.domain)}")
        if check.hint:
            out.append("- hint: it would hold with: " + ", ".join(_cite(c) for c in check.hint))
        if check.counterexample:
            out += ["- counterexample:", "", "  | symbol | value |", "  |---|---|"]
            out += [f"  | {math(k)} | {math(v)} |" for k, v in check.counterexample]
        out.append("")
    return out


def _plain(item: Item) -> list:
    """The item in Unicode text, for renderers without math."""
    lines = []
    for row in item.head + item.rows:
        mark = PLAIN_MARKS.get(row.status, "") if row.status else ""
        label = f"{row.label}: " if row.label and row.kind not in ("chain", "continue") else ""
        if row.kind == "chain":
            body = (f"{row.label}: " if row.label else "") + plain(row.lhs) + " " + plain(row.rhs)
        elif row.kind == "continue":
            body = "    " + plain(row.rhs)
        elif row.rhs is not None:
            body = label + plain(row.rhs)
        elif row.kind == "heading":
            body = f"{row.label}:"
        else:
            body = label + (row.source or ", ".join(c.name for c in row.cites))
        by = ("   by " + ", ".join(c.name for c in row.cites)) if row.cites and \
            row.kind != "text" else ""
        line = f"{row.line:>4}" if row.line is not None else "    "
        lines.append(f"{line}  {'  ' * row.depth}{body}{by}{'   ' + mark if mark else ''}")
    if not lines:
        return []
    fence = "`" * max(3, 1 + max(_run(line) for line in lines))
    return (["<details><summary>plain text</summary>", "", fence + "text"] + lines
            + [fence, "", "</details>", ""])
