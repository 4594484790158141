"""Settings, theorems and the rules that make them.  The only code in novikoff that creates either.

A Theorem is a sequent ``hyps |- concl`` made in a Setting: ``hyps`` is the set of formulas it
depends on (setting assumptions, declarations, an induction hypothesis, a case condition, a
`given`, or a labelled Supposition: a step that failed and was assumed so that checking could go
on).  It also records the kinds of the symbols it mentions (real, label, nat, vector, sequence,
and whether per update), so that it is never used where a symbol means something else.  A lemma is
verified when ``accepts`` says so: its theorem's conclusion is its statement, every hypothesis is
an assumption or declaration of its setting, and the setting itself is meaningful and consistent.

Semantics of a setting: nats range over the natural numbers; symbols declared *per update* denote
the example of update k (they change with the nats); every other symbol is a constant, a sequence a
function of a natural index.  Every assumption holds at every value of the nats.  Semantics of
terms are strict: ``k/k``, ``sqrt(a)`` and ``w[k-1]`` mean something only where ``k != 0``,
``a >= 0``, ``k >= 1``, and a relation holds only where it means something.  Invariant of every
rule: the hypotheses of a theorem imply that its conclusion means something.
"""

from __future__ import annotations

import functools
import itertools
import weakref
from dataclasses import dataclass

import sympy as sp

from ..errors import KernelError
from .formulas import (COMPOUND, Conjunction, Disjunction, Implication, Relation, VectorEq,
                       atoms_in, compose_relations, free_symbols, others_at_zero, rebuild, sides,
                       subformulas, visible_obligations)
from .certified import LEDGER, NO_CERTIFICATE, NO_MODEL, entails, identity
from .solver import Verdict
from .sums import sum_facts, sums_in, unrolled_updates, vector_sum_steps
from .terms import (BOUND, VECTOR_BOUND, Inner, Norm, Vec, VectorSum, count,
                    has_irrational_number, ip, label_reduce, make_sum, norm, normal_form,
                    same_term)
from .written import KINDS, integer_polynomial, symbol

__all__ = ["Setting", "Supposition", "Everywhere", "Theorem", "Decision", "make_setting", "assume", "decide",
           "trans", "induction", "instantiate", "cases", "discharge", "conclusion_matches",
           "accepts", "certifies",
           "givens_consistency", "specialize",
           "describe_obligation",
           "cauchy_schwarz", "triangle", "nat_cases", "norm_nonneg", "rewrite_vectors", "domain_obligations"]


def _rule(name: str):
    """Name a rule's refusals after it (KernelError.rule; the innermost rule that refused)."""
    def named(function):
        @functools.wraps(function)
        def rule(*args, **kwargs):
            try:
                return function(*args, **kwargs)
            except KernelError as exc:
                if exc.rule is None:
                    exc.rule = name
                raise
        return rule
    return named


_ISSUED: "weakref.WeakSet" = weakref.WeakSet()
_ACCEPTED: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()  # theorem -> statements
_SETTINGS: "weakref.WeakSet" = weakref.WeakSet()
_CONSTRAINTS = (">", ">=", "<", "<=", "!=")
_PER_UPDATE_KINDS = ("vector", "real", "label", "label01")


# ---------------------------------------------------------------------------- settings

class Setting:
    """A setting as the kernel knows it, made only by make_setting.

    kinds: name -> kind; per_update: names; declarations: what the kinds mean (``y^2 = 1`` for a
    label, ``k >= 0`` for a nat, sign constraints), derived here, never taken from the caller;
    assumptions: name -> formula; problems: (assumption name or None, status, message) for
    assumptions that may be undefined, that constrain a nat by themselves, or that contradict
    each other.  A setting with problems verifies nothing.
    """

    __slots__ = ("name", "kinds", "per_update", "declarations", "assumptions", "labels",
                 "binary_sequences", "nats", "per_update_symbols", "problems", "_pairs",
                 "__weakref__")

    def __init__(self, *args, **kwargs):
        raise KernelError("a Setting is made only by make_setting")

    def __setattr__(self, name, value):
        raise KernelError("a Setting is immutable")

    def __reduce__(self):
        raise KernelError("a Setting cannot be copied or pickled")

    def kind_of(self, name: str) -> str:
        kind = self.kinds[name]
        return f"{kind} per update" if name in self.per_update else kind

    def allowed(self) -> frozenset:
        return frozenset(self.assumptions.values()) | frozenset(self.declarations)

    def allows(self, hypothesis) -> bool:
        """Whether a theorem may rest on this hypothesis and be a lemma of the setting: an
        assumption or declaration, at the symbolic k or at every k."""
        if isinstance(hypothesis, Everywhere):
            hypothesis = hypothesis.formula
        return hypothesis in self.allowed()

    def __repr__(self) -> str:
        return f"Setting({getattr(self, 'name', '?')})"


@_rule("make_setting")
def make_setting(name: str, kinds: dict, constraints: dict, per_update, assumptions: dict,
                 timeout_ms: int = 5000) -> Setting:
    """Make a Setting: derive its declarations from the kinds, then check its assumptions.

    kinds: name -> one of KINDS; constraints: name -> (op, 0) for reals (gamma > 0);
    per_update: names of vectors, reals and labels that change with the update;
    assumptions: name -> Relation or VectorEq (in order).
    """
    for n, kind in kinds.items():
        if kind not in KINDS:
            raise KernelError(f"kind {kind!r} of {n} is not one of {KINDS}")
    declarations = []
    for n, kind in kinds.items():
        if kind == "label":
            declarations.append(Relation("=", symbol(n, kind) ** 2, sp.Integer(1)))
        elif kind == "label01":  # a label in {0, 1}
            declarations.append(Relation("=", symbol(n, kind) ** 2, symbol(n, kind)))
        elif kind == "nat":
            declarations.append(Relation(">=", symbol(n, kind), sp.Integer(0)))
    for n, (op, bound) in constraints.items():
        if kinds.get(n) != "real" or op not in _CONSTRAINTS or bound != 0:
            raise KernelError(f"a sign constraint {n} {op} {bound} needs a real and 0")
        declarations.append(Relation(op, symbol(n, "real"), sp.Integer(0)))
    per_update = frozenset(per_update)
    for n in per_update:
        if kinds.get(n) not in _PER_UPDATE_KINDS:
            raise KernelError(f"{n} cannot be per update: only vectors, reals and labels can")
    s = object.__new__(Setting)
    set_ = object.__setattr__
    set_(s, "name", name)
    set_(s, "kinds", dict(kinds))
    set_(s, "per_update", per_update)
    set_(s, "declarations", tuple(declarations))
    # A label y, or a label sequence y (each y[t] in {-1, +1}): y^2 = 1 in the normal form.
    set_(s, "labels", frozenset(symbol(n, k) for n, k in kinds.items()
                                if k in ("label", "label_sequence")))
    # A label sequence in {0, 1}: y[t]^2 = y[t] for the elements in play (_label_elements).
    set_(s, "binary_sequences", frozenset(symbol(n, k) for n, k in kinds.items()
                                          if k == "label01_sequence"))
    set_(s, "nats", frozenset(symbol(n, k) for n, k in kinds.items() if k == "nat"))
    set_(s, "per_update_symbols", frozenset(symbol(n, kinds[n]) for n in per_update))
    set_(s, "_pairs", frozenset((n, s.kind_of(n)) for n in kinds))
    set_(s, "assumptions", dict(assumptions))
    for f in assumptions.values():
        if not isinstance(f, (Relation, VectorEq)):
            raise KernelError(f"an assumption is a relation or a vector definition: {f!r}")
        _kinds_of(s, [f])  # every symbol declared, with its kind
    set_(s, "problems", tuple(_setting_problems(s, timeout_ms)))
    _SETTINGS.add(s)
    return s


def _setting_problems(s: Setting, timeout_ms: int) -> list:
    problems = []
    earlier: list = []
    values: dict = {}  # nat -> more values at which the assumptions are checked together
    for n, f in s.assumptions.items():
        nat, more = _constrains_nat_alone(s, f)
        if nat is not None:
            problems.append((n, "failed", f"assumption {n} constrains the nat {nat} by itself, "
                                          f"but every assumption holds at every value of "
                                          f"{nat}: state it as a `given` of a lemma (a nat "
                                          f"may occur outside an index only where the "
                                          f"assumption defines or bounds an element of a real "
                                          f"sequence at it, as in `eta[{nat}] = 1/({nat}+1)`)"))
        for k, at in more.items():
            values.setdefault(k, set()).update(at)
        # (the hypotheses only for an obligation the declarations do not meet: building them
        # was 10% of checking the library, mostly for assumptions with none)
        pending = [o for o in f.obligations() if not _evidently_met(s, o)]
        for o, verdict in (_meaningful(s, _hypotheses(s, earlier, f, earlier), pending,
                                       timeout_ms) if pending else ()):
            problems.append((n, "failed" if verdict.answer == "invalid" else "unknown",
                             f"assumption {n}: {describe_obligation(o, f)} (given the "
                             f"declarations and the assumptions above it)"
                             + (f"; the proof that it is not {verdict.reason}"
                                if verdict.reason == NO_CERTIFICATE else "")))
        earlier.append(f)
    if not problems:
        # Once per setting, over every meeting point of its indices: more time than a step
        # (an unknown here fails every lemma of the setting; measured 0.01-0.8 s on the
        # library's settings, quiet).
        instances, refused = _instances(s, values)
        told = _with_gram(_hypotheses(s, instances + _defined_vector_facts(s, instances)
                                      + _summed_over_rounds(s, s.assumptions.values()), None,
                                      tuple(s.assumptions.values()), summed=True),
                          triples=True)
        verdict = _modelled(entails(told, None, 4 * timeout_ms, s.nats, search_model=True))
        if verdict.answer == "valid":
            problems.append((None, "failed", "the assumptions contradict each other (at some "
                                             "value of the nats): every lemma of this setting "
                                             "would hold vacuously"))
        elif refused:  # (a contradiction at those values would not have been seen)
            problems.append((None, "unknown", f"could not check the assumptions at "
                                              f"{', '.join(refused)}: a term there would be "
                                              f"evaluated in floating point; if they contradict "
                                              f"each other there, every lemma of this setting "
                                              f"would hold vacuously"))
        elif verdict.answer != "invalid":  # unknown is never consistent
            problems.append((None, "unknown", f"could not show the assumptions consistent: "
                                              f"{verdict.reason or 'the solver could not decide'}"
                                              f"; if they contradict each other, every lemma of "
                                              f"this setting would hold vacuously"))
        elif s.nats:
            # The same, every nat at least a number past those the assumptions hold: where
            # they bound a nat (c[k] = k with c[k] <= 5; a recurrence that outgrows a bound),
            # they fail there, and every nat takes every value.  Only a contradiction counts.
            large = _past_their_numbers(s)
            beyond = entails(told + [Relation(">=", k, large) for k in sorted(s.nats, key=str)],
                             None, timeout_ms, s.nats)
            if beyond.answer == "valid":
                problems.append((None, "failed", f"the assumptions contradict each other where "
                                                 f"every nat is at least {large}: every lemma "
                                                 f"of this setting would hold vacuously"))
            elif beyond.reason == NO_CERTIFICATE:  # (a solver finds the contradiction)
                problems.append((None, "unknown", f"the assumptions may contradict each other "
                                                  f"where every nat is at least {large} (a "
                                                  f"solver finds so, but it {NO_CERTIFICATE}): "
                                                  f"every lemma of this setting would then hold "
                                                  f"vacuously"))
    return problems


def _past_their_numbers(s: Setting) -> sp.Integer:
    """A whole number past twice every number the assumptions hold (10 at least)."""
    numbers = [abs(n) for f in s.assumptions.values() for side in sides(f)
               for n in side.atoms(sp.Number) if n.is_Rational]
    return sp.Integer(2 * int(max(numbers, default=0)) + 10)


def _summed_over_rounds(s: Setting, formulas) -> list:
    """The setting's vector recurrences that mention no per-update symbol, summed over the
    rounds for the elements the formulas read (sums.unrolled_updates: w[20] = w[0] + sum(t <
    20, x[t])), as a step may be told them: so that assumptions or givens against them are
    found vacuous too.  True: an assumption holds at every k, with the other symbols fixed.
    Only where the formulas hold a sum (<u, sum(t < 20, x[t])> is a sum of inner products):
    elsewhere the facts would bring sums of vectors into checks that had none, whose
    consistency no exact model then shows (a lemma of seed 000 whose givens read w[i])."""
    updates = [f for f in s.assumptions.values() if isinstance(f, VectorEq)
               and not free_symbols(f) & s.per_update_symbols]
    if not updates or not any(atoms_in(f, sp.Sum, VectorSum) for f in formulas):
        return []
    elements = {e for f in formulas for e in free_symbols(f)
                if isinstance(e, sp.core.function.AppliedUndef)}
    return unrolled_updates(updates, elements, s.nats)


# At most this many Cauchy-Schwarz facts about vectors defined by a formula, per setting.
_DEFINED_PAIRS = 24


def _defined_vector_facts(s: Setting, formulas) -> list:
    """Cauchy-Schwarz between each vector that an assumption defines as a combination of others
    (`z = sum(t < 3, x[t])`, `z0 = x - c*w_star`; one that no nat moves) and every other vector
    the formulas (the setting's instances) mention.  Substituted, the definition leaves only
    its terms' inner products, of which the Gram facts of atoms (two and three at a time) do
    not show what real vectors satisfy: ||z|| = 0 with <u, x[t]> >= 1 for each t is a
    contradiction only through <u, z>^2 <= ||u||^2*||z||^2.  True of real vectors, so the
    setting may only be found vacuous the more often."""
    # (as the setting writes it: its instances at k = 0, 1, ... define w[1], w[2], ... by the
    # update, which would bring many more facts and leave the check undecided)
    defined = [f.atom for f in s.assumptions.values() if isinstance(f, VectorEq)
               and len(f.rhs.terms) >= 2 and not f.atom.free_symbols & s.nats]
    if not defined:
        return []
    others = set(_vector_atoms([f for f in formulas if not isinstance(f, VectorEq)]))
    for f in formulas:
        if isinstance(f, VectorEq):
            others |= {f.atom, *f.rhs.atoms()}
    ordered = sorted(others, key=sp.default_sort_key)
    pairs = [(a, b) for a in dict.fromkeys(defined) for b in ordered if b != a]
    return [Relation("<=", Inner(a, b) ** 2, Inner(a, a) * Inner(b, b))
            for a, b in pairs[:_DEFINED_PAIRS]]


def _constrains_nat_alone(s: Setting, f) -> tuple:
    """(a nat that the assumption bounds, or None; {nat: values at which to check it too}).

    Every assumption holds at every value of every nat, so one that fails at some value of a nat
    whatever the other quantities are makes the setting vacuous: `k >= 3`; `c[k] >= j`, where
    c[k] does not change with j; `||x|| >= k` with x per update, which with `||x|| <= R` gives
    k <= R for every k; `(k - 2)*a[k] != 0`, false at k = 2.  The consistency check tries the
    nats at a symbolic point, 0 and k + 1 only, so it cannot see these.  Hence a nat n may occur
    outside every index (a sum's number of terms is outside) only where the assumption gives one
    element E = a[p] of a real sequence at n a value or a bound: lhs - rhs is c*E + r with c a
    polynomial in n alone, a in r only at indices p - 1, p - 2, ... (a recurrence
    `a[k+1] = a[k] + k`), p a polynomial in n that grows with n (no two values
    of n share E), and n the only nat it mentions (`eta[k] = 1/(k+1)`, `k*w[k] = k/2`).  At
    every n where c != 0 some value of E satisfies it; the natural roots of c are returned, to
    be checked with the other assumptions.  A vector definition w[p] = ... is the same with c = 1,
    where w occurs on the right only at indices p - 1, p - 2, ... (`w[k+1] = w[k] + x/(k+1)`).
    A per-update symbol absorbs nothing: it is an example, which the setting's other assumptions
    bound at every update alike (||x|| <= R)."""
    if isinstance(f, Relation):
        expr = sp.expand(f.lhs - f.rhs)
        parts = [expr]
    elif isinstance(f, VectorEq):
        expr = None
        parts = [f.atom] + [c for _, c in f.rhs.terms] + list(f.rhs.atoms())
    else:
        return None, {}
    elements = set().union(*(e.atoms(sp.core.function.AppliedUndef) for e in parts))
    outside = set().union(*(e.xreplace({a: sp.Dummy() for a in elements}).free_symbols
                            for e in parts)) & s.nats
    if not outside:
        return None, {}
    nats = set().union(*(e.free_symbols for e in parts)) & s.nats
    n = sorted(outside, key=str)[0]
    if nats != {n}:
        return str(n), {}
    if expr is None:  # a vector definition
        atom = f.atom
        if not (isinstance(atom, sp.core.function.AppliedUndef)
                and s.kinds.get(atom.func.__name__) == "vector_sequence"
                and _grows_with(atom.args[0], n)):
            return str(n), {}
        for e in elements - {atom}:
            if e.func == atom.func:
                lag = sp.expand(atom.args[0] - e.args[0])
                if not (lag.is_Integer and lag > 0):
                    return str(n), {}
        return None, {}
    for e in sorted(elements, key=sp.default_sort_key):
        if s.kinds.get(e.func.__name__) != "real_sequence" or not _grows_with(e.args[0], n):
            continue
        c = expr.coeff(e)
        rest = sp.expand(expr - c * e)
        if not all(_earlier(a, e) for a in rest.atoms(sp.core.function.AppliedUndef)
                   if a.func == e.func) \
                or c.atoms(sp.core.function.AppliedUndef) or not c.free_symbols <= {n} or c == 0:
            continue
        try:
            poly = sp.Poly(c, n)
        except sp.PolynomialError:  # a sum, a square root of n
            continue
        if not all(a.is_Rational for a in poly.coeffs()):
            continue
        roots = {r for r in poly.real_roots() if r.is_Integer and r > 0}
        return None, ({n: roots} if roots else {})
    return str(n), {}


def _earlier(element, than) -> bool:
    """Whether a sequence element is read at a fixed number of indices before another (a[k] is
    before a[k+1]): a recurrence a[k+1] = a[k] + k gives a[k+1] a value from the earlier ones."""
    lag = sp.expand(than.args[0] - element.args[0])
    return bool(lag.is_Integer and lag > 0)


def _grows_with(index: sp.Expr, n: sp.Symbol) -> bool:
    """Whether an index is a polynomial in n alone that grows with n at every n >= 0."""
    if index.free_symbols != {n}:
        return False
    try:
        poly = sp.Poly(index, n)
    except sp.PolynomialError:
        return False
    coeffs = [c for (degree,), c in poly.terms() if degree >= 1]
    return all(c.is_Rational and c >= 0 for c in coeffs) and any(c > 0 for c in coeffs)


def _instances(s: Setting, values=None) -> tuple:
    """(the assumptions at the symbolic point and with each nat n at 0, at n+1 and at the values
    given for it; the values `n = v` at which an assumption could not be taken exactly).

    Every assumption holds at every value of the nats, so all these hold together; the
    per-update symbols of an instance are fresh (they may differ from update to update).  An
    assumption that cannot be taken exactly at a value (terms.exact_subs) is not checked there,
    so the caller must not call the assumptions consistent.
    """
    out = list(s.declarations) + list(s.assumptions.values())
    refused: list = []
    assumptions = _assumptions_alone(s)
    for i, k in enumerate(sorted(s.nats, key=str)):
        more = sorted(set((values or {}).get(k, ())) | _meeting_points(s, k, assumptions),
                      key=sp.default_sort_key)
        for j, value in enumerate(dict.fromkeys((sp.Integer(0), k + 1, *more))):
            fresh = {p: sp.Symbol(f"{p.name}@{i}.{j}", **p.assumptions0)
                     for p in s.per_update_symbols}
            for f in list(s.declarations) + assumptions:
                if k in free_symbols(f) or fresh.keys() & free_symbols(f):
                    try:
                        f = f.subs(k, value)
                    except ValueError:  # not exactly at that value (terms.exact_subs)
                        refused.append(f"{k} = {value}")
                        continue
                    for p, q in fresh.items():
                        f = f.subs(p, q)
                    out.append(f)
    return out, list(dict.fromkeys(refused))


# At most this many more values per nat at which the assumptions are checked together, and the
# largest gap between offsets that is walked one step at a time.
_MEETING_POINTS = 16
_CHAIN = 12


def _offsets(formulas, k) -> set:
    """The c of the indices k + c (a whole c) at which the formulas read sequences, and 0."""
    found = {0}
    for f in formulas:
        for e in free_symbols(f):
            if isinstance(e, sp.core.function.AppliedUndef):
                c = sp.expand(e.args[0] - k)
                if c.is_Integer:
                    found.add(int(c))
    return found


def _scaled_indices(formulas, k) -> set:
    """The indices p(k) other than k + c at which the formulas read sequences (d[3*k + 3])."""
    found = set()
    for f in formulas:
        for e in free_symbols(f):
            if isinstance(e, sp.core.function.AppliedUndef) and k in e.args[0].free_symbols \
                    and not sp.expand(e.args[0] - k).is_Integer:
                found.add(sp.expand(e.args[0]))
    return found


def _assumptions_alone(s: Setting) -> list:
    """The assumptions, and each that mentions several nats also with all of them but one at 0
    (it holds at every value of every nat: d[k + T] >= 1 at T = 0 is d[k] >= 1), so that that
    one meets the indices it reads alone (d[36] at k = 36)."""
    out = list(s.assumptions.values())
    for f in s.assumptions.values():
        nats = sorted(free_symbols(f) & s.nats, key=str)
        out += [others_at_zero(f, k, nats) for k in (nats if len(nats) > 1 else [])]
    return [f for f in dict.fromkeys(out) if f is not None]


def _constant_indices(formulas) -> set:
    """The whole numbers at which the formulas read sequences (c[3])."""
    return {int(e.args[0]) for f in formulas for e in free_symbols(f)
            if isinstance(e, sp.core.function.AppliedUndef) and e.args[0].is_Integer}


def _meeting_points(s: Setting, k, formulas) -> set:
    """Values of the nat k where the assumptions' indices meet one another: k + 1, k + 2, ...
    up to the largest gap between the offsets they use (d[k] and d[k+2] meet at k + 2, and
    a[k+1] = a[k] chained ten times meets a[k+10]; only the gaps themselves past _CHAIN), the
    index p(k) - c of every other index p(k) that an index k + c meets (d[k] meets d[3*k + 3]
    at k = 3*k + 3), the small numbers up to the largest offset and one more (d[2*k] meets
    d[k+1] at k = 1), every other nat plus those gaps (d[T+1] meets d[k+2] at T = k + 1),
    and the numbers at which they read sequences, less an offset (c[k] meets c[4] at k = 4).
    Every assumption holds at each of them; a contradiction elsewhere is not looked for (no
    finite check finds every one: docs/trust.md).  formulas: the assumptions, each nat alone
    (_assumptions_alone)."""
    offsets = _offsets(formulas, k)
    gaps = sorted({a - b for a in offsets for b in offsets if a > b})
    if gaps and gaps[-1] <= _CHAIN:
        gaps = list(range(1, gaps[-1] + 1))
    points = [k + g for g in gaps]
    for p in sorted(_scaled_indices(formulas, k), key=sp.default_sort_key):
        for c in sorted(offsets):
            # a nat at every k: a polynomial in k alone with coefficients >= 0
            if p.free_symbols == {k} and all(a >= 0 for a in sp.Poly(p - c, k).coeffs()):
                points.append(p - c)
    # (at most as many as are kept: a[k + 10^12] = a[k] has no list of 10^12 numbers)
    last = min(abs(max(offsets, key=abs, default=0)) + 3, _MEETING_POINTS + 1)
    points += [sp.Integer(n) for n in range(1, last)]
    for other in sorted(s.nats - {k}, key=str):
        if any(other in free_symbols(f) for f in formulas):
            points += [other + g for g in [0] + gaps]
    # With a budget of their own, the numbers at which they read sequences: c[k] >= 1 meets
    # sum(i < 16, c[i]) <= 15, whose terms are written out (terms._UNROLL), at k = 0 .. 15.
    numbers = dict.fromkeys(sp.Integer(m - c) for m in sorted(_constant_indices(formulas))
                            for c in sorted(offsets) if 0 <= m - c)
    return set(points[:_MEETING_POINTS]) | set(list(numbers)[:_MEETING_POINTS])


def _at_indices_of(s: Setting, formulas, refused: list, unwalked: list) -> list:
    """The assumptions at the indices the formulas read (a given about d[T + 5] meets
    `d[k] <= a` at k := T + 5) and those between two of them: for each nat k, offset c of the
    assumptions' indices and index e, the assumption at k := e - c where that is >= 0.
    An assumption with a per-update symbol is taken there with a fresh one (at another k it
    denotes another example), the same at each use of that k and value (one update, one
    example).  refused: where a value would be evaluated in floating point; unwalked: the
    indices too far apart to be walked, and the sums of too many terms (a contradiction
    between them was not looked for, so the caller must not call the formulas consistent)."""
    indices = {e.args[0] for f in formulas for e in free_symbols(f)
               if isinstance(e, sp.core.function.AppliedUndef)}
    # and those a sum of a few terms reads (sum(t < 3, a[t]) reads a[0], a[1], a[2]); of more
    # (sum(t < 1000, a[t])), unwalked like indices too far apart, below
    for total in sums_in(formulas):
        n = count(total)
        if n.is_Integer and 0 < n <= _CHAIN:
            indices |= {sp.expand(e.args[0].subs(BOUND, j))
                        for e in total.function.atoms(sp.core.function.AppliedUndef)
                        if BOUND in e.args[0].free_symbols for j in range(int(n))}
        elif n.is_Integer and n > _CHAIN:
            unwalked.append(f"the {n} terms of a sum")
    # and every index between two of them, or between one of them and a number the assumptions
    # read (a[0] = 0 and a given about a[2]), up to _CHAIN apart (d[0] and d[10]), so that an
    # assumption chained (d[k] <= d[k+1] ten times) meets both.  Farther apart (a[0] and a
    # given about a[13]) they are unwalked: a chain between them is not looked for.  (Two
    # numbers of the assumptions alone are the setting check's business.)
    read = set(indices)
    numbers = {e.args[0] for f in s.assumptions.values() for e in free_symbols(f)
               if isinstance(e, sp.core.function.AppliedUndef) and e.args[0].is_Integer}
    for low in list(indices | numbers):
        for high in list(indices | numbers):
            gap = sp.expand(high - low)
            if gap.is_Integer and 1 < gap <= _CHAIN:
                indices |= {sp.expand(low + j) for j in range(1, int(gap))}
            elif gap.is_Integer and gap > _CHAIN and {low, high} & read:
                unwalked.append(f"the indices {low} and {high}")
    out, assumptions = [], _assumptions_alone(s)
    for k in sorted(s.nats, key=str):
        mentioning = [f for f in assumptions if k in free_symbols(f)]
        # and, where those take an example, what holds of it (||x|| <= 1; y^2 = 1 for a label)
        if any(free_symbols(f) & s.per_update_symbols for f in mentioning):
            mentioning += [f for f in [*s.assumptions.values(), *s.declarations]
                           if k not in free_symbols(f) and free_symbols(f) & s.per_update_symbols]
        for c in sorted(_offsets(mentioning, k)):
            for e in sorted(indices, key=sp.default_sort_key):
                value = sp.expand(e - c)
                if value == k or not value.free_symbols <= s.nats:
                    continue
                fresh = {p: sp.Symbol(f"{p.name}@{k}={value}", **p.assumptions0)
                         for p in s.per_update_symbols}
                for f in mentioning:
                    try:
                        f = f.subs(k, value)
                    except ValueError:  # not exactly at that value: left out, and said
                        refused.append(f"{k} = {value}")
                        continue
                    for p, q in fresh.items():
                        f = f.subs(p, q)
                    out.append(Implication((Relation(">=", value, sp.Integer(0)),), f))
    return list(dict.fromkeys(out))


def _kinds_of(s: Setting, formulas) -> frozenset:
    """(name, kind) of every symbol the formulas mention; refuse a symbol the setting lacks."""
    known = _KINDS.setdefault(s, {})
    pairs: frozenset = frozenset()
    for f in formulas:
        f = f.formula if isinstance(f, (Supposition, Everywhere)) else f
        if f not in known:
            known[f] = _kinds_of_formula(s, f)
        pairs |= known[f]
    return pairs


# The kinds each formula mentions, per setting: a function of both, asked for every theorem
# (measured 6% of `novikoff check proofs/` before it was kept).
_KINDS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def _kinds_of_formula(s: Setting, f) -> frozenset:
    pairs = set()
    for e in free_symbols(f):
        if isinstance(e, sp.core.function.AppliedUndef):
            n, obj = e.func.__name__, e.func
        elif isinstance(e, sp.Symbol):
            n, obj = e.name, e
        else:
            continue
        if n not in s.kinds or symbol(n, s.kinds[n]) != obj:
            raise KernelError(f"{n} is not declared in setting {s.name} (or has another "
                              f"kind there)")
        pairs.add((n, s.kind_of(n)))
    return frozenset(pairs)


# ---------------------------------------------------------------------------- theorems

class Theorem:
    """hyps |- concl, made only by the rules of this module; kinds: the kinds it relies on."""

    __slots__ = ("hyps", "concl", "kinds", "__weakref__")

    def __init__(self, *args, **kwargs):
        raise KernelError("a Theorem is made only by the kernel's rules")

    def __setattr__(self, name, value):
        raise KernelError("a Theorem is immutable")

    def __reduce__(self):
        raise KernelError("a Theorem cannot be copied or pickled")

    def __repr__(self) -> str:
        hyps = ", ".join(sorted(str(h) for h in getattr(self, "hyps", ())))
        return f"Theorem({hyps} |- {getattr(self, 'concl', '?')})"


def _make(s: Setting, hyps, concl) -> Theorem:
    hyps = frozenset(hyps)
    thm = object.__new__(Theorem)
    object.__setattr__(thm, "hyps", hyps)
    object.__setattr__(thm, "concl", concl)
    object.__setattr__(thm, "kinds", _kinds_of(s, [concl, *hyps]))
    _ISSUED.add(thm)
    return thm


def _genuine(s: Setting, *theorems: Theorem) -> None:
    """Refuse a forged setting or theorem, and a theorem whose symbols mean something else here."""
    if not isinstance(s, Setting) or s not in _SETTINGS:
        raise KernelError(f"not a setting made by the kernel: {s!r}")
    for thm in theorems:
        if not isinstance(thm, Theorem) or thm not in _ISSUED:
            raise KernelError(f"not a theorem made by the kernel: {thm!r}")
        clash = thm.kinds - s._pairs
        if clash:
            n, kind = sorted(clash)[0]
            here = s.kind_of(n) if n in s.kinds else "not declared"
            raise KernelError(f"the theorem uses {n} as a {kind.replace('_', ' ')}, but in "
                              f"setting {s.name} it is {here.replace('_', ' ')}")


@dataclass(frozen=True)
class Supposition:
    """A labelled hypothesis: a formula supposed so that checking can go on past a failure.

    It never equals an assumption of a setting, so a theorem resting on it is never accepted,
    and no rule removes it from a theorem's hypotheses.
    """

    label: str
    formula: object

    def __str__(self) -> str:
        return f"[{self.label}] {self.formula}"


@dataclass(frozen=True)
class Everywhere:
    """A hypothesis used at other values of the nats than the symbolic one (an assumption moved
    by instantiate, or read at every index of a sum): it holds at every k.  It never equals a
    plain formula, so discharging a `given`, a case condition or an induction hypothesis that
    happens to be the same formula never removes it."""

    formula: object

    def __str__(self) -> str:
        return f"{self.formula} (at every value of the nats)"


def _at_every_k(hypothesis) -> Everywhere:
    return hypothesis if isinstance(hypothesis, Everywhere) else Everywhere(hypothesis)


@_rule("assume")
def assume(s: Setting, formula, label: str | None = None) -> Theorem:
    """formula |- formula; with a label, [label] formula |- formula."""
    _genuine(s)
    if not isinstance(formula, (Relation, VectorEq, *COMPOUND)):
        raise KernelError(f"not a formula: {formula!r}")
    return _make(s, {Supposition(label, formula) if label else formula}, formula)


# ---------------------------------------------------------------------------- vector facts

def cauchy_schwarz(u: Vec, v: Vec) -> list:
    """|<u, v>| <= ||u|| ||v||, also squared."""
    p, nu, nv = ip(u, v), norm(u), norm(v)
    return [Relation("<=", p, nu * nv), Relation("<=", -p, nu * nv),
            Relation("<=", p ** 2, ip(u, u) * ip(v, v))]


def triangle(u: Vec, v: Vec) -> list:
    """||u + v|| <= ||u|| + ||v||."""
    return [Relation("<=", norm(u + v), norm(u) + norm(v))]


def nat_cases(k: sp.Symbol) -> list:
    """k = 0 or k >= 1, for a natural k."""
    return [Disjunction((Relation("=", k, sp.Integer(0)), Relation(">=", k, sp.Integer(1))))]


def norm_nonneg(v: Vec) -> list:
    """||v||^2 = <v, v> >= 0 (a square of a norm is expanded into inner products, which alone
    do not show its sign)."""
    return [Relation(">=", ip(v, v), sp.Integer(0))]


_FACTS = {"cauchy_schwarz": cauchy_schwarz, "triangle": triangle, "nat_cases": nat_cases,
          "norm_nonneg": norm_nonneg}
_ARITY = {"cauchy_schwarz": 2, "triangle": 2, "norm_nonneg": 1}


def _gram_facts(formulas, triples: bool = False, limit: int = 24) -> list:
    """What real vectors always satisfy, for the vectors the formulas mention: Cauchy-Schwarz
    (squared) for every two vector atoms; with triples, the Gram determinant of every three
    (for at most 8 atoms: a setting's check, where it matters, not every step's); and
    ||v||^2 >= 0 for every norm, where v's coefficients mean something."""
    norms = set().union(*(atoms_in(f, Norm) for f in formulas))
    ordered = _vector_atoms(formulas)[:limit]
    facts = [_cauchy_schwarz_fact(a, b) for i, a in enumerate(ordered) for b in ordered[i + 1:]]
    # and for every two vectors past the limit whose inner product the formulas mention: of
    # two others <a, b> is mentioned by no formula but its own fact, which <a, b> = 0 meets, so
    # it could not show a contradiction (so Cauchy-Schwarz holds for every two vectors)
    first = set(ordered)
    facts += [_cauchy_schwarz_fact(*pair) for pair in _inner_pairs(formulas)
              if not set(pair) <= first]
    if triples and len(ordered) <= 8:
        facts += [_gram_determinant_fact(*abc) for abc in itertools.combinations(ordered, 3)]
    facts += [_norm_fact(n) for n in sorted(norms, key=sp.default_sort_key)
              if BOUND not in n.free_symbols]
    return facts


# The Gram facts below are built for the same vectors at nearly every step: each once
# (measured with formulas.atoms_in: checking proofs/ in one process 21 -> 17.5 s of CPU).
@functools.lru_cache(maxsize=1 << 14)
def _cauchy_schwarz_fact(a, b) -> Relation:
    return Relation("<=", Inner(a, b) ** 2, Inner(a, a) * Inner(b, b))


@functools.lru_cache(maxsize=1 << 14)
def _gram_determinant_fact(a, b, c) -> Relation:
    """The determinant of the symmetric Gram matrix of three vectors is >= 0, written out: of
    six atoms it is expanded already (SymPy's Matrix.det took 8% of checking the library for
    the same polynomial, and sp.expand of it 7%)."""
    aa, bb, cc = Inner(a, a), Inner(b, b), Inner(c, c)
    ab, ac, bc = Inner(a, b), Inner(a, c), Inner(b, c)
    det = aa*bb*cc + 2*ab*bc*ac - aa*bc**2 - bb*ac**2 - cc*ab**2
    if not all(isinstance(p, Inner) for p in (aa, bb, cc, ab, ac, bc)):
        det = sp.expand(det)  # an inner product with a sum of vectors is written out
    return Relation(">=", det, sp.Integer(0))


@functools.lru_cache(maxsize=1 << 14)
def _norm_fact(n: Norm):
    """||v||^2 >= 0 where v's coefficients mean something."""
    defined = tuple(dict.fromkeys(o for _, c in n.vector().terms
                                  for o in visible_obligations(c)))
    fact = Relation(">=", n.gram(), sp.Integer(0))
    return Implication(defined, fact) if defined else fact


def _inner_pairs(formulas) -> list:
    """The pairs (a, b) of two different vectors whose inner product the formulas mention (in
    their norms too), sorted."""
    inners = set().union(*(_inners_in(f) for f in formulas))
    return sorted((i.args for i in inners if i.args[0] != i.args[1]
                   and not i.has(BOUND)), key=sp.default_sort_key)


def _vector_atoms(formulas) -> list:
    """The vector atoms the scalar formulas mention (in inner products and norms), sorted; not
    the terms of a sum."""
    atoms = {a for f in formulas for inner in _inners_in(f) for a in inner.args}
    return sorted((a for a in atoms if BOUND not in a.free_symbols), key=sp.default_sort_key)


@functools.lru_cache(maxsize=1 << 15)  # the same formulas are read at every step of a proof
def _inners_in(f) -> frozenset:
    """The inner products of one formula, those of its norms' Gram forms included."""
    inners = set(atoms_in(f, Inner))
    for n in atoms_in(f, Norm):
        inners |= n.gram().atoms(Inner)
    return frozenset(inners)


def _with_gram(formulas, goal=None, triples: bool = False) -> list:
    """Formulas, and what real vectors satisfy for the vectors they (and the goal) mention."""
    return list(formulas) + _gram_facts(list(formulas) + ([goal] if goal is not None else []),
                                        triples)


# ---------------------------------------------------------------------------- rewriting

def _substitute(vec: Vec, defs: dict) -> Vec:
    out = Vec.zero()
    for a, c in vec.terms:
        out = out + (defs[a].scale(c) if a in defs else Vec.atom(a).scale(c))
    return out


def _replace_inner(expr: sp.Expr, defs: dict) -> sp.Expr:
    """Substitute vector definitions atom := Vec inside every Inner and Norm of expr (a sum of
    vectors is substituted whole, never inside: its terms are read at its own index)."""
    if isinstance(expr, Inner):
        u, v = expr.args
        return ip(_substitute(Vec.atom(u), defs), _substitute(Vec.atom(v), defs))
    if isinstance(expr, Norm):
        vector = Vec(tuple((a, _replace_inner(c, defs)) for a, c in expr.vector().terms))
        return norm(_substitute(vector, defs))
    if isinstance(expr, VectorSum) or not expr.has(Inner, Norm):
        return expr
    return expr.func(*(_replace_inner(a, defs) for a in expr.args))


def rewrite_vectors(formula, defs: dict):
    """Apply vector definitions to a scalar formula (its domain included)."""
    return _rewrite_all([formula], defs)[0]


def _rewrite_all(formulas, defs: dict) -> list:
    """rewrite_vectors of each formula, the definitions put in order once (sorting them for
    each formula was 2% of checking the library)."""
    if not defs:
        return list(formulas)
    definitions = tuple(sorted(defs.items(), key=lambda d: sp.default_sort_key(d[0])))
    return [_rewrite(f, definitions) for f in formulas]


@functools.lru_cache(maxsize=1 << 14)  # the same hypotheses are rewritten for every check of
def _rewrite(formula, definitions: tuple):  # a step: measured 7% of `novikoff check proofs/`
    if isinstance(formula, Relation):
        defs = dict(definitions)
        return Relation(formula.rel, _replace_inner(formula.lhs, defs),
                        _replace_inner(formula.rhs, defs),
                        tuple(_rewrite(d, definitions) for d in formula.domain))
    if isinstance(formula, COMPOUND):
        return rebuild(formula, tuple(_rewrite(p, definitions) for p in subformulas(formula)))
    if isinstance(formula, VectorEq):  # inside an implication (a cited lemma's vector given)
        defs = dict(definitions)
        left, right = _substitute(Vec.atom(formula.atom), defs), _substitute(formula.rhs, defs)
        if (left, right) != (Vec.atom(formula.atom), formula.rhs):
            # as the solver reads it, ||atom - rhs||^2 = 0, in the defined vectors' terms: else
            # their atoms would be free there, apart from their definitions
            d = left - right
            return Relation("=", ip(d, d), sp.Integer(0),
                            tuple(_rewrite(o, definitions) for o in formula.domain))
    return formula


def _substitutable(f: VectorEq) -> bool:
    """Whether a definition may be used by substitution: its coefficients show no condition that
    its written domain lacks (else their value in the solver could differ from their meaning),
    and hold no irrational number (substituted into abs or max, SymPy would decide its sign in
    floating point).  Otherwise it is told as the equation ||atom - rhs||^2 = 0."""
    shown = set(f.obligations()) - set(f.domain)
    return not shown and not any(has_irrational_number(c) for _, c in f.rhs.terms)


def _vector_definitions(formulas, goal=None) -> tuple:
    """Vector definitions as substitutions, and the scalar facts the rest of them give.

    A second definition of a defined vector, one that would be circular, or one that is not
    substitutable is never dropped: it becomes the equation ||lhs - rhs||^2 = 0, with its
    consequences <lhs - rhs, v> = 0 for every vector v the formulas and the goal mention (lhs -
    rhs is the zero vector).  Returns (defs, facts).
    """
    defs: dict = {}
    equations: list = []
    facts: list = []
    # The steps of the sums of vectors in play come after the formulas: a formula's own
    # definition of a sum comes first.
    formulas = list(formulas)
    formulas += vector_sum_steps(formulas + ([goal] if goal is not None else []))
    for f in formulas:
        if not isinstance(f, VectorEq):
            continue
        facts += list(f.domain)  # what it means implies its written domain, and no more
        rhs = _substitute(f.rhs, defs)
        if f.atom in defs or f.atom in rhs.atoms() or not _substitutable(f):
            left = defs.get(f.atom, Vec.atom(f.atom))
            equations.append(left - rhs)
            continue
        one = {f.atom: rhs}
        defs = {a: _substitute(v, one) for a, v in defs.items()}
        defs[f.atom] = rhs
    scalar = [f for f in formulas if not isinstance(f, VectorEq)]
    # A vector equation under premises (a cited lemma's, its givens discharged by facts in
    # scope): where the premises hold, lhs - rhs is the zero vector, so its inner products too.
    premised = [f for f in scalar
                if isinstance(f, Implication) and isinstance(f.conclusion, VectorEq)]
    mentioned = _vector_atoms(scalar + ([goal] if goal is not None else [])) if premised else []
    for f in premised:
        eq = f.conclusion
        d = _substitute(Vec.atom(eq.atom) - eq.rhs, defs)
        facts += [Implication(f.premises, Relation("=", ip(d, Vec.atom(v)), sp.Integer(0),
                                                   eq.domain)) for v in mentioned]
    for d in equations:
        d = _substitute(d, defs)
        facts.append(Relation("=", ip(d, d), sp.Integer(0)))
        mentioned = _vector_atoms(scalar + ([goal] if goal is not None else [])
                                  + [Relation("=", ip(d, d), sp.Integer(0))])
        facts += [Relation("=", ip(d, Vec.atom(v)), sp.Integer(0)) for v in mentioned]
    return defs, _rewrite_all(facts, defs)


def _same_element_facts(s: Setting, defs: dict) -> list:
    """i = j => ||d||^2 = 0 for two defined elements a[i], a[j] of one sequence at indices that
    may be equal, d the difference of their definitions.  Both definitions are substituted, so
    without it `given k = 0` no longer makes w[k] := u and w[0] := 0 one element (u would be 0).
    (Not <d, v> = 0 for every vector v in play too: measured to leave a givens check of the
    library undecided.)"""
    elements = [a for a in defs if isinstance(a, sp.core.function.AppliedUndef)]
    facts = []
    for a, b in itertools.combinations(elements, 2):
        if a.func != b.func or _never_zero(s, sp.expand(a.args[0] - b.args[0])):
            continue  # other sequences, or indices that are never equal (w[k+1] and w[0])
        d = defs[a] - defs[b]
        facts.append(Implication((Relation("=", a.args[0], b.args[0]),),
                                 Relation("=", ip(d, d), sp.Integer(0))))
    return facts


def _hypotheses(s: Setting, formulas, goal=None, everywhere=(), summed: bool = False,
                givens: bool = False) -> list:
    """What the solver is told (_hypotheses_and_definitions, without the definitions)."""
    return _hypotheses_and_definitions(s, formulas, goal, everywhere, summed, givens)[0]


def _hypotheses_and_definitions(s: Setting, formulas, goal=None, everywhere=(),
                                summed: bool = False, givens: bool = False) -> tuple:
    """(what the solver is told, the vector definitions substituted in it). What it is told:
    declarations, formulas with vector definitions substituted, and the defining facts of the
    sums they (and the goal) mention; with summed, also the shifts and the goal's termwise
    facts (sums.sum_facts). everywhere: those formulas that hold at every value of the nats
    (assumptions, and what rests on them alone), from which the terms of a sum may be shown >=
    0 at every index; the labels' values in the sums' terms (_label_sums). givens: for the
    givens check, also the facts that only a given's contradiction needs (_same_element_facts),
    kept out of the other checks, whose statements (and stored certificates and models) they
    would change."""
    told, defs = _told_with_definitions(s, formulas, goal)
    if givens:
        told += _same_element_facts(s, defs)
    everywhere = tuple(f for f in everywhere if not free_symbols(f) & s.per_update_symbols)
    # The sums' facts write out terms (w[0] in a telescoped sum): the definitions apply to them,
    # and the labels' declarations to the elements they write out (y[16]^2 = 1).
    sums = _rewrite_all(sum_facts(
        told, lambda terms: _nonnegative_terms(s, terms, everywhere), goal, summed,
        everywhere, s.nats), defs)
    known = set(told)
    return (told + sums + [f for f in _label_elements(s, sums) if f not in known]
            + _label_sums(s, told + sums)), defs


def _label_sums(s: Setting, formulas) -> list:
    """n >= 0 => sum(i < n, t(i)) = sum(i < n, t'(i)) for every sum whose terms hold an element
    of a label sequence other than linearly, t' the terms with y[i]^2 = 1, or m[i]^2 = m[i] for
    one in {0, 1}, then taken at the label's two values (_affine_in_labels: |y[i]| = 1), as the
    label's declaration holds at every index: sum(t < T, y[t]^2) = T.  Without it a sum over a
    symbolic count keeps its label squares, and givens that contradict the declaration looked
    consistent."""
    labels = {f for f in s.labels if not isinstance(f, sp.Symbol)}
    if not labels and not s.binary_sequences:
        return []
    facts = []
    for total in sums_in(formulas):
        reduced = _binary_reduce(label_reduce(total.function, labels), s.binary_sequences)
        reduced = _affine_in_labels(reduced, labels, s.binary_sequences)
        if reduced != total.function:
            n = count(total)
            facts.append(Implication((Relation(">=", n, sp.Integer(0)),),
                                     Relation("=", total, make_sum(reduced, n))))
    return facts


def _affine_in_labels(term: sp.Expr, labels, binary) -> sp.Expr:
    """The term as it is at each value of each label element it holds, made affine in it: t(y)
    = (t(1) + t(-1))/2 + y*(t(1) - t(-1))/2 for y in {-1, 1}, t(m) = t(0) + m*(t(1) - t(0))
    for m in {0, 1} (exact at those values: |y[i]| is 1).  The term as it was where it holds
    another sum (whose index is bound apart) or a value means nothing (1/(y + 1) at y = -1).
    A label read at a sum of vectors' index (y[i] in sum(i < n, y[i]*x[i])) is left alone."""
    if term.has(sp.Sum):
        return term
    for e in sorted(term.atoms(sp.core.function.AppliedUndef), key=sp.default_sort_key):
        values = (-1, 1) if e.func in labels else (0, 1) if e.func in binary else None
        if values is None or e.args[0].has(VECTOR_BOUND):
            continue  # not a label, or one read at a sum of vectors' own index
        low, high = (term.xreplace({e: sp.Integer(v)}) for v in values)
        if any(v.has(sp.zoo, sp.nan, sp.oo, -sp.oo, sp.I) for v in (low, high)):
            return term
        affine = sp.expand((low + high) / 2 + e * (high - low) / 2 if values == (-1, 1)
                           else low + e * (high - low))
        if affine != sp.expand(term):  # (an affine term is kept as written)
            term = affine
    return term


def _binary_reduce(expr: sp.Expr, sequences) -> sp.Expr:
    """m[i]^p as m[i] (p >= 1) for the elements of label sequences in {0, 1}."""
    if not sequences:
        return expr
    return expr.replace(lambda e: e.is_Pow and e.exp.is_Integer and e.exp >= 1
                        and getattr(e.base, "func", None) in sequences, lambda e: e.base)


def _told(s: Setting, formulas, goal=None) -> list:
    return _told_with_definitions(s, formulas, goal)[0]


def _told_with_definitions(s: Setting, formulas, goal=None) -> tuple:
    """(what the solver is told of the formulas, the vector definitions substituted in it)."""
    plain = [f.formula if isinstance(f, (Supposition, Everywhere)) else f for f in formulas]
    defs, facts = _vector_definitions(plain, goal)
    told = list(s.declarations) + facts + _rewrite_all(
        [f for f in plain if not isinstance(f, VectorEq)], defs)
    told += _defined_element_congruence(s, defs, told, goal)
    return told + _label_elements(s, told + ([goal] if goal is not None else [])), defs


def _equates_nats(s: Setting, f) -> bool:
    """Whether f is an equation between integer polynomials in the nats (k = 2, k = T + 1)."""
    if not (isinstance(f, Relation) and f.rel == "="):
        return False
    symbols = f.lhs.free_symbols | f.rhs.free_symbols
    return bool(symbols) and symbols <= s.nats and integer_polynomial(f.lhs) \
        and integer_polynomial(f.rhs)


def _defined_element_congruence(s: Setting, defs: dict, told: list, goal) -> list:
    """i = j => <d, v> = 0 for every vector v in play, and ||d||^2 = 0, for a defined element
    a[i] and an element a[j] of the same sequence still written (at an index that may equal i),
    d = definition of a[i] - a[j].  The definition is substituted, so without it `w[k] = u` and
    `k = 2` no longer make w[2] the vector u.  Only where an equation between nats is told:
    elsewhere two such indices are not shown equal, and the facts were measured to slow down
    the library's checks 25-fold."""
    defined = [a for a in defs if isinstance(a, sp.core.function.AppliedUndef)]
    if not defined or not any(_equates_nats(s, f) for f in told):
        return []
    scalar = told + ([goal] if goal is not None else [])
    mentioned = _vector_atoms(scalar)
    facts = []
    for a in defined:
        for b in mentioned:
            if not isinstance(b, sp.core.function.AppliedUndef) or b.func != a.func \
                    or _never_zero(s, sp.expand(a.args[0] - b.args[0])):
                continue
            d = defs[a] - Vec.atom(b)
            same = (Relation("=", a.args[0], b.args[0]),)
            facts += [Implication(same, Relation("=", ip(d, d), sp.Integer(0)))]
            facts += [Implication(same, Relation("=", ip(d, Vec.atom(v)), sp.Integer(0)))
                      for v in mentioned]
    return facts


def _never_zero(s: Setting, gap: sp.Expr) -> bool:
    """Whether a difference of indices is never 0: a nonzero number, or a polynomial in the nats
    whose coefficients all have the sign of its nonzero constant term (k + 1)."""
    if gap.is_Number:
        return gap != 0
    if not gap.free_symbols <= s.nats or not gap.is_polynomial(*gap.free_symbols):
        return False  # (floor(k/2) - 1 may be 0)
    terms = sp.Poly(gap, *sorted(gap.free_symbols, key=str)).terms()
    constant = dict(terms).get((0,) * len(gap.free_symbols), 0)
    return constant != 0 and all(c * constant > 0 for _, c in terms)


def _label_elements(s: Setting, formulas) -> list:
    """y[t]^2 = 1 for every element of a label sequence the formulas mention, y[t]^2 = y[t] for
    one in {0, 1} (the declaration of each label, at the indices in play)."""
    sequences = {f for f in s.labels if not isinstance(f, sp.Symbol)} | s.binary_sequences
    if not sequences:
        return []
    elements = set()
    for f in formulas:
        elements |= {e for e in atoms_in(f, sp.core.function.AppliedUndef)
                     if e.func in sequences and not e.args[0].has(BOUND, VECTOR_BOUND)}
    return [Relation("=", e ** 2, e if e.func in s.binary_sequences else sp.Integer(1))
            for e in sorted(elements, key=sp.default_sort_key)]


# Whether the terms of a sum are >= 0 at every index, per setting (decided once: measured to
# matter when a file sums the same terms in many steps).
_NONNEGATIVE: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def _sequences_of(formula) -> set:
    return {e.func for e in free_symbols(formula) if isinstance(e, sp.core.function.AppliedUndef)}


def _nonnegative_terms(s: Setting, terms: sp.Expr, everywhere: tuple,
                       timeout_ms: int = 2000) -> bool:
    """Whether terms(i) >= 0 for every index i >= 0, from the declarations and the formulas that
    hold at every value of the nats (everywhere, none with a per-update symbol), taken at i.
    Only what the caller's formulas say is used, so a theorem never rests on more than its
    hypotheses."""
    known = _NONNEGATIVE.setdefault(s, {})
    # Only formulas about the sequences of the terms can tell their sign (and a smaller key is
    # found again: measured 0.5 of 6 s profiled on `novikoff check proofs/` without it).
    # (and formulas about the sequences those mention: the update rule brings in x and y)
    sequences = {e.func for e in terms.atoms(sp.core.function.AppliedUndef)}
    chosen: list = []
    while True:
        more = [f for f in everywhere if f not in chosen and sequences & _sequences_of(f)]
        if not more:
            break
        chosen += more
        sequences |= set().union(*(_sequences_of(f) for f in more))
    everywhere = tuple(f for f in everywhere if f in chosen)
    key = (terms, frozenset(everywhere))
    if key not in known:
        # A fresh index (not BOUND, which the sums inside the facts bind), at i and at every
        # index of the terms (d[i+1]): each is >= 0 at every i (written.py).
        i = sp.Dummy("#j", integer=True, nonnegative=True)
        at_i = terms.subs(BOUND, i)
        indices = {i} | {e.args[0] for e in free_symbols(Relation("=", at_i, 0))
                         if isinstance(e, sp.core.function.AppliedUndef)
                         and i in e.args[0].free_symbols}
        # Each nat of a fact at each index, the fact's other nats left as they are or put at
        # 0 (it holds at every value of every nat: d[k + T] >= 0 at T = 0 is d[k] >= 0).
        at_index = []
        for f in everywhere:
            nats = sorted(free_symbols(f) & s.nats, key=str)
            for k, v in itertools.product(nats, indices):
                at_index.append(f.subs(k, v))
                # the others first: v may mention them (d[i + T])
                alone = others_at_zero(f, k, nats) if len(nats) > 1 else None
                try:
                    if alone is not None:
                        at_index.append(alone.subs(k, v))
                except ValueError:  # not exactly at that value (terms.exact_subs)
                    continue
        # the update rule at i, substituted in the terms
        goal = Relation(">=", at_i, sp.Integer(0))
        # (with the goal: the labels of the terms, y[i]^2 = 1)
        told, defs = _told_with_definitions(s, at_index + [Relation(">=", i, sp.Integer(0))],
                                            goal)
        verdict = entails(told, rewrite_vectors(goal, defs), timeout_ms, s.nats | {i})
        known[key] = verdict.answer == "valid"
    return known[key]


# ---------------------------------------------------------------------------- deciding a step

@dataclass(frozen=True)
class Decision:
    """The outcome of one obligation: status, the theorem if verified, and what the solver said.

    status: 'verified', 'failed' or 'unknown'.  kind: 'goal', 'vacuous', 'domain' (which check
    settled it).  obligation: the formula that failed or could not be decided; hypotheses: the
    formulas in force for it (after vector definitions were substituted).
    """

    status: str
    kind: str
    theorem: Theorem | None
    verdict: Verdict | None
    obligation: object
    hypotheses: tuple
    reason: str = ""


def domain_obligations(formula) -> tuple:
    """The conditions under which a formula means something."""
    return formula.obligations()


def _instances_of(s: Setting, facts) -> list:
    out = []
    for name, *args in facts:
        if name not in _FACTS:
            raise KernelError(f"unknown named fact {name!r}")
        if name == "nat_cases" and (len(args) != 1 or args[0] not in s.nats):
            raise KernelError(f"nat_cases applies to a declared nat, not {args!r}")
        if name != "nat_cases" and not (len(args) == _ARITY[name] and all(
                isinstance(a, Vec) for a in args)):
            raise KernelError(f"{name} applies to {_ARITY[name]} vector(s), not {args!r}")
        instance = _FACTS[name](*args)
        _kinds_of(s, instance)
        # True for real vectors: where the coefficients of u and v mean something (sqrt(b)*x
        # needs b >= 0, which SymPy's <u, u> = b*<x, x> no longer shows).
        defined = tuple(dict.fromkeys(o for v in args if isinstance(v, Vec)
                                      for _, c in v.terms for o in visible_obligations(c)))
        out += [Implication(defined, f) for f in instance] if defined else instance
    return out


def _movable(s: Setting, premises) -> list:
    """The premises that rest on the setting alone: they hold at every k."""
    return [t for t in premises if all(s.allows(h) for h in t.hyps)]


def _step_told(s: Setting, premises, goal, facts, summed: bool, unrolled: bool | None = None
               ) -> tuple:
    """(hypotheses, goal) of a step as the solver is told them: vector definitions substituted,
    a vector equation u = v as ||u - v||^2 = 0 (real vectors), the sums' facts; unrolled (by
    default with summed): the cited updates summed over the rounds."""
    concls = [t.concl for t in premises]
    if summed if unrolled is None else unrolled:  # for the elements the goal reads
        concls += _unrolled(s, premises, goal)
    defs, _ = _vector_definitions(concls, goal)
    if isinstance(goal, VectorEq):  # substituted as vectors, then squared
        difference = _substitute(Vec.atom(goal.atom) - goal.rhs, defs)
        target = rewrite_vectors(Relation("=", ip(difference, difference), sp.Integer(0),
                                          goal.domain), defs)
    else:
        target = rewrite_vectors(goal, defs)
    hyps, told_defs = _hypotheses_and_definitions(
        s, concls + _instances_of(s, facts), target, [t.concl for t in _movable(s, premises)],
        summed=summed)
    # In the atoms the hypotheses are told in: a sum of vectors of a constant number of terms
    # that the goal still holds is written one term further out there (sums.vector_sum_steps,
    # once more), and ||x[19] + S(19)|| is not the atom ||x[18] + x[19] + S(18)||.
    return tuple(hyps), rewrite_vectors(target, told_defs)


def _unrolled(s: Setting, premises, goal) -> list:
    """w[T] = w[0] + sum(t < T, D(t)) from a cited update w[k+1] = w[k] + D(k) that rests on the
    setting alone and mentions no per-update symbol (sums.unrolled_updates), for the elements
    of w that the goal reads."""
    updates = [t.concl for t in _movable(s, premises) if isinstance(t.concl, VectorEq)
               and not free_symbols(t.concl) & s.per_update_symbols]
    if not updates:
        return []
    elements = {e for e in free_symbols(goal) if isinstance(e, sp.core.function.AppliedUndef)}
    defined = {t.concl.atom for t in premises if isinstance(t.concl, VectorEq)}
    return [f for f in unrolled_updates(updates, elements, s.nats)
            if (f.conclusion if isinstance(f, Implication) else f).atom not in defined]


def told_for(s: Setting, premises, goal, *, facts=()) -> tuple:
    """(hypotheses, goal) as decide() tells them to the solver, the shifted and termwise facts of
    sums included: for diagnostics, which search them for a counterexample (nothing here is a
    decision)."""
    _genuine(s, *premises)
    return _step_told(s, premises, goal, facts, summed=True)


@_rule("decide")
def decide(s: Setting, premises, goal, *, facts=(), timeout_ms: int = 5000) -> Decision:
    """Decide premises + declarations + instances of named facts |- goal.

    premises: Theorems; facts: (name, *arguments) of named facts, instantiated here:
    ('cauchy_schwarz', u, v), ('triangle', u, v) for vectors, ('nat_cases', k) for a nat.
    """
    _genuine(s, *premises)
    if not isinstance(goal, (Relation, VectorEq, *COMPOUND)):
        raise KernelError(f"a step proves a formula, not {goal!r}")
    _kinds_of(s, [goal])
    hyps, target = _step_told(s, premises, goal, facts, summed=False)
    movable = _movable(s, premises)  # hold at every k
    all_hyps = frozenset(s.declarations).union(*(t.hyps for t in premises))
    if sums_in(hyps):  # the terms of a sum may have been shown >= 0 from them at every index
        all_hyps |= {_at_every_k(h) for t in movable for h in t.hyps}

    # Vacuity sees what the step sees, and what real vectors and natural numbers satisfy.  A
    # contradiction that rests on a supposed (failed) step is that step's consequence instead.
    supposed = any(isinstance(h, Supposition) for h in all_hyps)
    vacuous = None if supposed else _vacuous(s, hyps, target, timeout_ms)
    if vacuous is not None:
        return vacuous

    for obligation, verdict in _meaningful(s, hyps, target.obligations(), timeout_ms):
        if sums_in([obligation]) and _met_term_by_term(
                s, _step_told(s, premises, obligation, facts, summed=True)[0], obligation,
                timeout_ms, vacuity=not supposed):
            continue
        return Decision("failed" if verdict.answer == "invalid" else "unknown", "domain",
                        None, verdict, obligation, hyps, verdict.reason)

    if (isinstance(target, Relation) and target.rel == "="
            and normal_form(target.lhs - target.rhs, s.labels) == 0):
        # Exported and cross-checked like every obligation (solver.identity).
        verdict = identity(hyps, target, timeout_ms, s.nats)
        if verdict.answer == "valid":
            return Decision("verified", "goal", _make(s, all_hyps, goal), None, target, hyps)
        return Decision("unknown", "goal", None, verdict, target, hyps, verdict.reason)
    verdict = entails(hyps, target, timeout_ms, s.nats)
    if verdict.answer != "valid" and (sums_in(hyps) or _unrolled(s, premises, goal)):
        # Only then the facts of shifted and termwise sums, and the updates summed over the
        # rounds (they cost 16% of checking the library when told at every step, measured in
        # solver checks and CPU time).
        summed, summed_target = _step_told(s, premises, goal, facts, summed=True)
        # (a goal that reads an unrolled update is rewritten: it must still mean something)
        meaningful = summed_target == target or not _meaningful(
            s, summed, summed_target.obligations(), timeout_ms)
        if summed_target != target and not supposed:
            # The updates summed over the rounds are seen by the vacuity check too (a given
            # <v, w[T]> <= -1 against w[T]'s progress proves nothing).
            unrolled, _ = _step_told(s, premises, goal, facts, summed=False, unrolled=True)
            vacuity = _contradictory(unrolled, s.nats, timeout_ms, goal=summed_target)
            if vacuity.answer == "valid":
                return Decision("failed", "vacuous", None, vacuity, None, unrolled,
                                "the hypotheses in force contradict each other, so the step "
                                "is vacuous")
        if meaningful and (len(summed) > len(hyps) or summed_target != target):
            # The facts told now can contradict a given or a case too (a given against
            # Cauchy-Schwarz for sums): the step would hold vacuously.
            vacuous = None if supposed else _vacuous(s, summed, summed_target, timeout_ms)
            if vacuous is not None:
                return vacuous
            hyps, target = summed, summed_target
            verdict = entails(hyps, target, timeout_ms, s.nats)
            # read at every index, or summed over the rounds: they hold at every k
            all_hyps |= {_at_every_k(h) for t in movable for h in t.hyps}
    if verdict.answer == "valid":
        return Decision("verified", "goal", _make(s, all_hyps, goal), verdict, target, hyps)
    status = "failed" if verdict.answer == "invalid" else "unknown"
    return Decision(status, "goal", None, verdict, target, hyps, verdict.reason)


def _met_term_by_term(s: Setting, told, obligation, timeout_ms: int, vacuity: bool = True
                      ) -> bool:
    """Whether a condition of meaning about a sum follows from told, the hypotheses with the
    sums' shifted and termwise facts for it as the goal (sqrt(sum(i < T, c[i] - 1)) means
    something where c[t] >= 1 at every t): asked, as for a goal, only where it failed without
    them.  The facts are true; told them, the hypotheses must still not contradict each other
    (vacuity: unless they rest on a supposed step, whose consequence that is)."""
    if vacuity and _contradictory(told, s.nats, timeout_ms, goal=obligation).answer == "valid":
        return False
    return not _meaningful(s, told, (obligation,), timeout_ms)


def _vacuous(s: Setting, hyps, target, timeout_ms: int):
    """The 'vacuous' Decision when the hypotheses contradict each other, else None."""
    # (with the goal's vectors: the solver proving it knows what real vectors satisfy)
    vacuity = _contradictory(hyps, s.nats, timeout_ms, goal=target)
    if vacuity.reason == NO_CERTIFICATE:
        # (a solver finds them contradictory, with certificates required: that proves no goal,
        # but the goal then holds only vacuously, whatever certificate it has)
        return Decision("unknown", "vacuous", None, vacuity, None, hyps,
                        f"the hypotheses in force may contradict each other (a solver finds "
                        f"so, but it {NO_CERTIFICATE}), so the step may be vacuous")
    if vacuity.answer != "valid":
        return None
    return Decision("failed", "vacuous", None, vacuity, None, hyps,
                    "the hypotheses in force contradict each other, so the step is vacuous")


@_rule("absurd")
def absurd(s: Setting, premises, goal, *, facts=(), timeout_ms: int = 5000) -> Decision:
    """Premises that contradict each other give any goal (ex falso), provided one of them
    rests on more than the setting (a case's condition, a given, the induction hypothesis) and
    those that rest on the setting alone, with the named facts, do not contradict each other:
    a contradiction within the setting proves nothing (the setting is then vacuous)."""
    _genuine(s, *premises)
    if not isinstance(goal, (Relation, *COMPOUND)):
        raise KernelError(f"a step proves a scalar formula, not {goal!r}")
    _kinds_of(s, [goal])
    instances = _instances_of(s, facts)
    settled = _movable(s, premises)
    if len(settled) == len(premises):
        return Decision("failed", "vacuous", None, None, None, (),
                        "it cites only facts of the setting: a contradiction among them "
                        "proves nothing; cite the case's condition (or the given) it "
                        "contradicts")
    base = tuple(_hypotheses(s, [t.concl for t in settled] + instances, None,
                             [t.concl for t in settled]))
    consistent = _contradictory(base, s.nats, timeout_ms, triples=True)
    if consistent.answer != "invalid":
        reason = ("the setting's facts cited here contradict each other, so a contradiction "
                  "proves nothing" if consistent.answer == "valid" else
                  "could not show that the setting's facts cited here are consistent")
        return Decision("failed" if consistent.answer == "valid" else "unknown", "vacuous",
                        None, consistent, None, base, reason)
    hyps = tuple(_hypotheses(s, [t.concl for t in premises] + instances, None,
                             [t.concl for t in settled]))
    verdict = _contradictory(hyps, s.nats, timeout_ms, triples=True)
    if verdict.answer != "valid" and sums_in(hyps):
        # As in decide: only then the facts of shifted and termwise sums and Cauchy-Schwarz for
        # sums, provided the setting's facts cited stay consistent with them.
        # The termwise facts are those of the opposite of a supposition with sums (the case
        # `sum a > sum b` is contradicted by summing a[k] <= b[k]): they hold whatever formula
        # chooses their coefficients.
        opposite = next((Relation(_OPPOSITE[t.concl.rel], t.concl.lhs, t.concl.rhs,
                                  t.concl.domain)
                         for t in premises if t not in settled and isinstance(t.concl, Relation)
                         and sums_in([t.concl])), None)
        summed = tuple(_hypotheses(s, [t.concl for t in premises] + instances, opposite,
                                   [t.concl for t in settled], summed=True))
        base = tuple(_hypotheses(s, [t.concl for t in settled] + instances, opposite,
                                 [t.concl for t in settled], summed=True))
        if (len(summed) > len(hyps)
                and _contradictory(base, s.nats, timeout_ms, triples=True).answer == "invalid"):
            hyps = summed
            verdict = _contradictory(hyps, s.nats, timeout_ms, triples=True)
    if verdict.answer == "valid":
        all_hyps = frozenset(s.declarations).union(*(t.hyps for t in premises))
        if sums_in(hyps):
            all_hyps |= {_at_every_k(h) for t in settled for h in t.hyps}
        return Decision("verified", "contradiction", _make(s, all_hyps, goal), verdict, None,
                        hyps)
    status = "failed" if verdict.answer == "invalid" else "unknown"
    return Decision(status, "contradiction", None, verdict, None, hyps,
                    verdict.reason or "the facts cited do not contradict each other")


_OPPOSITE = {"<": ">=", "<=": ">", ">": "<=", ">=": "<", "=": "!=", "!=": "="}


# Constraint sets found satisfiable, with the symbols that were nats (whole numbers) there: a
# subset is satisfiable too, but only with the same nats (k = 1/2 is satisfiable for a real k).
_CONSISTENT: list = []


def _contradictory(hyps, nats, timeout_ms: int, goal=None, triples: bool = False,
                   search_model: bool = False) -> Verdict:
    """Verdict 'valid' when the hypotheses contradict each other, with what real vectors satisfy
    for the vectors they and the goal mention (_gram_facts); 'invalid' when they are
    consistent, which certificates required (check --require-certificates) take only from a
    stored model (else 'unknown': a setting or givens then shown by a solver alone are not).
    search_model: the model searcher is asked where the solver could not decide (givens)."""
    told = _with_gram(hyps, goal, triples)
    key, nats = frozenset(told), frozenset(nats)
    # (not where stored models answer: each check then replays its own, so that what a file's
    # check rests on does not depend on which files the process checked before)
    if not LEDGER.active and any(nats == known_nats and key <= known
                                 for known_nats, known in _CONSISTENT):
        verdict = Verdict("invalid")
    else:
        verdict = entails(told, None, timeout_ms, nats, search_model=search_model)
        if verdict.answer == "invalid":
            _CONSISTENT.append((nats, key))
            del _CONSISTENT[:-256]
    return _modelled(verdict)


def _modelled(verdict: Verdict) -> Verdict:
    """A consistency check's verdict, 'unknown' when certificates are required and no stored
    model shows the facts consistent (a solver's model is not replayed)."""
    if verdict.answer == "invalid" and LEDGER.required and verdict.basis != "model":
        return Verdict("unknown", reason=NO_MODEL)
    return verdict


def _meaningful(s: Setting, told, obligations, timeout_ms: int) -> list:
    """The obligations that the formulas told do not imply, with the solver's verdicts.

    All are decided at once; one by one only when that fails, to name the one that fails.
    """
    pending = tuple(o for o in obligations if not _evidently_met(s, o))
    if not pending:
        return []
    told = list(told)
    if entails(_with_gram(told, Disjunction(pending)), pending, timeout_ms,
               s.nats).answer == "valid":
        return []
    out = []
    for o in pending:
        verdict = entails(_with_gram(told, o), o, timeout_ms, s.nats)
        if verdict.answer != "valid":
            out.append((o, verdict))
    return out


def _evidently_met(s: Setting, obligation: Relation) -> bool:
    """A number that is != 0 or >= 0; p != 0 for a product of powers of reals declared > 0
    (gamma^2); p >= 0 for a polynomial p in nats with non-negative coefficients (an index k+1):
    true by the declarations.  A fast path measured to cut `novikoff check proofs/` from 2.9 to
    2.2 s (the indices), and from 3.4 to 3.0 s (the declared signs)."""
    lhs = obligation.lhs
    if obligation.rhs != 0:
        return False
    if lhs.is_Rational:  # a number: 2 != 0, 4 >= 0
        return bool(lhs != 0) if obligation.rel == "!=" else bool(lhs >= 0)
    if obligation.rel == "!=":
        positive = {d.lhs for d in s.declarations if d.rel == ">" and d.rhs == 0}
        coeff, factors = lhs.as_coeff_mul()
        return coeff != 0 and all((f.base if f.is_Pow and f.exp.is_Rational else f) in positive
                                  for f in factors)
    # A polynomial in the nats and nothing else: no sequence element, inner product, norm or sum
    # (a[0] has no free symbols; with no nats, SymPy would take it for a generator of its own).
    if obligation.rel != ">=" or not s.nats or not lhs.free_symbols <= s.nats \
            or lhs.has(sp.Function, sp.Sum):
        return False
    try:
        poly = sp.Poly(obligation.lhs, *sorted(s.nats, key=str))
    except sp.PolynomialError:
        return False
    return all(c.is_Rational and c >= 0 for c in poly.coeffs())


def _defined(s: Setting, hyps, formula, timeout_ms: int) -> bool:
    """Whether hyps imply that formula means something (the conclusion of an implication: under
    its premises).  Other compound formulas always mean something: their relations are strict."""
    if isinstance(formula, Implication):
        return _defined(s, set(hyps) | set(formula.premises), formula.conclusion, timeout_ms)
    # Only what the proof used at every k may be read at every index of a sum.
    everywhere = [h.formula for h in hyps if isinstance(h, Everywhere) and s.allows(h)]
    failing = _meaningful(s, _hypotheses(s, hyps, formula, everywhere), formula.obligations(),
                          timeout_ms)
    return all(sums_in([o]) and _met_term_by_term(
        s, _hypotheses(s, hyps, o, everywhere, summed=True), o, timeout_ms) for o, _ in failing)


# ---------------------------------------------------------------------------- structural rules

_FLIP = {"=": "=", "!=": "!=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}
_IMPLIES = {"=": {"=", "<=", ">="}, "<": {"<", "<=", "!="}, ">": {">", ">=", "!="},
            "<=": {"<="}, ">=": {">="}, "!=": {"!="}}


def conclusion_matches(shown, statement, labels=frozenset()) -> bool:
    """Tell whether `shown` gives `statement`: the same shape, each relation the same sides
    (either way round, up to ring identities).  A relation in a positive position may be
    stronger; a premise or a side of an equivalence must mean the same.  A relation inside
    `and`, `or` or `<=>` must also have every domain condition of the statement's; at the top
    level (and as the conclusion of an implication) accepts() and the other rules check that
    the statement means something instead."""
    if isinstance(shown, Relation) and isinstance(statement, Relation):
        return _gives(shown, statement, labels)
    if isinstance(shown, Implication) and isinstance(statement, Implication):
        # _defined() checks the conclusion's meaning under the premises.
        return (len(shown.premises) == len(statement.premises)
                and all(_same_meaning(x, y, labels)
                        for x, y in zip(shown.premises, statement.premises))
                and conclusion_matches(shown.conclusion, statement.conclusion, labels))
    return _compound_gives(shown, statement, labels)


def _gives(shown: Relation, statement: Relation, labels) -> bool:
    """lhs R rhs gives lhs' R' rhs' when R implies R' and lhs - rhs = lhs' - rhs' as terms
    (so `A - B >= 0` gives `A >= B`), either way round."""
    for rel, lhs, rhs in ((shown.rel, shown.lhs, shown.rhs),
                          (_FLIP[shown.rel], shown.rhs, shown.lhs)):
        if statement.rel in _IMPLIES[rel] and same_term(lhs - rhs, statement.lhs - statement.rhs,
                                                        labels):
            return True
    return False


# Parts of an `and` or an `or` matched in any order up to this many (6! = 720 orders).
_MAX_PERMUTED = 6


def _compound_gives(shown, statement, labels) -> bool:
    """`shown` gives `statement` where both may be part of a larger formula."""
    if isinstance(shown, Relation) and isinstance(statement, Relation):
        return (_gives(shown, statement, labels)
                and set(statement.obligations()) <= set(shown.obligations()))
    if type(shown) is not type(statement) or not isinstance(shown, COMPOUND):
        return shown == statement
    a, b = subformulas(shown), subformulas(statement)
    if len(a) != len(b):
        return False
    if isinstance(shown, (Conjunction, Disjunction)):  # each part gives one, in any order
        orders = itertools.permutations(b) if len(b) <= _MAX_PERMUTED else (b,)
        return any(all(_compound_gives(x, y, labels) for x, y in zip(a, order))
                   for order in orders)
    if isinstance(shown, Implication):
        return (all(_same_meaning(x, y, labels) for x, y in zip(a[:-1], b[:-1]))
                and _compound_gives(a[-1], b[-1], labels))
    return all(_same_meaning(x, y, labels) for x, y in zip(a, b))  # an equivalence


def _same_meaning(a, b, labels) -> bool:
    return _compound_gives(a, b, labels) and _compound_gives(b, a, labels)


def _require_match(s: Setting, thm: Theorem, statement, what: str, timeout_ms: int) -> None:
    if not conclusion_matches(thm.concl, statement, s.labels):
        raise KernelError(f"{what} shows {thm.concl}, not {statement}")
    if not _defined(s, thm.hyps, statement, timeout_ms):
        raise KernelError(f"{what}: {statement} may mean nothing under its hypotheses "
                          f"(a division by zero, a square root of a negative number, or a "
                          f"negative index)")


@_rule("trans")
def trans(s: Setting, first: Theorem, second: Theorem) -> Theorem:
    """a R1 b, b R2 c |- a R c."""
    _genuine(s, first, second)
    a, b = first.concl, second.concl
    if not (isinstance(a, Relation) and isinstance(b, Relation)):
        raise KernelError("transitivity joins two relations")
    if not same_term(a.rhs, b.lhs, s.labels):
        raise KernelError(f"the chain is broken: {a.rhs} is not {b.lhs}")
    rel = compose_relations(a.rel, b.rel)
    if rel is None:
        raise KernelError(f"'{a.rel}' then '{b.rel}' do not compose")
    # same_term uses y**2 = 1 for labels: the declarations are hypotheses of the result.
    domain = tuple(dict.fromkeys(a.obligations() + b.obligations()))
    return _make(s, first.hyps | second.hyps | set(s.declarations),
                 Relation(rel, a.lhs, b.rhs, domain))


def _at(formula, var, value):
    """formula with var := value, exactly (terms.exact_subs) or refused."""
    try:
        return formula.subs(var, value)
    except ValueError as exc:
        raise KernelError(str(exc)) from None


def _varies(s: Setting, formula, var) -> bool:
    if isinstance(formula, Everywhere):
        return True  # an assumption of another setting: it may not be used here
    return bool(free_symbols(formula) & ({var} | s.per_update_symbols))


@_rule("induction")
def induction(s: Setting, var: sp.Symbol, statement: Relation, base: Theorem, step: Theorem,
              timeout_ms: int = 5000) -> Theorem:
    """P(0), P(k) |- P(k+1)  give  P(k) for the natural k.

    Both may rest only on what holds at every k: any other hypothesis that varies with k (it
    mentions k, an element indexed by k, or a per-update symbol) is refused.
    """
    _genuine(s, base, step)
    if var not in s.nats:
        raise KernelError(f"induction on {var}, which is not declared nat")
    if not isinstance(statement, (Relation, VectorEq, *COMPOUND)):
        raise KernelError("induction proves a formula")
    _kinds_of(s, [statement])
    varying = free_symbols(statement) & s.per_update_symbols
    if varying:
        names = ", ".join(sorted(map(str, varying)))
        raise KernelError(f"the statement mentions {names}, which change with {var} "
                          f"(declared per update): induction on {var} does not apply")
    _require_match(s, base, _at(statement, var, sp.Integer(0)), "the base case", timeout_ms)
    _require_match(s, step, _at(statement, var, var + 1), "the step", timeout_ms)
    hyps = base.hyps | (step.hyps - {statement})
    for h in hyps:
        if not isinstance(h, Supposition) and not s.allows(h) and _varies(s, h, var):
            raise KernelError(f"the proof rests on {h}, which varies with {var}: induction on "
                              f"{var} may rest only on what holds at every {var} (the "
                              f"setting's assumptions)")
    return _make(s, hyps | set(s.declarations), statement)


@_rule("instantiate")
def instantiate(s: Setting, thm: Theorem, var: sp.Symbol, value: sp.Expr, premises=(),
                timeout_ms: int = 5000):
    """A theorem that rests only on the setting's assumptions holds at every value of the nat
    var, so at value, a whole number that the premises show is >= 0 (k - 1 where k >= 1).
    Returns (Decision of value >= 0, Theorem or None).

    Refused: a theorem that rests on anything else (a given, a case, an induction hypothesis,
    a failed step), and one whose statement mentions a per-update symbol (x denotes the example
    of update k; at k - 1 it would denote another example).
    """
    _genuine(s, thm, *premises)
    if var not in s.nats:
        raise KernelError(f"{var} is not a nat of setting {s.name}")
    if not isinstance(value, sp.Expr):  # a term the elaborator made, never text to parse
        raise KernelError(f"the value of {var} is not a term: {value!r}")
    if not value.free_symbols <= s.nats or not integer_polynomial(value):
        raise KernelError(f"{value} is not an integer polynomial in the nats of setting "
                          f"{s.name}")
    _kinds_of(s, [Relation(">=", value, sp.Integer(0))])
    extra = [h for h in thm.hyps if not s.allows(h)]
    if extra:
        raise KernelError(f"only what rests on the setting's assumptions alone holds at every "
                          f"value of {var}; this rests on {extra[0]}")
    varying = free_symbols(thm.concl) & s.per_update_symbols
    if varying:
        names = ", ".join(sorted(map(str, varying)))
        raise KernelError(f"the statement mentions {names}, the example of update {var} "
                          f"(declared per update): at {value} it would denote another example")
    nonneg = decide(s, premises, Relation(">=", value, sp.Integer(0)), timeout_ms=timeout_ms)
    if nonneg.status != "verified":
        return nonneg, None
    # It rests on the assumptions at every k now, not at the symbolic one only.
    moved = {_at_every_k(h) for h in thm.hyps}
    return nonneg, _make(s, moved | nonneg.theorem.hyps, _at(thm.concl, var, value))


_UNDEFINED = (sp.zoo, sp.nan, sp.I, sp.oo, -sp.oo)

# The kinds a theorem may be specialized in, and what a value of each kind is.
_SPECIALIZABLE = {"real": "scalar", "label": "scalar", "label01": "scalar", "vector": "vector",
                  "vector_sequence": "sequence", "real_sequence": "sequence",
                  "label_sequence": "sequence", "label01_sequence": "sequence"}


@_rule("specialize")
def specialize(s: Setting, thm: Theorem, var, value, premises=(), timeout_ms: int = 5000):
    """hyps(var) |- C(var) for a real, label, vector or sequence var gives hyps(value) |-
    C(value): var is a symbol like any other, so what is proved about it holds for every value
    that meets the same hypotheses (a scalar term for a real or a label, a Vec for a vector,
    another sequence of the same kind for a sequence).  A hypothesis about var whose
    counterpart at value is an assumption or a declaration of the setting becomes that one; the
    others (gamma > 0 at gamma := b, a given at k) must be shown by the premises, as must the
    conditions under which the value means something.  Returns (Decision of those, Theorem or
    None).

    Refused: a theorem resting on a supposition about var (a failed step), one resting at
    every k on a fact about var when the value depends on the nats or the update (that fact
    would then speak of other values), a nat (instantiate moves nats), and a vector
    expression for a vector read inside a sum of vectors or a vector equation."""
    _genuine(s, thm, *premises)
    name = getattr(var, "name", getattr(var, "__name__", None))
    kind = s.kinds.get(name)
    if kind not in _SPECIALIZABLE or symbol(name, kind) != var:
        raise KernelError(f"{var} is not a real, label, vector or sequence of setting {s.name}")
    substitute, conditions, varying = _substitution(s, thm, var, value, name, kind)

    def put(formula):
        try:
            out = substitute(formula)
        except ValueError as exc:  # SymPy refused the value there (a sum inside a sum)
            raise KernelError(f"{name} cannot take that value there: {exc}") from None
        if any(side.has(*_UNDEFINED) for side in sides(out)):  # 1/a at a := 0
            raise KernelError(f"at that value of {name} a term has no real value")
        return out

    hyps = set()
    for h in thm.hyps:
        if not _mentions(h, var):
            hyps.add(h)
            continue
        if isinstance(h, Supposition):
            raise KernelError(f"it rests on {h}, which was not shown")
        formula = h.formula if isinstance(h, Everywhere) else h
        moved = Everywhere(put(formula)) if isinstance(h, Everywhere) else put(formula)
        # An assumption about the nats or the update holds at every k, and the theorem may have
        # used it so (an induction): its counterpart must hold at every k too, so it must be an
        # assumption.  A declaration, an assumption without nats, a fact at this k (a given, a
        # case) is a condition at this k.
        at_every_k = free_symbols(formula) & (s.nats | s.per_update_symbols)
        if isinstance(h, Everywhere) and not at_every_k and not varying \
                and not s.allows(moved):
            # Nothing in it depends on k, nor in the value: at every k is at this k.
            conditions.append(moved.formula)
        elif isinstance(h, Everywhere) or (s.allows(h) and at_every_k):
            if varying or not s.allows(moved):
                named = next((n for n, f in s.assumptions.items() if f == formula), None)
                raise KernelError(f"it rests on {f'the assumption {named}' if named else formula}"
                                  f" at every value of the nats, and "
                                  + (f"{_shown_value(value)} depends on them or on the update"
                                     if varying else
                                     f"no assumption says the same of {_shown_value(value)}")
                                  + f": it holds for that {name} only")
            hyps.add(moved)
        elif s.allows(moved):
            hyps.add(moved)
        else:
            conditions.append(moved)
    instance = put(thm.concl)
    if not conditions:
        conditions = [Relation("=", sp.Integer(0), sp.Integer(0))]
    shown = decide(s, premises, Conjunction(tuple(dict.fromkeys(conditions)))
                   if len(conditions) > 1 else conditions[0], timeout_ms=timeout_ms)
    if shown.status != "verified":
        return shown, None
    return shown, _make(s, hyps | shown.theorem.hyps, instance)


def _substitution(s: Setting, thm: Theorem, var, value, name: str, kind: str) -> tuple:
    """(formula -> formula with var := value, the conditions under which value means
    something, whether value mentions a nat or a per-update symbol)."""
    expected = _SPECIALIZABLE[kind]
    if expected == "sequence":
        if not (isinstance(value, sp.core.function.UndefinedFunction)
                and s.kinds.get(value.__name__) == kind and symbol(value.__name__, kind) == value):
            raise KernelError(f"{name} is a {kind.replace('_', ' ')}: its value is another one")
        return (lambda f: _renamed(f, {e: value(*e.args) for e in free_symbols(f)
                                       if getattr(e, "func", None) == var}), [], False)
    if expected == "vector":
        if not isinstance(value, Vec):
            raise KernelError(f"{name} is a vector: its value is a vector")
        probe = Relation("=", ip(value, value), sp.Integer(0))
        conditions = [o for _, c in value.terms for o in visible_obligations(c)]
        if len(value.terms) == 1 and value.terms[0][1] == 1:
            atom = value.terms[0][0]
            put = lambda f: f.subs(var, atom)  # noqa: E731
        else:
            formulas = [thm.concl] + [getattr(h, "formula", h) for h in thm.hyps]
            if any(_unreachable(f, var) for f in formulas):
                raise KernelError(f"{name} is read inside the terms of a sum of vectors or a "
                                  f"vector equation there: it can only be replaced by a vector "
                                  f"alone")
            put = lambda f: rewrite_vectors(f, {var: value})  # noqa: E731  bilinear
    else:
        if not isinstance(value, sp.Expr) or value.has(BOUND, VECTOR_BOUND):
            raise KernelError(f"the value of {name} is not a scalar term: {value!r}")
        probe = Relation("=", value, sp.Integer(0))
        conditions = list(visible_obligations(value))
        put = lambda f: _at(f, var, value)  # noqa: E731
    _kinds_of(s, [probe])
    # (free_symbols includes the indices of sequence elements: x[k+1] mentions k)
    varying = bool(free_symbols(probe) & (s.nats | s.per_update_symbols))
    return put, conditions, varying


def _shown_value(value) -> str:
    return value.__name__ if isinstance(value, sp.core.function.UndefinedFunction) else \
        str(value)


def _renamed(formula, mapping: dict):
    """formula with the sequence elements in mapping replaced, everywhere (structurally: SymPy's
    subs cannot replace a sequence inside a sum)."""
    if isinstance(formula, COMPOUND):
        return rebuild(formula, tuple(_renamed(p, mapping) for p in subformulas(formula)))
    domain = tuple(_renamed(d, mapping) for d in formula.domain)
    if isinstance(formula, VectorEq):
        return VectorEq(formula.atom.xreplace(mapping), formula.rhs.xreplace(mapping), domain)
    return Relation(formula.rel, formula.lhs.xreplace(mapping), formula.rhs.xreplace(mapping),
                    domain)


def _unreachable(formula, var) -> bool:
    """Whether rewrite_vectors would leave the vector var somewhere in formula: in a vector
    equation, or inside the terms of a sum of vectors."""
    if isinstance(formula, COMPOUND):
        return any(_unreachable(p, var) for p in subformulas(formula))
    if isinstance(formula, VectorEq):
        return _mentions(formula, var)
    return any(var in e.free_symbols for side in sides(formula) for e in side.atoms(VectorSum))


def _mentions(formula, var) -> bool:
    """Whether a formula (or a hypothesis) says anything about the symbol or sequence var."""
    if isinstance(formula, (Everywhere, Supposition)):
        formula = formula.formula
    found = free_symbols(formula)
    return var in found or any(getattr(e, "func", None) == var for e in found)


@_rule("cases")
def cases(s: Setting, goal, branches, premises=(), timeout_ms: int = 5000):
    """(c1 or ... or cn), and goal under each ci  give  goal.  Returns (Decision, Theorem|None).

    branches: (condition, Theorem) pairs; coverage is decided from premises and declarations.
    """
    _genuine(s, *premises, *(t for _, t in branches))
    cover = decide(s, premises, Disjunction(tuple(c for c, _ in branches)),
                   timeout_ms=timeout_ms)
    if cover.status != "verified":
        return cover, None
    hyps = set(cover.theorem.hyps)
    for condition, thm in branches:
        _require_match(s, thm, goal, "a case", timeout_ms)
        hyps |= thm.hyps - {condition}
    return cover, _make(s, hyps, goal)


@_rule("discharge")
def discharge(s: Setting, thm: Theorem, premises: tuple) -> Theorem:
    """Gamma, H1..Hn |- C  gives  Gamma |- (H1 and .. and Hn) => C."""
    _genuine(s, thm)
    return _make(s, thm.hyps - set(premises), Implication(tuple(premises), thm.concl))


@_rule("accepts")
def accepts(s: Setting, thm: Theorem, statement, timeout_ms: int = 5000,
            givens: bool = True) -> tuple:
    """Whether thm proves statement in setting s; (ok, hypotheses that are not allowed).

    The setting must have no problems, every hypothesis must be one of its assumptions or
    declarations, and the statement must mean something where they hold.  givens: whether the
    premises of an implication statement are a lemma's givens, which must not contradict the
    setting (a statement written as `A => B` may have a premise that never holds: it is then
    true, vacuously, as written).
    """
    _genuine(s, thm)
    extra = tuple(h for h in thm.hyps if not s.allows(h))
    ok = (not s.problems and not extra
          and conclusion_matches(thm.concl, statement, s.labels)
          and _defined(s, thm.hyps, statement, timeout_ms)
          and not (givens and vacuous_givens(s, statement, timeout_ms)))
    if ok:
        _ACCEPTED.setdefault(thm, []).append(statement)
    return ok, extra


def vacuous_givens(s: Setting, statement, timeout_ms: int = 5000) -> bool:
    """Whether a lemma's givens may contradict the setting (then it would hold vacuously): true
    unless the givens are shown consistent with it (an unknown answer never counts as
    consistent)."""
    return givens_consistency(s, statement, timeout_ms).answer != "invalid"


def _nat_values(s: Setting, premises) -> list:
    """(k, v) for each premise `k = v` (or `v = k`) that gives the nat k a value v: an integer
    polynomial in the other nats."""
    out = []
    for p in premises:
        if not (isinstance(p, Relation) and p.rel == "="):
            continue
        for k, value in ((p.lhs, p.rhs), (p.rhs, p.lhs)):
            if k in s.nats and value.free_symbols <= s.nats - {k} \
                    and integer_polynomial(value):
                out.append((k, value))
    return out


def _solved_nat_values(s: Setting, premises) -> list:
    """(k, v) for the whole values v >= 0 that SymPy solves the premises' equations between
    nats for (2*k = 4; k = j + 1 and j = 1; k*k = 4: the linear ones together, a quadratic in
    one nat alone), where they are not a literal `k = v`, and
    those that numeric bounds leave a nat (k >= 2 and k <= 2; at most 3 values).  Untrusted:
    each is used only as the premise of an implication, true whatever it is."""
    parts = list(premises)
    for p in parts:  # (the list grows with the parts of a conjunction)
        if isinstance(p, Conjunction):
            parts += p.parts
    equations, low, high = [], {}, {}
    for p in parts:
        if isinstance(p, Relation) and p.rel in ("<", "<=", ">", ">="):
            for k, c, rel in ((p.lhs, p.rhs, p.rel), (p.rhs, p.lhs, _FLIP[p.rel])):
                if k in s.nats and c.is_Rational:  # the whole numbers k may take
                    bound = int({">": sp.floor(c) + 1, ">=": sp.ceiling(c),
                                 "<": sp.ceiling(c) - 1, "<=": sp.floor(c)}[rel])
                    if rel in (">", ">="):
                        low[k] = max(low.get(k, 0), bound)
                    else:
                        high[k] = min(high.get(k, bound), bound)
        if isinstance(p, Relation) and p.rel == "=":
            e = sp.expand(p.lhs - p.rhs)
            if e.free_symbols and e.free_symbols <= s.nats and e.is_polynomial() \
                    and sp.Poly(e, *sorted(e.free_symbols, key=str)).total_degree() <= 2:
                equations.append(e)
    # (the width first: `given T <= 10^16` is no range to walk)
    found = [(k, sp.Integer(v)) for k in high if high[k] - low.get(k, 0) < 3
             for v in range(low.get(k, 0), high[k] + 1)]
    # The linear equations together (an exact elimination), a quadratic in one nat alone (its
    # roots in closed form): SymPy's solve on quadratics in two nats ran for minutes.
    linear = [e for e in equations if sp.Poly(e, *e.free_symbols).total_degree() == 1]
    if linear:
        unknowns = sorted(set().union(*(e.free_symbols for e in linear)), key=str)
        for values in sp.linsolve(linear, unknowns):
            found += [(k, v) for k, v in zip(unknowns, values) if v.is_Integer and v >= 0]
    for e in equations:
        if len(e.free_symbols) == 1 and e not in linear:
            (k,) = e.free_symbols
            found += [(k, v) for v in sp.roots(sp.Poly(e, k)) if v.is_Integer and v >= 0]
    literal = set(_nat_values(s, premises))
    return [kv for kv in dict.fromkeys(found) if kv not in literal]


def _nat_moves(s: Setting, premises) -> list:
    """The values to move the givens to, as {nat: value} maps: each nat set to a value (`k =
    2`, or solved: _solved_nat_values) alone, and all the nats set to numbers together (k = 1
    and j = 1 read w[k + j] at 2); then the same for each part of a disjunction, implication
    or equivalence among the premises and their conjunctions, taken with the other premises
    (`k = 2 or k = j` with `j = 1` moves to k = 2 and to k = 1; `j = 1 => k = 2` to k = 2 and
    j = 1; not with another disjunction's parts: no products).  Each is used only as the
    premise of an implication, so any of them is sound."""
    values = _nat_values(s, premises) + _solved_nat_values(s, premises)
    numbers = {}
    for k, value in values:
        if value.is_Integer:
            numbers.setdefault(k, value)
    moves = [{k: value} for k, value in values]
    if len(numbers) >= 2:
        moves.append(numbers)
    parts = list(premises)
    for p in parts:  # (the list grows with the parts of a conjunction)
        if isinstance(p, Conjunction):
            parts += p.parts
    plain = [p for p in parts if not isinstance(p, COMPOUND)]
    for p in parts:
        if not isinstance(p, Conjunction):
            for part in subformulas(p):  # (each a part of the formula: the walk ends)
                moves += _nat_moves(s, plain + [part])
    return list({tuple(m.items()): m for m in moves}.values())


def givens_consistency(s: Setting, statement, timeout_ms: int = 5000) -> Verdict:
    """Verdict 'invalid' when the givens of an implication statement are consistent with the
    setting (a model exists), 'valid' when they contradict it, 'unknown' when neither was shown
    (its reason says why)."""
    if not isinstance(statement, Implication):
        return Verdict("invalid")
    refused: list = []  # the values at which a term would be evaluated in floating point
    unwalked: list = []  # the indices (and sums) too far apart for the assumptions to be walked
    formulas = list(s.assumptions.values()) + list(statement.premises)
    formulas += _at_indices_of(s, statement.premises, refused, unwalked)
    # A scaled index (w[2*k] = 0) reaches indices no given reads (w[2] at k := 1): then the
    # setting's own meeting points too.  (Not for every setting: measured to make checking the
    # library 20 times slower, and to leave a givens check undecided.)
    assumptions = list(s.assumptions.values())
    if any(_scaled_indices(assumptions, k) for k in s.nats):
        instances, left_out = _instances(s)
        formulas += instances
        refused += left_out
    # A given that sets a nat (`k = 2`, or through other formulas: 2*k = 4, or in an
    # alternative: k = 2 or k = 3) moves the givens there (w[k] = u gives w[2] = u), as
    # implications (`k = 2 => w[2] = u`: true whichever values were collected), and the setting
    # meets them at their new indices (w[0] = 0, w[k+1] = w[k] + x reach w[2]).
    for move in _nat_moves(s, statement.premises):
        moved = []
        for premise in statement.premises:
            try:
                for k, value in move.items():
                    premise = premise.subs(k, value)
            except ValueError:  # not exactly at that value (terms.exact_subs): said below
                refused.append(", ".join(f"{k} = {v}" for k, v in move.items()))
                continue
            moved.append(premise)
        at = tuple(Relation("=", k, value) for k, value in move.items())
        formulas += [Implication(at, m) for m in moved] + _at_indices_of(s, moved, refused,
                                                                          unwalked)
    # summed: with every fact of the sums a step may be told (Cauchy-Schwarz for sums,
    # telescoping, termwise comparisons), so that a given against one of them is refused here.
    told = _hypotheses(s, formulas + _summed_over_rounds(s, statement.premises), None,
                       tuple(s.assumptions.values()), summed=True, givens=True)
    verdict = _contradictory(told, s.nats, timeout_ms, triples=True, search_model=True)
    if verdict.answer == "invalid" and refused:  # (a contradiction there was not looked for)
        return Verdict("unknown", reason=f"could not check the givens at "
                                         f"{', '.join(dict.fromkeys(refused))}: a term there "
                                         f"would be evaluated in floating point")
    if verdict.answer == "invalid" and unwalked:  # (nor there)
        return Verdict("unknown", reason=f"could not check the givens across "
                                         f"{'; '.join(dict.fromkeys(unwalked))}: the "
                                         f"assumptions are walked over at most {_CHAIN} "
                                         f"indices")
    return verdict


def certifies(thm, statement) -> bool:
    """Whether accepts() has accepted this very theorem for this statement (for consumers of
    results: a status string or a theorem made elsewhere proves nothing)."""
    return isinstance(thm, Theorem) and thm in _ISSUED and statement in _ACCEPTED.get(thm, ())


def describe_obligation(obligation, formula=None, show=str) -> str:
    """Say which condition of meaning failed: a division, a square root or an index."""
    what = show(obligation.lhs)
    if obligation.rel == "!=":
        return f"division by {what}, which may be zero"
    indices = set()
    for side in sides(formula) if formula is not None else []:
        indices |= {e.args[0] for e in side.atoms(sp.core.function.AppliedUndef)}
        indices |= {e.args[0] for i in side.atoms(Inner) for e in i.args
                    if isinstance(e, sp.core.function.AppliedUndef)}
    if obligation.lhs in indices:
        return f"index {what}, which may be negative"
    if any(count(s) == obligation.lhs for s in sums_in([formula] if formula else [])):
        return f"a sum of {what} terms, which may be negative"
    roots = {p.base for side in (sides(formula) if formula is not None else [])
             for p in side.atoms(sp.Pow) if p.exp.is_Rational and not p.exp.is_Integer}
    if obligation.lhs in roots:
        return f"square root of {what}, which may be negative"
    # (a sum whose closed form left no Sum behind, or a root SymPy rewrote)
    return f"{what} >= 0 is needed for the formula to mean something (the number of terms " \
           f"of a sum, or a square root's argument), and it may be negative"
