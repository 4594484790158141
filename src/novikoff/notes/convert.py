"""Rewrite a notes document from Markdown to LaTeX and back, so that it reads (and checks) the same.

What the checker reads is carried over unchanged: the novikoff blocks (a fenced block <-> a
`novikoff` environment), the displays' math (`$$...$$` <-> `\\[...\\]`, `align` <-> `aligned` in
`$$`), `\\tag`/`\\label`, lemma and proof environments, the prose lines in their order (so a
"by ..." line still follows its display) and `novikoff report`'s marks (a blockquote <-> a `%`
comment).  Prose markup is translated where it has an obvious counterpart (headings, bold,
code, LaTeX's special characters); everything else is kept as written.
"""

from __future__ import annotations

import re

from .document import Block, Display, display_spans, scan

__all__ = ["markdown_to_latex", "latex_to_markdown"]

_PREAMBLE = (r"\documentclass{article}", r"\usepackage{amsmath,amssymb,amsthm,comment}",
             r"\excludecomment{novikoff}", r"\newtheorem{lemma}{Lemma}",
             r"\newtheorem{theorem}{Theorem}", r"\begin{document}")
_MARK = re.compile(r"^>( novikoff:.*|   .*)$")  # `novikoff report`'s lines in a Markdown copy
_TEX_MARK = re.compile(r"^%( novikoff: .*|   .*)$")  # and in a LaTeX copy
_INLINE = re.compile(r"(?<![\\$])(\$[^$\n]+?\$)")
_SPECIAL = {"%": r"\%", "&": r"\&", "#": r"\#", "_": r"\_", "{": r"\{", "}": r"\}",
            "~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "\\": r"\textbackslash{}"}
_ALIGN = re.compile(r"^\s*\\begin\{(align\*?|eqnarray\*?)\}(.*)\\end\{\1\}\s*$", re.S)
_SINGLE = re.compile(r"^\s*\\begin\{(equation\*?|gather\*?|multline\*?)\}(.*)\\end\{\1\}\s*$",
                     re.S)


def _regions(source: str, markdown: bool) -> list:
    """(start, end, event) of the document's displays (with their delimiters) and blocks."""
    events, _ = scan(source, markdown)
    spans = {d: (start, end) for start, end, d in display_spans(source, markdown)}
    return [(*spans[e], e) if isinstance(e, Display) else (None, None, e) for e in events
            if isinstance(e, (Display, Block))]


def _escape_prose(text: str) -> str:
    """Markdown prose as LaTeX: inline math kept, **bold**, `code`, headings; specials escaped.
    A line that starts with a LaTeX command (`\\begin{lemma}`, kept in Markdown as written) is
    LaTeX already."""
    if re.match(r"^\s*\\[A-Za-z]", text):
        return text
    heading = re.match(r"^(#{1,6})\s+(.*)$", text)
    if heading:
        command = ("section*", "subsection*", "subsubsection*", "paragraph", "paragraph",
                   "paragraph")[len(heading.group(1)) - 1]
        return f"\\{command}{{{_escape_prose(heading.group(2))}}}"
    out = []
    for k, part in enumerate(_INLINE.split(text)):
        if k % 2:  # inline math, as written
            out.append(part)
            continue
        pieces = re.split(r"(`[^`]*`|\*\*[^*]+\*\*)", part)
        for piece in pieces:
            if piece.startswith("`") and piece.endswith("`") and len(piece) >= 2:
                out.append(r"\texttt{" + _plain(piece[1:-1]) + "}")
            elif piece.startswith("**") and piece.endswith("**") and len(piece) > 4:
                out.append(r"\textbf{" + _escape_prose(piece[2:-2]) + "}")
            else:
                out.append(_plain(piece))
    return "".join(out)


def _plain(text: str) -> str:
    return "".join(_SPECIAL.get(c, c) for c in text)


def markdown_to_latex(source: str) -> str:
    """A Markdown notes document (its novikoff blocks, displays and prose) as a LaTeX one."""
    lines = source.split("\n")
    out = list(_PREAMBLE) + [""]
    blocks, displays = [], []
    for start, end, event in _regions(source, True):
        (blocks if isinstance(event, Block) else displays).append((start, end, event))
    # Every line that opens or lies inside a fence: which fence, and whether it is novikoff.
    fence = re.compile(r"^( {0,3})(```+|~~~+)[ \t]*([A-Za-z0-9_-]*)")
    inside, kind, opener = False, "", ""
    offset = 0
    cursor = 0  # the offset up to which the source has been written
    line_starts = []
    for line in lines:
        line_starts.append(offset)
        offset += len(line) + 1
    k = 0
    while k < len(lines):
        line, at = lines[k], line_starts[k]
        if at < cursor:
            k += 1
            continue
        m = fence.match(line)
        if inside:
            if m and m.group(2)[0] == opener[0] and len(m.group(2)) >= len(opener) \
                    and not m.group(3):
                out.append(r"\end{novikoff}" if kind == "novikoff" else r"\end{verbatim}")
                inside = False
            else:
                out.append(line)
            k += 1
            continue
        if m:
            inside, kind, opener = True, m.group(3), m.group(2)
            out.append(r"\begin{novikoff}" if kind == "novikoff" else r"\begin{verbatim}")
            k += 1
            continue
        display = next(((s, e, d) for s, e, d in displays if s <= at + len(line) and e > at),
                       None)
        if display is not None:
            start, end, event = display
            before = source[at:start]
            if before.strip():
                out.append(_escape_prose(before.rstrip()))
            out += _latex_display(source[start:end], event).split("\n")
            after_end = source.find("\n", end)
            after_end = len(source) if after_end < 0 else after_end
            rest = source[end:after_end]
            if rest.strip():
                out.append(_escape_prose(rest.strip()))
            cursor = after_end + 1
            k += 1
            continue
        mark = _MARK.match(line)
        if mark:
            out.append("%" + mark.group(1))
        else:
            out.append(_escape_prose(line))
        k += 1
    if inside:
        out.append(r"\end{novikoff}" if kind == "novikoff" else r"\end{verbatim}")
    return "\n".join(out + [r"\end{document}", ""])


def _latex_display(text: str, event: Display) -> str:
    if text.startswith("$$"):
        return "\\[" + event.text + "\\]"
    return text


def latex_to_markdown(source: str) -> str:
    """A LaTeX notes document as a Markdown one: novikoff environments and `% novikoff` comment
    blocks as fenced blocks, displays in `$$`, the preamble left out."""
    begin = source.find(r"\begin{document}")
    body_start = source.index("\n", begin) + 1 if begin >= 0 and "\n" in source[begin:] else 0
    end = source.find(r"\end{document}")
    body_end = end if end >= 0 else len(source)
    regions = [(s, e, d) for s, e, d in _regions(source, False) if isinstance(d, Display)]
    blocks = _tex_blocks(source)
    # the report's summary marks, written above the preamble: kept
    out = [">" + m.group(1) for m in (_TEX_MARK.match(line.strip())
                                      for line in source[:body_start].split("\n")) if m]
    pos = body_start
    marks = sorted([(s, e, "display", d) for s, e, d in regions] +
                   [(s, e, "block", b) for s, e, b in blocks], key=lambda r: r[0])
    for start, stop, what, thing in marks:
        if start < pos or start >= body_end:
            continue
        out += _markdown_prose(source[pos:start])
        if what == "block":
            out += ["```novikoff"] + thing + ["```"]
        else:
            out += _markdown_display(source[start:stop], thing)
        pos = stop
    out += _markdown_prose(source[pos:body_end])
    return "\n".join(out).strip("\n") + "\n"


def _tex_blocks(source: str) -> list:
    """(start, end, lines) of each novikoff environment and `% novikoff` comment block."""
    out = []
    for m in re.finditer(r"\\begin\{novikoff\}[ \t]*\n?(.*?)\\end\{novikoff\}", source, re.S):
        out.append((m.start(), m.end(), m.group(1).rstrip("\n").split("\n")))
    comment = re.compile(r"^[ \t]*%[ \t]*novikoff:?[ \t]*\n((?:[ \t]*%[^\n]*(?:\n|\Z))*)", re.M)
    for m in comment.finditer(source):
        lines = []
        for raw in m.group(1).split("\n"):
            if not raw.strip():
                continue
            cut = raw.index("%") + 1
            cut += raw[cut:cut + 1] == " "
            lines.append(raw[cut:])
        out.append((m.start(), m.end(), lines))
    return out


def _markdown_display(text: str, event: Display) -> list:
    align = _ALIGN.match(text)
    if align:
        return ["$$", r"\begin{aligned}" + align.group(2) + r"\end{aligned}", "$$"]
    single = _SINGLE.match(text)
    body = single.group(2) if single else event.text
    return ["$$" + body + "$$"]


_COMMANDS = ((re.compile(r"\\(?:sub)*section\*?\{([^{}]*)\}"), r"## \1"),
             (re.compile(r"\\paragraph\{([^{}]*)\}"), r"**\1**"),
             (re.compile(r"\\textbf\{([^{}]*)\}"), r"**\1**"),
             (re.compile(r"\\emph\{([^{}]*)\}"), r"*\1*"),
             (re.compile(r"\\texttt\{([^{}]*)\}"), r"`\1`"))
_UNESCAPE = {r"\%": "%", r"\&": "&", r"\#": "#", r"\_": "_", r"\{": "{", r"\}": "}",
             r"\textasciitilde{}": "~", r"\textasciicircum{}": "^", r"\textbackslash{}": "\\"}


def _markdown_prose(text: str) -> list:
    out = []
    for line in text.split("\n"):
        mark = _TEX_MARK.match(line.strip())
        if mark:
            out.append(">" + mark.group(1))
            continue
        code = re.split(r"(?<!\\)%", line, maxsplit=1)
        line = code[0].rstrip() if len(code) > 1 else line
        if len(code) > 1 and not line.strip():
            continue  # a comment line: not prose
        if line.strip() in (r"\maketitle", r"\begin{verbatim}", r"\end{verbatim}"):
            line = "```" if "verbatim" in line else ""
        parts = _INLINE.split(line)
        for k in range(0, len(parts), 2):
            for pattern, replacement in _COMMANDS:
                parts[k] = pattern.sub(replacement, parts[k])
            for escaped, plain in _UNESCAPE.items():
                parts[k] = parts[k].replace(escaped, plain)
        out.append("".join(parts))
    return out
