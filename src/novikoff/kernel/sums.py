"""Finite sums ``sum(i < n, t(i))``: their normal form and the facts that define them.

A sum is SymPy's ``Sum(t(BOUND), (BOUND, 0, n - 1))`` over one fixed bound variable, so that two
sums with the same terms are the same object whatever the index was called.  Its meaning is the
usual one: ``t(0) + ... + t(n-1)``, meaningful where ``n >= 0`` (an obligation of the term).  The
terms must mean something for *every* i >= 0 (written.py refuses a sum whose terms divide by
something that may be zero or take an index that may be negative); so the facts below hold
wherever the sum means something, and adding them to a solver's hypotheses is sound:

- ``n = 0  =>  S(n) = 0``;
- ``n >= 1  =>  S(n) = S(n-1) + t(n-1)`` (the step);
- when every term is ``>= 0`` (decided once per setting and terms): ``S(n) >= 0``, and for
  ``n >= 1`` also ``S(n-1) >= 0`` and ``t(n-1) >= 0``.

Linearity is built into the normal form: constant factors are taken out and sums of terms split,
and a sum of a constant ``c`` is ``n*c``; so ``sum(i < k, 2*a[i] + 1) = 2*sum(i < k, a[i]) + k``
holds by algebra.  The solver sees each sum as an atom of its own; sums with the same terms and
equal bounds are equal (congruence, in the translators).
"""

from __future__ import annotations

import sympy as sp

from .formulas import Implication, Relation, sides
from .terms import exact_subs

__all__ = ["BOUND", "make_sum", "normal_sums", "sums_in", "sum_facts", "count", "index_of"]

# The one bound variable of every sum.  Its printed name `_#i` cannot be written in a .proof
# file, so no declared symbol prints like it (the solver names atoms by their printed form).
BOUND = sp.Dummy("#i", integer=True, nonnegative=True)

# Sums of up to this many terms (a number) are written out: sum(i < 3, a[i]) = a[0]+a[1]+a[2].
_UNROLL = 16


def count(s: sp.Sum) -> sp.Expr:
    """The number of terms n of sum(i < n, ...)."""
    return s.limits[0][2] + 1


def index_of(element: sp.Basic) -> sp.Expr:
    """The index of a sequence element; the last index of a sum (for congruence: sums of the
    same terms with equal last indices are equal)."""
    return element.limits[0][2] if isinstance(element, sp.Sum) else element.args[0]


def make_sum(terms: sp.Expr, n: sp.Expr) -> sp.Expr:
    """sum(i < n, terms) in normal form (terms mention BOUND for i)."""
    out = sp.Integer(0)
    for part in sp.Add.make_args(sp.expand(terms)):
        factor, varying = part.as_independent(BOUND, as_Add=False)
        if varying == 1:
            out += factor * n
        elif n.is_Integer and 0 <= n <= _UNROLL and _exactly_at_every(varying, int(n)):
            out += factor * sp.Add(*(varying.subs(BOUND, i) for i in range(int(n))))
        else:
            out += factor * sp.Sum(varying, (BOUND, 0, n - 1))
    return out


def _exactly_at_every(terms: sp.Expr, n: int) -> bool:
    """Whether terms can be written out at 0, ..., n-1 without SymPy evaluating a floor or a
    square root of an irrational number in floating point (terms.exact_subs)."""
    try:
        for i in range(n):
            exact_subs(terms, BOUND, i)
    except ValueError:
        return False
    return True


def normal_sums(expr: sp.Expr) -> sp.Expr:
    """Every sum of expr in normal form (after sp.expand, which splits sums but keeps factors)."""
    if not expr.has(sp.Sum):
        return expr
    return expr.replace(lambda e: isinstance(e, sp.Sum),
                        lambda e: make_sum(e.function, count(e)))


def sums_in(formulas) -> list:
    """The sums the formulas mention, in a fixed order."""
    found = set()
    for f in formulas:
        for side in sides(f):
            found |= side.atoms(sp.Sum)
    return sorted(found, key=sp.default_sort_key)


def sum_facts(formulas, nonnegative) -> list:
    """The defining facts of every sum the formulas mention (see the module's docstring).

    nonnegative(terms) -> bool says whether every term is >= 0 (for every i >= 0).
    """
    facts = []
    for s in sums_in(formulas):
        terms, n = s.function, count(s)
        try:
            last = exact_subs(terms, BOUND, n - 1)
        except ValueError:  # no facts rather than facts SymPy computed in floating point
            continue
        shorter = make_sum(terms, n - 1)
        facts.append(Implication((Relation("=", n, 0),), Relation("=", s, 0)))
        facts.append(Implication((Relation(">=", n, 1),), Relation("=", s, shorter + last)))
        # and the shorter sum is empty when n = 1 (else a counterexample may give it any value)
        facts.append(Implication((Relation("=", n, 1),), Relation("=", shorter, 0)))
        if nonnegative(terms):
            facts.append(Implication((Relation(">=", n, 0),), Relation(">=", s, 0)))
            facts.append(Implication((Relation(">=", n, 1),), Relation(">=", shorter, 0)))
            facts.append(Implication((Relation(">=", n, 1),), Relation(">=", last, 0)))
    return facts
