"""Partial credit per step (`novikoff grade --partial-credit`, off by default).

A lemma that is not verified earns nothing by default.  With partial credit, its points are
shared over the checks the kernel made of it (its steps, `hence`s, case coverage and
conclusion): each verified check earns its share, and each check that failed, could not be
decided, is marked xfail or rests on an unverified lemma costs only its share.  The shares are
rounded down to a hundredth of a point, so partial credit never reaches the lemma's points.

Only a lemma that states the assignment's statement in the assignment's setting gets partial
credit: a proof of something else (a weaker bound, an extra assumption, an extra given) still
earns 0, however many of its steps hold.  That is decided in the student's worker process,
where the kernel's formulas are (record_steps, called on the judge's results); the shares are
computed from the recorded statuses afterwards (partial_credit, on plain data).

    items = record_steps(assignment, report, judge(assignment, report, budget))  # the worker
    item = partial_credit(item)                                                  # the grader
"""

from __future__ import annotations

import math
from dataclasses import replace
from fractions import Fraction

from .assignment import format_points, setting_signature
from .results import ItemResult

__all__ = ["record_steps", "states_assignment", "partial_credit", "PARTIAL_FAILURES"]

# The failures of a lemma that was checked and is not verified: the ones partial credit may
# soften.  Every other failure (a different statement, setting or givens; no lemma; a file that
# does not check; a checker that stopped) keeps 0.
PARTIAL_FAILURES = frozenset({"not-verified", "timed-out", "limits", "xfail",
                              "unverified-citation"})


def states_assignment(item, lemma) -> bool:
    """Whether the student's lemma (a checker LemmaReport, in the process that checked it)
    states the assignment item's formula (the kernel's equality of formulas, givens included)
    in a setting of the assignment's signature."""
    scope = getattr(lemma, "scope", None)
    return (lemma.kind != "claim" and scope is not None and lemma.formula is not None
            and item.formula is not None
            and setting_signature(scope.setting) == item.signature
            and lemma.formula == item.formula)


def record_steps(assignment, report, items: list, same_statement=None) -> list:
    """The judge's ItemResults (one per assignment item, in order) with the statuses of the
    student's lemma's checks recorded on each item that is not earned and whose lemma states
    the assignment's statement in its setting (same_statement(item, lemma), by default
    states_assignment).  Runs where the FileReport's kernel objects are: the student's worker.
    """
    same = same_statement or states_assignment
    lemmas = {lemma.name: lemma for lemma in report.lemmas if lemma.kind != "setting"}
    out = []
    for item, result in zip(assignment.items, items):
        lemma = lemmas.get(item.name)
        if result.earned or item.is_claim or lemma is None or result.failure not in \
                PARTIAL_FAILURES or not same(item, lemma):
            out.append(result)
            continue
        out.append(replace(result, steps=tuple(step.status for step in lemma.steps)))
    return out + list(items[len(out):])


def _hundredths_down(value: Fraction) -> Fraction:
    return Fraction(math.floor(value * 100), 100)


def partial_credit(item: ItemResult, steps=None) -> ItemResult:
    """The item with partial credit per step: points * (verified checks / checks), rounded down
    to a hundredth, when it is a lemma that was checked, not verified, and recorded as stating
    the assignment's statement in its setting (steps: its checks' statuses; by default those
    recorded on the item).  Otherwise (earned, a claim, another statement, no checks) the item
    as it is.  The failure stays (the lemma is still not verified); the note says what was
    credited."""
    steps = item.steps if steps is None else tuple(steps)
    if item.earned or item.kind == "claim" or item.failure not in PARTIAL_FAILURES \
            or not steps or item.overridden is not None:
        return item
    verified = sum(1 for status in steps if status == "verified")
    points = _hundredths_down(item.max_points * Fraction(verified, len(steps)))
    if points <= item.points:
        return item
    unit = "point" if item.max_points == 1 else "points"
    note = (f"{item.note}; partial credit: {verified} of {len(steps)} checks verified, "
            f"{format_points(points)} of {format_points(item.max_points)} {unit}")
    return replace(item, points=points, note=note, steps=steps)
