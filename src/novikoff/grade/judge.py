"""What a checked submission earns: each assignment item judged against the student's file.

A submission earns an item only if its file has a lemma of the same name that

- the kernel verified in the student's process (`LemmaReport.status`, which asks the kernel to
  certify the theorem for the statement; an expected failure, a lemma citing an unverified lemma
  or resting on an `xfail` step is not verified);
- states the assignment's formula, by the kernel's equality of elaborated formulas (givens
  included: `givens => statement`), or a formula the kernel proves equivalent to it in the
  same setting (both ways; the assignment's statement is derived from the student's theorem
  and accepted by the kernel), so a weaker bound or an extra `given` earns nothing, whatever its
  text looks like;
- under the policy cite_earlier_parts, may rest on earlier parts cited unproved: then the
  kernel verified `(those parts' statements, as the assignment states them) => statement`;
- in a setting with the assignment's signature: the same symbols of the same kinds, the same
  declarations (sign constraints) and the same assumptions as formulas (names and order aside),
  so an extra assumption (`assume cheat: gamma > R`), a missing one or a changed kind earns
  nothing even where the proof does not use it.

A claim earns when the student's claim of that name is refuted by its run (an expected failure)
of the same catalogue claim.  This module decides nothing about proofs: it reads the kernel's
verdicts and compares formulas.
"""

from __future__ import annotations

import difflib
from fractions import Fraction

from .. import kernel as K
from ..errors import KernelError, UnreadableSource
from ..kernel.solver import LIMITS
from .assignment import Assignment, Item, setting_signature
from .results import ItemResult

__all__ = ["judge", "not_checked"]

POLICY_ON = "the assignment allows citing earlier parts unproved"
POLICY_OFF = "the assignment does not allow citing earlier parts unproved"


def not_checked(assignment: Assignment, failure: str, note: str) -> list:
    """Every item unearned for one reason (a file that cannot be read, a checker that stopped)."""
    return [ItemResult(item.name, item.kind, Fraction(0), item.points, failure, note)
            for item in assignment.items]


def judge(assignment: Assignment, report, budget, timeout_ms: int = 60_000) -> list:
    """The ItemResults of a FileReport checked in this process (its lemmas still hold the
    kernel's objects).  budget: the workers.Budget the file was checked under (for notes)."""
    lemmas = {lemma.name: lemma for lemma in report.lemmas if lemma.kind != "setting"}
    names = {item.name for item in assignment.items}
    others = [lemma for name, lemma in lemmas.items() if name not in names]
    judged = []
    for item in assignment.items:
        lemma = lemmas.get(item.name)
        if lemma is None:
            judged.append(_missing(item, report, others))
        else:
            judged.append(_judge_item(item, lemma, assignment, budget, timeout_ms))
    return judged


def _unearned(item: Item, failure: str, note: str, detail: str = "") -> ItemResult:
    return ItemResult(item.name, item.kind, Fraction(0), item.points, failure, note,
                      detail=detail)


def _missing(item: Item, report, others: list) -> ItemResult:
    """No lemma of the item's name: one that looks like a typo of it, or the file's error."""
    note = f"no {item.kind} named {item.name} in the file"
    same = [lemma for lemma in others if lemma.formula is not None
            and lemma.formula == item.formula and lemma.scope is not None
            and setting_signature(lemma.scope.setting) == item.signature]
    close = difflib.get_close_matches(item.name, [lemma.name for lemma in others], n=1,
                                      cutoff=0.7)
    if same:
        return _unearned(item, "missing", f"{note}: did you mean `{item.name}`? your "
                                          f"`{same[0].name}` (line {same[0].line}) states the "
                                          f"assignment's {item.name}: give it that name")
    if close:
        line = next(lemma.line for lemma in others if lemma.name == close[0])
        return _unearned(item, "missing", f"{note}: did you mean `{item.name}` for your "
                                          f"`{close[0]}` (line {line})?")
    error = report.error
    if error is not None:
        what = "cannot be read" if isinstance(error, UnreadableSource) else "does not check"
        return _unearned(item, "file", f"the file {what} ({error.file}:{error.line}:"
                                       f"{error.column}: {error.message})")
    return _unearned(item, "missing", note)


def _judge_item(item: Item, lemma, assignment: Assignment, budget, timeout_ms: int):
    def unearned(failure: str, note: str, detail: str = "") -> ItemResult:
        return _unearned(item, failure, note, detail)

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
        return unearned(*_why_not_verified(lemma, assignment, budget))
    scope = lemma.scope
    if scope is None or setting_signature(scope.setting) != item.signature:
        return unearned("setting", f"line {lemma.line}: verified, but in a setting that is not "
                                   f"the assignment's: {_setting_difference(item, scope)}")
    earned = ItemResult(item.name, item.kind, item.points, item.points, "", "verified")
    if lemma.parts_cited:
        cited = ", ".join(lemma.parts_cited)
        if lemma.formula != _with_parts(item, lemma.parts_cited, assignment):
            return unearned(*_statement_difference(item, lemma))
        return ItemResult(item.name, item.kind, item.points, item.points, "",
                          f"verified on its own steps, citing {cited} as the assignment states "
                          f"{'it' if len(lemma.parts_cited) == 1 else 'them'} ({POLICY_ON})")
    if lemma.formula == item.formula:
        return earned
    if _equivalent(item, lemma, timeout_ms):
        return ItemResult(item.name, item.kind, item.points, item.points, "",
                          f"verified; stated differently ({_shown(lemma.statement, lemma.givens)}"
                          f"), equivalent to the assignment's "
                          f"{_shown(item.statement, item.givens)}")
    return unearned(*_statement_difference(item, lemma))


def _with_parts(item: Item, parts: tuple, assignment: Assignment):
    """What a lemma citing these earlier parts unproved must state: (their statements and the
    item's givens) => the item's statement, as the checker builds it."""
    statements = dict(assignment.parts)
    goal, givens = item.formula, ()
    if item.givens:
        goal, givens = item.formula.conclusion, item.formula.premises
    return K.Implication(tuple(statements[name] for name in parts) + tuple(givens), goal)


def _equivalent(item: Item, lemma, timeout_ms: int) -> bool:
    """Whether the kernel proves the assignment's statement from the student's verified lemma
    and the student's statement from the assignment's, in the student's setting (of the
    assignment's signature), each within a lemma's budget.  Only the first direction makes a
    theorem, which the kernel must accept for the assignment's statement.

    The assignment's statement follows from the student's alone, with the setting's
    declarations (kinds, signs) but not its assumptions: an item one step from the assumptions
    would otherwise follow from any verified lemma of its name (`1 > 0`, a weaker bound, an
    extra given).  The way back may use the assumptions (`a >= 1` for `a >= 0` where the setting
    assumes `a >= 1`)."""
    setting = lemma.scope.setting
    try:
        LIMITS.start_lemma()
        forward = K.decide(setting, [lemma.theorem], item.formula, timeout_ms=timeout_ms)
        if forward.status != "verified":
            return False
        assumptions = [K.assume(setting, f) for f in setting.assumptions.values()]
        LIMITS.start_lemma()
        back = K.decide(setting, [K.assume(setting, item.formula), *assumptions],
                        lemma.formula, timeout_ms=timeout_ms)
        if back.status != "verified":
            return False
        LIMITS.start_lemma()
        ok, _ = K.accepts(setting, forward.theorem, item.formula, timeout_ms,
                          givens=bool(item.givens))
        return ok and K.certifies(forward.theorem, item.formula)
    except KernelError:  # a formula of another shape than a step's: not shown equivalent
        return False


def _why_not_verified(lemma, assignment: Assignment, budget) -> tuple:
    steps = [s for s in lemma.steps if s.status != "verified"]
    xfail = [s for s in steps if s.xfail]
    if lemma.status == "expected_failure" or xfail:
        where = f" (line {xfail[0].line})" if xfail else ""
        return ("xfail", f"a step is marked xfail{where}: a lemma with an expected failure is not "
                         f"verified")
    for s in steps:  # "holds only if X holds, which is not verified", "X is not verified: ..."
        if "is not verified" in s.reason or "are not verified" in s.reason:
            policy = (POLICY_ON + ", only earlier parts of the assignment" if
                      assignment.policy["cite_earlier_parts"] else POLICY_OFF)
            return "unverified-citation", f"line {s.line}: {s.reason} ({policy})"
    for s in steps:
        if s.status == "unknown" and _out_of_limits(s.reason):
            return ("timed-out", f"line {s.line}: timed out: could not verify within the "
                                 f"grading limits (Z3: {budget.rlimit:,} units per check, "
                                 f"{budget.lemma_units:,} per lemma): simplify the step or "
                                 f"split it")
    if steps:
        s = steps[0]
        return "not-verified", f"line {s.line}: {s.status}: {s.reason}", _step_detail(s)
    return "not-verified", f"line {lemma.line}: not verified: {lemma.reason}"


def _step_detail(step) -> str:
    """The failing step as the student reads it in Markdown: where, why (with the facts that
    would make it hold, when the checker found some) and a counterexample."""
    lines = [f"**line {step.line}**: `{step.text.strip()}`", "", f"- why: {step.reason}"]
    if step.counterexample:
        values = ", ".join(f"{name} = {value}" for name, value in step.counterexample.items())
        lines.append(f"- counterexample: `{values}`")
    return "\n".join(lines)


def _out_of_limits(reason: str) -> bool:
    """Z3 says 'canceled' or '... resource limit ...' when a check runs out of its rlimit,
    'timeout' on the wall-clock backstop; the kernel says 'timed out' when the lemma's budget
    is spent."""
    return any(word in reason for word in ("canceled", "resource limit", "timeout",
                                           "timed out"))


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


def _shown(statement: str, givens: tuple) -> str:
    return f"`{statement}`" + (f" given {', '.join(givens)}" if givens else "")


def _statement_difference(item: Item, lemma) -> tuple:
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
                         f"{_shown(lemma.statement, lemma.givens)}, not the assignment's "
                         f"{_shown(item.statement, item.givens)}")
