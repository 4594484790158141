"""Judge a weight trace by the lemma statements of ``proofs/``, through the runtime's audit.

The runtime is the one place that binds a statement to a run (which visits are updates, w[k] and
w[k+1], the example of an update, d and TD, the rounding allowances) and that decides which
lemmas judge a trace: those the claimed variant's textbook rule satisfies on the same data and
order, gated only by their assumptions about the *data* (the learner's own assumptions are the
claim under test).  This module passes the library's lemmas to ``novikoff.runtime.audit`` and
keeps its *lemma* findings, its *td* findings when the trace reports a TD, then its *rule*
findings (a break of the update rule that no invariant can see: a strict mistake test or a
learner that never learns keeps w = 0, where every lemma holds); it binds nothing itself.  Non-separable runs (variant "hinge": the classic perceptron judged by the hinge-loss
lemmas) are audited with ``separable=False``, TD for (ds.w_star, ds.gamma) over the examples
presented.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["bundled_lemmas", "lemma_violations", "trace_violations", "Finding", "VARIANTS"]

# The variants a trace can claim: the audit's rule ("classic" for hinge) and its separability.
VARIANTS = {"classic": ("classic", True), "margin": ("margin", True), "hinge": ("classic", False)}


@dataclass(frozen=True)
class Finding:
    """A finding of the runtime's audit (visit and k as the audit counts them).

    ``kind`` "lemma": ``lemma`` is the statement certainly false on the trace; "td": the reported
    TD is certainly not its definition at ``visit``; "rule": the visit breaks the claimed
    update rule (``lemma`` is None for both).
    """

    lemma: str | None
    visit: int | None
    k: int | None
    example: int | None
    message: str
    kind: str = "lemma"


def bundled_lemmas() -> tuple:
    """The lemmas of the library's top-level .proof files (the runtime's loader and cache)."""
    from ..runtime import load_lemmas
    return tuple(load_lemmas())


def trace_violations(ds, order, W, variant: str, lemmas, *, td=None, eta: float = 1.0,
                     w0=None) -> list:
    """The lemma violations, the first TD finding when ``td`` is given (earliest visit first),
    then the update-rule findings (the first five, earliest first) of a weight trace: a lemma
    a bug breaks is what the run shows first, the rule what catches the bugs no lemma sees.

    ``ds`` is a certified dataset (``novikoff.strategies``); ``W[t]`` the weights after visit t
    of ``order``; ``variant`` the algorithm the learner claims to be: "classic", "margin", or
    "hinge" (the classic perceptron on data that need not be separable: audited with
    ``separable=False``, the hinge-loss lemmas with TD for (ds.w_star, ds.gamma) over the
    examples presented); ``td`` (T,) the TD the implementation reports after each visit,
    checked against that definition; ``lemmas`` the statements to judge by (``bundled_lemmas()``,
    or ``load_lemmas`` results); ``eta`` and ``w0`` the learning rate and start the learner
    claims (a rate of 2 is a bug of a learner that claims the textbook rule, not of one that
    claims eta = 2: learning_rate.proof and nonzero_start.proof judge those).  The runtime's
    ``audit`` judges the trace.
    """
    if variant not in VARIANTS:
        raise ValueError(f"variant={variant!r} must be one of {sorted(VARIANTS)}")
    rule, separable = VARIANTS[variant]
    from ..runtime import audit
    order = np.asarray(order, dtype=np.int64)
    W = np.asarray(W, dtype=np.float64).reshape(len(order), np.shape(ds.X)[1])
    rep = audit(ds.X, ds.y, order, W, w_star=ds.w_star, gamma=float(ds.gamma),
                variant=rule, separable=separable, td=td, lemmas=lemmas, max_rule=_RULE_SHOWN,
                eta=eta, w0=w0)
    found = [Finding(f["lemma"], f["visit"], f["k"], f.get("example"), f["message"], f["kind"])
             for f in rep.violations]
    return ([f for f in found if f.kind in ("lemma", "td")]
            + [f for f in found if f.kind == "rule"])


_RULE_SHOWN = 5  # rule findings with a message (the audit counts the rest)


def lemma_violations(ds, order, W, variant: str, lemmas) -> list:
    """The lemma violations (``Finding``s, earliest visit first) of a weight trace.

    As ``trace_violations`` without a reported TD: ``variant`` "classic" or "margin" (separable
    data, gamma certified) or "hinge" (non-separable data, the hinge-loss lemmas).
    """
    return [f for f in trace_violations(ds, order, W, variant, lemmas) if f.kind == "lemma"]
