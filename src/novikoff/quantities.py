"""The run quantities, and how a setting's symbols bind to them.

This is the one place that knows what a run holds (the language checks a setting's `bind`
declarations against it; the runtime translates lemmas with it).  A setting declares which of its symbols
stand for which run quantity (``bind theta[k+1] to weights[k], gamma to margin``); a symbol it
does not bind stands for the quantity of its *default name* below, if it has one and no other
symbol is bound to that quantity.  A lemma is translated from its setting's vocabulary into the
run vocabulary (the default names) before it is compiled, so the compiler and the engines read
only the names of this table and never a user's.

=================  ==============  ===================  =========================================
quantity           default name    kinds                meaning at update k (w[k] -> w[k+1])
=================  ==============  ===================  =========================================
``updates``        ``k``, ``M``    nat (M: also real)   number of updates before this one
``weights[j]``     ``w``           vector sequence      the weights after j updates (w[0]: the start)
``separator``      ``w_star``      vector               the separator the lemmas are checked with
``example``        ``x``           vector               the example of update k
``label``          ``y``           label, real          its label
``margin``         ``gamma``       real                 margin of (separator, data)
``radius``         ``R``           real                 max ||x_i|| over the data
``hinge``          ``d``           real                 max(0, gamma - y<w_star, x>) of the example
``hinge_total[j]`` ``TD``          real sequence        the hinge losses summed before update j
``learning_rate``  ``eta``         real                 the step's factor: w[k+1] = w[k] + eta*y*x
``start``          ``w0``          vector               the weights before the first update
``batch_sum``      ``u``           vector               the batch step's sum of y_t*x_t over the
                                                        examples w[k] misclassifies (batch runs)
``corrections[j]`` ``m``           real sequence        how many examples batch step j corrects
``corrections_     ``C``           real sequence        sum(i < j, m[i]): the corrections of the
total[j]``                                              batch steps before step j
``corrections_     ``Q``           real sequence        sum(i < j, m[i]^2)
squared_total[j]``
``examples``       ``n``           real, nat            the number of examples of the data
``votes[j]``       ``votes``       real sequence        voted runs: how many vectors the vote
                                                        holds after j updates
``vote_counts[j]`` ``vote_counts`` real sequence        voted runs: the visits at which w[j] was
                                                        the weights in use (its count in the
                                                        vote), known at update j
``vote_counts_     ``vote_counts_  real sequence        voted runs: the counts of w[0], ...,
total[j]``         total``                              w[j-1], added up
``visits_          ``visits_       real sequence        voted runs: the visits made before w[j]
before[j]``        before``                             came into use (T[0] = 0)
``visits``         ``t``           nat                  averaged runs: the visits made so far
                                                        (bound only by ``bind t to visits``)
``visit_weights``  ``wv``          vector sequence      averaged runs: wv[j], the weights in use
                                                        at visit j (before its update)
``weight_sum[j]``  ``s``           vector sequence      averaged runs: wv[0] + ... + wv[j-1]
``average[j]``     ``a``           vector sequence      averaged runs: the run's average after
                                                        j >= 1 visits (s[j]/j in exact terms)
``visit_updates    ``kt``          real sequence        averaged runs: the updates made before
[j]``                                                   visit j
``visit_updates_   ``KT``          real sequence        averaged runs: sum(i < j, kt[i])
total[j]``
``visit_roots_     ``RT``          real sequence        averaged runs: sum(i < j, sqrt(kt[i]))
total[j]``
=================  ==============  ===================  =========================================

In a batch run (``--variant batch``) an "update" is a batch step: ``k`` counts the steps,
``w[k]`` is the weights after k steps and the step adds ``eta*u``; ``x``, ``y``, ``d`` and ``TD``
(one example per update) are not quantities of a batch run, and ``u``, ``m``, ``C``, ``Q``, ``n``
are quantities of a batch run only (the runtime lists a lemma that needs the other kind of run
as not monitored).  ``votes``, ``vote_counts``, ``vote_counts_total`` and ``visits_before`` are
quantities of a voted run only (``--variant voted``: the classic run keeping every weight vector
with its count); voted.proof binds its short names to them.  ``t``, ``wv``, ``s``, ``a``,
``kt``, ``KT`` and ``RT`` are quantities of an averaged run only (``--variant averaged``, whose
points are *visits*: its lemmas are indexed by ``t``, checked at every visit, while the classic
lemmas of its training run are checked at its updates as in a classic run).

``weights[0]`` is the start too: a run from zero has w0 = 0, so ``w[0] = 0`` holds on it and
``w[0] = w0`` on every run.  Of the start the engines keep <w0, w0> and <w_star, w0> only.

A sequence may be bound with an offset: ``bind theta[k+1] to weights[k]`` says theta[j] is the
weights after j - 1 updates (a seed that counts from 1).
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from .kernel.formulas import Conjunction, Disjunction, Equivalence, Implication, Relation, VectorEq
from .kernel.logic import rewrite_vectors
from .kernel.terms import Vec
from .kernel.written import symbol

__all__ = ["QUANTITIES", "KINDS", "PER_UPDATE", "Binding", "Unbindable",
           "default_bindings", "check_binding", "in_run_vocabulary"]


@dataclass(frozen=True)
class Quantity:
    name: str
    kinds: tuple  # the declaration kinds a symbol bound to it may have
    per_update: bool  # a new value at each update (a check that mixes it with the state needs
    #                   the setting to declare it `per update`)


QUANTITIES = {q.name: q for q in (
    Quantity("updates", ("nat", "real"), False),
    Quantity("weights", ("vector_sequence",), False),
    Quantity("separator", ("vector",), False),
    Quantity("example", ("vector",), True),
    Quantity("label", ("label", "real"), True),
    Quantity("margin", ("real",), False),
    Quantity("radius", ("real",), False),
    Quantity("hinge", ("real",), True),
    Quantity("hinge_total", ("real_sequence",), False),
    Quantity("learning_rate", ("real",), False),
    Quantity("start", ("vector",), False),
    Quantity("batch_sum", ("vector",), True),
    Quantity("corrections", ("real_sequence",), False),
    Quantity("corrections_total", ("real_sequence",), False),
    Quantity("corrections_squared_total", ("real_sequence",), False),
    Quantity("examples", ("real", "nat"), False),
    Quantity("votes", ("real_sequence",), False),
    Quantity("vote_counts", ("real_sequence",), False),
    Quantity("vote_counts_total", ("real_sequence",), False),
    Quantity("visits_before", ("real_sequence",), False),
    Quantity("visits", ("nat",), False),
    Quantity("visit_weights", ("vector_sequence",), False),
    Quantity("weight_sum", ("vector_sequence",), False),
    Quantity("average", ("vector_sequence",), False),
    Quantity("visit_updates", ("real_sequence",), False),
    Quantity("visit_updates_total", ("real_sequence",), False),
    Quantity("visit_roots_total", ("real_sequence",), False),
)}

# The run vocabulary: default name -> quantity.  The compiler reads these names only.
DEFAULT_NAMES = {"k": "updates", "M": "updates", "w": "weights", "w_star": "separator",
                 "x": "example", "y": "label", "gamma": "margin", "R": "radius", "d": "hinge",
                 "TD": "hinge_total", "eta": "learning_rate", "w0": "start", "u": "batch_sum",
                 "m": "corrections", "C": "corrections_total",
                 "Q": "corrections_squared_total", "n": "examples",
                 "votes": "votes", "vote_counts": "vote_counts",
                 "vote_counts_total": "vote_counts_total", "visits_before": "visits_before",
                 "t": "visits", "wv": "visit_weights", "s": "weight_sum", "a": "average",
                 "kt": "visit_updates", "KT": "visit_updates_total", "RT": "visit_roots_total"}
_RUN_NAME = {q: n for n, q in DEFAULT_NAMES.items() if n != "M"}  # quantity -> its name
# What the compiler checks the run-vocabulary names against: each quantity's kinds, but k, the
# index of the sequences, must be a nat (M, the same count, may be a real).
KINDS = {n: QUANTITIES[q].kinds for n, q in DEFAULT_NAMES.items()} | {"k": ("nat",)}
PER_UPDATE = frozenset(n for n, q in DEFAULT_NAMES.items() if QUANTITIES[q].per_update)


# The quantities a run holds as vectors (a setting's definition of one of them is not expanded).
_VECTOR_QUANTITIES = frozenset(q.name for q in QUANTITIES.values()
                               if set(q.kinds) & {"vector", "vector_sequence"})


class Unbindable(Exception):
    """A statement mentions something the run cannot give a value."""


@dataclass(frozen=True)
class Binding:
    """symbol (of a setting) stands for quantity; for a sequence, symbol[j + offset] is
    quantity[j]."""

    symbol: str
    quantity: str
    offset: int = 0


def check_binding(binding: Binding, kind: str) -> str | None:
    """Why a symbol of this kind cannot be bound to the quantity, or None if it can."""
    q = QUANTITIES.get(binding.quantity)
    if q is None:
        return (f"{binding.quantity!r} is not a run quantity (one of "
                f"{', '.join(sorted(QUANTITIES))})")
    if kind not in q.kinds:
        return (f"{binding.symbol} is declared {kind.replace('_', ' ')} but {q.name} is a "
                f"{' or '.join(k.replace('_', ' ') for k in q.kinds)}")
    return None


def _run_name(b: Binding) -> str:
    """The run-vocabulary name a bound symbol becomes (M stays M: the count may be a real)."""
    return "M" if b.symbol == "M" and b.quantity == "updates" else _RUN_NAME[b.quantity]


# Run names that bind only by a `bind` line: t is any setting's time or count (a nat t meaning
# updates must not silently become an averaged run's visits).
EXPLICIT_ONLY = frozenset({"t"})


def default_bindings(kinds: dict, explicit=()) -> dict:
    """symbol name -> Binding: the explicit ones, then each default name not yet bound whose
    declared kind fits its quantity (except EXPLICIT_ONLY)."""
    out = {b.symbol: b for b in explicit}
    taken = {b.quantity for b in explicit}
    for name, quantity in DEFAULT_NAMES.items():
        if name in EXPLICIT_ONLY:
            continue
        if name in kinds and name not in out and (quantity not in taken or quantity == "updates") \
                and check_binding(Binding(name, quantity), kinds[name]) is None:
            out[name] = Binding(name, quantity, 0)
    return out


# --------------------------------------------------------------------------- translation

def _bound_vector(atom, bindings: dict) -> bool:
    b = bindings.get(_name(atom))
    return b is not None and b.quantity in _VECTOR_QUANTITIES


def _name(atom) -> str:
    if isinstance(atom, sp.Symbol):
        return atom.name
    return getattr(getattr(atom, "func", None), "__name__", "")


def _expand_definitions(statement, hypotheses: tuple, bindings: dict):
    """Substitute the setting's definitions of vectors the run does not hold (z0 := x - ...).

    Returns the statement and the remaining assumptions (the definitions are used up).
    """
    defs = {f.atom: f.rhs for _, f in hypotheses
            if isinstance(f, VectorEq) and not _bound_vector(f.atom, bindings)}
    if not defs:
        return statement, hypotheses
    for _ in range(len(defs)):  # resolve chains (a := b + ..., b := ...)
        for atom, rhs in list(defs.items()):
            new = rhs
            for a, c in rhs.terms:
                if a in defs and a != atom:
                    new = new - type(rhs).atom(a).scale(c) + defs[a].scale(c)
            defs[atom] = new
    hyps = tuple((n, rewrite_vectors(f, defs)) for n, f in hypotheses
                 if not (isinstance(f, VectorEq) and f.atom in defs))
    return rewrite_vectors(statement, defs), hyps


class _Translator:
    """Rewrites terms from a setting's symbols into the run vocabulary, all at once."""

    def __init__(self, kinds: dict, bindings: dict):
        self.kinds, self.bindings = kinds, bindings

    def symbol(self, s: sp.Symbol):
        b = self.bindings.get(s.name)
        if b is None:
            raise Unbindable(f"no run quantity is bound to {s.name!r}")
        name = _run_name(b)
        return symbol(name, self.kinds[s.name])

    def term(self, e):
        if isinstance(e, sp.Sum):
            raise Unbindable("it has a sum, which the runtime does not evaluate (a running "
                             "total can state it: see batch.proof's batch_run)")
        if isinstance(e, sp.Symbol):
            return self.symbol(e)
        if isinstance(e, sp.core.function.AppliedUndef):
            name = e.func.__name__
            b = self.bindings.get(name)
            if b is None:
                raise Unbindable(f"no run quantity is bound to {name!r}")
            index = self.term(e.args[0]) - b.offset
            return symbol(_RUN_NAME[b.quantity], self.kinds[name])(index)
        if not e.args:
            return e
        return e.func(*(self.term(a) for a in e.args))

    def formula(self, f):
        if isinstance(f, VectorEq):
            rhs = Vec.zero()
            for atom, c in f.rhs.terms:
                rhs = rhs + Vec.atom(self.term(atom)).scale(self.term(c))
            return VectorEq(self.term(f.atom), rhs, tuple(self.formula(d) for d in f.domain))
        if isinstance(f, Relation):
            return Relation(f.rel, self.term(f.lhs), self.term(f.rhs),
                            tuple(self.formula(d) for d in f.domain))
        if isinstance(f, Implication):
            return Implication(tuple(self.formula(p) for p in f.premises),
                               self.formula(f.conclusion))
        if isinstance(f, Disjunction):
            return Disjunction(tuple(self.formula(d) for d in f.disjuncts))
        if isinstance(f, Conjunction):
            return Conjunction(tuple(self.formula(p) for p in f.parts))
        if isinstance(f, Equivalence):
            return Equivalence(self.formula(f.left), self.formula(f.right))
        raise Unbindable(f"cannot monitor a {type(f).__name__}")


def in_run_vocabulary(statement, hypotheses: tuple, kinds: dict | None, per_update,
                      explicit=()):
    """(statement, hypotheses, kinds, per_update) rewritten into the run vocabulary.

    kinds None (a Lemma made in Python, not from a setting) means the symbols already are run
    names.  Raises Unbindable, naming the symbol, when something has no run quantity.
    """
    if kinds is None:
        bindings = {n: Binding(n, q) for n, q in DEFAULT_NAMES.items()}
        statement, hypotheses = _expand_definitions(statement, tuple(hypotheses), bindings)
        return statement, hypotheses, None, per_update
    bindings = default_bindings(kinds, explicit)
    for b in bindings.values():
        if b.symbol not in kinds:
            raise Unbindable(f"bind {b.symbol}: {b.symbol} is not declared in the setting")
        why = check_binding(b, kinds[b.symbol])
        if why is not None:
            raise Unbindable(f"bind {b.symbol} to {b.quantity}: {why}")
    statement, hypotheses = _expand_definitions(statement, tuple(hypotheses), bindings)
    translate = _Translator(kinds, bindings)
    statement = translate.formula(statement)
    out = []
    for name, f in hypotheses:
        try:
            out.append((name, translate.formula(f)))
        except Unbindable as err:
            raise Unbindable(f"assumption {name}: {err}") from None
    run_kinds = {_run_name(b): kinds[b.symbol] for b in bindings.values()}
    run_per_update = None if per_update is None else frozenset(
        _run_name(bindings[n]) for n in per_update if n in bindings)
    return statement, tuple(out), run_kinds, run_per_update
