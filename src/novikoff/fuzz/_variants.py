"""The variant table: for each perceptron the fuzzer knows, how a run is made and how it is judged.

A mutant declares its ``variant``; the driver looks the variant up here and never needs to know
what a trace of that variant looks like:

* ``runs(learner, family, producer, td, max_n, max_dim)``: a Hypothesis strategy of ``Run``s of
  the learner on data of ``family`` (classic, margin, hinge: a weight per visit; batch: a weight
  per step; kernel: the dual counts per visit; averaged: a weight and an average per visit;
  voted: a weight per visit and the final vote);
* ``judge(run, lemmas)``: the findings (``_audit.Finding``, earliest first) of that variant's own
  audit (``novikoff.runtime.audit``, ``audit_batch``, ``audit_kernel``, ``audit_averaged``,
  ``audit_voted``);
* ``correct`` (and ``correct_td``): the textbook learner the engine property runs; ``family``:
  the data it is fuzzed with.

Classic, margin and hinge runs are judged by their lemmas (and a reported TD) first, then by
their audit's rule findings: a strict mistake test, a learner that never learns and one that
logs its weights before the update keep every lemma true, and only the rule sees them.  Batch
and kernel runs are judged by their audit's rule findings too: a batch trace is a handful of
steps, and the rule (which examples a step sums, which alpha grows) is what those learners get
wrong.  Averaged and voted runs likewise, with the findings about the
average (kind ``average``) and the vote (kind ``vote``): their mutants train the textbook
perceptron and get only the average or the vote wrong.

Extension point: ``register_variant(Variant(...))`` adds a variant, and
``register_mutants(...)`` its mutants.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Callable

import numpy as np
from hypothesis import strategies as st

from ..runtime import VARIANTS as RUNTIME_VARIANTS
from ..strategies import certify, kernel_dataset, orderings
from . import _audit
from ._averaged_learners import AVERAGED_MUTANTS, averaged_after, averaged_trace
from ._batch_learners import BATCH_MUTANTS, batch, batch_trace
from ._generate import datasets_for, runs as weight_runs
from ._dual_learners import KERNEL_MUTANTS, kernel_perceptron, kernel_trace
from ._mutants import MUTANTS, Mutant, classic, margin, presented_td
from ._voted_learners import VOTED_MUTANTS, voted, voted_trace

__all__ = ["Run", "Variant", "VARIANTS", "register_variant", "register_mutants", "variant_of",
           "all_mutants", "mutant_named", "case_run"]


@dataclass(frozen=True)
class Run:
    """A generated run: the dataset, the order of visits (empty for batch runs), the trace
    (weights per visit, per step, or dual counts per visit), the TD the learner reported (or
    None), whether a batch learner stopped on its own (no mistake left), and for averaged and
    voted runs the averages or the vote (``extra``) and the learner's declared convention."""

    ds: object
    order: np.ndarray
    W: np.ndarray
    td: np.ndarray | None = None
    converged: bool = False
    # averaged and voted runs: the learner's other outputs, by the name its audit's trace file
    # gives them ("average" (T, d); "vectors" (K+1, d) and "counts" (K+1,)), and the
    # convention the learner declares (averaged: "after" or "in-use"; voted: "in-use")
    extra: dict | None = None
    convention: str = ""


@dataclass(frozen=True)
class Variant:
    name: str
    runs: Callable
    judge: Callable
    correct: Callable
    family: str
    correct_td: Callable | None = None


VARIANTS: dict = {}


def register_variant(variant: Variant) -> None:
    """Add (or replace) a variant of the table."""
    VARIANTS[variant.name] = variant


def variant_of(name: str) -> Variant:
    try:
        return VARIANTS[name]
    except KeyError:
        raise ValueError(f"variant={name!r} must be one of {sorted(VARIANTS)}") from None


# ------------------------------------------------------------------ classic, margin, hinge

def _weight_runs(variant):
    def runs(learner, family, producer=None, td=None, *, max_n=50, max_dim=8):
        return weight_runs(family, variant, learner, producer, td=td, max_n=max_n,
                           max_dim=max_dim).map(lambda r: Run(r[0], r[1], r[2], r[3]))
    return runs


def _weight_judge(variant):
    def judge(run: Run, lemmas) -> list:
        return _audit.trace_violations(run.ds, run.order, run.W, variant, lemmas, td=run.td)
    return judge


# ------------------------------------------------------------------ batch

def _findings(report, kinds=("rule", "lemma")) -> list:
    return [_audit.Finding(f["lemma"], f["visit"], f["k"], f.get("example"),
                           f["message"] or f"{f['kind']} finding", f["kind"])
            for f in report.violations if f["kind"] in kinds]


def _batch_runs(learner, family, producer=None, td=None, *, max_n=50, max_dim=8):
    def run(ds):
        W, converged = batch_trace(learner, ds.X, ds.y)
        return Run(ds, np.zeros(0, np.int64), W, None, converged)

    return datasets_for(family, max_n=max_n, max_dim=max_dim).map(run)


def _batch_judge(run: Run, lemmas) -> list:
    ds = run.ds
    rep = RUNTIME_VARIANTS["batch"].audit(ds.X, ds.y, run.W, w_star=ds.w_star, gamma=float(ds.gamma),
                      converged=run.converged, lemmas=lemmas, max_rule=5)
    return _findings(rep)


# ------------------------------------------------------------------ kernel

def _kernel_runs(learner, family, producer=None, td=None, *, max_n=50, max_dim=8):
    @st.composite
    def runs(draw):
        ds = draw(datasets_for(family, max_n=max_n, max_dim=max_dim))
        order = draw(orderings(n=ds.n, max_epochs=4))
        return Run(ds, order, kernel_trace(learner, ds.X, ds.y, order, kernel=ds.kernel))

    return runs()


def _kernel_judge(run: Run, lemmas) -> list:
    ds = run.ds
    rep = RUNTIME_VARIANTS["kernel"].audit(ds.X, ds.y, run.order, run.W, kernel=ds.kernel, w_star=ds.beta,
                       gamma=ds.gamma, lemmas=lemmas, max_rule=5)
    return _findings(rep)


# ------------------------------------------------------------------ averaged, voted
# Each learner declares the convention it implements (``learner.convention``): an averaged
# perceptron's average is the mean of the weights after each visit ("after") or of those in use
# at each visit ("in-use"), and the two differ by a visit; a voted perceptron's counts are
# "in-use" (the audit's default).  The run carries it to the judge, which audits the trace in
# the convention the learner claims: a learner that claims one and computes the other is a bug.

def _declared_convention(learner, default: str | None = None) -> str:
    convention = getattr(learner, "convention", default)
    if convention is None:
        raise ValueError(f"learner={getattr(learner, '__name__', learner)!r} declares no "
                         f"averaging convention (set learner.convention to 'after' or "
                         f"'in-use')")
    return convention


def _ordered_runs(family, max_n, max_dim, make_run):
    """Runs on ``family`` data with an ordering (up to 4 epochs): ``make_run(ds, order)``."""
    @st.composite
    def runs(draw):
        ds = draw(datasets_for(family, max_n=max_n, max_dim=max_dim))
        return make_run(ds, draw(orderings(n=ds.n, max_epochs=4)))

    return runs()


def _averaged_runs(learner, family, producer=None, td=None, *, max_n=50, max_dim=8):
    convention = _declared_convention(learner)

    def run(ds, order):
        W, A = averaged_trace(learner, ds.X, ds.y, order, gamma=float(ds.gamma))
        return Run(ds, order, W, extra={"average": A}, convention=convention)

    return _ordered_runs(family, max_n, max_dim, run)


def _averaged_judge(run: Run, lemmas) -> list:
    ds = run.ds
    rep = RUNTIME_VARIANTS["averaged"].audit(ds.X, ds.y, run.order, run.W, run.extra["average"],
                         convention=run.convention, w_star=ds.w_star, gamma=float(ds.gamma),
                         lemmas=lemmas, max_rule=5)
    return _findings(rep, ("rule", "lemma", "average"))


def _voted_runs(learner, family, producer=None, td=None, *, max_n=50, max_dim=8):
    convention = _declared_convention(learner, "in-use")

    def run(ds, order):
        tr = voted_trace(learner, ds.X, ds.y, order, gamma=float(ds.gamma))
        return Run(ds, tr["order"], tr["w"],
                   extra={"vectors": tr["vectors"], "counts": tr["counts"]},
                   convention=convention)

    return _ordered_runs(family, max_n, max_dim, run)


def _voted_judge(run: Run, lemmas) -> list:
    ds = run.ds
    rep = RUNTIME_VARIANTS["voted"].audit(ds.X, ds.y, run.order, run.W, vectors=run.extra["vectors"],
                      counts=run.extra["counts"], convention=run.convention or "in-use",
                      w_star=ds.w_star, gamma=float(ds.gamma), lemmas=lemmas, max_rule=5)
    return _findings(rep, ("rule", "lemma", "vote"))


def _register_builtin() -> None:
    for name, correct, family, td in (("classic", classic, "separable", None),
                                      ("margin", margin, "unit", None),
                                      ("hinge", classic, "nonseparable", presented_td)):
        register_variant(Variant(name, _weight_runs(name), _weight_judge(name), correct, family,
                                 td))
    register_variant(Variant("batch", _batch_runs, _batch_judge, batch, "separable"))
    register_variant(Variant("kernel", _kernel_runs, _kernel_judge, kernel_perceptron,
                             "kernel"))
    register_variant(Variant("averaged", _averaged_runs, _averaged_judge, averaged_after,
                             "separable"))
    register_variant(Variant("voted", _voted_runs, _voted_judge, voted, "separable"))


_register_builtin()


# ------------------------------------------------------------------ the catalogue

_EXTRA_MUTANTS: list = []


def register_mutants(mutants) -> None:
    """Add mutants (of a registered variant) to the catalogue ``all_mutants`` returns."""
    for m in mutants:
        variant_of(m.variant)
        _EXTRA_MUTANTS.append(m)


_AVERAGED_BUGS = {
    "average_off_by_one": "averaged: the mean divided by the visits minus one (the counter "
                          "incremented after the mean is taken)",
    "average_undivided": "averaged: the running sum returned as the average, never divided",
    "average_of_updates": "averaged: the sum added to at the updates only, divided by all the "
                          "visits",
}


@functools.lru_cache(maxsize=1)
def _averaged_and_voted_mutants() -> tuple:
    """The averaged and voted learners' mutants (``_averaged_learners``, ``_voted_learners``):
    each trains the textbook perceptron and gets its average or its vote wrong."""
    return tuple(
        [Mutant(name, _AVERAGED_BUGS[name], make, variant="averaged")
         for name, (make, _) in AVERAGED_MUTANTS.items()]
        + [Mutant(name, f"voted: {bug}", make, variant="voted")
           for name, (make, bug) in VOTED_MUTANTS.items()])


def all_mutants() -> tuple:
    """Every mutant: the classic catalogue, the batch, kernel, averaged and voted ones, then
    those registered."""
    return (tuple(MUTANTS) + BATCH_MUTANTS + KERNEL_MUTANTS + _averaged_and_voted_mutants()
            + tuple(_EXTRA_MUTANTS))


def mutant_named(name: str):
    for m in all_mutants():
        if m.name == name:
            return m
    raise KeyError(name)


# ------------------------------------------------------------------ saved cases

def case_run(case) -> Run:
    """The Run of a saved case (``_cases.Case``), its dataset certified again."""
    if case.variant == "kernel":
        ds = kernel_dataset(case.X, case.y, case.kernel, case.w_star)
        return Run(ds, case.order, case.W)
    separable = case.variant != "hinge"
    ds = certify(case.X, case.y, case.w_star, gamma=None if separable else case.gamma)
    if separable and ds.gamma_exact != case.gamma:
        ds = certify(case.X, case.y, case.w_star, gamma=case.gamma)
    return Run(ds, case.order, case.W, case.td, case.converged, case.extra, case.convention)
