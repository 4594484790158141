"""Finite sums ``sum(i < n, t(i))``: the facts that define them (their normal form, and sums of
vectors, are terms: terms.py).

A sum is SymPy's ``Sum(t(BOUND), (BOUND, 0, n - 1))`` over one fixed bound variable, so that two
sums with the same terms are the same object whatever the index was called.  Its meaning is the
usual one: ``t(0) + ... + t(n-1)``, meaningful where ``n >= 0`` (an obligation of the term).  The
terms must mean something for *every* i >= 0 (written.py refuses a sum whose terms divide by
something that may be zero or take an index that may be negative); so the facts below hold
wherever the sum means something, and adding them to a solver's hypotheses is sound:

- ``n = 0  =>  S(n) = 0``;
- ``n >= 1  =>  S(n) = S(n-1) + t(n-1)`` (the step);
- when every term is ``>= 0`` (decided once per setting and terms): ``S(n) >= 0``, and for
  ``n >= 1`` also ``S(n-1) >= 0`` and ``t(n-1) >= 0`` (and, when a step needs it, ``S(n) >=
  t(0)``).

Told only when a step does not follow without them (logic.decide), two more kinds of facts:

- a sum whose terms read sequences at i+1 or later is its shift, ``S(t, n) = S(t(i-1), n+1) -
  t(-1)`` (so ``sum(i < n, a[i+1] - a[i]) = a[n] - a[0]`` telescopes);
- summing an inequality over the indices: for the goal's sums of one count, with their
  coefficients, ``sum_j c_j*S_j + c*n >= 0`` when ``sum_j c_j*t_j(i) + c >= 0`` at every index
  (``sum f <= sum g`` from ``f[k] <= g[k]``; ``sum(t < T, d[t+1] - rho) >= 0``); the goal is
  also read with its denominator cleared (``sum(i < T, a[i])/T <= R``), which only chooses the
  coefficients: the fact holds whatever they are;
- Cauchy-Schwarz for sums (the terms are real numbers): ``S(t, n)^2 <= n*S(t^2, n)`` for every
  sum, and ``S(f*g, n)^2 <= S(f^2, n)*S(g^2, n)`` for a sum whose term is a product of two
  factors that depend on the index.

A sum of i^p alone has a closed form (Faulhaber's polynomial: ``sum(i < n, i) = n*(n-1)/2``).
Linearity is built into the normal form: constant factors are taken out and sums of terms split,
and a sum of a constant ``c`` is ``n*c``; so ``sum(i < k, 2*a[i] + 1) = 2*sum(i < k, a[i]) + k``
holds by algebra.  The solver sees each sum as an atom of its own; sums with the same terms and
equal bounds are equal (congruence, in the translators).
"""

from __future__ import annotations

import itertools

import sympy as sp

from .formulas import (Implication, Relation, VectorEq, atoms_in, free_symbols, others_at_zero,
                       visible_obligations)
from .terms import (BOUND, Norm, Vec, VectorSum, count, exact_subs, make_sum, norm, too_large,
                    vector_sum)
from .written import integer_polynomial

__all__ = ["at_least_zero", "sums_in", "sum_facts", "unrolled_updates", "vector_sum_steps"]

def sums_in(formulas) -> list:
    """The sums the formulas mention, in a fixed order."""
    found: set = set()
    for f in formulas:
        found |= atoms_in(f, sp.Sum)
    return sorted(found, key=sp.default_sort_key)


def sum_facts(formulas, nonnegative, goal=None, summed: bool = False, everywhere=(),
              nats=frozenset()) -> list:
    """The defining facts of every sum the formulas (and the goal) mention; with summed, also
    the shifts of sums whose terms start at index 1 or later, the goal's termwise facts and the
    relations of everywhere summed over the counts of its sums (see the module's docstring).

    nonnegative(terms) -> bool says whether every term is >= 0 (for every i >= 0).
    everywhere: relations that hold at every value of the nats (of nats).
    """
    # The goal's conditions of meaning too: a sum may be left only there (the quotient of a sum
    # by itself is 1 where the sum is != 0, which its facts show).
    formulas = list(formulas) + ([goal, *goal.obligations()] if goal is not None else [])
    facts = (_shift_facts(sums_in(formulas)) + _cauchy_schwarz_facts(sums_in(formulas))
             + _triangle_facts(sums_in(formulas), formulas) if summed else [])
    done, pending = set(), sums_in(formulas + facts)
    # With summed, the shorter sums' facts too, a few terms deep (k = 2 => sum(i < k, a[i]) =
    # a[0] + a[1]).
    for _ in range(_DEPTH if summed else 1):
        found = []
        for s in pending:
            if s not in done:
                done.add(s)
                new = _defining_facts(s, nonnegative)
                facts += new
                found += sums_in(new)
        pending = found
    if summed:
        in_play = sorted(done, key=sp.default_sort_key)
        facts += _first_term_facts(in_play, nonnegative)
        facts += _part_facts(in_play, formulas, nonnegative, nats)
        compared = _compared_termwise(formulas, goal)
        for f in compared:
            facts += _termwise_facts(f, nonnegative)
        facts += _summed_relations(everywhere, nats, sums_in(compared))
    return facts


def _first_term_facts(sums, nonnegative) -> list:
    """n >= 1 => sum(i < n, t(i)) >= t(0) for the sums whose terms are all >= 0 (the step facts
    peel the last term; a textbook also drops all but the first)."""
    facts = []
    for s in sums:
        if nonnegative(s.function):
            try:
                first = exact_subs(s.function, BOUND, sp.Integer(0))
            except ValueError:  # no facts rather than facts SymPy computed in floating point
                continue
            facts.append(Implication((Relation(">=", count(s), 1),), Relation(">=", s, first)))
    return facts


def _part_facts(sums, formulas, nonnegative, nats) -> list:
    """For sums of terms >= 0, a part is at most the whole: 0 <= m <= n => sum(i < n, t(i)) >=
    sum(i < m, t(i)) for two sums of the same terms, and 0 <= e - c < n => sum(i < n, a[i + c])
    >= a[e] for an element a[e] that the formulas read (e a polynomial in nats with integer
    coefficients)."""
    elements = {e for f in formulas for e in free_symbols(f)
                if isinstance(e, sp.core.function.AppliedUndef)}
    facts = []
    for s in sums:
        if not nonnegative(s.function):
            continue
        n = count(s)
        for other in sums:
            m = count(other)
            if other.function == s.function and m != n:
                facts.append(Implication((Relation(">=", m, 0), Relation(">=", n, m)),
                                         Relation(">=", s, other)))
        if isinstance(s.function, sp.core.function.AppliedUndef):
            offset = sp.expand(s.function.args[0] - BOUND)
            if not offset.is_Integer:
                continue
            for e in elements:
                if e.func == s.function.func and e.args[0].free_symbols <= set(nats) \
                        and integer_polynomial(e.args[0]):
                    i = sp.expand(e.args[0] - offset)
                    facts.append(Implication((Relation(">=", i, 0), Relation("<=", i + 1, n)),
                                             Relation(">=", s, e)))
    return facts


def _compared_termwise(formulas, goal) -> list:
    """The relations whose sums are compared termwise: the goal, and its conditions of meaning,
    which its proof must show too (the root of sum(i < T, c[i] - 1) >= 0 where c[t] >= 1);
    with no goal (a consistency check), the formulas that hold a sum (a[k] <= c[k] against
    sum(t < 20, a[t]) > sum(t < 20, c[t]))."""
    if isinstance(goal, Relation):
        return [goal, *goal.obligations()]
    if goal is None:
        return [f for f in formulas if isinstance(f, Relation) and sums_in([f])]
    return []


# How many terms deep the defining facts of the shorter sums go when a step needs them.
_DEPTH = 3


def _defining_facts(s: sp.Sum, nonnegative) -> list:
    terms, n = s.function, count(s)
    try:
        last = exact_subs(terms, BOUND, n - 1)
    except ValueError:  # no facts rather than facts SymPy computed in floating point
        return []
    shorter = make_sum(terms, n - 1)
    facts = [Implication((Relation("=", n, 0),), Relation("=", s, 0)),
             Implication((Relation(">=", n, 1),), Relation("=", s, shorter + last)),
             # and the shorter sum is empty when n = 1 (else a counterexample may give it any
             # value)
             Implication((Relation("=", n, 1),), Relation("=", shorter, 0))]
    if nonnegative(terms):
        facts.append(Implication((Relation(">=", n, 0),), Relation(">=", s, 0)))
        facts.append(Implication((Relation(">=", n, 1),), Relation(">=", shorter, 0)))
        facts.append(Implication((Relation(">=", n, 1),), Relation(">=", last, 0)))
    return facts


# Sums whose terms start at index m >= 1 are shifted down at most this many times.
_SHIFTS = 4


def _shift_facts(sums) -> list:
    """sum(i < n, t(i)) = sum(i < n+1, t(i-1)) - t(-1) for the sums whose terms read sequences
    only at i+1 or later (a[i+1] - a[i] then telescopes: the step facts of the shifted sum do
    the rest).  t(i-1) means something at every i >= 0 because every index in it is still
    >= i, and the rest of the term is a polynomial in i."""
    facts, seen, pending = [], set(), list(sums)
    for _ in range(_SHIFTS):
        found = []
        for s in pending:
            if s in seen or not _starts_later(s.function):
                continue
            seen.add(s)
            terms, n = s.function, count(s)
            earlier = terms.xreplace({BOUND: BOUND - 1})
            fact = Implication((Relation(">=", n, 0),), Relation(
                "=", s, make_sum(earlier, n + 1) - earlier.xreplace({BOUND: sp.Integer(0)})))
            facts.append(fact)
            found += sums_in([fact])
        pending = found
    return facts


def _cauchy_schwarz_facts(sums) -> list:
    """(sum t)^2 <= n*sum(t^2), and (sum f*g)^2 <= sum(f^2)*sum(g^2) when the term is f*g with
    both factors depending on the index: Cauchy-Schwarz in R^n (with the vector of ones for the
    first), true for real terms, and 0 <= 0 for the empty sum.  Only those whose sums of squares
    are among the given sums: another fact would bring in sums that nothing else constrains."""
    facts, given = [], set(sums)
    for s in sums:
        terms, n = s.function, count(s)
        squares = [(make_sum(terms ** 2, n), n)]
        varying = [f for f in sp.Mul.make_args(terms) if BOUND in f.free_symbols]
        if len(varying) == 2:
            constant = sp.Mul(*(f for f in sp.Mul.make_args(terms) if BOUND not in f.free_symbols))
            f, g = varying
            squares.append((make_sum((constant * f) ** 2, n), make_sum(g ** 2, n)))
        for a, b in squares:
            if too_large(a * b) or not set(sums_in([Relation("<=", a, b)])) <= given:
                continue
            facts.append(Implication((Relation(">=", n, 0),), Relation("<=", s ** 2, a * b)))
    return facts


def _triangle_facts(sums, formulas) -> list:
    """||sum(i < n, v(i))|| <= sum(i < n, ||v(i)||): the triangle inequality n - 1 times, true
    for real vectors (and 0 <= 0 for the empty sum).  Only for a sum of norms whose sum of
    vectors has its norm in the formulas: another fact would bring in a term nothing else
    constrains.  And |sum(i < n, t(i))| <= sum(i < n, |t(i)|) for every absolute value of a
    sum in the formulas (its sum of absolute values gets the facts of a sum of its own)."""
    norms = set().union(*(atoms_in(f, Norm) for f in formulas))
    facts = [Implication((Relation(">=", count(a.args[0]), 0),), Relation(
                 "<=", a, make_sum(sp.Abs(a.args[0].function), count(a.args[0]))))
             for f in formulas for a in sorted(atoms_in(f, sp.Abs), key=sp.default_sort_key)
             if isinstance(a.args[0], sp.Sum)]
    for s in sums:
        terms, n = s.function, count(s)
        if not isinstance(terms, Norm):
            continue
        try:
            whole = vector_sum(terms.vector(), n)
            # (and the same sum with its last terms written out, as vector_sum_steps writes a
            # sum of a constant number of terms in the goal: ||x[19] + S(19)||)
            # (and its opposite: ||-v|| = ||v||, ||sum(t < 20, -x[t])|| in the goal)
            forms = [norm(u) for v in _last_terms_out(whole, _PEELED) for u in (v, -v)]
        except ValueError:  # a sum inside the terms
            continue
        facts += [Implication((Relation(">=", n, 0),), Relation("<=", f, s))
                  for f in forms if f in norms]
    return facts


# How many last terms of a sum of vectors the triangle fact also takes written out.
_PEELED = 3


def _last_terms_out(v: Vec, most: int) -> list:
    """v, then v with its one sum of vectors S(n) as S(n-1) + (its last term), ... most times
    (while n >= 1 by its form): the same vector each time."""
    forms = [v]
    for _ in range(most):
        sums = [a for a in v.atoms() if isinstance(a, VectorSum)]
        if len(sums) != 1 or not _at_least_one(sums[0].count()):
            break
        one = sums[0]
        c = dict(v.terms)[one]
        n = one.count()
        shorter = VectorSum(*one.args[:2], n - 1).normal() + one.term_at(n - 1)
        v = v - Vec.atom(one).scale(c) + shorter.scale(c)
        forms.append(v)
    return forms


def _starts_later(terms: sp.Expr) -> bool:
    """Whether every sequence element of terms that depends on the index is read at i + c
    with a whole c >= 1, and the rest of terms is a polynomial in i."""
    elements = [e for e in terms.atoms(sp.core.function.AppliedUndef)
                if BOUND in e.free_symbols and len(e.args) == 1]
    if not elements:
        return False
    for e in elements:
        offset = sp.expand(e.args[0] - BOUND)
        if not (offset.is_Integer and offset >= 1):
            return False
    rest = terms.xreplace({e: sp.Dummy() for e in elements})
    if BOUND not in rest.free_symbols or rest.is_polynomial(BOUND):
        return True
    # Roots and quotients of the index (sqrt(i+1)*a[i+1]) when the shifted term still means
    # something at every index i >= 0 (sqrt(i), not sqrt(i-1); 1/(i+1), not 1/i).
    return all(_met_at_every_index(o) for o in visible_obligations(
        terms.xreplace({BOUND: BOUND - 1})))


def _met_at_every_index(obligation: Relation) -> bool:
    """Whether an obligation on the index alone holds at every i >= 0: p >= 0, or p != 0 with
    p - 1 >= 0, for a polynomial p in i with non-negative coefficients."""
    p = sp.expand(obligation.lhs - obligation.rhs)
    if p.atoms(sp.Function):  # a[i], abs(i - 3): not read
        return False
    if obligation.rel == "!=":
        p = p - 1
    elif obligation.rel != ">=":
        return False
    return at_least_zero(p, {BOUND})


def _termwise_facts(goal: Relation, nonnegative) -> list:
    """Summing an inequality over the indices: for the sums of one count n in the goal, taken
    with their coefficients c_j and the goal's multiple c of n, sum_j c_j*S_j + c*n >= 0 (or
    <= 0) when sum_j c_j*t_j(i) + c >= 0 (or <= 0) at every index i (the sum of the terms is
    that combination, by linearity).  Only coefficients without division or roots."""
    by_count: dict = {}
    for s in sums_in([goal]):
        by_count.setdefault(count(s), []).append(s)
    if not by_count:
        return []
    difference = sp.expand(goal.lhs - goal.rhs)
    facts = []
    # (put over one denominator only where that stays small: 13 reciprocals of quadratics
    # would expand to millions of monomials)
    numerator = sp.numer(sp.together(difference))
    cleared = difference if too_large(numerator) else sp.expand(numerator)
    readings = [difference] + ([cleared] if cleared != difference else [])
    for (n, sums), difference in itertools.product(by_count.items(), readings):
        coefficients = [difference.coeff(s) for s in sums]
        rest = sp.expand(difference - sum(c * s for c, s in zip(coefficients, sums)))
        if any(not _plain(c) or c.has(sp.Sum) for c in coefficients) or rest.has(*sums):
            continue
        combination = sum(c * s for c, s in zip(coefficients, sums))
        terms = sum(c * s.function for c, s in zip(coefficients, sums))
        candidates = [(terms, combination)]
        multiple = _multiple_of(rest, n)
        if multiple is not None:
            candidates.append((terms + multiple, combination + multiple * n))
        for terms_at_i, total in candidates:
            for sign, rel in ((1, ">="), (-1, "<=")):
                if nonnegative(sp.expand(sign * terms_at_i)):
                    facts.append(Implication((Relation(">=", n, 0),),
                                             Relation(rel, total, sp.Integer(0))))
    return facts


def _summed_relations(everywhere, nats, sums) -> list:
    """A relation f(k) that holds at every value of a nat k, summed over the terms of each sum
    in play: at k := p(i) - c where the sum's terms read a sequence at p(i) and f reads it at
    k + c (p(i) - c >= 0 for every i >= 0 by its form), or at k := i where they read a sequence
    f reads; n >= 0 => sum(i < n, lhs(p(i) - c) - rhs(p(i) - c)) >= 0 (<= 0, = 0; for a
    strict relation also n >= 1 => ... > 0), in normal form by linearity (c[t] >= 1 gives
    sum(i < T + 1, c[i]) - (T + 1) >= 0, so that sum is != 0; and sum(i < 20, c[i+1]) >= 20).
    The termwise facts compare one relation's sums with that relation's own terms; these carry
    a bound on the terms to every sum.  The sums these facts bring in are summed over in turn,
    _DEPTH deep (c[t] >= a[t] brings in the sum of a, which a[t] >= 1 bounds).  Only relations
    whose difference is a polynomial in sequence elements, nats and constants: it then means
    something at every index, and no other sum's bound variable is in it."""
    summable = [(g, k) for f in everywhere for k in sorted(nats, key=str)
                for g in dict.fromkeys((f, others_at_zero(f, k, nats))) if _summable(g, k)]
    facts, seen, pending = [], set(), list(sums)
    for _ in range(_DEPTH):
        found = []
        for s, (f, k) in itertools.product(pending, summable):
            for at in _meeting_indices(f, k, s, nats):
                if (f, k, count(s), at) not in seen:
                    seen.add((f, k, count(s), at))
                    found += _summed_relation(f, k, count(s), at, nats)
        facts += found
        pending = [s for s in sums_in(found) if s not in sums]
        sums = list(sums) + pending
    return facts


def _summable(f, k) -> bool:
    """Whether f is a relation whose difference is a polynomial in sequence elements, nats and
    constants that reads a sequence at an index that depends on the nat k."""
    if not isinstance(f, Relation) or f.rel == "!=":
        return False
    difference = sp.expand(f.lhs - f.rhs)
    elements = difference.atoms(sp.core.function.AppliedUndef)
    return any(k in e.args[0].free_symbols for e in elements) \
        and _polynomial_in(difference, elements)


def _meeting_indices(f, k, s: sp.Sum, nats) -> set:
    """The values of k at which f is summed over the terms of s (_summed_relations)."""
    read = {e for e in s.function.atoms(sp.core.function.AppliedUndef)
            if BOUND in e.args[0].free_symbols}
    own = f.lhs.atoms(sp.core.function.AppliedUndef) | f.rhs.atoms(sp.core.function.AppliedUndef)
    found = {BOUND} if {e.func for e in read} & {g.func for g in own} else set()
    for e, g in itertools.product(read, own):
        offset = sp.expand(g.args[0] - k)
        if e.func == g.func and offset.is_Integer:
            value = sp.expand(e.args[0] - offset)
            if at_least_zero(value, nats | {BOUND}):
                found.add(value)
    return found


def _summed_relation(f: Relation, k: sp.Symbol, n: sp.Expr, at: sp.Expr, nats) -> list:
    """f's difference at k := at, summed over i < n (_summed_relations), or nothing where an
    index of its terms may be negative."""
    terms = sp.expand(f.lhs - f.rhs).xreplace({k: at})
    if not all(at_least_zero(e.args[0], nats | {BOUND})
               for e in terms.atoms(sp.core.function.AppliedUndef)):
        return []
    total = make_sum(terms, n)
    weak = {">": ">=", "<": "<="}.get(f.rel, f.rel)
    facts = [Implication((Relation(">=", n, 0),), Relation(weak, total, sp.Integer(0)))]
    if weak != f.rel:
        facts.append(Implication((Relation(">=", n, 1),), Relation(f.rel, total, sp.Integer(0))))
    return facts


def _polynomial_in(expr: sp.Expr, elements) -> bool:
    """Whether expr is a polynomial in its symbols and the given sequence elements, with
    rational coefficients (no sum, quotient, root or other function)."""
    try:
        poly = sp.Poly(expr, *sorted(expr.free_symbols, key=str), *sorted(elements, key=str))
    except sp.PolynomialError:
        return False
    return all(c.is_Rational for c in poly.coeffs())


def _plain(c: sp.Expr) -> bool:
    """A coefficient that is a polynomial in its symbols and their roots (no division): a
    constant of the sum (sum(i < T, sqrt(K)) = T*sqrt(K)).  A root is real where it is used:
    the terms' sign is shown with the root's condition (a goal carries its domain)."""
    return BOUND not in c.free_symbols and sp.denom(c).is_Number and \
        all(not (p.is_Pow and not (p.exp.is_Rational and p.exp > 0)) for p in c.atoms(sp.Pow))


def _multiple_of(rest: sp.Expr, n: sp.Expr):
    """c with rest = c*n + (what does not mention n's symbol), c free of that symbol and plain;
    else c = rest/n when that is plain (it may mention n's nat: T*<u, x[T]> is T terms
    <u, x[T]>, a constant of the sum); None when there is neither."""
    c = _linear_multiple_of(rest, n)
    if c is not None:
        return c
    if n.is_number:  # a fixed count: rest spread over its terms (sum(i < 20, c[i]) - 20)
        whole = sp.expand(rest / n) if n.is_Integer and n > 0 else sp.Integer(0)
        return whole if whole != 0 and BOUND not in whole.free_symbols and _plain(whole) \
            else None
    whole = sp.cancel(rest / n)
    if whole == 0 or not sp.denom(whole).is_Number or BOUND in whole.free_symbols:
        return None
    whole = sp.expand(whole)
    return whole if _plain(whole) else None


def _linear_multiple_of(rest: sp.Expr, n: sp.Expr):
    """c with rest = c*n + (what does not mention n's symbol), c free of that symbol and plain;
    None when n is not a number times a nat plus a number, or rest is not linear in it."""
    symbols = n.free_symbols
    if len(symbols) != 1:
        return None
    (k,) = symbols
    slope, c = _linear_coefficient(n, k), _linear_coefficient(rest, k)
    if slope is None or not slope.is_Number or slope == 0 or c is None or c == 0:
        return None
    c = sp.expand(c / slope)
    return c if _plain(c) else None


def _linear_coefficient(expr: sp.Expr, k: sp.Symbol):
    """c with expr = c*k + (terms without k), c free of k; None when there is none."""
    _, with_k = sp.expand(expr).as_independent(k, as_Add=True)
    c = sp.expand(with_k / k)
    return None if k in c.free_symbols else c


def vector_sum_steps(formulas) -> list:
    """sum(i < n, t(i)) = sum(i < n-1, t(i)) + t(n-1) for every sum of vectors the formulas
    mention whose number of terms n is >= 1 by its form (k + 1, for k a nat): a vector
    definition, which the kernel substitutes (w[k+1] = sum(i < k+1, y[i]*x[i]) then follows
    from w[k] = sum(i < k, y[i]*x[i]) and the update rule).  True wherever the sum means
    something: its terms mean something at every index."""
    found: set = set()
    for f in formulas:
        if isinstance(f, VectorEq):
            for e in [f.atom, *f.rhs.atoms(), *(c for _, c in f.rhs.terms)]:
                found |= e.atoms(VectorSum)
        else:
            found |= atoms_in(f, VectorSum)
    facts = []
    for s in sorted(found, key=sp.default_sort_key):
        n = s.count()
        if not _at_least_one(n):
            continue
        try:
            last = s.term_at(n - 1)
        except ValueError:  # no fact rather than one SymPy computed in floating point
            continue
        facts.append(VectorEq(s, VectorSum(*s.args[:2], n - 1).normal() + last))
    return facts


def _at_least_one(n: sp.Expr) -> bool:
    """Whether n - 1 is a polynomial with non-negative coefficients in its symbols (a number of
    terms is a polynomial in nats), so n >= 1 wherever it means something."""
    rest = sp.expand(n - 1)
    return at_least_zero(rest, rest.free_symbols)


def unrolled_updates(updates, elements, nats) -> list:
    """w[n] = w[c-1] + sum(i < n-c+1, D(i)) for each vector recurrence w[k+c] = w[k+c-1] + D(k)
    among updates (k a nat, c >= 1) and each element w[n] of elements that it does not define:
    the update summed over the rounds ("w_T is the sum of the updates").  Where n - c + 1 is not
    a polynomial with non-negative coefficients in nats (so >= 0), the fact is stated under
    n - c + 1 >= 0 (w[T-1] for T >= 1).

    True by induction on n when the recurrence holds at every k with the other symbols fixed:
    the caller gives only updates that rest on the setting's assumptions and mention no
    per-update symbol.  D(i) is D with k := i, which must read no element of w and mean
    something at every i >= 0 (indices polynomials with non-negative coefficients, no
    condition on its coefficients but on the index alone: 1/(i+1) is one)."""
    facts, defined = [], {f.atom for f in updates}
    for f in updates:
        summed = _summed_update(f, nats)
        if summed is None:
            continue
        sequence, k, c, terms = summed
        for e in sorted(elements, key=sp.default_sort_key):
            if e.func != sequence or e in defined:
                continue
            n = sp.expand(e.args[0] - c + 1)
            if n == 0:
                continue
            try:
                total = vector_sum(terms, n)
            except ValueError:  # a sum inside the terms
                continue
            fact = VectorEq(e, Vec.atom(sequence(sp.Integer(c - 1))) + total)
            # w[T-1] is unrolled where T - 1 >= 0 only (a given T >= 1 says where)
            facts.append(fact if at_least_zero(n, nats)
                         else Implication((Relation(">=", n, sp.Integer(0)),), fact))
    return facts


def _summed_update(f, nats):
    """(w, k, c, D(i)) for a vector definition w[k+c] = w[k+c-1] + D(k) that can be summed
    (unrolled_updates), else None."""
    if not isinstance(f, VectorEq) or not isinstance(f.atom, sp.core.function.AppliedUndef) \
            or len(f.atom.args) != 1:
        return None
    sequence, index = f.atom.func, f.atom.args[0]
    ks = [k for k in nats if sp.expand(index - k).is_Integer]
    if len(ks) != 1:
        return None
    (k,) = ks
    c = int(sp.expand(index - k))
    previous = sequence(sp.expand(index - 1))
    if c < 1 or dict(f.rhs.terms).get(previous) != 1:
        return None
    rest = f.rhs - Vec.atom(previous)
    parts = list(rest.atoms()) + [coefficient for _, coefficient in rest.terms]
    if any(p.has(sp.Sum, VectorSum, BOUND, sequence) for p in parts):
        return None
    terms = rest.xreplace({k: BOUND})
    for a in terms.atoms():
        for e in [a, *a.atoms(sp.core.function.AppliedUndef)]:
            if isinstance(e, sp.core.function.AppliedUndef) and not at_least_zero(
                    e.args[0], nats | {BOUND}):
                return None
    for _, coefficient in terms.terms:
        for e in coefficient.atoms(sp.core.function.AppliedUndef):
            if not at_least_zero(e.args[0], nats | {BOUND}):
                return None
        if not all(_met_at_every_index(o) for o in visible_obligations(coefficient)):
            return None
    return sequence, k, c, terms


def at_least_zero(n: sp.Expr, symbols) -> bool:
    """Whether n is a polynomial with non-negative rational coefficients in the given symbols
    (whole numbers >= 0), so n >= 0 wherever they are."""
    n = sp.expand(n)
    if n.is_number:
        return bool(n.is_Rational and n >= 0)
    if not n.free_symbols <= set(symbols):
        return False
    try:
        poly = sp.Poly(n, *sorted(n.free_symbols, key=str))
    except sp.PolynomialError:
        return False
    return all(c.is_Rational and c >= 0 for c in poly.coeffs())
