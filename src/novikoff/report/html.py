"""Write a report document as one standalone HTML page: MathML Core for the math, inline CSS,
no script and no network (a Content-Security-Policy says so to the browser too).

The page is XHTML-compatible HTML5 (it parses as XML), and everything from the proof file is
escaped as text or as an attribute value.
"""

from __future__ import annotations

from html import escape
from urllib.parse import quote

from .boxes import (INVISIBLE_TIMES, BigOp, Fenced, Frac, Ident, Number, Op, Row, Scripts, Sqrt,
                    Text, joined, substitutions)
from .model import Check, Cite, Document, Item, Row as DocRow

__all__ = ["write", "mathml"]

MATHML = "http://www.w3.org/1998/Math/MathML"
MARKS = {"verified": ("✓", "verified"), "failed": ("✗", "failed"),
         "expected_failure": ("✗", "expected failure"), "unknown": ("?", "unknown"),
         "unchecked": ("–", "not checked")}


def mathml(box, compact: bool = False) -> str:
    """A box as a <math> element: in display style (full-size fractions, limits above and
    below a sum) unless compact (in a table of values, in a citation)."""
    style = "" if compact else ' displaystyle="true"'
    return f'<math xmlns="{MATHML}"{style}>{_ml(box)}</math>'


def _ml(box, script: bool = False) -> str:
    """MathML of a box; in a script (an index, an exponent) operators get no space around
    them, as in TeX: wₖ₊₁, not wₖ ₊ ₁."""
    if isinstance(box, Ident):
        if box.style == "upright" and len(box.text) == 1:
            return f'<mi mathvariant="normal">{escape(box.text)}</mi>'
        return f"<mi>{escape(box.text)}</mi>"
    if isinstance(box, Number):
        return f"<mn>{escape(box.text)}</mn>"
    if isinstance(box, Op):
        if box.text == INVISIBLE_TIMES:
            return "<mo>&#x2062;</mo>"
        if script or box.text == "∗":  # the star of w*: a superscript, not a product
            return f'<mo lspace="0" rspace="0">{escape(box.text)}</mo>'
        return f"<mo>{escape(box.text)}</mo>"
    if isinstance(box, Row):
        parts = []
        for item in box.items:
            parts.append(_ml(item, script))
            if isinstance(item, Ident) and item.style == "operator":
                parts.append("<mo>&#x2061;</mo>")  # function application: max(a, b)
        return "<mrow>" + "".join(parts) + "</mrow>"
    if isinstance(box, Scripts):
        base = _ml(box.base, script)
        sub = _ml(box.sub, True) if box.sub is not None else ""
        sup = _ml(box.sup, True) if box.sup is not None else ""
        tag = "msubsup" if sub and sup else "msub" if sub else "msup"
        return f"<{tag}>{base}{sub}{sup}</{tag}>"
    if isinstance(box, Frac):
        return f"<mfrac>{_ml(box.num, script)}{_ml(box.den, script)}</mfrac>"
    if isinstance(box, Sqrt):
        return f"<msqrt>{_ml(box.body, script)}</msqrt>"
    if isinstance(box, Fenced):
        # Chromium draws a stretchy fence with gaps beside it even at its normal size: stretch
        # only around what is taller than a line (a fraction, a sum).
        stretchy = "" if _tall(box.body) else ' stretchy="false"'
        return (f'<mrow><mo fence="true" form="prefix"{stretchy}>{escape(box.open)}</mo>'
                f'{_ml(box.body, script)}'
                f'<mo fence="true" form="postfix"{stretchy}>{escape(box.close)}</mo></mrow>')
    if isinstance(box, BigOp):
        return (f"<munderover><mo>{escape(box.op)}</mo>{_ml(box.under, True)}"
                f"{_ml(box.over, True)}</munderover>")
    if isinstance(box, Text):
        return f'<mtext class="source">{escape(box.text)}</mtext>'
    raise TypeError(f"not a box: {box!r}")


def _tall(box) -> bool:
    if isinstance(box, (Frac, BigOp)):
        return True
    if isinstance(box, Row):
        return any(_tall(item) for item in box.items)
    if isinstance(box, Scripts):
        return _tall(box.base)
    if isinstance(box, (Sqrt, Fenced)):
        return _tall(box.body)
    return False


CSS = """
:root { --ok: #1a7f37; --fail: #cf222e; --xfail: #9a6700; --unknown: #8250df; --none: #57606a; }
body { font: 15px/1.45 "DejaVu Sans", "Segoe UI", Helvetica, Arial, sans-serif; color: #1f2328;
  margin: 0 auto; padding: 1.5em 2em 3em; max-width: 72em; background: #fff; }
math { font-family: "STIX Two Math", "Latin Modern Math", "Cambria Math",
  "DejaVu Math TeX Gyre", math; font-size: 1.25em; }
h1 { font-size: 1.6em; margin: 0 0 .2em; }
h2 { font-size: 1.15em; margin: 0; display: flex; gap: .6em; align-items: baseline;
  flex-wrap: wrap; }
h2 .kind { color: #57606a; font-weight: normal; }
h2 .name, code, .source { font-family: "DejaVu Sans Mono", Menlo, Consolas, monospace; }
code { font-size: .92em; }
h2 .line { margin-left: auto; font-size: .8em; font-weight: normal; color: #57606a; }
.path { color: #57606a; margin: 0 0 .6em; }
.verdict { margin: .3em 0; }
.legend { font-size: .85em; color: #57606a; }
.legend .mark { margin-right: .8em; }
section.item { border: 1px solid #d0d7de; border-left: 5px solid #d0d7de; border-radius: 6px;
  padding: .7em 1em .8em; margin: 1.1em 0; }
section.st-verified { border-left-color: var(--ok); }
section.st-failed { border-left-color: var(--fail); }
section.st-expected_failure { border-left-color: var(--xfail); }
section.st-unknown { border-left-color: var(--unknown); }
section.setting { background: #f6f8fa; }
.comment { color: #57606a; font-style: italic; font-size: .9em; margin: .35em 0; }
.comment p { margin: .15em 0; }
.prose { font-style: italic; }
.reason { font-size: .9em; color: #57606a; margin: .3em 0 .5em; }
.mark { font-weight: bold; white-space: nowrap; font-size: .85em; border: 1px solid;
  border-radius: 1em; padding: 0 .55em; }
.mark.st-verified { color: var(--ok); background: #dafbe1; }
.mark.st-failed { color: var(--fail); background: #ffebe9; }
.mark.st-expected_failure { color: var(--xfail); background: #fff8c5; }
.mark.st-unknown { color: var(--unknown); background: #fbefff; }
.mark.st-unchecked { color: var(--none); background: #f6f8fa; }
table.lines { border-collapse: collapse; width: 100%; margin-top: .4em; }
table.lines td { padding: .2em .45em; vertical-align: middle; }
td.ln { color: #8c959f; font-size: .8em; text-align: right; width: 2.5em;
  font-family: "DejaVu Sans Mono", monospace; }
td.lhs { text-align: right; white-space: nowrap; }
td.rhs { text-align: left; }
td.label { font-style: italic; color: #57606a; }
td.by { font-size: .85em; color: #57606a; max-width: 22em; }
.cite { white-space: nowrap; }
td.status { text-align: right; width: 1%; white-space: nowrap; }
tr.comments td { padding-top: .5em; }
tr.statement math { font-size: 1.25em; }
.remark { color: #57606a; font-style: italic; font-size: .82em; margin-left: 1.2em; }
tr.heading td.span { font-style: italic; color: #57606a; padding-top: .45em; }
tr.statement td.span { padding: .3em .45em .5em; }
tr.st-failed > td { background: #fff5f4; }
tr.st-expected_failure > td { background: #fffbe6; }
tr.st-unknown > td { background: #fcf5ff; }
tr.notes > td { background: none; }
.xfail { font-size: .75em; color: #9a6700; border: 1px dashed #d4a72c; border-radius: .3em;
  padding: 0 .3em; margin-left: .3em; }
.note { border-left: 3px solid; margin: .15em 0 .6em; padding: .35em .8em; font-size: .9em;
  border-radius: 0 4px 4px 0; }
.note.st-failed { border-color: var(--fail); background: #fff5f4; }
.note.st-expected_failure { border-color: var(--xfail); background: #fffbe6; }
.note.st-unknown { border-color: var(--unknown); background: #fcf5ff; }
.note p { margin: .2em 0; }
.note .k { font-weight: bold; }
.note .where { color: #57606a; font-family: "DejaVu Sans Mono", monospace; font-size: .9em; }
table.cex { border-collapse: collapse; margin: .3em 0 .2em; background: #fff; }
table.cex th, table.cex td { border: 1px solid #d0d7de; padding: .12em .6em; text-align: left; }
table.cex th { background: #f6f8fa; font-weight: normal; color: #57606a; font-size: .85em; }
table.summary { border-collapse: collapse; margin: .5em 0 1em; }
table.summary th, table.summary td { border: 1px solid #d0d7de; padding: .25em .7em; }
table.summary th { background: #f6f8fa; text-align: left; }
table.summary td.points { text-align: right; font-variant-numeric: tabular-nums; }
.error { border: 2px solid var(--fail); background: #fff5f4; border-radius: 6px;
  padding: .6em 1em; margin: 1em 0; }
pre.listing { background: #f6f8fa; border: 1px solid #d0d7de; border-radius: 6px;
  padding: .6em 0; overflow-x: auto; font-size: .85em; line-height: 1.4; }
pre.listing span { display: block; padding: 0 1em; }
pre.listing .bad { background: #ffebe9; }
pre.listing .caret { color: var(--fail); font-weight: bold; }
pre.listing .n { color: #8c959f; display: inline-block; width: 3em; user-select: none; }
a { color: #0969da; text-decoration: none; }
a:hover { text-decoration: underline; }
a.cite { font-family: "DejaVu Sans Mono", monospace; font-size: .95em; }
footer { color: #8c959f; font-size: .8em; margin-top: 2em; }
@media print { body { max-width: none; } section.item { break-inside: avoid; } }
"""

_POLICY = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"


def write(doc: Document) -> str:
    out = ['<!DOCTYPE html>', '<html xmlns="http://www.w3.org/1999/xhtml" lang="en">', "<head>",
           '<meta charset="utf-8"/>',
           f'<meta http-equiv="Content-Security-Policy" content="{_POLICY}"/>',
           '<meta name="viewport" content="width=device-width, initial-scale=1"/>',
           f"<title>{escape(doc.title)}</title>", f"<style>{CSS}</style>", "</head>", "<body>"]
    out.append("<header>")
    out.append(f"<h1>{escape(doc.title)}</h1>")
    out.append(f'<p class="path"><code>{escape(doc.path)}</code></p>')
    out.append(_verdict(doc))
    out.append('<p class="legend">' + "".join(
        _mark(s) for s in ("verified", "failed", "expected_failure", "unknown")) + "</p>")
    out.append("</header>")
    if doc.summary:
        out.append(_summary(doc))
    if doc.error is not None:
        out.append(_error(doc.error))
    if doc.intro:
        out.append('<div class="comment intro">' + "".join(
            f"<p>{escape(p)}</p>" for p in doc.intro) + "</div>")
    out.append("<main>")
    out += [_item(item) for item in doc.items]
    out.append("</main>")
    if doc.listing:
        out.append("<h2>Source</h2>" + _listing(doc.listing, doc.error))
    out.append("<footer>Written by <code>novikoff report</code>; every status is the "
               "checker's.</footer>")
    out += ["</body>", "</html>"]
    return "\n".join(out) + "\n"


def _mark(status: str | None) -> str:
    if status is None:
        return ""
    glyph, word = MARKS.get(status, ("", status))
    return f'<span class="mark st-{escape(status)}">{glyph} {escape(word)}</span>'


def _verdict(doc: Document) -> str:
    if doc.status == "not-checked":
        return (f'<p class="verdict"><span class="mark st-unknown">⚠ not checked</span> '
                f"{escape(doc.not_checked)}</p>")
    c = doc.counts
    status, words = {"ok": ("verified", "every lemma verified or failing as expected"),
                     "failed": ("failed", "a check failed or could not be decided"),
                     "malformed": ("failed", "the file is malformed")}[doc.status]
    return (f'<p class="verdict"><span class="mark st-{status}">{words}</span> '
            f"{c['lemmas']} lemmas: {c['verified']} verified, {c['failing_as_expected']} failing "
            f"as expected, {c['not_verified']} not verified; {c['checks']} checks: "
            f"{c['checks_verified']} verified, {c['checks_expected_failures']} expected "
            f"failures, {c['checks_failed']} failed, {c['checks_unknown']} unknown.</p>")


def _summary(doc: Document) -> str:
    out = ['<table class="summary"><caption>Grading summary</caption>',
           "<tr><th>lemma</th><th>points</th><th>max</th><th>note</th></tr>"]
    for name, earned, maximum, note, anchor in doc.summary:
        shown = f"<code>{escape(name)}</code>"
        if anchor is not None:
            shown = f'<a href="#{escape(anchor)}">{shown}</a>'
        out.append(f'<tr><td>{shown}</td><td class="points">{escape(earned)}</td>'
                   f'<td class="points">{escape(maximum)}</td><td>{escape(note)}</td></tr>')
    out.append("</table>")
    return "\n".join(out)


def _error(error) -> str:
    where = f"{error.file}:{error.line}:{error.column}"
    text = f"<pre>{escape(error.text)}</pre>" if error.text else ""
    return (f'<div class="error"><p><span class="mark st-failed">✗ malformed</span> '
            f"<code>{escape(where)}</code>: {escape(error.message)}</p>{text}</div>")


def _listing(listing: list, error) -> str:
    lines = []
    for number, text in listing:
        bad = error is not None and number == error.line
        css = ' class="bad"' if bad else ""
        lines.append(f'<span{css}><span class="n">{number}</span>{escape(text)}</span>')
        if bad:  # a caret under the column of the error
            lines.append(f'<span class="caret"><span class="n"></span>'
                         f'{" " * max(0, error.column - 1)}^ {escape(error.message)}</span>')
    return '<pre class="listing">' + "".join(lines) + "</pre>"


_KINDS = {"setting": "Setting", "lemma": "Lemma", "theorem": "Theorem", "claim": "Claim"}


def _item(item: Item) -> str:
    if item.kind == "import":
        links = ", ".join(_cite(c) for row in item.rows for c in row.cites)
        return (f'<p class="import" id="{escape(item.anchor)}">from <code>'
                f"{escape(item.name)}</code> import {links}</p>")
    status = f" st-{escape(item.status)}" if item.status else ""
    out = [f'<section class="item {escape(item.kind)}{status}" id="{escape(item.anchor)}">']
    out.append(f'<h2><span class="kind">{_KINDS.get(item.kind, escape(item.kind))}</span> '
               f'<span class="name">{escape(item.name)}</span> {_mark(item.status)}'
               f'<span class="line">line {item.line}</span></h2>')
    if item.comments:
        out.append(_comments(item.comments))
    if item.prose:
        out.append(f'<p class="prose">“{escape(item.prose)}”</p>')
    if item.status in ("failed", "expected_failure", "unknown") and item.reason:
        out.append(f'<p class="reason">Not verified: {escape(item.reason)}</p>')
    out.append('<table class="lines">')
    out += [_row(row) for row in item.head + item.rows]
    out.append("</table>")
    if item.error is not None:  # a lemma that did not parse: the error, then its source
        out.append(_error(item.error))
    if item.listing:
        out.append(_listing(item.listing, item.error))
    if item.other_checks:
        out.append('<p class="reason">Other checks of this '
                   f"{escape(item.kind)}:</p>" + "".join(_note(c) for c in item.other_checks))
    out.append("</section>")
    return "\n".join(out)


def _comments(paragraphs: list) -> str:
    return '<div class="comment">' + "".join(f"<p>{escape(p)}</p>" for p in paragraphs) + \
        "</div>"


def _row(row: DocRow) -> str:
    out = []
    if row.comments:
        out.append(f'<tr class="comments"><td class="ln"></td><td colspan="4">'
                   f"{_comments(row.comments)}</td></tr>")
    pad = f' style="padding-left: {0.45 + 1.5 * row.depth:.2f}em"' if row.depth else ""
    status = f" st-{escape(row.status)}" if row.status else ""
    ident = f' id="{escape(row.anchor)}"' if row.anchor else ""
    remark = f'<span class="remark">{escape(row.remark)}</span>' if row.remark else ""
    cells = [f'<td class="ln">{row.line if row.line is not None else ""}</td>']
    if row.kind in ("chain", "continue"):
        label = f'<span class="label">{escape(row.label)}:</span> ' if row.label else ""
        lhs = mathml(row.lhs) if row.lhs is not None else ""
        cells.append(f'<td class="lhs"{pad}>{label}{lhs}</td><td class="rhs">'
                     f"{mathml(row.rhs)}{remark}</td>")
    elif row.kind in ("given", "formula", "setting"):
        if row.kind == "given":
            label = f"given <code>{escape(row.label)}</code>:"
        elif row.kind == "setting" and row.anchor:  # an assumption: its name
            label = f"<code>{escape(row.label)}</code>:"
        elif row.label:
            label = escape(row.label) + ("" if row.label == "hence" else ":")
        else:
            label = ""
        cells.append(f'<td class="lhs label"{pad}>{label}</td><td class="rhs">'
                     f"{mathml(row.rhs)}{remark}</td>")
    else:  # statement, heading, case, text: one cell across
        cells.append(f'<td class="span" colspan="2"{pad}>{_spanning(row)}{remark}</td>')
    by = ""
    if row.cites and row.kind != "text":
        by = "by " + ", ".join(_cite(c) for c in row.cites)
    if row.xfail:
        by += '<span class="xfail">xfail</span>'
    cells.append(f'<td class="by">{by}</td><td class="status">{_mark(row.status)}</td>')
    out.append(f'<tr class="{escape(row.kind)}{status}"{ident}>' + "".join(cells) + "</tr>")
    notes = [c for c in row.checks if c.status != "verified"]
    if notes:
        out.append('<tr class="notes"><td class="ln"></td><td colspan="4">'
                   + "".join(_note(c) for c in notes) + "</td></tr>")
    return "\n".join(out)


def _spanning(row: DocRow) -> str:
    if row.kind == "statement":
        if row.rhs is not None:
            return mathml(row.rhs)
        return f'<span class="label">{escape(row.label)}</span> <code>{escape(row.source)}</code>'
    if row.kind in ("heading", "case"):
        math = f" {mathml(row.rhs)}" if row.rhs is not None else ""
        return f'<span class="label">{escape(row.label)}</span>{math}:'
    if row.cites and not row.source:
        return ", ".join(_cite(c) for c in row.cites)
    return f"<code>{escape(row.source)}</code>"


def _cite(cite: Cite) -> str:
    shown = escape(cite.name)
    if cite.href is not None:
        where, anchor = cite.href
        target = f"#{anchor}" if where == "here" else f"{quote(where)}.html#{anchor}"
        shown = f'<a class="cite" href="{escape(target)}">{shown}</a>'
    else:
        shown = f'<span class="cite">{shown}</span>'
    if cite.at is not None:
        shown += mathml(substitutions(cite.at), compact=True)
    if cite.args:
        shown += mathml(Fenced("(", joined(cite.args), ")"), compact=True)
    return f'<span class="cite">{shown}</span>' if cite.at or cite.args else shown



def _note(check: Check) -> str:
    s = check.step
    out = [f'<div class="note st-{escape(s.status)}">']
    head = f'{_mark(s.status)} <span class="where">{escape(f"{s.file}:{s.line}:{s.column}")}</span>'
    if check.context:
        head += f" <code>{escape(check.context)}</code>"
    out.append(f"<p>{head}</p>")
    if check.why:
        out.append(f'<p><span class="k">why:</span> {escape(check.why)}</p>')
    if check.domain is not None:
        out.append(f'<p><span class="k">condition of meaning that may fail:</span> '
                   f"{mathml(check.domain)}</p>")
    if check.hint:
        out.append('<p><span class="k">hint:</span> it would hold with: '
                   + ", ".join(_cite(c) for c in check.hint) + "</p>")
    if check.counterexample:
        rows = "".join(f"<tr><td>{mathml(k, True)}</td><td>{mathml(v, True)}</td></tr>"
                       for k, v in check.counterexample)
        out.append('<table class="cex"><tr><th>counterexample</th><th>value</th></tr>'
                   f"{rows}</table>")
    out.append("</div>")
    return "".join(out)
