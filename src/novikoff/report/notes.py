"""Annotated copies of a checked Markdown or LaTeX document: the document as written, with each
claim's verdict and a status per link after the display it was read from.

The Markdown copy adds blockquotes, the LaTeX copy `%` comments (so it reads, and checks, as the
original did); the HTML page shows the document's text with the same marks.
"""

from __future__ import annotations

import html as _html
import re

from ..checker import FileReport
from ..notes.document import Block, Display, Positions, display_spans, scan

__all__ = ["annotate", "annotate_html", "feedback_document"]

_MARK = {"verified": "verified", "failed": "FAILED", "unknown": "could not verify",
         "expected_failure": "failing as expected"}


def _insertion_points(source: str, markdown: bool) -> list:
    """(first line, last line, line after which to write) of each display and block."""
    where = Positions(source)
    out = []
    for event in scan(source, markdown)[0]:
        if isinstance(event, Display):
            first, _ = where(event.offset)
            last, _ = where(min(event.end + 2, len(source)))  # the closing delimiter's line
            out.append((first, last, last))
        elif isinstance(event, Block) and event.lines:
            first, _ = where(event.lines[0][1])
            last, _ = where(event.lines[-1][1])
            out.append((first, last, last + 1))  # after the closing fence or \end{novikoff}
    return out


def _notes_for(report: FileReport, source: str, markdown: bool) -> dict:
    """line after which to write -> the lines of marks (plain text)."""
    points = _insertion_points(source, markdown)
    marks: dict = {}
    for lemma in report.lemmas:
        lines = [s.line for s in lemma.steps if s.file == report.path] or [lemma.line]
        anchor = max(lines)
        after = next((p for first, last, p in points if first <= anchor <= last), anchor)
        body = [f"novikoff: {lemma.kind} {lemma.name}: {_MARK.get(lemma.status, lemma.status)}"]
        for step in lemma.steps:
            text = " ".join(step.text.split())
            body.append(f"  line {step.line}: {_MARK.get(step.status, step.status)}: {text}")
            if step.reason and step.status != "verified":
                body.append(f"    why: {step.reason}")
            if step.counterexample and step.status != "verified":
                values = ", ".join(f"{k} = {v}" for k, v in step.counterexample.items())
                body.append(f"    counterexample: {values}")
        marks.setdefault(after, []).extend(body)
    return marks


def _header(report: FileReport) -> list:
    out = []
    if report.error is not None:
        e = report.error
        out.append(f"novikoff: not read: {e.file}:{e.line}:{e.column}: {e.message}")
    notes = report.notes or {}
    if notes:
        out.append(f"novikoff: {notes.get('claims', 0)} claim(s) checked, "
                   f"{notes.get('links checked', 0)} link(s) checked; "
                   f"{notes.get('displays not checked', 0)} display(s) not checked; "
                   f"{notes.get('links read', 0)} of {notes.get('links', 0)} link(s) read")
        for line, col, message in notes.get("not understood", []):
            out.append(f"novikoff: line {line}:{col}: {message}")
    return out


def annotate(report: FileReport, source: str, markdown: bool) -> str:
    """The document with its marks: blockquotes in Markdown, `%` comments in LaTeX."""
    marks = _notes_for(report, source, markdown)
    lines = source.split("\n")

    def block(texts: list) -> list:
        if markdown:
            return [""] + ["> " + t for t in texts] + [""]
        return ["% " + t for t in texts]

    out = block(_header(report)) if _header(report) else []
    for number, line in enumerate(lines, start=1):
        out.append(line)
        if number in marks:
            out += block(marks[number])
    return "\n".join(out)


# MathJax typesets the document's own LaTeX when the page can load it; offline, the displays
# and the inline math stay as written (the raw TeX is the fallback, and every mark is plain
# text).  The `html` package (\\href, \\style, \\class) is left out and `ui/safe` filters
# what remains: the math comes from a student's file.
MATHJAX = (
    "<script>window.MathJax = {tex: {inlineMath: [['$', '$'], ['\\\\(', '\\\\)']], "
    "packages: {'[-]': ['html']}}, loader: {load: ['ui/safe']}};</script>\n"
    '<script async src="https://cdn.jsdelivr.net/npm/mathjax@3/es5/tex-chtml.js"></script>')
_STYLE = ("body{max-width:60em;margin:auto;padding:0 1em;font-family:sans-serif} "
          ".prose,.display{white-space:pre-wrap} .display{margin:.6em 0;overflow-x:auto} "
          "pre{background:#f6f8fa;padding:.4em .6em} .marks{background:#f4f4f4;border-left:4px "
          "solid #888;padding:0 8px} .failed{border-color:#c00} .ok{border-color:#080} "
          ".note{color:#555;font-size:90%}")


def _line_kinds(source: str, markdown: bool) -> list:
    """Per line (from 1): "display", "code" (a fenced block, a novikoff environment or
    comment block) or "prose"."""
    where = Positions(source)
    lines = source.split("\n")
    kinds = ["prose"] * (len(lines) + 1)
    for start, end, _ in display_spans(source, markdown):
        for n in range(where(start)[0], where(max(start, end - 1))[0] + 1):
            kinds[n] = "display"
    if markdown:
        opener = None
        for n, line in enumerate(lines, start=1):
            m = _FENCE.match(line)
            if opener is None and m:
                opener, kinds[n] = m.group(2), "code"
            elif opener is not None:
                kinds[n] = "code"
                if m and m.group(2)[0] == opener[0] and len(m.group(2)) >= len(opener) \
                        and not m.group(3):
                    opener = None
    else:
        for event in scan(source, markdown)[0]:
            if isinstance(event, Block) and event.lines:
                first, last = where(event.lines[0][1])[0], where(event.lines[-1][1])[0]
                if source.rfind("\\begin{novikoff}", 0, event.offset) >= 0 and \
                        not lines[first - 1].lstrip().startswith("%"):
                    first, last = first - 1, last + 1  # the environment's own lines
                else:
                    first -= 1  # the "% novikoff" line
                for n in range(max(first, 1), min(last, len(lines)) + 1):
                    kinds[n] = "code"
    return kinds


_FENCE = re.compile(r"^( {0,3})(```+|~~~+)[ \t]*([A-Za-z0-9_-]*)")


def annotate_html(report: FileReport, source: str, markdown: bool) -> str:
    """A standalone page: the document's text with its math typeset (MathJax, when the page can
    load it; the TeX as written otherwise), each claim followed by its marks."""
    marks = _notes_for(report, source, markdown)
    kinds = _line_kinds(source, markdown)
    parts = ["<!DOCTYPE html>", "<html><head><meta charset=\"utf-8\">",
             f"<title>{_html.escape(report.path)}</title>", f"<style>{_STYLE}</style>",
             MATHJAX, "</head><body>", f"<h1>{_html.escape(report.path)}</h1>",
             '<p class="note">The math is typeset by MathJax when this page can load it '
             '(cdn.jsdelivr.net); offline it reads as the LaTeX the document was written in. '
             'The marks after each claim are the checker\'s.</p>']
    header = _header(report)
    if header:
        parts.append(f"<pre class=\"marks\">{_html.escape(chr(10).join(header))}</pre>")
    chunk: list = []
    kind = None

    def flush() -> None:
        if not chunk:
            return
        text = _html.escape("\n".join(chunk))
        if kind == "prose" and not text.strip():
            chunk.clear()
            return
        if kind == "code":
            parts.append(f"<pre>{text}</pre>")
        else:
            parts.append(f'<div class="{kind}">{text}</div>')
        chunk.clear()

    for number, line in enumerate(source.split("\n"), start=1):
        if kinds[number] != kind:
            flush()
            kind = kinds[number]
        chunk.append(line)
        if number in marks:
            flush()
            failed = any("FAILED" in m or "could not verify" in m for m in marks[number])
            parts.append(f"<pre class=\"marks {'failed' if failed else 'ok'}\">"
                         f"{_html.escape(chr(10).join(marks[number]))}</pre>")
    flush()
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def _md_cell(value: str) -> str:
    """Text as a Markdown table cell: one line, no markup, no column break."""
    out = []
    for c in str(value).replace("\r", " ").replace("\n", " "):
        out.append("\\" + c if c in _MD_SPECIAL else c)
    return "".join(out)


_MD_SPECIAL = frozenset("\\`*_{}[]()<>#+-.!|~&$@")


def feedback_document(report: FileReport, source: str, markdown: bool, fmt: str, *,
                      title: str, summary: list) -> str:
    """A graded student's feedback on a Markdown or LaTeX submission (fmt "md" or "html"): the
    title, the grading summary (lemma, points, max, note rows), then the document annotated
    link by link (a LaTeX document's copy as a fenced `latex` block in Markdown)."""
    if fmt == "html":
        table = ["<table class=\"summary\"><caption>Grading summary</caption>",
                 "<tr><th>lemma</th><th>points</th><th>max</th><th>note</th></tr>"]
        table += [f"<tr><td><code>{_html.escape(name)}</code></td><td>{_html.escape(earned)}"
                  f"</td><td>{_html.escape(maximum)}</td><td>{_html.escape(note)}</td></tr>"
                  for name, earned, maximum, note in summary]
        table.append("</table>")
        page = annotate_html(report, source, markdown)
        head = f"<h1>{_html.escape(report.path)}</h1>"
        return page.replace(head, f"<h1>{_html.escape(title)}</h1>\n<p><code>"
                                  f"{_html.escape(report.path)}</code></p>\n"
                            + "\n".join(table), 1)
    if fmt != "md":
        raise ValueError(f"fmt={fmt!r} is not 'md' or 'html'")
    out = [f"# {_md_cell(title)}", "", "## Grading summary", "",
           "| lemma | points | max | note |", "|---|--:|--:|---|"]
    out += [f"| `{name}` | {_md_cell(earned)} | {_md_cell(maximum)} | {_md_cell(note)} |"
            for name, earned, maximum, note in summary]
    out += ["", f"## {_md_cell(report.path)}, annotated", ""]
    copy = annotate(report, source, markdown)
    if markdown:
        return "\n".join(out) + "\n" + copy + "\n"
    fence = "`" * max(3, 1 + max((len(run) for run in _backtick_runs(copy)), default=0))
    return "\n".join(out + [fence + "latex", copy, fence]) + "\n"


def _backtick_runs(text: str) -> list:
    return re.findall(r"`+", text)
