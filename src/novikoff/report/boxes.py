"""Typeset mathematics as a small tree of boxes, whatever the output format.

`notation` builds boxes from the syntax tree of a .proof file; the HTML writer serialises them as
MathML, the LaTeX and Markdown writers as LaTeX, and `plain` below as Unicode text (the Markdown
fallback, and what tests compare).  Every string in a box is Unicode as a reader sees it (`γ`,
`≤`, `⟨`); each serialiser maps and escapes it for its format.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Ident", "Number", "Op", "Row", "Scripts", "Frac", "Sqrt", "Fenced", "BigOp", "Text",
           "INVISIBLE_TIMES", "plain", "joined"]

INVISIBLE_TIMES = "\u2062"  # a product written by juxtaposition (`k γ`)


@dataclass(frozen=True)
class Ident:
    text: str
    style: str = "italic"  # italic | upright (a multi-letter name) | operator (max, min)


@dataclass(frozen=True)
class Number:
    text: str


@dataclass(frozen=True)
class Op:
    text: str  # an operator, a relation, a separator: "+", "≤", ",", INVISIBLE_TIMES


@dataclass(frozen=True)
class Row:
    items: tuple


@dataclass(frozen=True)
class Scripts:
    base: object
    sub: object = None
    sup: object = None


@dataclass(frozen=True)
class Frac:
    num: object
    den: object


@dataclass(frozen=True)
class Sqrt:
    body: object


@dataclass(frozen=True)
class Fenced:
    open: str  # ( ⟨ ‖ | ⌊ ⌈
    body: object
    close: str


@dataclass(frozen=True)
class BigOp:
    """A large operator with limits below and above (∑ with i = 0 below, n − 1 above)."""

    op: str
    under: object
    over: object


@dataclass(frozen=True)
class Text:
    """Text shown as written: the source of a node no rule typesets."""

    text: str


def joined(boxes, separator: str = ",") -> Row:
    """Boxes in a row, separated: a, b, c."""
    items = []
    for box in boxes:
        if items:
            items.append(Op(separator))
        items.append(box)
    return Row(tuple(items))


def substitutions(pairs) -> Row:
    """[k ≔ e, a ≔ f]: a citation at other values of its symbols."""
    return Row((Op("["), joined(Row((var, Op("≔"), value)) for var, value in pairs), Op("]")))


_SUBSCRIPTS = dict(zip("0123456789+-−=()aehijklmnoprstuvx",
                       "₀₁₂₃₄₅₆₇₈₉₊₋₋₌₍₎ₐₑₕᵢⱼₖₗₘₙₒₚᵣₛₜᵤᵥₓ"))
_SUPERSCRIPTS = dict(zip("0123456789+-−=()n*∗", "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁻⁼⁽⁾ⁿ**"))


def plain(box, compact: bool = False) -> str:
    """The box as one line of Unicode text: ⟨w*, wₖ₊₁⟩ ≥ (k + 1)·γ.  `compact`: no spaces
    around operators (in scripts: wₖ₊₁)."""
    if isinstance(box, (Ident, Number, Text)):
        return box.text
    if isinstance(box, Op):
        return _plain_op(box.text, compact)
    if isinstance(box, Row):
        return _plain_row(box.items, compact)
    if isinstance(box, Scripts):
        out = _plain_operand(box.base, compact)
        if box.sub is not None:
            out += _script(plain(box.sub, compact=True), _SUBSCRIPTS, "_")
        if box.sup is not None:
            out += _script(plain(box.sup, compact=True), _SUPERSCRIPTS, "^")
        return out
    if isinstance(box, Frac):
        return f"{_plain_operand(box.num, compact)}/{_plain_operand(box.den, compact)}"
    if isinstance(box, Sqrt):
        return "√" + _plain_operand(box.body, compact)
    if isinstance(box, Fenced):
        return f"{box.open}{plain(box.body, compact)}{box.close}"
    if isinstance(box, BigOp):
        return f"{box.op}({plain(box.under, True)}..{plain(box.over, True)}) "
    raise TypeError(f"not a box: {box!r}")


_SPACED = frozenset("=≠<>≤≥+−∧∨⇒⇔")


def _plain_op(text: str, compact: bool) -> str:
    if text in _SPACED and not compact:
        return f" {text} "
    if text == ",":
        return ", " if not compact else ","
    return text


def _plain_row(items, compact: bool) -> str:
    out = ""
    for i, item in enumerate(items):
        if isinstance(item, Op) and item.text == INVISIBLE_TIMES:
            after = plain(items[i + 1], compact) if i + 1 < len(items) else ""
            # 2y, but y·x: two letters side by side would read as one name.
            out += "" if out[-1:].isdigit() and after[:1].isalpha() else "·"
        elif isinstance(item, Op) and item.text == "−" and i == 0:
            out += "−"  # a sign, not a difference
        else:
            out += plain(item, compact)
    return out


def _plain_operand(box, compact: bool) -> str:
    """A box as the operand of a slash or a script: parenthesised unless it is one token."""
    while isinstance(box, Row) and len(box.items) == 1:
        box = box.items[0]
    text = plain(box, compact)
    simple = isinstance(box, (Ident, Number, Fenced, Text, Scripts, Sqrt))
    return text if simple else f"({text})"


def _script(text: str, table: dict, mark: str) -> str:
    if text and all(c in table for c in text):
        return "".join(table[c] for c in text)
    return f"{mark}{text}" if text.isalnum() else f"{mark}({text})"
