"""Lemma statements for the runtime monitor and the fuzzer: one statement, three uses."""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import ProofSyntaxError

__all__ = ["LemmaInfo", "SettingInfo", "load_lemmas"]


@dataclass(frozen=True)
class SettingInfo:
    """What a consumer needs to bind a lemma's symbols to a run's state."""

    name: str
    kinds: dict  # name -> vector | vector_sequence | real | real_sequence | label | nat
    per_update: frozenset  # names
    assumptions: dict  # name -> kernel formula
    declarations: tuple  # kernel Relations (gamma > 0, y**2 = 1, k >= 0)
    bindings: tuple = ()  # the `bind` lines: novikoff.quantities.Binding


@dataclass(frozen=True)
class LemmaInfo:
    """A lemma as checked: its statement (a kernel formula) and whether it is verified."""

    name: str
    file: str
    line: int
    text: str
    statement: object
    setting: SettingInfo
    verified: bool
    status: str
    hypotheses: dict  # name -> formula: the assumptions the proof rests on (all, if unverified)


def load_lemmas(paths, timeout_ms: int = 5000) -> list:
    """Check the .proof files under paths and return every lemma with its statement.

    Raises ProofSyntaxError for a malformed file.  Lemmas of files imported by the given ones are
    included once.
    """
    from ..checker import Checker, proof_files

    checker = Checker(timeout_ms=timeout_ms)
    out, seen = [], set()
    for path in proof_files(paths):
        report = checker.check_file(path)
        if report.error is not None:
            raise report.error
    for report in checker.reports.values():
        if report.error is not None:
            raise ProofSyntaxError(report.error.message, report.error.file, report.error.line,
                                   report.error.column, report.error.text)
        for lemma in report.lemmas:
            key = (report.path, lemma.name)
            if key in seen or lemma.formula is None:
                continue
            seen.add(key)
            scope = lemma.scope
            setting = SettingInfo(scope.name, dict(scope.kinds),
                                  frozenset(str(s) for s in scope.per_update),
                                  dict(scope.assumptions), tuple(scope.setting.declarations),
                                  tuple(scope.bindings.values()))
            if lemma.theorem is not None:
                used = {n: f for n, f in scope.assumptions.items() if f in lemma.theorem.hyps}
            else:
                used = dict(scope.assumptions)
            out.append(LemmaInfo(lemma.name, report.path, lemma.line, lemma.statement,
                                 lemma.formula, setting, lemma.status == "verified",
                                 lemma.status, used))
    return out
