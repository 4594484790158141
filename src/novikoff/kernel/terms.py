"""Terms of the logic: scalar expressions over SymPy, with vectors expanded bilinearly into atoms.

A *vector atom* is a declared vector (``Symbol('x')``) or an element of a vector sequence
(``Function('w')(k)``).  A vector expression is a ``Vec``: a finite linear combination of vector
atoms with scalar (SymPy) coefficients.  Inner products of vector expressions are expanded
bilinearly into ``Inner(u, v)`` atoms, which are symmetric; norms are ``Norm(q)`` where ``q`` is the
expanded quadratic form ``<v, v>`` of some vector, so ``Norm(q) = sqrt(q)`` with ``q >= 0`` always.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Iterable, Mapping

import sympy as sp

from ..errors import KernelError

__all__ = ["Inner", "Norm", "Vec", "ip", "norm", "expand_norms", "is_vector_atom", "label_reduce", "normal_form",
           "same_term", "exact_subs", "has_irrational_number", "MAX_MONOMIALS", "MAX_DIGITS",
           "capped_monomials", "power_monomials", "decimal_digits", "expansion_size",
           "too_large", "LIMITS_TEXT"]

# Bounds on what a term may make SymPy and Z3 build: expanding (a+b+c+d)^16^16 has millions of
# monomials and takes SymPy hours; numbers of more than 4,300 digits cannot even be written out for
# Z3.  Nothing in the theory comes near either bound.  written.py applies them to the terms as
# written, exact_subs to the terms a substitution makes (k := (j+m)^16 in k^16 is (j+m)^256), and
# normal_form to the numerator it is about to expand (a sum of reciprocals of quartics puts
# products of quartics over one denominator).
MAX_MONOMIALS = 10_000
MAX_DIGITS = 1_000


def capped_monomials(n: int) -> int:
    return min(n, 10 * MAX_MONOMIALS + 1)


def power_monomials(variables: int, degree: int) -> int:
    """The monomials of degree `degree` in `variables` variables, C(degree + variables - 1,
    variables - 1), capped (computed factor by factor: the degree may be a huge number)."""
    count = 1
    for i in range(1, variables if degree > 0 else 1):  # C(n + i, i) = C(n + i - 1, i - 1)(n + i)/i
        count = count * (degree + i) // i
        if count > 10 * MAX_MONOMIALS:
            break
    return capped_monomials(count)


def decimal_digits(n: int) -> int:
    """Decimal digits of |n| (at most one too many), from its bits: str() refuses numbers of more
    than 4,300 digits."""
    return abs(n).bit_length() * 30103 // 100000 + 1


@functools.lru_cache(maxsize=1 << 14)
def expansion_size(expr: sp.Basic) -> tuple:
    """(monomials, digits): upper bounds on the monomials of the SymPy term expanded, and on the
    digits of the numbers it makes (the SymPy counterpart of written.written_size)."""
    if expr.is_Rational:
        return 1, decimal_digits(expr.p) + decimal_digits(expr.q)
    if expr.is_Atom or not expr.args:
        return 1, 1
    if expr.is_Pow and expr.exp.is_Integer:
        m, d = expansion_size(expr.base)
        n = abs(int(expr.exp))
        return power_monomials(m, n), d * n
    parts = [expansion_size(a) for a in expr.args]
    if expr.is_Add:
        return capped_monomials(sum(m for m, _ in parts)), max(d for _, d in parts) + 1
    if expr.is_Mul:
        return capped_monomials(math.prod(m for m, _ in parts)), sum(d for _, d in parts)
    # a function (Inner, Norm, sqrt, floor, a sequence element...): its arguments are expanded
    return max(m for m, _ in parts), max(d for _, d in parts)


def too_large(expr: sp.Basic) -> bool:
    monomials, digits = expansion_size(expr)
    return monomials > MAX_MONOMIALS or digits > MAX_DIGITS


LIMITS_TEXT = (f"expanded, it could have more than {MAX_MONOMIALS:,} monomials or numbers of "
               f"more than {MAX_DIGITS:,} digits")


class Inner(sp.Function):
    """The inner product <u, v> of two vector atoms; symmetric, so arguments are kept sorted."""

    is_real = True
    nargs = 2

    @classmethod
    def eval(cls, u, v):
        if sp.default_sort_key(u) > sp.default_sort_key(v):
            return cls(v, u)
        return None


class Norm(sp.Function):
    """||v|| for a vector v, carried as its terms: Norm(Tuple((atom, coeff), ...)).

    The kernel computes the Gram form <v, v> from the vector itself, so a Norm always stands for
    sqrt of a non-negative quantity: nothing outside the kernel can make Norm mean sqrt(-1).
    """

    is_real = True
    is_nonnegative = True
    nargs = 1

    @classmethod
    def eval(cls, terms):
        if not isinstance(terms, sp.Tuple):
            raise TypeError(f"Norm takes a vector's terms, not {terms!r}")
        vec = Vec.from_tuple(terms)
        canonical = vec.as_tuple()
        if canonical != terms:
            return cls(canonical)
        q = ip(vec, vec)
        if q == 0:
            return sp.Integer(0)
        if q.is_number and q.is_nonnegative:
            return sp.sqrt(q)
        return None

    def vector(self) -> "Vec":
        return Vec.from_tuple(self.args[0])

    def gram(self) -> sp.Expr:
        """<v, v>, expanded into Inner atoms."""
        v = self.vector()
        return ip(v, v)

    def _eval_power(self, exponent):
        # ||v||^(2m) = <v, v>^m exactly: the reason norms are atoms of their own.
        if exponent.is_Integer and exponent % 2 == 0:
            return self.gram() ** (exponent // 2)
        return None


def is_vector_atom(expr: sp.Basic) -> bool:
    """Tell whether expr has the shape of a vector atom (a bare symbol or a sequence element)."""
    return isinstance(expr, sp.Symbol) or isinstance(expr, sp.core.function.AppliedUndef)


@dataclass(frozen=True)
class Vec:
    """A linear combination sum(c_i * a_i) of vector atoms a_i; immutable, canonically ordered."""

    terms: tuple  # tuple[(atom, coefficient)] sorted by atom, no zero coefficient

    @staticmethod
    def atom(a: sp.Basic) -> "Vec":
        if not is_vector_atom(a):
            raise TypeError(f"not a vector atom: {a!r}")
        return Vec(((a, sp.Integer(1)),))

    @staticmethod
    def zero() -> "Vec":
        return Vec(())

    @staticmethod
    def _from_dict(coeffs: Mapping) -> "Vec":
        items = []
        for a, c in coeffs.items():
            c = sp.expand(c)
            if c != 0:
                items.append((a, c))
        items.sort(key=lambda item: sp.default_sort_key(item[0]))
        return Vec(tuple(items))

    def __add__(self, other: "Vec") -> "Vec":
        coeffs = dict(self.terms)
        for a, c in other.terms:
            coeffs[a] = coeffs.get(a, 0) + c
        return Vec._from_dict(coeffs)

    def scale(self, c: sp.Expr) -> "Vec":
        return Vec._from_dict({a: c * k for a, k in self.terms})

    def __neg__(self) -> "Vec":
        return self.scale(sp.Integer(-1))

    def __sub__(self, other: "Vec") -> "Vec":
        return self + (-other)

    def atoms(self) -> tuple:
        return tuple(a for a, _ in self.terms)

    def as_tuple(self) -> sp.Tuple:
        return sp.Tuple(*(sp.Tuple(a, c) for a, c in self.terms))

    @staticmethod
    def from_tuple(terms: sp.Tuple) -> "Vec":
        coeffs: dict = {}
        for pair in terms:
            a, c = pair
            if not is_vector_atom(a):
                raise TypeError(f"not a vector atom: {a!r}")
            coeffs[a] = coeffs.get(a, 0) + c
        return Vec._from_dict(coeffs)

    def is_zero(self) -> bool:
        return not self.terms

    def subs(self, old, new) -> "Vec":
        """Substitute a scalar (e.g. an index k := k+1) in atoms and coefficients."""
        coeffs: dict = {}
        for a, c in self.terms:
            a2 = a.subs(old, new)
            coeffs[a2] = coeffs.get(a2, 0) + exact_subs(c, old, new)
        return Vec._from_dict(coeffs)

    def __str__(self) -> str:
        if not self.terms:
            return "0"
        return " + ".join(f"({c})*{a}" if c != 1 else str(a) for a, c in self.terms)


_SIGN_DECIDING = (sp.floor, sp.ceiling, sp.Abs, sp.Max, sp.Min)


def has_irrational_number(e: sp.Expr) -> bool:
    """Whether e holds a number that is not rational (sqrt(2), or a sum of numbers), as a whole or
    as a factor or term: SymPy decides such a number's sign in floating point (Abs(a*c) is
    c*Abs(a) for c > 0, Max(a, a + c) is a + c)."""
    if e.is_Rational:
        return False
    return any(p.base.is_Rational and not p.exp.is_Integer for p in e.atoms(sp.Pow)) \
        or any(s.is_number for s in e.atoms(sp.Sum))


def exact_subs(expr: sp.Expr, old, new) -> sp.Expr:
    """expr with old := new, refused (ValueError) where SymPy would then evaluate floor, ceil,
    abs, max, min or a square root of an irrational number: it does so in floating point, and
    can get floor(1/(sqrt(10^18+1) - 10^9)) wrong."""
    for e in sp.preorder_traversal(expr):
        if isinstance(e, _SIGN_DECIDING):
            arguments = e.args
        elif e.is_Pow and not e.exp.is_Integer:
            arguments = (e.base,)
        else:
            continue
        for a in arguments:
            if has_irrational_number(a.subs(old, new)):
                raise ValueError(f"{e} at {old} = {new} would be evaluated in floating point")
    out = expr.subs(old, new)
    if too_large(out):  # before anything expands it (Vec keeps its coefficients expanded)
        raise ValueError(f"at {old} = {new} the term is too large to check: {LIMITS_TEXT}")
    return out


def ip(u: Vec, v: Vec) -> sp.Expr:
    """Expand <u, v> bilinearly into Inner atoms."""
    total = sp.Integer(0)
    for a, c in u.terms:
        for b, d in v.terms:
            total += c * d * Inner(a, b)
    return sp.expand(total)


def norm(v: Vec) -> sp.Expr:
    """||v||."""
    return Norm(v.as_tuple())


def expand_norms(expr: sp.Expr) -> sp.Expr:
    """Replace every Norm by sqrt of its Gram form (for numeric evaluation)."""
    return expr.replace(lambda e: isinstance(e, Norm), lambda e: sp.sqrt(e.gram()))


def label_reduce(expr: sp.Expr, labels: Iterable[sp.Symbol]) -> sp.Expr:
    """Rewrite y**n to y**(n mod 2) for every label y (y in {-1, +1}, so y**2 = 1)."""
    labels = frozenset(labels)
    if not labels:
        return expr
    return expr.replace(
        lambda e: e.is_Pow and e.exp.is_Integer and (
            e.base in labels or getattr(e.base, "func", None) in labels),
        lambda e: e.base ** (e.exp % 2),
    )


def normal_form(expr: sp.Expr, labels: Iterable[sp.Symbol] = ()) -> sp.Expr:
    """An exact normal form for deciding polynomial and rational identities."""
    from .sums import normal_sums  # sums build on terms

    expr = normal_sums(label_reduce(sp.expand(expr), labels))
    num, den = sp.fraction(sp.together(expr))
    if too_large(num):
        raise KernelError(f"this term is too large to check: over one denominator, {LIMITS_TEXT}")
    num = label_reduce(sp.expand(num), labels)
    if num == 0:
        return sp.Integer(0)
    return sp.expand(label_reduce(sp.expand(expr), labels))


def same_term(a: sp.Expr, b: sp.Expr, labels: Iterable[sp.Symbol] = ()) -> bool:
    """Tell whether a and b are equal as terms (ring identities, y**2 = 1 for labels)."""
    return normal_form(a - b, labels) == 0

