"""How the kernel's atoms read in messages (untrusted: it names things, it decides nothing)."""

from __future__ import annotations

import sympy as sp

from .kernel.solver import atom_name
from .kernel.terms import BOUND, VECTOR_BOUND, Inner, VectorSum, count

__all__ = ["display_name"]


def display_name(expr: sp.Basic) -> str:
    """How an atom reads in messages: atom_name, but a sum as `sum(i < n, terms)` (of scalars or
    of vectors, also inside an inner product)."""
    if isinstance(expr, Inner):
        u, v = expr.args
        return f"<{display_name(u)}, {display_name(v)}>"
    if isinstance(expr, VectorSum):
        atom, coefficient, n = expr.args
        index, terms = _index_name(expr, coefficient * sp.Symbol("#atom"), VECTOR_BOUND)
        shown = terms.subs(sp.Symbol("#atom"), sp.Symbol(
            atom_name(atom.xreplace({VECTOR_BOUND: sp.Symbol(index)}))))
        return f"sum({index} < {n}, {_named(shown)})"
    if not isinstance(expr, sp.Sum):
        return atom_name(expr)
    index, terms = _index_name(expr, expr.function, BOUND)
    return f"sum({index} < {count(expr)}, {_named(terms)})"


def _index_name(expr: sp.Basic, terms: sp.Expr, bound: sp.Symbol) -> tuple:
    """A name for a sum's index that its terms do not use, and the terms with it."""
    taken = {str(a) for a in expr.free_symbols} | {
        a.func.__name__ for a in expr.atoms(sp.core.function.AppliedUndef)}
    index = next(n for n in ("i", "j", "s", "t", "u", "p", "q", "_i") if n not in taken)
    return index, terms.subs(bound, sp.Symbol(index))


def _named(terms: sp.Expr) -> str:
    names = {a: sp.Symbol(display_name(a)) for a in terms.atoms(Inner)}
    names.update({a: sp.Symbol(atom_name(a)) for a in terms.atoms(sp.core.function.AppliedUndef)
                  if not isinstance(a, Inner)})
    return str(terms.xreplace(names)).replace("**", "^")

