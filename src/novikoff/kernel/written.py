"""Terms as written: the syntax the kernel reads, before SymPy simplifies anything.

The elaborator builds these from the parse tree.  The kernel interprets them (a SymPy scalar or a
``Vec``) and collects their *domain obligations* from the tree itself: every denominator non-zero,
every square-root argument non-negative, every sequence index a natural number.  Because the
obligations come from the term as written, SymPy's automatic simplification (``k/k`` is ``1``,
``sqrt(a)^2`` is ``a``, ``1/(1/0)`` is ``0``) can never decide what exists.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, fields
from fractions import Fraction

import sympy as sp

from ..errors import KernelError
from .formulas import Relation, VectorEq
from .terms import (BOUND, LIMITS_TEXT, MAX_DIGITS, MAX_MONOMIALS, Inner, Norm, Vec, VectorSum,
                    capped_monomials, decimal_digits, has_irrational_number, ip, make_sum, norm,
                    power_monomials, vector_sum)

__all__ = ["Num", "Sym", "Elem", "ZeroVector", "Neg", "Add", "Sub", "Mul", "Div", "Pow", "Sqrt",
           "Abs", "Max", "Min", "Floor", "Ceil", "InnerOf", "NormOf", "SumOf", "Meaning", "interpret", "formula_of",
           "symbol", "SCALAR_KINDS", "KINDS", "check_real", "integer_polynomial", "MAX_NODES",
           "WRITTEN_LIMIT_TEXT"]

SCALAR_KINDS = ("real", "label", "label01", "nat")
SEQUENCE_KINDS = ("vector_sequence", "real_sequence", "label_sequence", "label01_sequence")
KINDS = SCALAR_KINDS + ("vector",) + SEQUENCE_KINDS


def symbol(name: str, kind: str):
    """The SymPy object that stands for a declared name of this kind (one place decides it)."""
    if kind == "vector":
        return sp.Symbol(name)
    if kind == "vector_sequence":
        return sp.Function(name)
    # labels: y[t]^2 = 1, or y[t]^2 = y[t] in {0, 1} (logic.py)
    if kind in ("real_sequence", "label_sequence", "label01_sequence"):
        return sp.Function(name, real=True)
    if kind in SCALAR_KINDS:
        return sp.Symbol(name, real=True)
    raise KernelError(f"kind={kind!r} is not one of {KINDS}")


# ---------------------------------------------------------------------------- the syntax

# A written term is a tree, but `define`s share subterms: `define a2 = a1 + a1`, `define a3 =
# a2 + a2`, ... makes a term of 2^44 nodes from 45 lines.  So each term's hash and size (its
# nodes, definitions expanded) are computed once, from its parts', when it is made, and a term of
# more than MAX_NODES nodes is refused before anything walks it (the generated dataclass hash
# walked the whole tree, at every lookup of interpret's cache: that chain never finished).
MAX_NODES = 100_000
WRITTEN_LIMIT_TEXT = (f"written out, with its definitions expanded, it has more than "
                      f"{MAX_NODES:,} symbols and operations")


class _Written:
    """The base of the written terms: hash, equality and size in time independent of the tree."""

    def __post_init__(self):
        parts = tuple(getattr(self, f.name) for f in fields(self))
        nodes = 1 + sum(p.nodes for p in parts if isinstance(p, _Written))
        object.__setattr__(self, "_parts", parts)
        object.__setattr__(self, "_hash", hash((type(self).__name__, parts)))
        object.__setattr__(self, "nodes", min(nodes, MAX_NODES + 1))

    def __hash__(self):
        return self._hash

    def __eq__(self, other):
        if self is other:
            return True
        if type(other) is not type(self):
            return NotImplemented
        return self._hash == other._hash and self._parts == other._parts

    def __reduce__(self):  # the cached hash is this process's (str hashes are salted)
        return type(self), self._parts


def _written(cls):
    return dataclass(frozen=True, eq=False)(cls)


@_written
class Num(_Written):
    value: Fraction


@_written
class Sym(_Written):
    name: str
    kind: str  # real | label | nat | vector | bound (the index of the sum around it)


@_written
class Elem(_Written):
    name: str
    kind: str  # vector_sequence | real_sequence
    index: object


@_written
class ZeroVector(_Written):
    pass


@_written
class Neg(_Written):
    arg: object


@_written
class Add(_Written):
    left: object
    right: object


@_written
class Sub(_Written):
    left: object
    right: object


@_written
class Mul(_Written):
    left: object
    right: object


@_written
class Div(_Written):
    left: object
    right: object


@_written
class Pow(_Written):
    base: object
    exp: Fraction  # an integer with |exp| <= 16, or a half-integer


@_written
class Sqrt(_Written):
    arg: object


@_written
class Abs(_Written):
    arg: object


@_written
class Max(_Written):
    left: object
    right: object


@_written
class Min(_Written):
    left: object
    right: object


@_written
class Floor(_Written):
    arg: object


@_written
class Ceil(_Written):
    arg: object


@_written
class InnerOf(_Written):
    left: object
    right: object


@_written
class NormOf(_Written):
    arg: object


@_written
class SumOf(_Written):
    """sum(i < count, terms): terms mention the index as Sym(name, "bound")."""

    count: object
    terms: object


# ---------------------------------------------------------------------------- meaning

@dataclass(frozen=True)
class Meaning:
    """What a written term denotes, and the conditions under which it denotes anything."""

    kind: str  # 'scalar' or 'vector'
    value: object  # a SymPy expression or a Vec
    obligations: tuple  # Relations: denominators != 0, radicands >= 0, indices >= 0


_NOT_REAL = (sp.I, sp.zoo, sp.oo, -sp.oo, sp.nan)


def check_real(value: sp.Expr, what: str = "a term") -> sp.Expr:
    """Refuse a SymPy value that is not a finite real quantity (I, zoo, oo, nan)."""
    if any(value.has(c) for c in _NOT_REAL) or value.has(sp.AccumBounds):
        raise KernelError(f"{what} is not a finite real number: {value}")
    return value


def _scalar(m: Meaning, what: str) -> sp.Expr:
    if m.kind != "scalar":
        raise KernelError(f"{what} takes a scalar, not the vector {m.value}")
    return m.value


def _vector(m: Meaning, what: str) -> Vec:
    if m.kind != "vector":
        raise KernelError(f"{what} takes a vector, not the scalar {m.value}")
    return m.value


def _nonzero(den: sp.Expr, what: str) -> Relation:
    if den == 0:
        raise KernelError(f"division by zero: {what} divides by {den}")
    return Relation("!=", den, sp.Integer(0))


@functools.lru_cache(maxsize=1 << 14)
def written_size(term) -> tuple:
    """(monomials, digits): upper bounds on the number of monomials of the term expanded, and on
    the number of digits of the numbers it makes."""
    if isinstance(term, Num):
        return 1, decimal_digits(term.value.numerator) + decimal_digits(term.value.denominator)
    if isinstance(term, (Sym, ZeroVector)):
        return 1, 1
    if isinstance(term, Elem):
        return 1, written_size(term.index)[1]
    if isinstance(term, Pow):
        m, d = written_size(term.base)
        n = max(1, abs(term.exp.numerator))
        if isinstance(term.base, NormOf) and n % 2 == 0:  # ||v||^(2j) is <v, v>^j
            return power_monomials(m, n // 2), d * n // 2
        return power_monomials(m, n), d * n
    if isinstance(term, SumOf):
        (mc, dc), (mt, dt) = written_size(term.count), written_size(term.terms)
        return capped_monomials(mc + 16 * mt), dc + dt  # a numeric count up to 16 is written out
    parts = [written_size(getattr(term, f.name)) for f in fields(term)]
    if isinstance(term, (Add, Sub, Max, Min)):
        return capped_monomials(sum(m for m, _ in parts)), max(d for _, d in parts) + 1
    if isinstance(term, (Mul, Div, InnerOf)):
        return capped_monomials(parts[0][0] * parts[1][0]), parts[0][1] + parts[1][1]
    if isinstance(term, NormOf):
        return capped_monomials(parts[0][0] ** 2), 2 * parts[0][1]
    return parts[0]  # Neg, Sqrt, Abs, Floor, Ceil


@functools.lru_cache(maxsize=1 << 14)  # the elaborator asks again for subterms' meanings, and
def interpret(term) -> Meaning:       # building SymPy terms is slow: measured 15% of checking
    """The meaning of a written term, with the obligations collected before any simplification."""
    if not isinstance(term, _Written):
        raise KernelError(f"not a written term: {type(term).__name__}")
    if term.nodes > MAX_NODES:  # first: written_size walks the term's distinct parts
        raise KernelError(f"this term is too large to check: {WRITTEN_LIMIT_TEXT}")
    monomials, digits = written_size(term)
    if monomials > MAX_MONOMIALS or digits > MAX_DIGITS:
        raise KernelError(f"this term is too large to check: {LIMITS_TEXT}")
    try:
        return _interpret(term)
    except (ValueError, TypeError, ArithmeticError) as exc:  # SymPy gave up on the term
        raise KernelError(f"this term cannot be read exactly ({type(exc).__name__}: "
                          f"{str(exc)[:200]})") from None


def _interpret(term) -> Meaning:
    if isinstance(term, Num):
        return Meaning("scalar", sp.Rational(term.value.numerator, term.value.denominator), ())
    if isinstance(term, Sym):
        if term.kind == "vector":
            return Meaning("vector", Vec.atom(symbol(term.name, "vector")), ())
        if term.kind == "bound":
            return Meaning("scalar", BOUND, ())
        if term.kind not in SCALAR_KINDS:
            raise KernelError(f"{term.name} is a {term.kind}: it needs an index")
        return Meaning("scalar", symbol(term.name, term.kind), ())
    if isinstance(term, Elem):
        return _element(term)
    if isinstance(term, ZeroVector):
        return Meaning("vector", Vec.zero(), ())
    if isinstance(term, Neg):
        m = interpret(term.arg)
        return Meaning(m.kind, -m.value, m.obligations)
    if isinstance(term, (Add, Sub)):
        a, b = interpret(term.left), interpret(term.right)
        if a.kind != b.kind:
            raise KernelError("cannot add a vector and a scalar")
        value = a.value + b.value if isinstance(term, Add) else a.value - b.value
        return Meaning(a.kind, value, a.obligations + b.obligations)
    if isinstance(term, Mul):
        a, b = interpret(term.left), interpret(term.right)
        obligations = a.obligations + b.obligations
        if a.kind == b.kind == "scalar":
            return Meaning("scalar", check_real(a.value * b.value), obligations)
        if a.kind == b.kind == "vector":
            raise KernelError("cannot multiply two vectors")
        s, v = (a, b) if a.kind == "scalar" else (b, a)
        return Meaning("vector", v.value.scale(s.value), obligations)
    if isinstance(term, Div):
        a, b = interpret(term.left), interpret(term.right)
        den = _scalar(b, "a division")
        obligations = a.obligations + b.obligations + (_nonzero(den, "a division"),)
        if a.kind == "vector":
            return Meaning("vector", a.value.scale(check_real(1 / den)), obligations)
        return Meaning("scalar", check_real(a.value / den), obligations)
    if isinstance(term, Pow):
        return _power(term)
    if isinstance(term, Sqrt):
        a = interpret(term.arg)
        arg = _rational_numbers(_scalar(a, "sqrt"), "sqrt")
        return Meaning("scalar", check_real(sp.sqrt(arg), f"sqrt({arg})"),
                       a.obligations + (Relation(">=", arg, sp.Integer(0)),))
    if isinstance(term, Abs):
        a = interpret(term.arg)
        return Meaning("scalar", sp.Abs(_rational_numbers(_scalar(a, "abs"), "abs")),
                       a.obligations)
    if isinstance(term, (Floor, Ceil)):
        a = interpret(term.arg)
        fn = sp.floor if isinstance(term, Floor) else sp.ceiling
        return Meaning("scalar", fn(_rational_numbers(_scalar(a, fn.__name__), fn.__name__)),
                       a.obligations)
    if isinstance(term, (Max, Min)):
        a, b = interpret(term.left), interpret(term.right)
        fn = sp.Max if isinstance(term, Max) else sp.Min
        return Meaning("scalar", fn(_rational_numbers(_scalar(a, fn.__name__), fn.__name__),
                                    _rational_numbers(_scalar(b, fn.__name__), fn.__name__)),
                       a.obligations + b.obligations)
    if isinstance(term, InnerOf):
        a, b = interpret(term.left), interpret(term.right)
        return Meaning("scalar", ip(_vector(a, "<u, v>"), _vector(b, "<u, v>")),
                       a.obligations + b.obligations)
    if isinstance(term, NormOf):
        a = interpret(term.arg)
        return Meaning("scalar", norm(_vector(a, "||v||")), a.obligations)
    if isinstance(term, SumOf):
        return _sum(term)
    raise KernelError(f"not a written term: {term!r}")


def _rational_numbers(value: sp.Expr, what: str) -> sp.Expr:
    """Refuse an irrational number (sqrt(2), sqrt(10^18+1) - 10^9) inside abs, floor, ceil, max,
    min or a square root: SymPy decides the sign of such a number in floating point when it
    builds the term (floor, |a|, sqrt(a^2) = |a|), and can get it wrong."""
    if has_irrational_number(value):
        raise KernelError(f"{what} of a term with an irrational number ({value}) or a sum with a "
                          f"fixed number of terms is not supported (its sign would be decided "
                          f"in floating point)")
    return value


def _power(term: Pow) -> Meaning:
    a = interpret(term.base)
    base = _scalar(a, "a power")
    exp = term.exp
    if exp.denominator == 2:
        base = _rational_numbers(base, "a half power")
    if not isinstance(exp, Fraction) or exp.denominator not in (1, 2) or abs(exp) > 16:
        raise KernelError(f"exponent {exp} is not an integer up to 16 or a half")
    obligations = a.obligations
    if exp < 0:
        obligations += (_nonzero(base, "a negative power"),)
    if exp.denominator == 2:
        obligations += (Relation(">=", base, sp.Integer(0)),)
    value = base ** sp.Rational(exp.numerator, exp.denominator)
    return Meaning("scalar", check_real(value, f"({base})^({exp})"), obligations)


def _element(term: Elem) -> Meaning:
    if term.kind not in SEQUENCE_KINDS:
        raise KernelError(f"{term.name} is a {term.kind}, not a sequence")
    m = interpret(term.index)
    index = _scalar(m, "an index")
    if not _natural_polynomial(term.index) or not integer_polynomial(index):
        raise KernelError(f"the index {index} of {term.name} is not an integer polynomial in "
                          f"nat variables")
    obligations = m.obligations + (Relation(">=", index, sp.Integer(0)),)
    element = symbol(term.name, term.kind)(index)
    if term.kind == "vector_sequence":
        return Meaning("vector", Vec.atom(element), obligations)
    return Meaning("scalar", element, obligations)


def _sum(term: SumOf) -> Meaning:
    """A finite sum of scalars or of vectors: its count is a whole number >= 0, and its terms
    mean something for every index i >= 0 (so the facts of sums.py hold wherever the sum means
    something)."""
    c = interpret(term.count)
    n = _scalar(c, "the number of terms of a sum")
    if BOUND in n.free_symbols or not _natural_polynomial(term.count) \
            or not integer_polynomial(n):
        raise KernelError(f"the number of terms {n} of a sum is not an integer polynomial in "
                          f"nat variables")
    t = interpret(term.terms)
    parts = list(_written_parts(term.terms))
    if any(isinstance(p, SumOf) for p in parts):
        raise KernelError("a sum inside the terms of a sum is not supported")
    nats = {BOUND} | {symbol(p.name, "nat") for p in parts
                      if isinstance(p, Sym) and p.kind == "nat"}
    finite = _finite_kinds(parts)
    outer = tuple(o for o in t.obligations if BOUND not in o.lhs.free_symbols)  # a[i]/2
    for o in t.obligations:
        if o not in outer and not _holds_for_every_index(o, nats, finite):
            shown = _readable(o.lhs.subs(BOUND, sp.Symbol("i")))
            raise KernelError(f"the terms of a sum must mean something for every index i >= 0, "
                              f"but {shown} {o.rel} 0 is not seen to hold for every i by its "
                              f"form (sum only what is defined for all i, e.g. a[i], 1/(i+1) "
                              f"or sqrt((a[i] - b[i])^2 + 1))")
    obligations = c.obligations + outer + (Relation(">=", n, sp.Integer(0)),)
    if t.kind == "vector":
        return Meaning("vector", vector_sum(t.value, n), obligations)
    return Meaning("scalar", check_real(make_sum(t.value, n)), obligations)


def _readable(e: sp.Expr) -> str:
    """e in the notation of .proof files, for a message (SymPy's own would read Norm(((x(i),
    1),)) and Abs(a(i)))."""
    def name(a) -> str:
        if isinstance(a, Inner):
            return f"<{name(a.args[0])}, {name(a.args[1])}>"
        return f"{a.func.__name__}[{a.args[0]}]"

    def vector(v: Vec) -> str:
        text = " + ".join(name(a) if c == 1 else f"-{name(a)}" if c == -1 else
                          f"{_readable(c)}*{name(a)}" if c.is_Atom else f"({_readable(c)})*{name(a)}"
                          for a, c in v.terms) or "0"
        return text.replace("+ -", "- ")

    names = {a: sp.Symbol(name(a)) for a in e.atoms(Inner, sp.core.function.AppliedUndef)}
    names.update({n: sp.Symbol(f"||{vector(n.vector())}||") for n in e.atoms(Norm)})
    text = str(e.xreplace(names)).replace("**", "^")
    return re.sub(r"\b(Abs|Max|Min)\(", lambda m: m.group(1).lower() + "(", text)


def _written_parts(term):
    """term and every written term inside it."""
    yield term
    for f in fields(term):
        value = getattr(term, f.name)
        if not isinstance(value, (str, Fraction)):
            yield from _written_parts(value)


# The values a label can take, by kind (the setting asserts them: y^2 = 1, y(y - 1) = 0).
_LABEL_VALUES = {"label": (-1, 1), "label01": (0, 1), "label_sequence": (-1, 1),
                 "label01_sequence": (0, 1)}
MAX_LABEL_CASES = 64  # labels in one obligation tried at each of their values: at most 6


def _finite_kinds(parts) -> dict:
    """The labels written in a term: SymPy symbol or sequence -> the values it can take."""
    finite = {}
    for p in parts:
        if isinstance(p, (Sym, Elem)) and p.kind in _LABEL_VALUES:
            finite[symbol(p.name, p.kind)] = _LABEL_VALUES[p.kind]
    return finite


def _holds_for_every_index(obligation: Relation, nats: set, finite: dict) -> bool:
    """Whether a sum's term's condition of meaning holds at every index i >= 0, for every value
    of the nats, labels and reals: `p >= 0`, or `p != 0` with p >= c for a constant c > 0.

    Each label is tried at each of its values (finite); then p must be a polynomial with
    non-negative coefficients in atoms of known lower bound, shifted to it (nats, abs, norms,
    square roots, <v, v> are >= 0; max(i, 1) >= 1), and in other reals (a sequence element
    a[i] among them) at even powers only: every monomial is then >= 0 at every index (an index
    i+1 or i+k, a division by i+1, by 1 + a[i]^2, by 1 + ||x[i]||, by 2 + y[i])."""
    lhs = obligation.lhs
    if obligation.rhs != 0 or BOUND not in lhs.free_symbols:
        return False
    labels = sorted((e for e in lhs.atoms(sp.Symbol, sp.core.function.AppliedUndef)
                     if e in finite or getattr(e, "func", None) in finite), key=str)
    cases = [{}]
    for label in labels:
        values = finite.get(label) or finite[label.func]
        cases = [{**case, label: sp.Integer(v)} for case in cases for v in values]
        if len(cases) > MAX_LABEL_CASES:
            cases = [{}]  # too many: the labels are read as reals
            break
    for case in cases:
        at = lhs.xreplace(case)
        if not (obligation.rel == ">=" and _square_form(at)
                or _bounded_below(obligation.rel, at, nats)):
            return False
    return True


def _square_form(e: sp.Expr) -> bool:
    """Whether e >= 0 by its form alone, for every real value of what it holds: a number >= 0,
    an even power, an absolute value, and sums and products of those ((a[i] - b[i])^2, (i -
    2)^2 + 1; expanded, their coefficients are no longer all >= 0)."""
    if e.is_Rational:
        return e >= 0
    if e.is_Pow:
        return e.exp.is_Integer and e.exp > 0 and e.exp % 2 == 0
    if isinstance(e, sp.Abs):
        return True
    return (e.is_Add or e.is_Mul) and all(_square_form(a) for a in e.args)


def _bounded_below(rel: str, lhs: sp.Expr, nats: set) -> bool:
    atoms = _polynomial_atoms(lhs)
    shifted, naturals, reals = {}, [], []
    for atom in sorted(atoms, key=str):
        bound = _lower_bound(atom, nats)
        if bound is None:
            reals.append(atom)
        else:  # atom = bound + a natural >= 0
            naturals.append(sp.Dummy(nonnegative=True))
            shifted[atom] = bound + naturals[-1]
    if not atoms:  # a number (the labels' values put in)
        return lhs.is_Rational and (lhs >= 0 if rel == ">=" else rel == "!=" and lhs > 0)
    try:
        poly = sp.Poly(lhs.xreplace(shifted), *naturals, *reals)
    except sp.PolynomialError:
        return False
    if not all(c.is_Rational and c >= 0 for c in poly.coeffs()):
        return False
    if any(e % 2 for monomial in poly.monoms() for e in monomial[len(naturals):]):
        return False
    return rel == ">=" or (rel == "!=" and poly.coeff_monomial(1) > 0)


def _polynomial_atoms(e: sp.Expr) -> set:
    """The largest subterms of e that are not sums, products or natural powers of others."""
    if e.is_Rational:
        return set()
    if e.is_Add or e.is_Mul:
        return set().union(*(_polynomial_atoms(a) for a in e.args))
    if e.is_Pow and e.exp.is_Integer and e.exp > 0:
        return _polynomial_atoms(e.base)
    return {e}


def _lower_bound(e: sp.Expr, nats: set):
    """A rational that every value of the atom e is >= (by what e is), or None."""
    if e.is_Rational:
        return e
    if e in nats or isinstance(e, (sp.Abs, Norm)) or (e.is_Pow and e.exp == sp.S.Half) \
            or (isinstance(e, Inner) and e.args[0] == e.args[1]):
        return sp.Integer(0)
    if isinstance(e, (sp.Max, sp.Min)):  # max >= each argument; min >= the least bound
        bounds = [_lower_bound(a, nats) for a in e.args]
        known = [b for b in bounds if b is not None]
        if isinstance(e, sp.Max):
            return max(known) if known else None
        return min(known) if len(known) == len(bounds) else None
    return None


def _natural_polynomial(term) -> bool:
    """Whether a written index uses only nat variables, integers, +, -, * and natural powers."""
    if isinstance(term, Num):
        return term.value.denominator == 1
    if isinstance(term, Sym):
        return term.kind in ("nat", "bound")
    if isinstance(term, Neg):
        return _natural_polynomial(term.arg)
    if isinstance(term, (Add, Sub, Mul)):
        return _natural_polynomial(term.left) and _natural_polynomial(term.right)
    if isinstance(term, Pow):
        return term.exp.denominator == 1 and term.exp >= 0 and _natural_polynomial(term.base)
    return False


def integer_polynomial(index: sp.Expr) -> bool:
    """Whether a SymPy term is a polynomial with integer coefficients (an index)."""
    if not index.free_symbols:
        return bool(index.is_Integer)
    try:
        poly = sp.Poly(index, *sorted(index.free_symbols, key=str))
    except sp.PolynomialError:
        return False
    return all(c.is_Integer for c in poly.coeffs())


def _inverse(c: sp.Expr, labels: frozenset):
    """1/c when dividing by c needs no condition the formula does not hold already: c is a
    non-zero number q, times labels in {-1, 1} (1/y = y), over a denominator d (from a written
    division, whose d != 0 is in the formula's domain): then 1/c is d*labels/q."""
    num, den = sp.fraction(c)
    q, rest = num.as_coeff_Mul()
    if not q.is_Rational or q == 0:
        return None
    if rest != 1 and not all(factor in labels for factor in sp.Mul.make_args(rest)):
        return None
    return den * rest / q


@functools.lru_cache(maxsize=1 << 14)  # defines share subterms: walked once per distinct part
def _plus_minus_labels(term) -> frozenset:
    """The SymPy atoms of the labels in {-1, 1} that a written term mentions (`y`, `y[t]`)."""
    if isinstance(term, Sym):
        return frozenset({symbol(term.name, "label")}) if term.kind == "label" else frozenset()
    if isinstance(term, Elem):
        inner = _plus_minus_labels(term.index)
        if term.kind != "label_sequence":
            return inner
        return inner | {symbol(term.name, term.kind)(interpret(term.index).value)}
    parts = [getattr(term, f.name) for f in fields(term)]
    return frozenset().union(*(_plus_minus_labels(p) for p in parts if isinstance(p, _Written)))


def formula_of(op: str, lhs, rhs):
    """The formula `lhs op rhs` of two written terms: a Relation, or a VectorEq for vectors.

    The formula carries the obligations of both sides as its domain.
    """
    a, b = interpret(lhs), interpret(rhs)
    domain = tuple(dict.fromkeys(a.obligations + b.obligations))
    if a.kind == b.kind == "scalar":
        return Relation(op, a.value, b.value, domain)
    if a.kind != b.kind:
        raise KernelError("a formula relates two scalars or two vectors")
    if op != "=":
        raise KernelError(f"vectors can only be equated, not compared with {op!r}")
    # A sum of vectors defines a vector only when the other side is no vector alone: w[T] =
    # sum(t < T, y[t]*x[t]) defines w[T], whichever side it is written on.
    pairs = sorted(((a.value, b.value), (b.value, a.value)),
                   key=lambda pair: any(isinstance(x, VectorSum) for x in pair[0].atoms()))
    for atom_side, other in pairs:
        if len(atom_side.terms) == 1 and atom_side.terms[0][1] == 1:
            atom = atom_side.terms[0][0]
            if atom not in other.atoms():
                return VectorEq(atom, other, domain)
    # Neither side alone (w[k+1] - w[k] = y*x, 2*w[k+1] = w[k] + x): solved for a vector whose
    # coefficient a division undoes without a new condition: a number, or a number times labels
    # in {-1, 1} (1/y = y) over a term the formula already divides by (w[k+1]/eta: its domain
    # holds eta != 0).  A symbolic coefficient (c*v = x) is never divided by: c may be zero.
    # A number's coefficient first (y*x = w[k+1] - w[k] defines w[k+1]), the left side's first,
    # then the sequence element of highest index.
    difference = a.value - b.value
    atoms = set(a.value.atoms()) | set(b.value.atoms())
    if not difference.terms and atoms:  # an identity (eta*w + eta*x = eta*(w + x)): atom = atom
        atom = min(atoms, key=sp.default_sort_key)
        return VectorEq(atom, Vec.atom(atom), domain)
    labels = _plus_minus_labels(lhs) | _plus_minus_labels(rhs)
    candidates = []
    for atom, c in difference.terms:
        inverse = _inverse(c, labels)
        if inverse is not None and not isinstance(atom, VectorSum):
            candidates.append(((c.is_Rational, atom in a.value.atoms(),
                                isinstance(atom, sp.core.function.AppliedUndef),
                                sp.default_sort_key(atom)), atom, c, inverse))
    if candidates:
        _, atom, c, inverse = max(candidates, key=lambda candidate: candidate[0])
        rest = difference - Vec.atom(atom).scale(c)
        _, den = sp.fraction(c)
        if den != 1:  # what the coefficient's own division asked (the domain already holds it)
            domain = tuple(dict.fromkeys(domain + (_nonzero(den, "a division"),)))
        return VectorEq(atom, rest.scale(-inverse), domain)  # c*atom + rest = 0
    raise KernelError("a vector equation defines a vector: one side is a vector alone")
