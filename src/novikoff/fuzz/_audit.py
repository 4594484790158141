"""Judge a weight trace by the lemma statements of ``proofs/``, through the runtime's audit.

The runtime is the one place that binds a statement to a run (which visits are updates, w[k] and
w[k+1], the example of an update, d and TD, the rounding allowances) and that decides which
lemmas judge a trace: those the claimed variant's textbook rule satisfies on the same data and
order, gated only by their assumptions about the *data* (the learner's own assumptions are the
claim under test).  This module passes the library's lemmas to ``novikoff.runtime.audit`` and
keeps its *lemma* findings; it binds nothing itself.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["bundled_lemmas", "lemma_violations", "Finding"]


@dataclass(frozen=True)
class Finding:
    """A lemma violation found by the runtime's audit (visit and k as the audit counts them)."""

    lemma: str
    visit: int | None
    k: int | None
    example: int | None
    message: str


def bundled_lemmas() -> tuple:
    """The lemmas of the library's top-level .proof files (the runtime's loader and cache)."""
    from ..runtime import load_lemmas
    return tuple(load_lemmas())


def lemma_violations(ds, order, W, variant: str, lemmas) -> list:
    """The lemma violations (``Finding``s, earliest visit first) of a weight trace.

    ``ds`` is a certified dataset (``novikoff.strategies``); ``W[t]`` the weights after visit t
    of ``order``; ``variant`` the algorithm the learner claims to be ("classic" or "margin");
    ``lemmas`` the statements to judge by (``bundled_lemmas()``, or ``load_lemmas`` results).
    The runtime's ``audit`` judges the trace; its update-rule findings are not reported here.
    """
    if variant not in ("classic", "margin"):
        # runtime.audit certifies gamma <= min y<w*, x> and has no non-separable mode.
        raise ValueError(f"variant={variant!r}: the runtime audits separable traces only "
                         f"(classic, margin)")
    from ..runtime import audit
    order = np.asarray(order, dtype=np.int64)
    W = np.asarray(W, dtype=np.float64).reshape(len(order), np.shape(ds.X)[1])
    rep = audit(ds.X, ds.y, order, W, w_star=ds.w_star, gamma=float(ds.gamma),
                variant=variant, lemmas=lemmas, max_rule=0)
    return [Finding(f["lemma"], f["visit"], f["k"], f.get("example"), f["message"])
            for f in rep.violations if f["kind"] == "lemma"]
