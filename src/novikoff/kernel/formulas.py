"""Formulas of the logic: scalar relations, vector definitions, and their combinations with
`and`, `or`, `=>` and `<=>`."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from functools import cached_property

import sympy as sp

from .terms import Vec, exact_subs, ip

__all__ = ["RELATIONS", "Relation", "VectorEq", "Implication", "Disjunction", "Conjunction",
           "Equivalence", "Formula", "COMPOUND", "rebuild", "compose_relations",
           "atoms_in", "free_symbols", "others_at_zero", "sides", "subformulas",
           "visible_obligations"]

RELATIONS = ("=", "!=", "<", "<=", ">", ">=")

# Composition table for calc chains: a R1 b and b R2 c give a R c.
_ORDER = {"=": 0, "<=": 1, "<": 2, ">=": 1, ">": 2}
_DIRECTION = {"<=": "<", "<": "<", ">=": ">", ">": ">"}


def compose_relations(r1: str, r2: str) -> str | None:
    """The relation that a R1 b, b R2 c give between a and c; None when they do not compose."""
    if r1 == "=":
        return r2
    if r2 == "=":
        return r1
    if "!=" in (r1, r2) or _DIRECTION[r1] != _DIRECTION[r2]:
        return None
    return r1 if _ORDER[r1] >= _ORDER[r2] else r2


def _as_expr(value) -> sp.Expr:
    if isinstance(value, int):
        return sp.Integer(value)
    if isinstance(value, sp.Basic):
        return value
    raise TypeError(f"not a term: {value!r}")


@functools.lru_cache(maxsize=1 << 15)  # the same terms are sides of many relations
def visible_obligations(expr: sp.Expr) -> tuple:
    """The obligations that a SymPy term shows: denominators != 0, radicands >= 0."""
    out = []
    walk = sp.preorder_traversal(expr)
    for e in walk:
        if isinstance(e, sp.Sum):
            walk.skip()  # a sum's terms mean something for every index (written.py)
            continue
        if e.is_Pow and e.exp.is_Rational:
            if e.exp < 0:
                out.append(Relation("!=", e.base, sp.Integer(0)))
            if e.exp.q == 2:
                out.append(Relation(">=", e.base, sp.Integer(0)))
    return tuple(out)


@dataclass(frozen=True)
class Relation:
    """lhs REL rhs between scalar terms, meaningful where every relation of its domain holds.

    domain: the obligations of the terms as written (see written.py); those that the SymPy terms
    still show are added by obligations().  Semantics are strict: the relation holds only where
    it is meaningful.
    """

    rel: str
    lhs: sp.Expr
    rhs: sp.Expr
    domain: tuple = ()

    def __post_init__(self):
        if self.rel not in RELATIONS:
            raise ValueError(f"rel={self.rel!r} is not one of {RELATIONS}")
        object.__setattr__(self, "lhs", _as_expr(self.lhs))
        object.__setattr__(self, "rhs", _as_expr(self.rhs))
        object.__setattr__(self, "domain", tuple(self.domain))

    def subs(self, old, new) -> "Relation":
        return Relation(self.rel, exact_subs(self.lhs, old, new), exact_subs(self.rhs, old, new),
                        tuple(d.subs(old, new) for d in self.domain))

    def obligations(self) -> tuple:
        """Every condition under which the relation means something."""
        return self._obligations

    @cached_property
    def _obligations(self) -> tuple:  # formulas are translated many times: measured 2x
        return tuple(dict.fromkeys(self.domain + visible_obligations(self.lhs)
                                   + visible_obligations(self.rhs)))

    def __str__(self) -> str:
        return f"{self.lhs} {self.rel} {self.rhs}"


@dataclass(frozen=True)
class VectorEq:
    """atom = rhs for a vector atom: a definition the kernel uses by substitution."""

    atom: sp.Basic
    rhs: Vec
    domain: tuple = ()

    def subs(self, old, new) -> "VectorEq":
        return VectorEq(self.atom.subs(old, new), self.rhs.subs(old, new),
                        tuple(d.subs(old, new) for d in self.domain))

    def obligations(self) -> tuple:
        coeffs = tuple(o for _, c in self.rhs.terms for o in visible_obligations(c))
        return tuple(dict.fromkeys(self.domain + coeffs))

    def as_quadratic(self) -> sp.Expr:
        """||atom - rhs||^2, which is zero exactly when the equation holds."""
        d = Vec.atom(self.atom) - self.rhs
        return ip(d, d)

    def __str__(self) -> str:
        return f"{self.atom} = {self.rhs}"


@dataclass(frozen=True)
class Implication:
    """premises => conclusion (a lemma proved under local `given` hypotheses)."""

    premises: tuple
    conclusion: "Formula"

    def subs(self, old, new) -> "Implication":
        return Implication(tuple(p.subs(old, new) for p in self.premises),
                           self.conclusion.subs(old, new))

    def obligations(self) -> tuple:
        return ()  # meaningful always: an undefined premise is false, so the implication holds

    def __str__(self) -> str:
        return " and ".join(f"({p})" for p in self.premises) + f" => ({self.conclusion})"


@dataclass(frozen=True)
class Disjunction:
    """One of the disjuncts holds (`a or b`, the coverage of a case split)."""

    disjuncts: tuple

    def subs(self, old, new) -> "Disjunction":
        return Disjunction(tuple(d.subs(old, new) for d in self.disjuncts))

    def obligations(self) -> tuple:
        return ()  # strict: a disjunct holds only where it is meaningful

    def __str__(self) -> str:
        return " or ".join(f"({d})" for d in self.disjuncts)


@dataclass(frozen=True)
class Conjunction:
    """Every part holds (`a and b`)."""

    parts: tuple

    def subs(self, old, new) -> "Conjunction":
        return Conjunction(tuple(p.subs(old, new) for p in self.parts))

    def obligations(self) -> tuple:
        return ()  # strict: a part holds only where it is meaningful

    def __str__(self) -> str:
        return " and ".join(f"({p})" for p in self.parts)


@dataclass(frozen=True)
class Equivalence:
    """left <=> right.  Both sides are strict, so each is true or false everywhere."""

    left: "Formula"
    right: "Formula"

    def subs(self, old, new) -> "Equivalence":
        return Equivalence(self.left.subs(old, new), self.right.subs(old, new))

    def obligations(self) -> tuple:
        return ()

    def __str__(self) -> str:
        return f"({self.left}) <=> ({self.right})"


Formula = Relation | VectorEq | Implication | Disjunction | Conjunction | Equivalence
COMPOUND = (Implication, Disjunction, Conjunction, Equivalence)


def subformulas(f) -> tuple:
    """The immediate parts of a compound formula; () for a relation or a vector definition."""
    if isinstance(f, Implication):
        return (*f.premises, f.conclusion)
    if isinstance(f, Disjunction):
        return f.disjuncts
    if isinstance(f, Conjunction):
        return f.parts
    if isinstance(f, Equivalence):
        return (f.left, f.right)
    return ()


def rebuild(f, parts: tuple):
    """A compound formula of the same shape as f, with these parts."""
    if isinstance(f, Implication):
        return Implication(tuple(parts[:-1]), parts[-1])
    if isinstance(f, Disjunction):
        return Disjunction(tuple(parts))
    if isinstance(f, Conjunction):
        return Conjunction(tuple(parts))
    if isinstance(f, Equivalence):
        return Equivalence(*parts)
    raise TypeError(f"not a compound formula: {f!r}")


def free_symbols(f: Formula) -> set:
    """Every SymPy symbol and sequence element a formula mentions (indices included)."""
    return set(_free_symbols(f))


def others_at_zero(f: Formula, k: sp.Symbol, nats) -> Formula | None:
    """f with its nats other than k at 0, for f that holds at every value of every nat (d[k + T]
    >= 1 at T = 0 is d[k] >= 1); None where a value would be evaluated in floating point
    (terms.exact_subs)."""
    try:
        for other in sorted(free_symbols(f) & set(nats) - {k}, key=str):
            f = f.subs(other, sp.Integer(0))
    except ValueError:
        return None
    return f


@functools.lru_cache(maxsize=1 << 15)  # as atoms_in
def _free_symbols(f: Formula) -> frozenset:
    if isinstance(f, COMPOUND):
        return frozenset().union(*(_free_symbols(p) for p in subformulas(f)))
    if isinstance(f, Relation):
        exprs = [f.lhs, f.rhs] + [side for d in f.domain for side in (d.lhs, d.rhs)]
    else:
        exprs = [f.atom] + [c for _, c in f.rhs.terms] + list(f.rhs.atoms()) + [
            side for d in f.domain for side in (d.lhs, d.rhs)]
    out: set = set()
    for e in exprs:
        out |= e.free_symbols
        out |= e.atoms(sp.core.function.AppliedUndef)
    return frozenset(out)


def sides(f) -> list:
    """The scalar terms of a formula (a vector definition gives ||atom - rhs||^2)."""
    return list(_sides(f))


@functools.lru_cache(maxsize=1 << 15)  # as atoms_in
def _sides(f) -> tuple:
    if isinstance(f, Relation):
        return (f.lhs, f.rhs)
    if isinstance(f, COMPOUND):
        return tuple(t for p in subformulas(f) for t in _sides(p))
    if isinstance(f, VectorEq):
        return (f.as_quadratic(),)
    return ()


@functools.lru_cache(maxsize=1 << 15)  # the same formulas are read at every step of a proof
def atoms_in(f, *types) -> frozenset:
    """The atoms of these types in the scalar terms of a formula (sides)."""
    return frozenset().union(*(side.atoms(*types) for side in _sides(f)))
