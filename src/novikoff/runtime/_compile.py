"""Compile kernel formulas into runtime checks (untrusted: it only ever *evaluates* statements).

A statement is walked once into an IR of tuples (``_Walker.expr``); nothing is ever parsed or
evaluated as text.  Statements arrive in the run vocabulary of novikoff.quantities (a setting's
own names are translated there first); the leaves are *slots*, the run quantities at the point of
evaluation:

=====================  ===================================================================
slot                   meaning at update k (w[k] -> w[k+1] with example x, y)
=====================  ===================================================================
``k``, ``M``           number of updates before this one
``gamma``, ``R``       margin of (w_star, data), radius max ||x_i|| (given or certified)
``y``                  label of the example
``d``                  its hinge loss max(0, gamma - y<w_star, x>)
``TD[k]``, ``TD[k+1]`` hinge sum max(0, gamma - y<w_star, x>) over presentations before/after
``eta``                the learning rate: an update adds eta*y*x (1 for the classic rule)
``<a, b>``             inner product of a, b in {w_star, w0, x, u, w[k], w[k+1]}; ``w0`` is
                       the start, w[0] (zero for a run from zero); of it only ``<w0, w0>`` and
                       ``<w_star, w0>`` are run quantities (constants of the run)
``m[k]``               batch runs: how many examples batch step k corrects
``C[k]``, ``C[k+1]``   batch runs: sum(i < k, m[i]) before/after step k (C[0] = 0)
``Q[k]``, ``Q[k+1]``   batch runs: sum(i < k, m[i]^2) before/after step k (Q[0] = 0)
``n``                  the number of examples
``votes[k]``, ...      voted runs: the vote's size after k updates (``votes``), the count of
                       w[k] (``vote_counts[k]``, at update k only), the counts of w[0..k-1]
                       added up (``vote_counts_total``) and the visits made before w[k] came
                       into use (``visits_before``; both 0 at index 0)
``t``, ``kt[t]``, ...   averaged runs, whose points are visits: t the visits so far, the inner
                       products of w_star, wv[t], s[0] (= 0), s[t], s[t+1], a[t+1], kt[t] (the
                       updates before visit t), KT[t], RT[t] and their [t+1] (0 at index 0)
=====================  ===================================================================

In a batch run an update is a batch step and ``u`` its sum of y_t*x_t over the misclassified
examples; ``x``, ``y``, ``d``, ``TD`` belong to runs with one example per update, ``u``, ``m``,
``C``, ``Q``, ``n`` to batch runs (``BATCH_NAMES``, ``SINGLE_EXAMPLE_NAMES``: the monitor lists
a lemma that needs the other kind of run as not monitored).

The IR is evaluated two ways.  In floating point by ``_program`` (many checks at many points at
once, mid-radius arithmetic: every slot is ``(value, error bound)`` and each operation adds its
own rounding, so a relation is decided three ways: certainly true, certainly false (a violation),
or undetermined within the rounding tolerance, never reported as a violation).  In exact rational
arithmetic by ``exact_interval`` below (square roots as shrinking rational intervals, ties by
SymPy on the substituted numbers), for exact runs and replays.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np
import sympy as sp

from ..kernel.formulas import Disjunction, Implication, Relation, VectorEq
from ..kernel.terms import Inner, Norm, Vec, expand_norms
from ..quantities import KINDS, Unbindable
from ._program import SAFETY, Program, Verdict, float_constant

__all__ = ["Check", "Unbindable", "compile_formula", "KINDS", "VECTOR_ATOMS", "Verdict"]

VECTOR_ATOMS = ("w_star", "w0", "x", "u", "w[k]", "w[k+1]",
                "wv[t]", "s[0]", "s[t]", "s[t+1]", "a[t+1]")  # the last five: averaged runs
# Real sequences of the run, and which of them are 0 at index 0 (sums over no update).
SEQUENCES = ("TD", "m", "C", "Q", "votes", "vote_counts", "vote_counts_total", "visits_before")
ZERO_AT_START = ("TD", "C", "Q", "vote_counts_total", "visits_before")
# The sequences known only at the update of their index (m[k], the count of w[k] in the vote).
AT_UPDATE_ONLY = ("m", "vote_counts")
# The setting names only a batch run gives values, and those only a run with one example per
# update gives (the monitor tells a lemma that needs the other kind of run apart).
BATCH_NAMES = frozenset({"u", "m", "C", "Q", "n"})
SINGLE_EXAMPLE_NAMES = frozenset({"x", "y", "d", "TD"})
# The names only a voted run gives values (variant='voted': the vote it keeps).
VOTED_NAMES = frozenset({"votes", "vote_counts", "vote_counts_total", "visits_before"})
# The names only an averaged run gives values: its points are visits, indexed by t (t, t+1; s at
# 0), and kt is known at the visit being checked only.
AVERAGED_NAMES = frozenset({"t", "wv", "s", "a", "kt", "KT", "RT"})
VISIT_SEQUENCES = ("kt", "KT", "RT")
VISIT_VECTORS = ("wv", "s", "a")
# The inner products of the start vector that every engine supplies (start_slots in _bounds):
# constants of the run.  A product with the example or the weights would cost every engine a
# dot product per update for no lemma of the library.
START_SLOTS = frozenset({"<w0, w0>", "<w_star, w0>"})
STATE_SLOTS = frozenset({"k", "M", "TD[k]", "C[k]", "Q[k]", "<w_star, w[k]>", "<w[k], w[k]>",
                         "votes[k]", "vote_counts_total[k]", "visits_before[k]"})


def inner_slot(a: str, b: str) -> str:
    a, b = sorted((a, b), key=VECTOR_ATOMS.index)
    return f"<{a}, {b}>"


# --------------------------------------------------------------------------- exact intervals

def _isqrt_interval(q: Fraction, bits: int):
    """Rational lo <= sqrt(q) <= hi with hi - lo about 2**-bits (exact for perfect squares)."""
    if q <= 0:
        return Fraction(0), Fraction(0)
    n, d = q.numerator, q.denominator
    rn, rd = math.isqrt(n), math.isqrt(d)
    if rn * rn == n and rd * rd == d:
        r = Fraction(rn, rd)
        return r, r
    scale = 1 << (2 * bits)
    s = math.isqrt(n * scale // d)
    return Fraction(s, 1 << bits), Fraction(s + 1, 1 << bits)


def exact_interval(node, env: dict, bits: int):
    """Rational bounds (lo, hi) of an IR expression at one point, or (None, None) where it is
    undefined (a divisor that may be zero, the square root of a negative number).

    env: slot -> Fraction, or ('sqrt', q) for an irrational constant such as R; square roots
    are bracketed to about 2**-bits.
    """
    tag = node[0]
    if tag == "const":
        return node[1], node[1]
    if tag == "slot":
        v = env[node[1]]
        return _isqrt_interval(v[1], bits) if isinstance(v, tuple) else (v, v)
    if tag in ("add", "mul", "max", "min"):
        parts = [exact_interval(a, env, bits) for a in node[1]]
        if any(lo is None for lo, _ in parts):
            return None, None
        lo, hi = parts[0]
        for lo2, hi2 in parts[1:]:
            if tag == "add":
                lo, hi = lo + lo2, hi + hi2
            elif tag == "mul":
                if lo == hi and lo2 == hi2:
                    lo = hi = lo * lo2
                else:
                    c = (lo * lo2, lo * hi2, hi * lo2, hi * hi2)
                    lo, hi = min(c), max(c)
            elif tag == "max":
                lo, hi = max(lo, lo2), max(hi, hi2)
            else:
                lo, hi = min(lo, lo2), min(hi, hi2)
        return lo, hi
    lo, hi = exact_interval(node[1], env, bits)
    if lo is None:
        return None, None
    if tag == "recip":
        return (None, None) if lo <= 0 <= hi else (1 / hi, 1 / lo)
    if tag == "ipow":
        n = node[2]
        a, b = lo ** n, hi ** n
        if n % 2 or lo >= 0:
            return a, b
        return (b, a) if hi <= 0 else (Fraction(0), max(a, b))
    if tag == "sqrt":
        if not node[2] and hi < 0:  # a Gram form (node[2]) is >= 0; anything else may not be
            return None, None
        if lo == hi:
            return _isqrt_interval(lo, bits)
        return _isqrt_interval(max(lo, Fraction(0)), bits)[0], _isqrt_interval(hi, bits)[1]
    if tag == "abs":
        if lo < 0 < hi:
            return Fraction(0), max(-lo, hi)
        return min(abs(lo), abs(hi)), max(abs(lo), abs(hi))
    raise ValueError(f"unknown IR node {tag!r}")


# --------------------------------------------------------------------------- the walk

@dataclass
class _Walker:
    kinds: dict | None
    slots: set = field(default_factory=set)

    # -- names
    def _check_kind(self, name: str) -> None:
        if name not in KINDS:
            raise Unbindable(f"no run quantity is bound to {name!r}")
        if self.kinds is not None and name in self.kinds and self.kinds[name] not in KINDS[name]:
            raise Unbindable(f"{name} is declared {self.kinds[name]!r} but the run binds it "
                             f"as {' or '.join(KINDS[name])}")

    def _index(self, idx: sp.Expr, var: str = "k") -> str | None:
        """'k', 'k+1' or '0' (var 't', an averaged run's visits: 't', 't+1' or '0')."""
        bound = f"only 0, {var} and {var}+1 are bound"
        if idx.is_Integer:
            if idx == 0:
                return "0"
            raise Unbindable(f"index {idx}: {bound}")
        names = {s.name for s in idx.free_symbols}
        if names != {var}:
            raise Unbindable(f"index {idx}: {bound}")
        k = next(iter(idx.free_symbols))
        off = sp.expand(idx - k)
        if off == 0:
            return var
        if off == 1:
            return f"{var}+1"
        raise Unbindable(f"index {idx}: {bound}")

    def vector(self, a) -> str:
        """The vector atom's name in VECTOR_ATOMS (w[0] is the start, w0)."""
        if isinstance(a, sp.Symbol):
            self._check_kind(a.name)
            if a.name not in ("x", "w_star", "w0", "u"):
                raise Unbindable(f"{a.name} is not a vector of the run")
            return a.name
        if isinstance(a, sp.core.function.AppliedUndef):
            name = a.func.__name__
            self._check_kind(name)
            if name in VISIT_VECTORS:
                atom = f"{name}[{self._index(a.args[0], 't')}]"
                if atom not in VECTOR_ATOMS:
                    raise Unbindable(f"{atom}: of {name} the run keeps only "
                                     f"{', '.join(v for v in VECTOR_ATOMS if v.startswith(name + '['))}")
                return atom
            if name != "w":
                raise Unbindable(f"{name} is not a vector sequence of the run")
            i = self._index(a.args[0])
            return "w0" if i == "0" else f"w[{i}]"
        raise Unbindable(f"{a} is not a vector atom")

    def inner(self, u: str, v: str) -> str:
        key = inner_slot(u, v)
        if "w0" in (u, v) and key not in START_SLOTS:
            raise Unbindable(f"{key}: of the start w0 the run keeps only <w0, w0> and "
                             f"<w_star, w0>")
        return self.slot(key)

    def slot(self, key: str):
        self.slots.add(key)
        return key

    # -- expressions: an IR of tuples, ('const', Fraction), ('slot', key), ('add', [..]),
    #    ('mul', [..]), ('recip', a), ('ipow', a, n), ('sqrt', a, gram), ('abs', a),
    #    ('max', [..]), ('min', [..]).
    def expr(self, e: sp.Expr):
        if e.is_Rational:
            return ("const", Fraction(int(e.p), int(e.q)))
        if isinstance(e, sp.Float):
            return ("const", Fraction(float(e)))
        if isinstance(e, Inner):
            u, v = (self.vector(a) for a in e.args)
            return ("slot", self.inner(u, v))
        if isinstance(e, Norm):
            return ("sqrt", self.expr(e.gram()), True)
        if isinstance(e, sp.Symbol):
            self._check_kind(e.name)
            if e.name in ("x", "w_star", "w", "u") + SEQUENCES + VISIT_SEQUENCES + VISIT_VECTORS:
                raise Unbindable(f"{e.name} is used as a scalar")
            return ("slot", self.slot(e.name))
        if isinstance(e, sp.core.function.AppliedUndef):
            name = e.func.__name__
            self._check_kind(name)
            if name not in SEQUENCES + VISIT_SEQUENCES:
                raise Unbindable(f"{name}[...] is not a real sequence of the run")
            i = self._index(e.args[0], "t" if name in VISIT_SEQUENCES else "k")
            if name == "kt" and i != "t":  # known at the visit being checked only
                raise Unbindable(f"index {e.args[0]} of kt: only kt[t] is bound")
            if i == "0" and name in ("KT", "RT"):  # sums over no visit
                return ("const", Fraction(0))
            if i == "0" and name in ZERO_AT_START:
                return ("const", Fraction(0))
            if name in AT_UPDATE_ONLY and i != "k":  # known at the update being checked only
                raise Unbindable(f"index {e.args[0]} of {name}: only {name}[k] is bound")
            return ("slot", self.slot(f"{name}[{i}]"))
        if isinstance(e, sp.Add):
            return ("add", tuple(self.expr(a) for a in e.args))
        if isinstance(e, sp.Mul):
            return ("mul", tuple(self.expr(a) for a in e.args))
        if isinstance(e, sp.Pow):
            return self.power(e)
        if isinstance(e, sp.Abs):
            return ("abs", self.expr(e.args[0]))
        if isinstance(e, (sp.Max, sp.Min)):
            return ("max" if isinstance(e, sp.Max) else "min",
                    tuple(self.expr(a) for a in e.args))
        raise Unbindable(f"cannot evaluate {type(e).__name__} ({e})")

    def power(self, e: sp.Pow):
        base, ex = e.args
        if not ex.is_Rational:
            raise Unbindable(f"exponent {ex} is not a rational number")
        p, q = int(ex.p), int(ex.q)
        node = self.expr(base)
        if q == 2:
            node = ("sqrt", node, False)
        elif q != 1:
            raise Unbindable(f"exponent {ex}: only integers and halves are supported")
        if abs(p) != 1:
            node = ("ipow", node, abs(p))
        if p < 0:
            node = ("recip", node)
        return node

    # -- formulas: ('rel', rel, formula, ir lhs, ir rhs), ('imp', premises, conclusion),
    #    ('or', disjuncts)
    def formula(self, fm):
        if isinstance(fm, Relation):
            return ("rel", fm.rel, fm, self.expr(fm.lhs), self.expr(fm.rhs))
        if isinstance(fm, VectorEq):
            rel = Relation("=", start_as_w0(fm).as_quadratic(), sp.Integer(0))
            return self.formula(rel)
        if isinstance(fm, Implication):
            return ("imp", [self.formula(p) for p in fm.premises], self.formula(fm.conclusion))
        if isinstance(fm, Disjunction):
            return ("or", [self.formula(d) for d in fm.disjuncts])
        raise Unbindable(f"cannot monitor a {type(fm).__name__}")


def start_as_w0(fm: VectorEq) -> VectorEq:
    """The vector equation with w[0] written w0: both are the start, so that w[0] = w0 is
    ||w0 - w0||^2 = 0 identically (true on every run, not a difference of two rounded values)."""
    def sub(a):
        if isinstance(a, sp.core.function.AppliedUndef) and a.func.__name__ == "w" and \
                a.args[0] == 0:
            return sp.Symbol("w0")  # novikoff.kernel.written.symbol("w0", "vector")
        return a
    atom = sub(fm.atom)
    rhs = Vec.zero()
    for a, c in fm.rhs.terms:
        rhs = rhs + Vec.atom(sub(a)).scale(c)
    if atom == fm.atom and rhs == fm.rhs:
        return fm
    return VectorEq(atom, rhs, fm.domain)


# --------------------------------------------------------------------------- checks


_EXACT_BITS = (64, 256, 1024)


def _decide_exact(rel, left, right):
    (ll, lh), (rl, rh) = left, right
    if ll is None or rl is None:
        return None
    if rel in (">=", ">"):
        if (ll >= rh) if rel == ">=" else (ll > rh):
            return True
        if (lh < rl) if rel == ">=" else (lh <= rl):
            return False
    elif rel in ("<=", "<"):
        if (lh <= rl) if rel == "<=" else (lh < rl):
            return True
        if (ll > rh) if rel == "<=" else (ll >= rh):
            return False
    else:
        if ll == lh == rl == rh:
            return rel == "="
        if lh < rl or rh < ll:
            return rel == "!="
    return None


def _sympy_value(v):
    if isinstance(v, tuple):
        return sp.sqrt(sp.Rational(v[1].numerator, v[1].denominator))
    v = Fraction(v)
    return sp.Rational(v.numerator, v.denominator)


def _eval_exact(node, env, subs):
    """True, False or None (undetermined) for one point, in rational arithmetic."""
    tag = node[0]
    if tag == "rel":
        _, rel, fm, il, ir = node

        def lhs_rhs(bits):
            return exact_interval(il, env, bits), exact_interval(ir, env, bits)
        for bits in _EXACT_BITS:
            left, right = lhs_rhs(bits)
            r = _decide_exact(rel, left, right)
            if r is not None:
                return r, left[0], right[0], True
        # A tie between irrational values: let SymPy decide the substituted numbers.
        diff = sp.simplify(expand_norms(fm.lhs - fm.rhs).xreplace(subs()))
        if diff.is_number and diff.is_comparable:
            sign = 0 if diff == 0 else (1 if diff > 0 else -1)
            ok = {"=": sign == 0, "!=": sign != 0, "<": sign < 0, "<=": sign <= 0,
                  ">": sign > 0, ">=": sign >= 0}[rel]
            return ok, left[0], right[0], True
        return None, left[0], right[0], True
    if tag == "imp":
        prem = [_eval_exact(p, env, subs)[0] for p in node[1]]
        c = _eval_exact(node[2], env, subs)
        held = all(p is True for p in prem)
        if any(p is False for p in prem):
            return True, c[1], c[2], False
        if held:
            return c[0], c[1], c[2], True
        return (True if c[0] is True else None), c[1], c[2], False
    ds = [_eval_exact(d, env, subs) for d in node[1]]
    if any(d[0] is True for d in ds):
        return True, ds[0][1], ds[0][2], True
    if all(d[0] is False for d in ds):
        return False, ds[0][1], ds[0][2], True
    return None, ds[0][1], ds[0][2], True


@dataclass(frozen=True, eq=False)  # eq=False: a check is its own key (hashed by identity)
class Check:
    """A compiled formula: which slots it reads, where it is evaluated, its IR tree."""

    formula: object
    slots: frozenset
    where: str  # 'constant', 'example', 'state' or 'update'
    tree: tuple = field(repr=False)

    def evaluate(self, env: dict, shape) -> Verdict:
        """Decide the formula at every point of env (slot -> (values, error bounds))."""
        length = int(np.prod(shape))
        return Program((self,)).judge(env, length).verdict(self)

    def evaluate_exact(self, env: dict):
        """(verdict, lhs, rhs, premises held) at one point; env: slot -> Fraction/('sqrt', q)."""
        def subs():
            out = {}
            for atom in _atoms(self.formula):
                key = _atom_key(atom)
                if key is not None and key in env:
                    out[atom] = _sympy_value(env[key])
                elif key is None:
                    out[atom] = sp.Integer(0)
            return out
        return _eval_exact(self.tree, env, subs)


def _atoms(fm):
    if isinstance(fm, Relation):
        exprs = [fm.lhs, fm.rhs]
    elif isinstance(fm, VectorEq):
        exprs = [start_as_w0(fm).as_quadratic()]
    elif isinstance(fm, Implication):
        return set().union(*(_atoms(p) for p in fm.premises), _atoms(fm.conclusion))
    else:
        return set().union(*(_atoms(d) for d in fm.disjuncts))
    out = set()
    for e in exprs:
        e = expand_norms(e)
        out |= e.atoms(Inner)
        out |= {a for a in e.atoms(sp.Symbol)}
        out |= {a for a in e.atoms(sp.core.function.AppliedUndef)}
    return out


def _atom_key(atom):
    w = _Walker(None)
    try:
        if isinstance(atom, Inner):
            u, v = (w.vector(a) for a in atom.args)
            return inner_slot(u, v)
        if isinstance(atom, sp.Symbol):
            return atom.name
        if isinstance(atom, sp.core.function.AppliedUndef) and \
                atom.func.__name__ in SEQUENCES:
            name = atom.func.__name__
            i = w._index(atom.args[0])
            return None if i == "0" and name in ZERO_AT_START else f"{name}[{i}]"
    except Unbindable:
        return "?"
    return "?"


def _slot_atoms(slot: str) -> list:
    return slot[1:-1].split(", ") if slot.startswith("<") else []


def slot_names(slots) -> set:
    """The setting names behind slots: '<x, w[k]>' -> {'x', 'w'}, 'TD[k]' -> {'TD'}."""
    out = set()
    for s in slots:
        for part in (_slot_atoms(s) or [s]):
            out.add(part.split("[")[0])
    return out


def classify(slots) -> str:
    """Where a formula reading these slots is evaluated (see the module docstring)."""
    per_update = "y" in slots or "d" in slots or "m[k]" in slots or \
        "vote_counts[k]" in slots or any(a in ("x", "u") for s in slots for a in _slot_atoms(s))
    next_index = any("k+1" in s or "t+1" in s for s in slots)
    state = any(s in STATE_SLOTS for s in slots) or any("w[k]" in s or "[t]" in s or s == "t"
                                                        for s in slots)
    if next_index or (per_update and state):
        return "update"
    if per_update:
        return "example"
    if state:
        return "state"
    return "constant"


_CACHE: dict = {}


def compile_formula(formula, kinds: dict | None = None) -> Check:
    """Compile a kernel formula; raise Unbindable when a symbol has no run quantity.

    Compiled checks are immutable and cached (formulas are immutable and hashable), so every
    lemma of a setting shares the compiled assumptions, and a monitor is cheap to rebuild.
    """
    try:
        key = (formula, None if kinds is None else frozenset(kinds.items()))
        hit = _CACHE.get(key)
    except TypeError:  # an unhashable formula: compile it every time
        key, hit = None, None
    if hit is not None:
        if isinstance(hit, Unbindable):
            raise Unbindable(str(hit))
        return hit
    walker = _Walker(kinds)
    try:
        tree = walker.formula(formula)
    except Unbindable as err:
        if key is not None and len(_CACHE) < 4096:
            _CACHE[key] = err
        raise
    slots = frozenset(walker.slots)
    check = Check(formula, slots, classify(slots), tree)
    if key is not None and len(_CACHE) < 4096:
        _CACHE[key] = check
    return check
