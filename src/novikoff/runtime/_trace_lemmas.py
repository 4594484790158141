"""The lemmas that judge a trace: each gated by its assumptions about the data only.

An audit judges a trace by the lemmas that apply to a reference run of the textbook rule on the
same data and order; the assumptions about the learner's weights are dropped, the trace is what
is under test.
"""

from __future__ import annotations

from ._checks import MonitoredLemma, SameObjects, sealed_verified
from ._library import monitored

__all__ = ["judged_like_a_trace", "data_gated"]


def judged_like_a_trace(lemmas, reference) -> list:
    """The lemmas that apply to a reference run of the textbook rule (same data and order),
    each gated by its assumptions about the data only: how the kernel, batch, averaged and
    voted audits judge a trace."""
    applies = {(s["lemma"], s["source"]) for s in reference.monitor["monitored"]
               if s["applies"]}
    return [g for g in data_gated(lemmas) if (g.name, g.where) in applies]


_GATED: dict = {}  # SameObjects(lemma objects) -> their data-gated records


def data_gated(lemmas) -> tuple:
    """Each lemma gated by its data assumptions only (its record's ``trace`` compilation); the
    same objects for the same lemmas, so that the monitors of their audits are compiled once
    (monitor_of)."""
    key = SameObjects(lemmas)
    gated = _GATED.get(key)
    if gated is None:
        gated = []
        for rec in monitored(key.objects):
            view = MonitoredLemma(rec.name, rec.file, rec.line, rec.shown, rec.trace, rec.trace,
                                  rec.default_rule, source=rec.source)
            gated.append(sealed_verified(view) if rec.verified else view)
        if len(_GATED) > 64:
            _GATED.clear()
        gated = _GATED[key] = tuple(gated)
    return gated
