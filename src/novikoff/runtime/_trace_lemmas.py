"""The lemmas that judge a trace: each gated by its assumptions about the data only.

An audit judges a trace (and a variant judges a run made with a buggy update rule) by the lemmas
that apply to a reference run of the textbook rule on the same data and order; the assumptions
about the learner's weights are dropped, the trace is what is under test.
"""

from __future__ import annotations

from dataclasses import replace

from ..quantities import in_run_vocabulary
from ._compile import Unbindable, compile_formula
from ._monitor import SameObjects, as_lemma

__all__ = ["judged_like_a_trace", "data_gated", "about_data"]


def judged_like_a_trace(lemmas, reference) -> list:
    """The lemmas that apply to a reference run of the textbook rule (same data and order),
    each gated by its assumptions about the data only: how the audit judges a trace, and how
    the kernel and batch engines judge a run made with a testing hook's bug."""
    applies = {(s["lemma"], s["source"]) for s in reference.monitor["monitored"]
               if s["applies"]}
    return [g for g in data_gated(lemmas) if (g.name, g.where) in applies]


_GATED: dict = {}  # SameObjects(lemma objects) -> their data-gated Lemmas


def data_gated(lemmas) -> tuple:
    """Each lemma gated by its data assumptions only; the same objects for the same lemmas, so
    that the monitors of their audits are compiled once (monitor_of)."""
    key = SameObjects(lemmas)
    gated = _GATED.get(key)
    if gated is None:
        gated = []
        for lem in map(as_lemma, key.objects):
            data = tuple((name, f) for name, f in lem.hypotheses if about_data(f, lem))
            gated.append(replace(lem, hypotheses=data))
        if len(_GATED) > 64:
            _GATED.clear()
        gated = _GATED[key] = tuple(gated)
    return gated


def about_data(formula, lem) -> bool:
    """An assumption about constants or examples, not about the learner's weights (judged in
    the run vocabulary: a setting may bind its own names, like kernel.proof's phi).

    One the compiler cannot bind on its own (a definition such as z0 = ...) is kept, for the
    monitor to use as it would in a run.
    """
    try:
        translated, _, kinds, _ = in_run_vocabulary(formula, (), lem.kinds, lem.per_update,
                                                    lem.bindings)
        return compile_formula(translated, kinds).where in ("constant", "example")
    except Unbindable:
        return True
