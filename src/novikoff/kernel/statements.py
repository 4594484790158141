"""The statement of an obligation as exact polynomial facts, for the certificate checker.

The same semantics as the Z3 translation (``solver.Translator``), built from the kernel's
formulas by walking their terms, with the checker's own exact polynomial arithmetic (no SymPy
simplification): atoms are named by ``atom_name``; square roots, inverses, ``abs``, ``max`` and
``min`` are helper atoms with their total definitions (``a >= 0 => s >= 0 and s^2 = a``,
``a < 0 => s = 0``; ``b != 0 => q*b = 1``, ``b = 0 => q = 0``); a relation holds only with its
domain (a goal also with the conditions its SymPy terms show); ``<v, v> >= 0``; elements of one
sequence at equal indices are equal.  ``floor(a)`` is a helper atom f that the statement lists
among its integers (whole numbers of either sign), with ``f <= a < f + 1``; ``ceil(a)`` one c
with ``c - 1 < a <= c``.  A helper atom is named after its kind and its argument's polynomial,
so two different helpers never share a name and the same helper is the same atom everywhere.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from fractions import Fraction

import sympy as sp

from .certificates import (canonical_text, fact_atoms, poly_add, poly_mul, poly_to_json,
                           statement_key)
from .formulas import Conjunction, Disjunction, Equivalence, Implication, Relation, VectorEq
from .solver import atom_name, coefficient_conditions
from .terms import Inner, Norm, index_of

__all__ = ["NoStatement", "Statement", "statement_of"]


class NoStatement(Exception):
    """The obligation has no polynomial statement (an unsupported term)."""


_ONE = {(): Fraction(1)}
# The helper atoms that are whole numbers (a statement's integers), by the prefix of their names.
_WHOLE_HELPERS = ("!floor[", "!ceil[")


def _negate(fact):
    kind, body = fact
    if kind == "and":
        return ("or", tuple(_negate(f) for f in body))
    if kind == "or":
        return ("and", tuple(_negate(f) for f in body))
    minus = poly_add({}, body, Fraction(-1))
    return {"ge": ("gt", minus), "gt": ("ge", minus),
            "eq": ("ne", body), "ne": ("eq", body)}[kind]


def _json(fact):
    kind, body = fact
    if kind in ("and", "or"):
        return [kind, [_json(f) for f in body]]
    return [kind, poly_to_json(body)]


def _helper_name(kind: str, *polys) -> str:
    return f"!{kind}" + json.dumps([poly_to_json(p) for p in polys], separators=(",", ":"))


class _Builder:
    """Translates terms and formulas, collecting the atoms met and the definitions of helper
    atoms (text -> fact, so that a definition met twice is one fact)."""

    def __init__(self):
        self.atoms: dict = {}  # name -> SymPy atom
        self.definitions: dict = {}  # text -> fact: helper definitions, <v, v> >= 0
        self.helpers: set = set()

    def _fact(self, fact) -> None:
        self.definitions.setdefault(_text(fact), fact)

    def var(self, atom) -> dict:
        name = atom_name(atom)
        if name not in self.atoms:
            self.atoms[name] = atom
            if isinstance(atom, Inner) and atom.args[0] == atom.args[1]:
                self._fact(("ge", {((name, 1),): Fraction(1)}))
        return {((name, 1),): Fraction(1)}

    def _define(self, name: str, facts) -> dict:
        if name not in self.helpers:
            self.helpers.add(name)
            for fact in facts:
                self._fact(fact)
        return {((name, 1),): Fraction(1)}

    def sqrt(self, arg: sp.Expr, conditions=None) -> dict:
        a = self.term(arg)
        name = _helper_name("sqrt", a)
        s = {((name, 1),): Fraction(1)}
        facts = [("or", (("gt", poly_add({}, a, -1)),
                         ("and", (("ge", s), ("eq", poly_add(poly_mul(s, s), a, -1)))))),
                 ("or", (("ge", a), ("eq", s)))]
        out = self._define(name, facts)
        if conditions is not None:  # ||v||^2 >= 0 where v's coefficients mean something
            defined = [self.formula(c) for c in conditions]
            self._fact(("or", (*(_negate(d) for d in defined), ("ge", a))))
        return out

    def inverse(self, arg: sp.Expr) -> dict:
        b = self.term(arg)
        name = _helper_name("inv", b)
        q = {((name, 1),): Fraction(1)}
        facts = [("or", (("eq", b), ("eq", poly_add(poly_mul(q, b), _ONE, -1)))),
                 ("or", (("ne", b), ("eq", q)))]
        return self._define(name, facts)

    def choice(self, kind: str, a: dict, b: dict) -> dict:
        """abs (b = -a), max or min of two: a helper v with its two cases."""
        name = _helper_name(kind, a, b)
        v = {((name, 1),): Fraction(1)}
        first = poly_add(v, a, -1)  # v = a
        second = poly_add(v, b, -1)  # v = b
        a_minus_b = poly_add(a, b, -1)
        b_minus_a = poly_add(b, a, -1)
        if kind == "abs":  # a >= 0 ? a : -a   (b is -a)
            cases = (("and", (("ge", a), ("eq", first))),
                     ("and", (("gt", b), ("eq", second))))
        elif kind == "max":  # a > b ? a : b
            cases = (("and", (("gt", a_minus_b), ("eq", first))),
                     ("and", (("ge", b_minus_a), ("eq", second))))
        else:  # min: a < b ? a : b
            cases = (("and", (("gt", b_minus_a), ("eq", first))),
                     ("and", (("ge", a_minus_b), ("eq", second))))
        return self._define(name, [("or", cases)])

    def whole(self, kind: str, arg) -> dict:
        """floor(a): a whole number f with f <= a < f + 1; ceil(a): c with c - 1 < a <= c."""
        a = self.term(arg)
        name = _helper_name(kind, a)
        v = {((name, 1),): Fraction(1)}
        if kind == "floor":
            facts = [("ge", poly_add(a, v, -1)), ("gt", poly_add(poly_add(v, _ONE), a, -1))]
        else:
            facts = [("ge", poly_add(v, a, -1)), ("gt", poly_add(poly_add(a, _ONE), v, -1))]
        return self._define(name, facts)

    def term(self, e) -> dict:
        """The polynomial of a term (not to be mutated: compound terms' are shared)."""
        if e.is_Rational:
            value = Fraction(int(e.p), int(e.q))
            return {(): value} if value else {}
        if isinstance(e, (sp.Symbol, Inner, sp.core.function.AppliedUndef, sp.Sum)):
            return self.var(e)
        poly, atoms, definitions, helpers = _compound(e)
        for name, atom in atoms:
            self.atoms.setdefault(name, atom)
        self.definitions.update(definitions)
        self.helpers.update(helpers)
        return poly

    def _compound(self, e) -> dict:
        if isinstance(e, Norm):
            return self.sqrt(e.gram(), conditions=coefficient_conditions(e))
        if e.is_Add:
            out: dict = {}
            for a in e.args:
                out = poly_add(out, self.term(a))
            return out
        if e.is_Mul:
            out = _ONE
            for a in e.args:
                out = poly_mul(out, self.term(a))
            return out
        if e.is_Pow:
            return self.power(e.base, e.exp)
        if isinstance(e, sp.Abs):
            a = self.term(e.args[0])
            return self.choice("abs", a, poly_add({}, a, -1))
        if isinstance(e, (sp.Max, sp.Min)):
            args = [self.term(a) for a in e.args]
            out = args[0]
            for a in args[1:]:
                out = self.choice("max" if isinstance(e, sp.Max) else "min", a, out)
            return out
        if isinstance(e, (sp.floor, sp.ceiling)):
            return self.whole("floor" if isinstance(e, sp.floor) else "ceil", e.args[0])
        raise NoStatement(f"no polynomial statement for {type(e).__name__}")

    def power(self, base, exp) -> dict:
        if exp.is_Integer:
            n = int(exp)
            if abs(n) > 16:
                raise NoStatement(f"exponent {n} is too large")
            b = self.inverse(base) if n < 0 else self.term(base)
            out = _ONE
            for _ in range(abs(n)):
                out = poly_mul(out, b)
            return out
        if exp.is_Rational and exp.q == 2:
            if exp < 0:
                return self.inverse(base ** (-exp))
            root = self.sqrt(base)
            out = _ONE
            for _ in range(int(exp.p)):
                out = poly_mul(out, root)
            return out
        raise NoStatement(f"unsupported exponent {exp}")

    def formula(self, f, goal: bool = True):
        """As solver.Translator._formula: a goal is strong, a hypothesis weak."""
        if isinstance(f, (Relation, VectorEq)):
            if isinstance(f, Relation):
                d = poly_add(self.term(f.lhs), self.term(f.rhs), -1)
                rel = f.rel
            else:
                d, rel = self.term(f.as_quadratic()), "="
            minus = poly_add({}, d, -1)
            holds = {"=": ("eq", d), "!=": ("ne", d), "<": ("gt", minus),
                     "<=": ("ge", minus), ">": ("gt", d), ">=": ("ge", d)}[rel]
            written = [self.formula(o, goal) for o in f.domain]
            shown = [self.formula(o) for o in f.obligations() if o not in f.domain]
            if goal or not shown:
                return ("and", (*written, *shown, holds))
            return ("and", (*written, ("or", (*(_negate(s) for s in shown), holds))))
        if isinstance(f, Implication):
            premises = [self.formula(p, not goal) for p in f.premises]
            return ("or", (*(_negate(p) for p in premises), self.formula(f.conclusion, goal)))
        if isinstance(f, Disjunction):
            return ("or", tuple(self.formula(d, goal) for d in f.disjuncts))
        if isinstance(f, Conjunction):
            return ("and", tuple(self.formula(p, goal) for p in f.parts))
        if isinstance(f, Equivalence):
            return ("and", (self.formula(Implication((f.left,), f.right), goal),
                            self.formula(Implication((f.right,), f.left), goal)))
        raise NoStatement(f"not a formula: {f!r}")


def _congruence(atoms: dict) -> dict:
    """As solver.Translator.congruence: text -> fact of 'two elements of one sequence at equal
    indices are equal' for the atoms of a statement, with the definitions those facts need."""
    names = frozenset(atoms)
    if names not in _CONGRUENCE:
        if len(_CONGRUENCE) > 1 << 12:
            _CONGRUENCE.clear()
        _CONGRUENCE[names] = _equal_indices(atoms)
    return _CONGRUENCE[names]


_CONGRUENCE: dict = {}  # the names of a statement's atoms -> _equal_indices (atom_name is 1-1)


def _equal_indices(atoms: dict) -> dict:
    elements: dict = {}
    vectors: set = set()
    for atom in atoms.values():
        parts = atom.args if isinstance(atom, Inner) else (atom,)
        for part in parts:
            if isinstance(part, sp.core.function.AppliedUndef) and not isinstance(part, Inner):
                elements.setdefault(part.func, set()).add(part)
            if isinstance(atom, Inner):
                vectors.add(part)
        if isinstance(atom, sp.Sum):
            elements.setdefault(atom.function, set()).add(atom)
    facts: dict = {}
    ordered_vectors = tuple(sorted(vectors, key=_sort_key))
    for group in elements.values():
        ordered = sorted(group, key=_sort_key)
        for i, e1 in enumerate(ordered):
            for e2 in ordered[i + 1:]:
                pair = _equal_elements(e1, e2, ordered_vectors if e1 in vectors
                                       or e2 in vectors else None)
                if pair is not None:
                    text, fact, definitions = pair
                    facts.update(definitions)
                    facts[text] = fact
    return facts


@functools.lru_cache(maxsize=1 << 14)
def _sort_key(e):
    return sp.default_sort_key(e)


@functools.lru_cache(maxsize=1 << 15)
def _equal_elements(e1, e2, vectors) -> tuple | None:
    """(text, fact, definitions) of 'index(e1) = index(e2) => e1 = e2' (for vectors: their
    inner products with each vector), or None when the indices differ by a number other than 0
    (k*(k+1) and k^2 + k are always equal)."""
    gap = sp.expand(index_of(e1) - index_of(e2))
    if gap.is_number and gap != 0:
        return None
    b = _Builder()
    same = poly_add(b.term(index_of(e1)), b.term(index_of(e2)), -1)
    if vectors is not None:
        equal = [poly_add(b.var(Inner(e1, u)), b.var(Inner(e2, u)), -1) for u in vectors]
    else:
        equal = [poly_add(b.var(e1), b.var(e2), -1)]
    fact = ("or", (("ne", same), ("and", tuple(("eq", q) for q in equal))))
    return _text(fact), fact, tuple(b.definitions.items())


@functools.lru_cache(maxsize=1 << 15)
def _compound(e) -> tuple:
    """(polynomial, atoms, definitions, helpers) of a compound term: the same terms recur in
    the formulas of every step (measured, with the other changes of that commit: building the
    statements of `novikoff check proofs/` 3.4 -> 1.0 s of CPU)."""
    b = _Builder()
    poly = b._compound(e)
    return poly, tuple(b.atoms.items()), tuple(b.definitions.items()), tuple(b.helpers)


@functools.lru_cache(maxsize=1 << 14)
def _piece(f, goal: bool) -> tuple:
    """(text, fact, atoms, definitions) of one formula: the setting's assumptions are in
    nearly every statement, so each is translated once."""
    b = _Builder()
    fact = b.formula(f, goal)
    return _text(fact), fact, tuple(b.atoms.items()), tuple(b.definitions.items())


def _text(fact) -> str:
    return json.dumps(_json(fact), separators=(",", ":"))


@dataclass(frozen=True)
class Statement:
    """An obligation's statement: its canonical text (what a certificate is keyed by) and the
    same facts as the certificate checker reads that text, in its order, made from the facts
    themselves rather than by parsing the text again."""

    text: str
    facts: tuple
    nats: frozenset
    integers: frozenset

    @functools.cached_property
    def key(self) -> str:
        return statement_key(self.text)


@functools.lru_cache(maxsize=4096)
def _statement(hypotheses: tuple, goals: tuple, nats: frozenset) -> Statement:
    atoms: dict = {}
    facts: dict = {}  # text -> fact
    pieces = [_piece(h, False) for h in hypotheses] + [_piece(g, True) for g in goals]
    for _, _, used, defined in pieces:
        for name, atom in used:
            atoms.setdefault(name, atom)
        facts.update(defined)
    for text, fact, _, _ in pieces[:len(hypotheses)]:
        facts[text] = fact
    if goals:
        negated = _negate(("and", tuple(fact for _, fact, _, _ in pieces[len(hypotheses):])))
        facts[_text(negated)] = negated
    facts.update(_congruence(atoms))
    names = sorted({atom_name(n) for n in nats})
    wholes = sorted({name for text, fact in facts.items()
                     if any(prefix in text for prefix in _WHOLE_HELPERS)
                     for name in fact_atoms(fact, set()) if name.startswith(_WHOLE_HELPERS)})
    if any(_FRESH.search(t) for t in facts) or any(_FRESH.search(n) for n in names):
        rename = _fresh_names(list(facts), names)
        # (a fact with no fresh symbol is its own renaming: measured, renaming 0.26 -> 0.06 s of
        # CPU in a check of four library files)
        facts = {rename(t): _renamed(f, rename) if _FRESH.search(t) else f
                 for t, f in facts.items()}
        names = sorted({rename(n) for n in names})
        wholes = sorted({rename(n) for n in wholes})
    order = sorted(facts)
    return Statement(canonical_text(order, names, wholes), tuple(facts[t] for t in order),
                     frozenset(names), frozenset(wholes))



_FRESH = re.compile(r"(?<=~)\d+|(?<=dummy_index=)\d+")


def _fresh_names(texts: list, nats: list):
    """The renaming of a statement's fresh symbols (SymPy Dummies: `#j~2884126`, a sum's bound
    index): numbered 1, 2, ... in order of first appearance, the facts ordered with the numbers
    masked, since their process-wide counters differ from run to run and the key must not.
    A number sits inside an atom's name, so renaming a fact's text renames its atoms."""
    order = sorted(texts, key=lambda t: (_FRESH.sub("", t), t))
    numbers: dict = {}
    for t in order + [json.dumps(nats)]:
        for m in _FRESH.finditer(t):
            numbers.setdefault(m.group(), str(len(numbers) + 1))

    @functools.lru_cache(maxsize=None)
    def rename(text: str) -> str:
        return _FRESH.sub(lambda m: numbers[m.group()], text)
    return rename


def _renamed(fact, rename):
    """The fact with its atoms renamed (each monomial's factors sorted again by name, as the
    checker reads the renamed text)."""
    kind, body = fact
    if kind in ("and", "or"):
        return kind, tuple(_renamed(f, rename) for f in body)
    return kind, {tuple(sorted((rename(a), e) for a, e in m)): c for m, c in body.items()}


def statement_of(hypotheses, goal, nats=frozenset()) -> Statement:
    """The statement 'the hypotheses and the negated goal are contradictory' (goal: a formula,
    a tuple of them, or None).  Raises NoStatement when there is none."""
    goals = goal if isinstance(goal, tuple) else (goal,) if goal is not None else ()
    try:
        return _statement(tuple(hypotheses), goals, frozenset(nats))
    except RecursionError:
        raise NoStatement("a term is nested too deeply") from None
