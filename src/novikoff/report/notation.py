"""Typeset the syntax tree of a .proof file as math boxes, in the notation of lecture notes.

`w_star` is w*, `gamma_geom` is γ with the subscript geom, `x0` is x₀, `w[k+1]` is w with the
subscript k + 1, `<a, b>` is ⟨a, b⟩, `a/b` a fraction, `sum(i < n, t)` a ∑ from i = 0 to n − 1.
Everything is built from the parsed nodes (never from their text); a node kind with no rule here
is shown as its source text, so that a new construct of the language never breaks a report.
"""

from __future__ import annotations

from fractions import Fraction

from ..language import ast as A
from .boxes import (INVISIBLE_TIMES, BigOp, Fenced, Frac, Ident, Number, Op, Row, Scripts, Sqrt,
                    Text, joined)

__all__ = ["Typesetter", "GREEK", "RELATIONS", "CONNECTIVES", "symbol"]

GREEK = {
    "alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "epsilon": "ε", "zeta": "ζ",
    "eta": "η", "theta": "θ", "iota": "ι", "kappa": "κ", "lambda": "λ", "mu": "μ", "nu": "ν",
    "xi": "ξ", "pi": "π", "rho": "ρ", "sigma": "σ", "tau": "τ", "upsilon": "υ", "phi": "φ",
    "chi": "χ", "psi": "ψ", "omega": "ω", "Gamma": "Γ", "Delta": "Δ", "Theta": "Θ",
    "Lambda": "Λ", "Xi": "Ξ", "Pi": "Π", "Sigma": "Σ", "Upsilon": "Υ", "Phi": "Φ", "Psi": "Ψ",
    "Omega": "Ω",
}
RELATIONS = {"=": "=", "!=": "≠", "<": "<", "<=": "≤", ">": ">", ">=": "≥"}
CONNECTIVES = {"and": "∧", "or": "∨", "=>": "⇒", "<=>": "⇔"}
FENCES = {"abs": ("|", "|"), "floor": ("⌊", "⌋"), "ceil": ("⌈", "⌉")}

# Binding strength of what a node shows, to decide parentheses.  A fraction is a box of its own
# (no parentheses needed around it) except in scripts, where it is written with a slash.
_SUM, _NEG, _PRODUCT, _POWER, _ATOM = 10, 15, 20, 30, 100


def symbol(name: str):
    """A declared name as a reader writes it: w_star -> w*, theta_old -> θ_old, x0 -> x₀."""
    parts = name.split("_")
    if not parts[0] or not all(parts[1:]):  # _a, a__b, a_: nothing to read into it
        return Ident(name, "italic" if len(name) == 1 else "upright")
    base = _word(parts[0], main=True)
    subs = [_word(p) for p in parts[1:] if p != "star"]
    star = Op("∗") if "star" in parts[1:] else None
    sub = None
    if subs:
        sub = subs[0] if len(subs) == 1 else joined(subs)
    return _attach(base, sub, star)


def _word(text: str, main: bool = False):
    if text in GREEK:
        return Ident(GREEK[text])
    if text.isdigit():
        return Number(text)
    if main:  # x0, theta1: a letter (or a Greek letter's name) and its index
        letters = text.rstrip("0123456789")
        digits = text[len(letters):]
        if digits and (len(letters) == 1 or letters in GREEK):
            return Scripts(_word(letters), Number(digits))
    return Ident(text, "italic" if len(text) == 1 else "upright")


def _attach(base, sub=None, sup=None):
    """base with a subscript and/or superscript, merged with the scripts base already has."""
    if sub is None and sup is None:
        return base
    if isinstance(base, Scripts) and not (sup is not None and base.sup is not None):
        if sub is not None and base.sub is not None:
            sub = Row((base.sub, Op(","), sub))
        return Scripts(base.base, sub if sub is not None else base.sub,
                       sup if sup is not None else base.sup)
    if isinstance(base, Scripts):  # (w*)²: a second superscript would read as one
        base = Fenced("(", base, ")")
    return Scripts(base, sub, sup)


class Typesetter:
    """Typesets expressions and formulas; `lines` (line number -> source line) is where the
    source text of a node kind with no rule is taken from."""

    def __init__(self, lines: dict | None = None):
        self.lines = lines or {}

    # ------------------------------------------------------------------ formulas

    def formula(self, node):
        """A relation, or relations joined by connectives."""
        if isinstance(node, A.Rel):
            if node.lhs is None or node.rhs is None:  # a statement that did not parse
                return Text(node.text)
            return Row((self.expr(node.lhs), self.relation(node.op), self.expr(node.rhs)))
        if isinstance(node, A.Connective):
            parts = [Fenced("(", self.formula(p), ")") if isinstance(p, A.Connective)
                     else self.formula(p) for p in node.parts]
            return joined(parts, CONNECTIVES.get(node.op, node.op))
        return self.expr(node)

    @staticmethod
    def relation(op: str):
        return Op(RELATIONS.get(op, op))

    # ------------------------------------------------------------------ expressions

    def expr(self, node, script: bool = False):
        """An expression; in a script (an index, an exponent) fractions are written a/b."""
        if isinstance(node, A.Num):
            return self._number(node.value, script)
        if isinstance(node, A.Name):
            return symbol(node.id)
        if isinstance(node, A.Index):
            return _attach(symbol(node.base.id), self.expr(node.index, script=True))
        if isinstance(node, A.BinOp):
            return self._binop(node, script)
        if isinstance(node, A.Neg):
            operand = self.expr(node.operand, script)
            if self._strength(node.operand, script) <= _NEG:
                operand = Fenced("(", operand, ")")
            return Row((Op("−"), operand))
        if isinstance(node, A.InnerE):
            return Fenced("⟨", Row((self.expr(node.left), Op(","), self.expr(node.right))), "⟩")
        if isinstance(node, A.NormE):
            return Fenced("‖", self.expr(node.operand), "‖")
        if isinstance(node, A.Call):
            return self._call(node, script)
        if isinstance(node, A.SumE):
            return self._sum(node)
        if isinstance(node, (A.Rel, A.Connective)):
            return self.formula(node)
        return Text(self.source(node))

    def source(self, node) -> str:
        """The source text of a node: its own text if it keeps one, else its line from the
        node's column (comment dropped)."""
        text = getattr(node, "text", "")
        if isinstance(text, str) and text.strip():
            return text.strip()
        pos = getattr(node, "pos", None)
        line = self.lines.get(getattr(pos, "line", None), "")
        column = getattr(pos, "col", 1)
        rest = line[max(0, column - 1):].split("#", 1)[0].strip() if line else ""
        return rest or f"<{type(node).__name__}>"

    def _number(self, value, script: bool):
        value = Fraction(value)
        if value < 0:  # only a computed index can be negative (sum(i < 0, t) ends at −1)
            return Row((Op("−"), self._number(-value, script)))
        if value.denominator == 1:
            return Number(str(value.numerator))
        decimal = _decimal(value)
        if decimal is not None:  # 0.5 as written, not 1/2
            return Number(decimal)
        num, den = Number(str(value.numerator)), Number(str(value.denominator))
        return Row((num, Op("/"), den)) if script else Frac(num, den)

    def _strength(self, node, script: bool) -> int:
        if isinstance(node, A.BinOp):
            if node.op in "+-":
                return _SUM
            if node.op == "/":
                return _PRODUCT if script else _ATOM
            return _PRODUCT if node.op == "*" else _POWER
        if isinstance(node, A.Neg):
            return _NEG
        if isinstance(node, A.Num) and Fraction(node.value).denominator != 1 and script:
            return _PRODUCT if _decimal(Fraction(node.value)) is None else _ATOM
        return _ATOM

    def _wrapped(self, node, script: bool, parenthesise: bool):
        box = self.expr(node, script)
        return Fenced("(", box, ")") if parenthesise else box

    def _binop(self, node: A.BinOp, script: bool):
        op, left, right = node.op, node.left, node.right
        strength = self._strength
        if op in "+-":
            lhs = self._wrapped(left, script, strength(left, script) < _SUM)
            # a + (b + c) and a − (−b) keep the parentheses they were written with.
            rhs = self._wrapped(right, script, strength(right, script) <= _NEG)
            return Row((lhs, Op("+" if op == "+" else "−"), rhs))
        if op == "/" and not script:
            return Frac(self.expr(left), self.expr(right))
        if op in "*/":
            # (∑ t)·c: a sum on the left of a product would take the factor into its terms.
            lhs = self._wrapped(left, script, strength(left, script) <= _SUM
                                or _ends_with_sum(left, script))
            rhs = self._wrapped(right, script, strength(right, script) <= _PRODUCT)
            if op == "/":
                return Row((lhs, Op("/"), rhs))
            return Row((lhs, Op("·" if _needs_dot(lhs, rhs) else INVISIBLE_TIMES), rhs))
        if op == "^":
            base = self._wrapped(left, script, _needs_parentheses_as_base(left))
            return _attach(base, sup=self.expr(right, script=True))
        return Text(self.source(node))

    def _call(self, node: A.Call, script: bool):
        args = [self.expr(a, script) for a in node.args]
        if node.func == "sqrt" and len(args) == 1:
            return Sqrt(args[0])
        if node.func in FENCES and len(args) == 1:
            opening, closing = FENCES[node.func]
            return Fenced(opening, args[0], closing)
        return Row((Ident(node.func, "operator"), Fenced("(", joined(args), ")")))

    def _sum(self, node: A.SumE):
        """sum(i < n, t): ∑ from i = 0 to n − 1 of t."""
        under = Row((symbol(node.var.id), Op("="), Number("0")))
        body = self.expr(node.terms)
        if self._strength(node.terms, False) <= _NEG or isinstance(node.terms, A.SumE):
            body = Fenced("(", body, ")")
        return Row((BigOp("∑", under, self._last_index(node.count)), body))

    def _last_index(self, count):
        """n − 1 for the number of terms n, folding a constant: k + 1 -> k, m − 1 -> m − 2."""
        if isinstance(count, A.Num):
            return self._number(Fraction(count.value) - 1, script=True)
        if isinstance(count, A.BinOp) and count.op in "+-" and isinstance(count.right, A.Num):
            constant = Fraction(count.right.value) * (1 if count.op == "+" else -1) - 1
            head = self.expr(count.left, script=True)
            if constant == 0:
                return head
            return Row((head, Op("+" if constant > 0 else "−"),
                        self._number(abs(constant), script=True)))
        return Row((self._wrapped(count, True, self._strength(count, True) <= _NEG), Op("−"),
                    Number("1")))


def _needs_parentheses_as_base(node) -> bool:
    """Whether the base of a power needs parentheses: anything but a name, an element, a
    bracketed term or a whole number ((R/γ)², not R²/γ; (√k)², (0.5)²)."""
    if isinstance(node, A.Num):
        return Fraction(node.value).denominator != 1
    if isinstance(node, A.Call):
        return node.func == "sqrt"
    return not isinstance(node, (A.Name, A.Index, A.InnerE, A.NormE))


def _ends_with_sum(node, script: bool) -> bool:
    """Whether what a node shows ends with a ∑ (whose terms would run on to the right)."""
    if isinstance(node, A.SumE):
        return True
    if isinstance(node, A.BinOp) and (node.op in "+-*" or (node.op == "/" and script)):
        return _ends_with_sum(node.right, script)
    if isinstance(node, A.Neg):
        return _ends_with_sum(node.operand, script)
    return False


def _decimal(value: Fraction) -> str | None:
    """A fraction with a finite decimal expansion, written out (3/4 -> 0.75); else None."""
    den, twos, fives = value.denominator, 0, 0
    while den % 2 == 0:
        den, twos = den // 2, twos + 1
    while den % 5 == 0:
        den, fives = den // 5, fives + 1
    if den != 1:
        return None
    places = max(twos, fives)
    digits = str(abs(value.numerator) * 10 ** places // value.denominator).rjust(places + 1, "0")
    return ("-" if value < 0 else "") + digits[:-places] + "." + digits[-places:]


def _edge(box, first: bool) -> str:
    """What a box shows at its left (first) or right edge: letter, word, number, fence, ..."""
    while True:
        if isinstance(box, Row) and box.items:
            box = box.items[0] if first else box.items[-1]
        elif isinstance(box, Scripts):
            if not first:
                return "script"
            box = box.base
        else:
            break
    if isinstance(box, Ident):
        return "word" if len(box.text) > 1 else "letter"
    if isinstance(box, Number):
        return "number"
    if isinstance(box, Fenced):
        return "fence" if box.open != "(" else "paren"
    return {Frac: "frac", Op: "op", Text: "text", Sqrt: "sqrt", BigOp: "bigop"}.get(
        type(box), "other")


def _needs_dot(left, right) -> bool:
    """Whether a product is written with a dot (2·3, k·loss, ‖u‖·‖v‖) or by juxtaposition
    (2y, kγ, y⟨w, x⟩)."""
    end, start = _edge(left, first=False), _edge(right, first=True)
    if start in ("number", "frac", "op", "text") or end == "text":
        return True
    if "word" in (end, start) and {end, start} & {"letter", "word", "number", "script"}:
        return True
    return end == "fence" and start == "fence"
