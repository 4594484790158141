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

__all__ = ["BOUND", "VECTOR_BOUND", "Inner", "Norm", "Vec", "VectorSum", "ip", "make_sum", "vector_sum",
           "normal_sums", "count", "index_of", "norm", "expand_norms", "is_vector_atom", "label_reduce", "normal_form",
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
        # <u, sum(i < n, c(i)*a(i))> = sum(i < n, c(i)*<u, a(i)>), for a u that is not itself
        # read at a sum's index (inside the terms of a scalar sum, it is once they are written
        # out at an index).
        for s, other in ((u, v), (v, u)):
            if isinstance(s, VectorSum) and s.count().is_Integer:  # written out, if it can be
                written = s.normal()
                if written != Vec.atom(s):
                    return ip(written, Vec.atom(other))
            if isinstance(s, VectorSum) and not isinstance(other, VectorSum) \
                    and not other.has(BOUND, VECTOR_BOUND):
                atom, coefficient, n = s.args
                return make_sum((coefficient * cls(other, atom)).xreplace({VECTOR_BOUND: BOUND}),
                                n)
        if _sort_key(u) > _sort_key(v):
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


@functools.lru_cache(maxsize=1 << 14)  # the same vector atoms are ordered in every Vec built
def _sort_key(atom: sp.Basic) -> tuple:
    return sp.default_sort_key(atom)


def is_vector_atom(expr: sp.Basic) -> bool:
    """Tell whether expr has the shape of a vector atom (a bare symbol, a sequence element or a
    sum of vectors)."""
    return isinstance(expr, (sp.Symbol, sp.core.function.AppliedUndef, VectorSum))


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
            if not (isinstance(c, sp.Basic) and c.is_Atom):  # (a number or a symbol is)
                c = sp.expand(c)
            if c != 0:
                items.append((a, c))
        items.sort(key=lambda item: _sort_key(item[0]))
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
        """Substitute a scalar (e.g. an index k := k+1) in atoms and coefficients (a sum of
        vectors whose number of terms becomes a number is written out)."""
        coeffs: dict = {}
        sums = Vec.zero()
        for a, c in self.terms:
            a2, c2 = a.subs(old, new), exact_subs(c, old, new)
            if isinstance(a2, VectorSum) and a2.count().is_Integer:
                sums = sums + a2.normal().scale(c2)
            else:
                coeffs[a2] = coeffs.get(a2, 0) + c2
        return Vec._from_dict(coeffs) + sums

    def xreplace(self, mapping: dict) -> "Vec":
        """Replace atoms and scalars structurally (a renaming of sequence elements)."""
        coeffs: dict = {}
        for a, c in self.terms:
            a2 = a.xreplace(mapping)
            coeffs[a2] = coeffs.get(a2, 0) + c.xreplace(mapping)
        return Vec._from_dict(coeffs)

    def __str__(self) -> str:
        if not self.terms:
            return "0"
        return " + ".join(f"({c})*{a}" if c != 1 else str(a) for a, c in self.terms)


_SIGN_DECIDING = (sp.floor, sp.ceiling, sp.Abs, sp.Max, sp.Min)
# Terms in which SymPy's subs respects a bound symbol (a sum's index), where replacing the
# symbol as it is would differ.
_BINDING = (sp.concrete.expr_with_limits.ExprWithLimits, sp.Lambda, sp.Subs, sp.Derivative)


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
    binds = False
    for e in sp.preorder_traversal(expr):
        if isinstance(e, _SIGN_DECIDING):
            arguments = e.args
        elif e.is_Pow and not e.exp.is_Integer:
            arguments = (e.base,)
        else:
            binds = binds or isinstance(e, _BINDING)
            continue
        for a in arguments:
            if has_irrational_number(a.subs(old, new)):
                raise ValueError(f"{e} at {old} = {new} would be evaluated in floating point")
    # A symbol where nothing binds one is replaced as it is, which is what subs does, at a
    # tenth of its cost (measured: subs was 8% of checking the library); a sum binds its index.
    if isinstance(old, sp.Symbol) and not binds:  # (strict: new is a number or a term, no text)
        out = expr.xreplace({old: sp.sympify(new, strict=True)})
    else:
        out = expr.subs(old, new)
    if too_large(out):  # before anything expands it (Vec keeps its coefficients expanded)
        raise ValueError(f"at {old} = {new} the term is too large to check: {LIMITS_TEXT}")
    return out


@functools.lru_cache(maxsize=1 << 14)  # the same definitions are substituted at every step
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



# ---------------------------------------------------------------------------- sums

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
        elif _power_of_index(varying):  # sum(i < n, i^p): Faulhaber's polynomial in n
            out += factor * sp.expand(sp.summation(varying, (BOUND, 0, n - 1)))
        else:
            out += factor * sp.Sum(varying, (BOUND, 0, n - 1))
    return out


def _power_of_index(varying: sp.Expr) -> bool:
    """Whether varying is i^p for a whole p >= 1 (after expand, what a polynomial in i alone
    leaves of each term): its sum over i < n is a polynomial in n with rational coefficients,
    exact, and 0 at n = 0 as the empty sum."""
    return varying == BOUND or (varying.is_Pow and varying.base == BOUND
                                and varying.exp.is_Integer and varying.exp >= 1)


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


# The bound variable of a sum of vectors: its own, so that writing out a scalar sum's terms at an
# index (BOUND := n - 1) never reaches inside a sum of vectors among them.
VECTOR_BOUND = sp.Dummy("#v", integer=True, nonnegative=True)


class VectorSum(sp.Function):
    """sum(i < n, c(i)*a(i)) for a vector atom a(i) read at the index (x[i], w[i+1]) and a
    scalar c(i): a vector atom of its own, VectorSum(a, c, n) with VECTOR_BOUND for i.  Made by
    vector_sum, which writes out sums of a few terms, takes the factors that do not depend on the
    index out and splits sums of terms, so that equal sums are one atom.  Its inner product with
    a vector that is not read at an index is a scalar sum (Inner.eval); two sums of vectors have
    an inner product of their own (an atom, like <u, v>)."""

    nargs = 3

    @classmethod
    def eval(cls, atom, coefficient, n):
        # Its terms are read at VECTOR_BOUND by substitution (term_at, normal): a sum or a sum
        # of vectors inside them would have its own index substituted too.
        if atom.has(sp.Sum, VectorSum) or coefficient.has(sp.Sum, VectorSum):
            raise ValueError("a sum inside the terms of a sum of vectors")
        return None

    @property
    def free_symbols(self):
        return super().free_symbols - {VECTOR_BOUND}

    def count(self) -> sp.Expr:
        return self.args[2]

    def normal(self) -> "Vec":
        """This sum in vector_sum's normal form (written out, once its number of terms is a
        small number)."""
        atom, coefficient, n = self.args
        return vector_sum(Vec.atom(atom.xreplace({VECTOR_BOUND: BOUND})).scale(
            coefficient.xreplace({VECTOR_BOUND: BOUND})), n)

    def term_at(self, index: sp.Expr) -> "Vec":
        """c(index)*a(index) (ValueError where SymPy would evaluate it in floating point)."""
        atom, coefficient, _ = self.args
        return Vec.atom(atom.xreplace({VECTOR_BOUND: index})).scale(
            exact_subs(coefficient, VECTOR_BOUND, index))


def vector_sum(terms: Vec, n: sp.Expr) -> Vec:
    """sum(i < n, terms) for a vector whose atoms and coefficients mention BOUND for i, in
    normal form: written out up to _UNROLL terms; an atom that does not depend on i taken out
    with the scalar sum of its coefficients; otherwise one VectorSum per term of a coefficient,
    its constant factor outside."""
    out = Vec.zero()
    for atom, coefficient in terms.terms:
        if BOUND not in atom.free_symbols:
            out = out + Vec.atom(atom).scale(make_sum(coefficient, n))
            continue
        for part in sp.Add.make_args(sp.expand(coefficient)):
            factor, varying = part.as_independent(BOUND, as_Add=False)
            one = VectorSum(atom.xreplace({BOUND: VECTOR_BOUND}),
                            varying.xreplace({BOUND: VECTOR_BOUND}), n)
            if n.is_Integer and 0 <= n <= _UNROLL:
                try:
                    out = out + sum((one.term_at(sp.Integer(i)) for i in range(int(n))),
                                    Vec.zero()).scale(factor)
                    continue
                except ValueError:  # kept as a sum rather than written out in floating point
                    pass
            out = out + Vec.atom(one).scale(factor)
    return out
