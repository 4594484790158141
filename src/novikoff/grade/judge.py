"""What a checked submission earns: each assignment item judged against the student's file.

A submission earns an item only if its file has a lemma of the same name that

- the kernel verified in the student's process (`LemmaReport.status`, which asks the kernel to
  certify the theorem for the statement; an expected failure, a lemma citing an unverified lemma
  or resting on an `xfail` step is not verified);
- states the assignment's formula, by the kernel's equality of elaborated formulas (givens
  included: `givens => statement`), so a weaker bound, an extra `given` or a reworded statement
  earns nothing, whatever its text looks like;
- in a setting with the assignment's signature: the same symbols of the same kinds, the same
  declarations (sign constraints) and the same assumptions as formulas (names and order aside),
  so an extra assumption (`assume cheat: gamma > R`), a missing one or a changed kind earns
  nothing even where the proof does not use it.

A claim earns when the student's claim of that name is refuted by its run (an expected failure)
of the same catalogue claim.  This module decides nothing about proofs: it reads the kernel's
verdicts and compares formulas.
"""

from __future__ import annotations

from fractions import Fraction

from .assignment import Assignment, Item, setting_signature
from .results import ItemResult

__all__ = ["judge", "not_checked"]


def not_checked(assignment: Assignment, failure: str, note: str) -> list:
    """Every item unearned for one reason (a file that cannot be read, a checker that stopped)."""
    return [ItemResult(item.name, item.kind, Fraction(0), item.points, failure, note)
            for item in assignment.items]


def judge(assignment: Assignment, report, rlimit: int) -> list:
    """The ItemResults of a FileReport checked in this process (its lemmas still hold the
    kernel's objects)."""
    lemmas = {lemma.name: lemma for lemma in report.lemmas if lemma.kind != "setting"}
    return [_judge_item(item, lemmas.get(item.name), report, rlimit)
            for item in assignment.items]


def _judge_item(item: Item, lemma, report, rlimit: int) -> ItemResult:
    def unearned(failure: str, note: str) -> ItemResult:
        return ItemResult(item.name, item.kind, Fraction(0), item.points, failure, note)

    if lemma is None:
        if report.error is not None:
            error = report.error
            return unearned("file", f"the file does not check ({error.file}:{error.line}:"
                                    f"{error.column}: {error.message})")
        return unearned("missing", f"no {item.kind} named {item.name} in the file")
    if item.is_claim != (lemma.kind == "claim"):
        want = "a claim refuted by a run" if item.is_claim else f"a {item.kind} with a proof"
        return unearned("kind", f"{item.name} must be {want}, not a {lemma.kind}")
    if item.is_claim:
        if lemma.status != "expected_failure":
            return unearned("not-refuted", f"line {lemma.line}: {lemma.reason}")
        if lemma.statement != item.statement:
            return unearned("statement", f"line {lemma.line}: its run refutes another claim "
                                         f"({lemma.statement})")
        return ItemResult(item.name, item.kind, item.points, item.points, "", lemma.reason)
    if lemma.status != "verified":
        return unearned(*_why_not_verified(lemma, rlimit))
    scope = lemma.scope
    if scope is None or setting_signature(scope.setting) != item.signature:
        return unearned("setting", f"line {lemma.line}: verified, but in a setting that is not "
                                   f"the assignment's: {_setting_difference(item, scope)}")
    if lemma.formula != item.formula:
        return unearned(*_statement_difference(item, lemma))
    return ItemResult(item.name, item.kind, item.points, item.points, "", "verified")


def _why_not_verified(lemma, rlimit: int) -> tuple:
    steps = [s for s in lemma.steps if s.status != "verified"]
    xfail = [s for s in steps if s.xfail]
    if lemma.status == "expected_failure" or xfail:
        where = f" (line {xfail[0].line})" if xfail else ""
        return ("xfail", f"a step is marked xfail{where}: a lemma with an expected failure is not "
                         f"verified")
    for s in steps:  # "holds only if X holds, which is not verified", "X is not verified: ..."
        if "is not verified" in s.reason or "are not verified" in s.reason:
            return "unverified-citation", f"line {s.line}: {s.reason}"
    for s in steps:
        if s.status == "unknown" and _out_of_limits(s.reason):
            return ("limits", f"line {s.line}: could not verify within the grading limits (Z3 "
                              f"rlimit {rlimit:,} per check): simplify the step or split it")
    if steps:
        s = steps[0]
        return "not-verified", f"line {s.line}: {s.status}: {s.reason}"
    return "not-verified", f"line {lemma.line}: not verified: {lemma.reason}"


def _out_of_limits(reason: str) -> bool:
    """Z3 says 'canceled' or '... resource limit ...' when a check runs out of its rlimit (and
    'timeout' on the wall-clock backstop)."""
    return any(word in reason for word in ("canceled", "resource limit", "timeout"))


def _setting_difference(item: Item, scope) -> str:
    """The first difference between the student's setting (scope) and the assignment's, in
    words."""
    if scope is None:
        return "it has none"
    reference = item.scope
    kinds, declarations, assumptions = setting_signature(scope.setting)
    want_kinds, want_declarations, want_assumptions = item.signature
    mine = dict(kinds)
    wanted = dict(want_kinds)
    for name in sorted(set(mine) | set(wanted)):
        if name not in wanted:
            return f"it declares {name} ({mine[name]}), which the assignment does not"
        if name not in mine:
            return f"it does not declare {name} ({wanted[name]})"
        if mine[name] != wanted[name]:
            return f"{name} is a {mine[name]} here, a {wanted[name]} in the assignment"
    if declarations != want_declarations:
        return "a sign constraint differs (as in `real gamma > 0`)"
    extra = [n for n, f in scope.assumptions.items() if f not in want_assumptions]
    if extra:
        return f"extra or changed assumption: {_assumption_text(scope, extra[0])}"
    missing = [n for n, f in reference.assumptions.items() if f not in assumptions]
    if missing:
        return f"missing assumption: {_assumption_text(reference, missing[0])}"
    return "its assumptions differ"


def _assumption_text(scope, name: str) -> str:
    pos = scope.assumption_pos.get(name)
    text = scope.lines.get(pos.line, "") if pos is not None else ""
    return f"`{' '.join(text.split('#', 1)[0].split()) or name}`"


def _statement_difference(item: Item, lemma) -> tuple:
    def shown(statement: str, givens: tuple) -> str:
        return f"`{statement}`" + (f" given {', '.join(givens)}" if givens else "")

    same_text = lemma.statement.strip() == item.statement.strip()
    if same_text and lemma.givens != item.givens:
        return ("givens", f"line {lemma.line}: verified, but with givens "
                          f"{', '.join(lemma.givens) or 'none'} where the assignment has "
                          f"{', '.join(item.givens) or 'none'}")
    if same_text:
        return ("statement", f"line {lemma.line}: verified, and its statement reads like the "
                             f"assignment's, but it means something else here (a `define` "
                             f"differs?)")
    return ("statement", f"line {lemma.line}: verified, but it states "
                         f"{shown(lemma.statement, lemma.givens)}, not the assignment's "
                         f"{shown(item.statement, item.givens)}")
