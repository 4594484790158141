"""Type the untyped LaTeX tree into the .proof syntax tree, through a notation table.

A notation row maps a document's spelling (LaTeX with a hole `#`) to the setting's notation
(`.proof` syntax with the same hole): `\\theta^{(#)} -> theta[#]`, `\\mathbf{w}_* -> w_star`,
`|#| -> ||#|| for vectors`.  Rows without a hole are tried first, then those with one, each in the order written; what no row matches is read by
the default rules (a letter is the symbol of that name, `x_t` an element of a sequence x, `u \\cdot
v` an inner product of two vectors and a product otherwise).  A spelling that is not a symbol of
the setting is refused with its position, never guessed.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from fractions import Fraction

from ..errors import ProofSyntaxError
from ..language import ast as A
from ..language.parser import parse_term
from .latex import Node, NotUnderstood, parse_pattern

__all__ = ["NotationRow", "read_row", "Typer", "show", "replace_name"]

HOLE = "hole__"
VECTOR_KINDS = ("vector",)


@dataclass(frozen=True)
class NotationRow:
    pattern: Node
    template: object  # a .proof syntax tree with Name(HOLE) where the hole goes
    vectors_only: bool  # `for vectors`: the hole matches vector expressions only
    text: str


def read_row(text: str, offset: int, path: str, position) -> NotationRow:
    """`LATEX -> PROOF [for vectors]` at offset (position(offset) -> (line, col))."""
    if "->" not in text:
        line, col = position(offset)
        raise ProofSyntaxError("a notation row is `LATEX -> NOTATION` (e.g. "
                               "`\\mathbf{w}_{#} -> w[#]`)", path, line, col, text)
    left, right = text.split("->", 1)
    right = right.strip()
    vectors_only = right.endswith(" for vectors")
    if vectors_only:
        right = right[:-len(" for vectors")].strip()
    try:
        pattern = parse_pattern(left, offset)
    except NotUnderstood as exc:
        line, col = position(exc.offset)
        raise ProofSyntaxError(f"not understood: {exc.message}", path, line, col, text) from None
    wrong = _not_a_spelling(pattern)
    if wrong is not None:
        line, col = position(wrong.offset)
        raise ProofSyntaxError("a notation row's left side spells a symbol (a name, a decorated "
                               "name, a name with an index hole, or such names side by side), "
                               "never a number, an operator or an expression: a row rewrites "
                               "how a symbol is spelt, not what the math says", path, line, col,
                               text)
    line, col = position(offset + text.index("->") + 2)
    try:
        template = parse_term(right.replace("#", HOLE), path=path)
    except ProofSyntaxError as exc:
        raise ProofSyntaxError(f"the notation's right side: {exc.message}", path, line, col,
                               text) from None
    if _has_hole(pattern) != (HOLE in _names(template)):
        raise ProofSyntaxError("a notation row has a hole # on both sides or on neither (the "
                               "right side has the same hole: `\\mathbf{x}_{#} -> x[#]`), so "
                               "that two spellings the reader tells apart are never one symbol",
                               path, line, col, text)
    if pattern.kind in ("abs", "norm") and not (
            isinstance(template, A.NormE) or (isinstance(template, A.Call)
                                              and template.func == "abs")):
        raise ProofSyntaxError("a row for |#| or \\|#\\| gives a norm or an absolute value "
                               "(`|#| -> ||#|| for vectors`)", path, line, col, text)
    return NotationRow(pattern, template, vectors_only, text)


# Indices a spelling may carry: a name, a number, a text, a star, a hole (x_{#}, \theta^{(#)}).
_INDEX_KINDS = ("sym", "num", "text", "hole")


def _not_a_spelling(node: Node, index: bool = False):
    """The first node of a notation pattern that is not part of a symbol's spelling, or None."""
    if node.kind == "sym" or (index and node.kind in _INDEX_KINDS):
        return None
    if node.kind == "font":
        return _not_a_spelling(node.args[1], index)
    if node.kind == "paren" and index:
        return _not_a_spelling(node.args[0], True)
    if node.kind == "script" and not index:
        base, sub, sup = node.args
        for part in (sub, sup):
            wrong = _not_a_spelling(part, True) if part is not None else None
            if wrong is not None:
                return wrong
        return _not_a_spelling(base)
    if node.kind == "mul" and not index:  # TD_\gamma: names side by side
        return _not_a_spelling(node.args[0]) or _not_a_spelling(node.args[1])
    if node.kind in ("abs", "norm") and not index and node.args[0].kind == "hole" and \
            (node.kind == "abs" or node.args[1] is None):
        return None  # |#| -> ||#|| for vectors
    return node


def _names(tree) -> set:
    """The names a .proof syntax tree mentions."""
    if isinstance(tree, A.Name):
        return {tree.id}
    if isinstance(tree, (list, tuple)):
        return set().union(*(_names(t) for t in tree)) if tree else set()
    if dataclasses.is_dataclass(tree) and not isinstance(tree, A.Pos):
        return set().union(*(_names(getattr(tree, f.name)) for f in dataclasses.fields(tree)))
    return set()


def _match(pattern: Node, node: Node, found: dict) -> bool:
    if pattern.kind == "hole":
        if "hole" in found:
            return found["hole"] == node
        found["hole"] = node
        return True
    if pattern.kind != node.kind or len(pattern.args) != len(node.args):
        return False
    for p, n in zip(pattern.args, node.args):
        if isinstance(p, Node) and isinstance(n, Node):
            if not _match(p, n, found):
                return False
        elif isinstance(p, tuple) and isinstance(n, tuple):
            if len(p) != len(n) or not all(_match(a, b, found) for a, b in zip(p, n)):
                return False
        elif p != n:
            return False
    return True


def replace_name(tree, name: str, value):
    """tree with every Name(name) replaced by value (a .proof syntax tree)."""
    if isinstance(tree, A.Name):
        return value if tree.id == name else tree
    if isinstance(tree, tuple):
        return tuple(replace_name(t, name, value) for t in tree)
    if dataclasses.is_dataclass(tree) and not isinstance(tree, A.Pos):
        changes = {f.name: replace_name(getattr(tree, f.name), name, value)
                   for f in dataclasses.fields(tree) if f.name not in ("pos", "text")}
        return dataclasses.replace(tree, **changes)
    return tree


def _at(tree, pos: A.Pos):
    """tree placed at pos (a template's nodes carry the notation row's positions)."""
    if isinstance(tree, tuple):
        return tuple(_at(t, pos) for t in tree)
    if dataclasses.is_dataclass(tree) and not isinstance(tree, A.Pos):
        changes = {f.name: _at(getattr(tree, f.name), pos) for f in dataclasses.fields(tree)
                   if f.name not in ("text",)}
        changes["pos"] = pos
        return dataclasses.replace(tree, **changes)
    return tree


def _factors(node: Node) -> list:
    """The factors of a product written side by side, left to right."""
    if node.kind != "mul":
        return [node]
    return _factors(node.args[0]) + _factors(node.args[1])


def _product_of(factors: list) -> Node:
    node = factors[0]
    for f in factors[1:]:
        node = Node("mul", (node, f), f.offset)
    return node


def _has_hole(node: Node) -> bool:
    return node.kind == "hole" or any(
        _has_hole(a) for a in node.args if isinstance(a, Node)) or any(
        _has_hole(b) for a in node.args if isinstance(a, tuple) for b in a
        if isinstance(b, Node))


class Typer:
    """Turns untyped trees into .proof syntax trees for one setting and notation table."""

    def __init__(self, kinds: dict, rows: list, position):
        self.kinds = kinds  # name -> kind (declarations, defines as 'real' or 'vector')
        self.rows = rows
        self.position = position  # offset -> (line, col)
        self.bound: list = []  # sum indices in scope

    def pos(self, node: Node) -> A.Pos:
        return A.Pos(*self.position(node.offset))

    def fail(self, message: str, node: Node):
        raise NotUnderstood(message, node.offset)

    def is_vector(self, tree) -> bool:
        if isinstance(tree, A.Name):
            return self.kinds.get(tree.id) in VECTOR_KINDS
        if isinstance(tree, A.Index):
            return self.kinds.get(tree.base.id) == "vector_sequence"
        if isinstance(tree, A.BinOp):
            if tree.op in "+-":
                return self.is_vector(tree.left) or self.is_vector(tree.right)
            if tree.op == "*":
                return self.is_vector(tree.left) or self.is_vector(tree.right)
            if tree.op == "/":
                return self.is_vector(tree.left)
            return False
        if isinstance(tree, A.Neg):
            return self.is_vector(tree.operand)
        return False

    def convert(self, node: Node):
        found = self._row_for(node)
        if found is not None:
            return found
        if node.kind == "mul":
            return self._product(node)
        return self._default(node)

    def _row_for(self, node: Node):
        r"""What the first notation row that matches node gives, or None.  Rows without a hole
        first (`\mathbf{w}_*` before `\mathbf{w}_{#}`), each kind in the order written."""
        for row in sorted(self.rows, key=lambda r: _has_hole(r.pattern)):
            found: dict = {}
            if _match(row.pattern, node, found):
                if "hole" in found:
                    value = self.convert(found["hole"])
                    if row.vectors_only and not self.is_vector(value):
                        continue
                    return replace_name(_at(row.template, self.pos(node)), HOLE, value)
                return _at(row.template, self.pos(node))
        return None

    def _product(self, node: Node):
        r"""Factors side by side, where a row may spell several of them (`TD_\gamma -> TD`
        matches the factors T and D_\gamma inside `2\gamma M TD_\gamma`)."""
        factors = _factors(node)
        widest = max((len(_factors(r.pattern)) for r in self.rows), default=1)
        converted, k = [], 0
        while k < len(factors):
            for n in range(min(widest, len(factors) - k), 1, -1):
                window = _product_of(factors[k:k + n])
                found = self._row_for(window)
                if found is not None:
                    converted.append((found, window))
                    k += n
                    break
            else:
                converted.append((self.convert(factors[k]), factors[k]))
                k += 1
        result, _ = converted[0]
        for value, source in converted[1:]:
            pos = self.pos(source)
            if self.is_vector(result) and self.is_vector(value):
                result = A.InnerE(result, value, pos)  # `(u + v) w` reads as <u + v, w>
            else:
                result = A.BinOp("*", result, value, pos)
        return result

    def _scaled_inner(self, left, right, pos: A.Pos):
        r"""`y\, w \cdot x` as a reader reads it, y*<w, x> (the same number as <y*w, x>, and the
        same obligation as a .proof file that writes it so): scalar factors written before
        the left vector stay outside the inner product."""
        if isinstance(left, A.BinOp) and left.op == "*" and not self.is_vector(left.left) \
                and self.is_vector(left.right):
            return A.BinOp("*", left.left, self._scaled_inner(left.right, right, pos), left.pos)
        return A.InnerE(left, right, pos)

    def _name(self, spelling: str, node: Node):
        if spelling in self.kinds or spelling in self.bound:
            return A.Name(spelling, self.pos(node))
        self.fail(f"{spelling} is not a symbol of the setting (add a notation row)", node)

    def _default(self, node: Node):
        k, a, pos = node.kind, node.args, self.pos(node)
        if k == "sym":
            return self._name(a[0], node)
        if k == "num":
            return A.Num(Fraction(a[0]), pos)
        if k == "font":
            return self.convert(a[1])
        if k == "script":
            return self._script(node)
        if k == "pow":
            return A.BinOp("^", self.convert(a[0]), self.convert(a[1]), pos)
        if k in ("+", "-", "/"):
            return A.BinOp(k, self.convert(a[0]), self.convert(a[1]), pos)
        if k == "neg":
            return A.Neg(self.convert(a[0]), pos)
        if k == "cdot":
            left, right = self.convert(a[0]), self.convert(a[1])
            if self.is_vector(left) and self.is_vector(right):
                return self._scaled_inner(left, right, pos)
            return A.BinOp("*", left, right, pos)
        if k == "inner":
            return A.InnerE(self.convert(a[0]), self.convert(a[1]), pos)
        if k == "norm":
            if a[1] is not None and a[1] != Node("num", ("2",)):
                self.fail("a norm other than the Euclidean one (\\|x\\|_2)", node)
            return A.NormE(self.convert(a[0]), pos)
        if k == "abs":
            inner = self.convert(a[0])
            if self.is_vector(inner):
                self.fail("|v| of a vector: add `|#| -> ||#|| for vectors` to the notation "
                          "table if it is the norm", node)
            return A.Call("abs", (inner,), pos)
        if k == "sqrt":
            return A.Call("sqrt", (self.convert(a[0]),), pos)
        if k == "func":
            name, args = a
            expected = {"sqrt": 1, "abs": 1, "floor": 1, "ceil": 1, "max": 2, "min": 2}
            if name not in expected or len(args) != expected[name]:
                self.fail(f"the function {name} with {len(args)} argument(s)", node)
            return A.Call(name, tuple(self.convert(x) for x in args), pos)
        if k == "sum":
            return self._sum(node)
        if k == "T":
            self.fail("a transpose that is not in an inner product u^\\top v", node)
        if k == "text":
            self.fail(f"\\text{{{a[0]}}} inside a formula", node)
        if k == "paren":
            return self.convert(a[0])
        self.fail(f"{k} here", node)

    def _script(self, node: Node):
        base, sub, sup = node.args
        core = base
        while core.kind == "font":
            core = core.args[1]
        if core.kind != "sym":
            self.fail("a script on something that is not a letter", node)
        name = core.args[0]
        star = Node("sym", ("*",))
        if sup == star and sub is None:
            return self._name(f"{name}_star", node)
        if sub == star and sup is None:
            return self._name(f"{name}_star", node)
        index = sup.args[0] if sup is not None and sup.kind == "paren" else None
        if sup is not None and index is None:
            self.fail("a superscript that is neither a power nor an index in parentheses",
                      node)
        if sub is not None and index is not None:
            self.fail("both a subscript and an index in parentheses", node)
        index = index if index is not None else sub
        if index.kind in ("sym", "text", "num"):
            spelling = f"{name}_{index.args[0].replace(' ', '')}"
            if spelling in self.kinds:
                return A.Name(spelling, self.pos(node))
        if str(self.kinds.get(name)).endswith("_sequence"):
            return A.Index(A.Name(name, self.pos(core)), self.convert(index), self.pos(node))
        shown = "^{(...)}" if sub is None else "_..."
        self.fail(f"{name}{shown}: {name} is not a sequence of the setting (add a notation row)",
                  node)

    def _sum(self, node: Node):
        var, low, high, body = node.args
        if var in self.kinds:
            self.fail(f"the sum's index {var} is a symbol of the setting", node)
        pos = self.pos(node)
        self.bound.append(var)
        try:
            terms = self.convert(body)
        finally:
            self.bound.pop()
        count = self.convert(high)
        if low == Node("num", ("1",)):
            terms = replace_name(terms, var, A.BinOp("+", A.Name(var, pos), A.Num(Fraction(1), pos),
                                                 pos))
        elif low != Node("num", ("0",)):
            self.fail("a sum that starts at neither 0 nor 1", node)
        else:
            count = A.BinOp("+", count, A.Num(Fraction(1), pos), pos)
        return A.SumE(A.Name(var, pos), count, terms, pos)


_BINDING = {"+": 10, "-": 10, "*": 20, "/": 20, "^": 30}


def show(tree, context: int = 0) -> str:
    """A .proof syntax tree printed in .proof notation, parenthesised where precedence needs."""
    if isinstance(tree, A.Num):
        v = tree.value
        text = str(v.numerator) if v.denominator == 1 else f"{v.numerator}/{v.denominator}"
        return text if v.denominator == 1 or context < 20 else f"({text})"
    if isinstance(tree, A.Name):
        return tree.id
    if isinstance(tree, A.Index):
        return f"{tree.base.id}[{show(tree.index)}]"
    if isinstance(tree, A.BinOp):
        bp = _BINDING[tree.op]
        if tree.op == "^":
            text = f"{show(tree.left, 31)}^{show(tree.right, 31)}"
        else:
            text = f"{show(tree.left, bp)} {tree.op} {show(tree.right, bp + 1)}"
        return f"({text})" if bp < context else text
    if isinstance(tree, A.Neg):
        text = f"-{show(tree.operand, 21)}"
        return f"({text})" if context > 0 else text
    if isinstance(tree, A.InnerE):
        return f"<{show(tree.left)}, {show(tree.right)}>"
    if isinstance(tree, A.NormE):
        return f"||{show(tree.operand)}||"
    if isinstance(tree, A.Call):
        return f"{tree.func}({', '.join(show(a) for a in tree.args)})"
    if isinstance(tree, A.SumE):
        return f"sum({tree.var.id} < {show(tree.count)}, {show(tree.terms)})"
    if isinstance(tree, A.Rel):
        return f"{show(tree.lhs)} {tree.op} {show(tree.rhs)}"
    if isinstance(tree, A.Connective):
        return f" {tree.op} ".join(f"({show(p)})" for p in tree.parts)
    raise TypeError(f"cannot show {type(tree).__name__}")
