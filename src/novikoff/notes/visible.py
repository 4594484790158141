"""What a reader of a Markdown or LaTeX document sees: the spans its renderer does not show, and
the constructs that would make the rendered math differ from the source that is checked.

A display is checked as written, so it must be the display a reader sees.  Markdown does not
render HTML comments, code (fenced, indented, inline) or link reference definitions; LaTeX does
not typeset `%` comments, `\\iffalse ... \\fi`, comment and verbatim environments, or what lies
outside `\\begin{document} ... \\end{document}`.  Those spans are blanked before displays are
looked for.  Where the source cannot say what is shown (math inside raw HTML, which CSS may hide;
a conditional other than `\\iffalse`/`\\iftrue`; a command the reader interprets, redefined), the
document is refused with a position: it is never guessed.
"""

from __future__ import annotations

import bisect
import re

from .latex import INTERPRETED

__all__ = ["hidden_spans", "blank", "refusals"]

# A fence opening or closing line (the same pattern as document._FENCE).
_FENCE = re.compile(r"( {0,3})(```+|~~~+)[ \t]*([A-Za-z0-9_-]*)[^\n]*")
_LINK_REFERENCE = re.compile(r" {0,3}\[[^\]\n]+\]:[ \t]*\S[^\n]*")
_LIST_ITEM = re.compile(r"[ \t]*(?:[-*+]|\d{1,9}[.)])(?:[ \t]+|$)")
_VERBATIM_ENVS = ("comment", "verbatim", "verbatim*", "Verbatim", "Verbatim*", "lstlisting",
                  "minted")
_VERB = re.compile(r"\\(?:verb\*?|lstinline|mintinline\{[^{}\n]*\})([^A-Za-z\s{])[^\n]*?\1")
_CONDITIONAL = re.compile(r"\\(if[A-Za-z]*|fi|else)(?![A-Za-z])")
_EXCLUDED = re.compile(r"\\excludecomment\s*\{([^{}]+)\}")
_NEW_ENV = re.compile(r"\\(?:re)?newenvironment\*?\s*\{([^{}]+)\}|\\(?:New|Renew|Declare)"
                      r"(?:Document)?Environ(?:ment)?\s*\{([^{}]+)\}")
_DEFINER = re.compile(
    r"\\(?:(?:re)?newcommand|providecommand|DeclareRobustCommand|(?:New|Renew|Provide|Declare)"
    r"DocumentCommand|DeclareMathOperator|DeclarePairedDelimiter[A-Za-z]*|newrobustcmd|"
    r"renewrobustcmd|[gex]?def|let|futurelet|chardef|mathchardef|countdef|DeclareMathSymbol|"
    r"DeclareMathDelimiter|DeclareTextCommand)(?![A-Za-z])\*?\s*\{?\s*(\\(?:[A-Za-z]+|.)|[^\s{\\])")
_CSNAME = re.compile(r"\\csname\s*([^\\]*?)\s*\\endcsname")
_CODES = re.compile(r"\\(?:catcode|mathcode|delcode|uccode|lccode|sfcode)\s*`?\\?(.)")
_TAG = re.compile(r"<(/?)([A-Za-z][A-Za-z0-9-]*)(?:\s[^<>]*)?(/?)>")
_VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
         "track", "wbr"}


def blank(text: str, spans) -> str:
    """text with every character of the spans but newlines replaced by a space (offsets kept)."""
    out, cursor = [], 0
    for start, end in sorted(spans):  # nested and overlapping spans are blanked once
        start, end = max(start, cursor), min(end, len(text))
        if start >= end:
            continue
        out.append(text[cursor:start])
        out.append(re.sub(r"[^\n]", " ", text[start:end]))
        cursor = end
    out.append(text[cursor:])
    return "".join(out)


def _lines(text: str) -> list:
    out, pos = [], 0
    for raw in text.split("\n"):
        out.append((pos, pos + len(raw)))
        pos += len(raw) + 1
    return out


def _indent(line: str) -> int:
    return len(line.expandtabs(4)) - len(line.expandtabs(4).lstrip(" "))


def hidden_spans(text: str, markdown: bool) -> tuple:
    """(spans not shown, fences, problems): spans are (start, end); fences (start, end, body
    start, body end, info string) of the fenced code blocks, novikoff ones included; problems
    (offset, message)."""
    if markdown:
        return _markdown_hidden(text)
    return _latex_hidden(text)


def _markdown_hidden(text: str) -> tuple:
    """Fenced and indented code, HTML comments, code spans and link reference definitions,
    left to right (the construct that starts first wins, as CommonMark reads them)."""
    hidden, fences, problems = [], [], []
    lines = _lines(text)
    starts = {s: k for k, (s, _) in enumerate(lines)}
    pos, n = 0, len(text)
    in_paragraph, list_indent = False, None
    paragraph_ends = [m.start() for m in re.finditer(r"\n[ \t]*(?=\n)", text)]
    no_closing: dict = {}  # backtick run length -> the paragraph end it has no closing before
    while pos < n:
        k = starts.get(pos)
        if k is not None:  # a line starts: the block-level constructs
            s, e = lines[k]
            line = text[s:e]
            if not line.strip():
                in_paragraph = False
                pos = e + 1
                continue
            code_indent = 4 if list_indent is None else list_indent + 4
            if not in_paragraph and _indent(line) >= code_indent:
                last = k
                j = k + 1
                while j < len(lines):
                    body = text[lines[j][0]:lines[j][1]]
                    if body.strip() and _indent(body) < code_indent:
                        break
                    if body.strip():
                        last = j
                    j += 1
                hidden.append((s, lines[last][1]))
                pos = lines[last][1] + 1
                continue
            fence = _FENCE.fullmatch(line)
            if fence is not None:
                mark, info = fence.group(2), fence.group(3)
                close = next((j for j in range(k + 1, len(lines))
                              if (m := _FENCE.fullmatch(text[lines[j][0]:lines[j][1]]))
                              and m.group(2)[0] == mark[0] and len(m.group(2)) >= len(mark)
                              and not m.group(3)), None)
                end = lines[close][1] if close is not None else n
                body_end = lines[close][0] if close is not None else n
                fences.append((s, end, e + 1, max(body_end, e + 1), info))
                in_paragraph = False
                pos = end + 1
                continue
            if not in_paragraph and _LINK_REFERENCE.fullmatch(line):
                hidden.append((s, e))  # `[//]: # (...)`: a definition, never shown
                pos = e + 1
                continue
            item = _LIST_ITEM.match(line)
            if item is not None:
                list_indent = len(item.group(0).expandtabs(4))
            elif _indent(line) == 0 and not in_paragraph:
                list_indent = None
            in_paragraph = True
        # inline: a code span or an HTML comment, else the rest of the line
        newline = text.find("\n", pos)
        stop = n if newline < 0 else newline
        m = re.compile(r"(?<!\\)(?:\\\\)*(`+)|<!--").search(text, pos, stop)
        if m is None:
            pos = stop + 1
            continue
        if m.group(0).endswith("<!--"):
            start = m.end() - 4
            end = text.find("-->", m.end())
            if end < 0:
                problems.append((start, "an HTML comment that is not closed (`-->`): what a "
                                        "reader sees cannot be told"))
                hidden.append((start, n))
                return hidden, fences, problems
            hidden.append((start, end + 3))
            for fence in re.finditer(r"^ {0,3}(?:```+|~~~+)[ \t]*novikoff\b", text[start:end],
                                     re.M):
                problems.append((start + fence.start(), "a novikoff block inside an HTML "
                                 "comment: a reader never sees it, so it is not read (a "
                                 "novikoff block is a visible fenced block)"))
            pos = end + 3
            if text.rfind("\n", start, pos) >= 0:  # the comment ended on a later line
                in_paragraph = bool(text[text.rfind("\n", 0, pos) + 1:pos].strip())
            continue
        run = m.group(1)
        start = m.start(1)
        k = bisect.bisect_left(paragraph_ends, m.end())
        limit = paragraph_ends[k] if k < len(paragraph_ends) else n
        # a run with no closing before the paragraph's end: later runs of its length in the
        # same paragraph have none either (so the scan stays linear)
        close = None if no_closing.get(len(run)) == limit else \
            re.compile(r"(?<!`)" + run + r"(?!`)").search(text, m.end(), limit)
        if close is None:
            no_closing[len(run)] = limit
            pos = m.end()  # literal backticks
            continue
        hidden.append((start, close.end()))
        pos = close.end()
    return hidden, fences, problems


def _latex_hidden(text: str) -> tuple:
    """`%` comments, \\verb, verbatim and comment environments, \\iffalse...\\fi, the preamble and
    what follows \\end{document}."""
    hidden, problems = [], []
    for m in re.finditer(r"(?<!\\)(?:\\\\)*(%[^\n]*)", text):
        hidden.append((m.start(1), m.end(1)))
    masked = blank(text, hidden)
    for m in _VERB.finditer(masked):
        hidden.append((m.start(), m.end()))
    masked = blank(text, hidden)
    # the novikoff environment is excluded so that LaTeX skips it; it is read as a block
    envs = (set(_VERBATIM_ENVS) | {m.group(1).strip() for m in _EXCLUDED.finditer(masked)}) - \
        {"novikoff"}
    for env in sorted(envs):
        opening = "\\begin{" + env + "}"
        closing = "\\end{" + env + "}"
        at = masked.find(opening)
        while at >= 0:
            end = masked.find(closing, at + len(opening))
            end = len(text) if end < 0 else end + len(closing)
            hidden.append((at, end))
            at = masked.find(opening, end)
    masked = blank(text, hidden)
    begin, end = masked.find("\\begin{document}"), masked.find("\\end{document}")
    if begin >= 0:
        # Not typeset, but its definitions take effect in the document (\renewcommand{\leq}
        # is usually written there).
        problems += refusals(masked[:begin], False, [], [])
        hidden.append((0, begin))
    if end >= 0:
        hidden.append((end, len(text)))
    masked = blank(text, hidden)
    hidden += _conditionals(masked, problems)
    return hidden, [], problems


def _conditionals(masked: str, problems: list) -> list:
    r"""The branches \iffalse and \iftrue skip; a display inside any other conditional is
    refused (which branch LaTeX takes is not read)."""
    hidden, stack = [], []  # stack: [name, start, skipping from (offset or None)]
    openings = [m.start() for m in re.finditer(r"\$\$|\\\[|\\begin\{(?:align|equation|gather|"
                                               r"multline|eqnarray)", masked)]
    for m in _CONDITIONAL.finditer(masked):
        word = m.group(1)
        if word.startswith("if"):
            skipping = m.start() if word == "iffalse" else None
            stack.append([word, m.start(), skipping])
        elif not stack:
            continue
        elif word == "else":
            top = stack[-1]
            if top[0] == "iffalse":
                hidden.append((top[2], m.end()))
                top[2] = None
            elif top[0] == "iftrue":
                top[2] = m.start()
        else:  # \fi
            top = stack.pop()
            if top[2] is not None:
                hidden.append((top[2], m.end()))
            elif top[0] not in ("iffalse", "iftrue"):
                k = bisect.bisect_left(openings, top[1])
                if k < len(openings) and openings[k] < m.start():
                    problems.append((openings[k], f"a display inside \\{top[0]} ... "
                                     f"\\fi: which branch LaTeX typesets is not read, so the "
                                     f"display is not checked (move it out of the conditional)"))
    for top in stack:  # a conditional that is never closed hides the rest when it skips
        if top[2] is not None:
            hidden.append((top[2], len(masked)))
    return hidden


def refusals(visible: str, markdown: bool, displays: list, blocks: list) -> list:
    """(offset, message) of what makes the rendered document differ from what is read: a
    command the reader interprets (re)defined, character codes changed, and in Markdown a
    display or a novikoff block inside raw HTML.  visible: the text with hidden spans blanked;
    displays and blocks: (start, end) of each."""
    out = []
    for m in _DEFINER.finditer(visible):
        name = m.group(1)
        if name in INTERPRETED or not name.startswith("\\"):
            out.append((m.start(), f"{m.group(0).split(name)[0].strip()}{name}: the document "
                        f"redefines {name}, which novikoff reads with its usual meaning, so "
                        f"what is typeset would not be what is checked"))
    for m in _CSNAME.finditer(visible):
        if "\\" + m.group(1) in INTERPRETED:
            out.append((m.start(), f"\\csname {m.group(1)}\\endcsname: a command that novikoff "
                                   f"reads, named to be redefined"))
    for m in _CODES.finditer(visible):
        if m.group(1) != "@":
            out.append((m.start(), f"{m.group(0)}: the document changes how a character is "
                                   f"read or typeset, so what is typeset would not be what is "
                                   f"checked"))
    for m in _NEW_ENV.finditer(visible):
        env = (m.group(1) or m.group(2)).strip()
        if env in _READ_ENVS:
            out.append((m.start(), f"the document redefines the environment {env}, which "
                                   f"novikoff reads with its usual meaning"))
    if markdown:
        out += _inside_html(visible, displays, blocks)
    return out


_READ_ENVS = {"align", "align*", "equation", "equation*", "gather", "gather*", "multline",
              "multline*", "eqnarray", "eqnarray*", "aligned", "split", "gathered", "proof",
              "lemma", "theorem", "proposition", "corollary", "claim", "novikoff", "document"}


def _inside_html(visible: str, displays: list, blocks: list) -> list:
    """A display or a novikoff block inside a raw HTML element: CSS or an attribute (`hidden`,
    `display:none`) may keep it from a reader, which the source does not tell."""
    outside = blank(visible, [(s, e) for s, e in displays] + [(s, e) for s, e in blocks])
    outside = re.sub(r"(?<![\\$])\$(?!\$)[^$\n]+?\$", lambda m: " " * len(m.group(0)), outside)
    regions, stack = [], []
    for m in _TAG.finditer(outside):
        closing, name, selfclosing = m.group(1), m.group(2).lower(), m.group(3)
        if closing:
            depth = next((k for k in range(len(stack) - 1, -1, -1) if stack[k][0] == name), None)
            if depth is not None:
                regions.append((stack[depth][1], m.end(), stack[depth][2]))
                del stack[depth:]
        elif not selfclosing and name not in _VOID:
            stack.append((name, m.start(), m.group(0)))
    regions += [(start, len(visible), tag) for _, start, tag in stack]
    merged = []  # the union of the regions, each part with the tag that opens it
    for start, end, tag in sorted(regions):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end, tag])
    starts = [r[0] for r in merged]
    out = []
    for what, spans in (("a display", displays), ("a novikoff block", blocks)):
        for start, _ in spans:
            k = bisect.bisect_right(starts, start) - 1
            region = merged[k] if k >= 0 and start < merged[k][1] else None
            if region is not None:
                out.append((start, f"{what} inside the raw HTML element {region[2]}: HTML may "
                                   f"hide it from a reader, so it is not read (move it out of "
                                   f"the HTML)"))
    return out

