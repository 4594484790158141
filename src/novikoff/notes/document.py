"""Split a Markdown or LaTeX document into novikoff blocks, displayed math and prose lines."""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

__all__ = ["Block", "Display", "Prose", "scan", "Positions", "NOTES_SUFFIXES", "has_block",
           "display_spans"]

NOTES_SUFFIXES = (".md", ".tex")
DISPLAY_ENVS = ("align", "align*", "equation", "equation*", "gather", "gather*", "multline",
                "multline*", "eqnarray", "eqnarray*")


class Positions:
    """Offsets of a text -> (line, column), both from 1."""

    def __init__(self, text: str):
        self.starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def __call__(self, offset: int) -> tuple:
        line = bisect.bisect_right(self.starts, offset)
        return line, offset - self.starts[line - 1] + 1


@dataclass(frozen=True)
class Block:
    """A novikoff block: its lines as (text, offset of the text's first character)."""

    lines: tuple
    offset: int


@dataclass(frozen=True)
class Display:
    """Displayed math: the text between its delimiters and that text's offset."""

    text: str
    offset: int
    end: int


@dataclass(frozen=True)
class Prose:
    text: str
    offset: int


_FENCE = re.compile(r"^( {0,3})(```+|~~~+)[ \t]*([A-Za-z0-9_-]*)[^\n]*$", re.M)

_COMMENT_BLOCK = re.compile(r"^[ \t]*%[ \t]*novikoff:?[ \t]*\n((?:[ \t]*%[^\n]*(?:\n|\Z))*)",
                            re.M)
_OPENING = re.compile(r"\$\$|\\\[|\\begin\{(" + "|".join(re.escape(e) for e in DISPLAY_ENVS) +
                      r")\}")


def delimited(text: str, opening, closing) -> list:
    """(start, end, body start, body end) of each span from an opening (a regex, or a string)
    to the nearest closing after it (a function of the opening's match, or a string), left to
    right and not overlapping: what a lazy `OPEN(.*?)CLOSE` regex finds, in linear time (the
    regex rescans to the end from every opening that has no closing)."""
    if isinstance(opening, str):
        opening = re.compile(re.escape(opening))
    out, pos, exhausted = [], 0, set()
    while True:
        m = opening.search(text, pos)
        if m is None:
            return out
        close = closing(m) if callable(closing) else closing
        end = -1 if close in exhausted else text.find(close, m.end())
        if end < 0:  # no later opening of this kind has a closing either
            exhausted.add(close)
            pos = m.start() + 1
            continue
        out.append((m.start(), end + len(close), m.end(), end))
        pos = end + len(close)


def _display_closing(m) -> str:
    return {"$$": "$$", "\\[": "\\]"}.get(m.group(0)) or "\\end{" + m.group(1) + "}"
_INLINE = re.compile(r"(?<![\\$])\$(?!\$)([^$\n]+?)\$")


def has_block(text: str, markdown: bool) -> bool:
    """Whether a document holds a novikoff block (a folder's notes are the files that do)."""
    if markdown:
        return any(m.group(3) == "novikoff" for m in _FENCE.finditer(text))
    opening = text.find(r"\begin{novikoff}")
    if opening >= 0 and text.find(r"\end{novikoff}", opening) >= 0:
        return True
    return bool(_COMMENT_BLOCK.search(text))


def _lines_of(text: str, offset: int) -> list:
    out, pos = [], 0
    for raw in text.split("\n"):
        out.append((raw, offset + pos))
        pos += len(raw) + 1
    return out


def scan(text: str, markdown: bool) -> tuple:
    """(events, inline math count): events are Blocks, Displays and Prose lines in document
    order.  Markdown code fences other than novikoff are skipped; LaTeX `%` comments are not
    prose."""
    taken = []  # (start, end, event)
    if markdown:
        fences = list(_FENCE.finditer(text))
        k = 0
        while k < len(fences):
            opening = fences[k]
            closing = next((f for f in fences[k + 1:]
                            if f.group(2)[0] == opening.group(2)[0]
                            and len(f.group(2)) >= len(opening.group(2)) and not f.group(3)),
                           None)
            end = closing.end() if closing is not None else len(text)
            if opening.group(3) == "novikoff":
                body_start = opening.end() + 1
                body = text[body_start:closing.start()] if closing is not None else \
                    text[body_start:]
                taken.append((opening.start(), end, Block(tuple(_lines_of(body, body_start)),
                                                          body_start)))
            else:
                taken.append((opening.start(), end, None))
            k = fences.index(closing) + 1 if closing is not None else len(fences)
    else:
        for start, end, body, body_end in delimited(text, r"\begin{novikoff}",
                                                     r"\end{novikoff}"):
            taken.append((start, end, Block(tuple(_lines_of(text[body:body_end], body)),
                                            body)))
        for m in _COMMENT_BLOCK.finditer(text):
            lines = []
            for raw, off in _lines_of(m.group(1), m.start(1)):
                if not raw.strip():
                    continue
                cut = raw.index("%") + 1
                cut += raw[cut:cut + 1] == " "  # "% setting s:": the comment's own space
                lines.append((raw[cut:], off + cut))
            taken.append((m.start(), m.end(), Block(tuple(lines), m.start(1))))
    taken.sort(key=lambda t: t[0])

    def free(start: int) -> bool:
        return not any(a <= start < b for a, b, _ in taken)

    for start, end, body, body_end in delimited(text, _OPENING, _display_closing):
        if not free(start):
            continue
        taken.append((start, end, Display(text[body:body_end], body, body_end)))
    taken.sort(key=lambda t: t[0])
    events, inline, cursor = [], 0, 0
    for start, end, event in taken + [(len(text), len(text), None)]:
        gap = text[cursor:start] if start > cursor else ""
        for raw, off in _lines_of(gap, cursor):
            stripped = raw.strip()
            if not markdown and "%" in stripped:
                stripped = re.split(r"(?<!\\)%", stripped)[0].strip()
            if stripped:
                inline += len(_INLINE.findall(stripped))
                events.append(Prose(stripped, off + len(raw) - len(raw.lstrip())))
        if event is not None:
            events.append(event)
        cursor = max(cursor, end)
    return events, inline


def display_spans(source: str, markdown: bool) -> list:
    """(start, end, Display) of each display, from its opening delimiter (`$$`, `\\[`,
    `\\begin{align*}`) to the end of its closing one."""
    out = []
    for event in scan(source, markdown)[0]:
        if not isinstance(event, Display):
            continue
        if source[event.offset - 2:event.offset] in ("$$", "\\["):
            start, end = event.offset - 2, event.end + 2
        else:  # \begin{env}...\end{env}
            start = source.rfind("\\begin{", 0, event.offset)
            end = source.index("}", event.end) + 1
        out.append((start, end, event))
    return out
