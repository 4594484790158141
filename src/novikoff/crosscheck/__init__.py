"""A second opinion on the kernel's verdicts (untrusted, off by default): every obligation
written as a self-contained SMT-LIB 2 file (`check --smt2 DIR`), and decided again by cvc5 from
that text (`check --cross-check`).  The kernel asks it through ``solver.AUDIT.second_opinion``
and only ever loses a verdict by it: where cvc5 answers otherwise, the step is 'unknown'.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..kernel import solver
from ..kernel.formulas import Relation
from . import smtlib

__all__ = ["CrossCheck", "install"]


@dataclass
class CrossCheck:
    """cross_check: ask cvc5; smt2_dir: write each obligation there (numbered, named after
    solver.AUDIT.label)."""

    cross_check: bool = False
    smt2_dir: Path | None = None
    written: int = 0

    def __call__(self, hypotheses, goal, timeout_ms: int, nats: frozenset, verdict, by: str):
        if self.smt2_dir is not None:
            self._write(hypotheses, goal, nats, verdict, by)
        if not self.cross_check:
            return None
        if verdict.answer == "invalid":
            # Z3's model is a certificate: cvc5 checks it (a sat search alone often times out).
            pinned = _model_values(verdict)
            if pinned:
                second = smtlib.cvc5_entails(list(hypotheses) + pinned, goal, timeout_ms,
                                             nats=nats)
                if second.answer != "unknown":
                    return second
        return smtlib.cvc5_entails(hypotheses, goal, timeout_ms, nats=nats)

    def _write(self, hypotheses, goal, nats, verdict, by: str) -> None:
        label = solver.AUDIT.label
        self.written += 1
        try:
            text = smtlib.smt2_script(hypotheses, goal, nats=nats,
                                      comment=f"{label}\n{by}: {verdict.answer} (unsat = valid)")
        except solver.TranslationError as exc:
            text = f"; {label}: no SMT-LIB translation ({exc})\n"
        stem = "".join(c if c.isalnum() or c in "._-" else "_" for c in label)[-80:]
        (self.smt2_dir / f"{self.written:05d}-{stem}.smt2").write_text(text, encoding="utf-8")


def _model_values(verdict) -> list:
    """atom = value for every atom of the model with a rational value of at most MAX_DIGITS
    digits (the pins only help cvc5 find the model: one left out loses nothing)."""
    out = []
    for atom, var in verdict.translator.atoms.values():
        number = solver.model_number(verdict.model.eval(var, model_completion=True))
        if number is not None:
            out.append(Relation("=", atom, number))
    return out


def install(cross_check: bool = False, smt2_dir: Path | None = None) -> CrossCheck | None:
    """Make the kernel ask this second opinion (or none, when neither is asked for)."""
    audit = CrossCheck(cross_check, smt2_dir) if cross_check or smt2_dir is not None else None
    solver.AUDIT.second_opinion = audit
    return audit
