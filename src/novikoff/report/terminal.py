"""Human-readable output of `novikoff check`: one block per lemma, one line per step."""

from __future__ import annotations

__all__ = ["render_check"]

_MARK = {"verified": "ok", "failed": "FAIL", "unknown": "??", "expected_failure": "xfail"}


def render_check(reports, elapsed: float, verbose: bool = True) -> str:
    """Render FileReports as text: per lemma a status line, per step a located line."""
    out = []
    for report in reports:
        if report.error is not None:
            out.append(f"{report.error}")
            if not report.lemmas:
                continue
        out.append(f"{report.path}")
        for lemma in report.lemmas:
            mark = _MARK.get(lemma.status, lemma.status)
            out.append(f"  [{mark}] {lemma.kind} {lemma.name}: {lemma.statement}")
            if lemma.status != "verified" and lemma.reason:
                out.append(f"         not verified: {lemma.reason}")
            for step in lemma.steps:
                if step.status == "verified" and not verbose:
                    continue
                out.append(f"    {step.file}:{step.line}:{step.column}: {step.status}: "
                           f"{step.text}")
                if step.status != "verified" and step.reason:
                    out.append(f"        why: {step.reason}")
                if step.counterexample:
                    values = ", ".join(f"{k} = {v}" for k, v in step.counterexample.items())
                    out.append(f"        counterexample: {values}")
                if step.missing:
                    out.append(f"        the steps that could not be justified need: "
                               f"{', '.join(step.missing)}")
    out.append(summary_line(reports, elapsed))
    return "\n".join(out)


def summary_line(reports, elapsed: float) -> str:
    lemmas = [lemma for r in reports for lemma in r.lemmas]
    steps = [s for r in reports for s in r.steps]
    errors = sum(1 for r in reports if r.error is not None)

    def count(items, status):
        return sum(1 for i in items if i.status == status)

    parts = [f"{len(lemmas)} lemmas: {count(lemmas, 'verified')} verified, "
             f"{count(lemmas, 'expected_failure')} failing as expected, "
             f"{count(lemmas, 'failed')} not verified",
             f"{len(steps)} checks: {count(steps, 'verified')} verified, "
             f"{count(steps, 'expected_failure')} expected failures, "
             f"{count(steps, 'failed')} failed, {count(steps, 'unknown')} unknown"]
    if errors:
        parts.append(f"{errors} malformed file(s)")
    return "; ".join(parts) + f" ({elapsed:.2f} s)"
