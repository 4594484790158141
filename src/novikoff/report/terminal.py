"""Human-readable output of `novikoff check`.

Three levels: `quiet` prints the steps that failed (or could not be decided), the malformed files
and the summary; the default adds one line per file with its counts; `verbose` prints every lemma
and every step, expected failures with their counterexamples included.
"""

from __future__ import annotations

__all__ = ["render_check", "summary_line", "summary_counts"]

_MARK = {"verified": "ok", "failed": "FAIL", "unknown": "??", "expected_failure": "xfail"}
LEVELS = ("quiet", "default", "verbose")


def render_check(reports, elapsed: float, level: str = "default") -> str:
    """Render FileReports as text at one of LEVELS."""
    if level not in LEVELS:
        raise ValueError(f"level={level!r} is not one of {LEVELS}")
    out = []
    for report in reports:
        if report.error is not None:
            out.append(f"{report.error}")
        if report.notes is not None and level != "quiet":
            out += _notes_lines(report, verbose=level == "verbose")
        if level == "verbose":
            out += _verbose(report)
            continue
        if level == "default" and report.lemmas:
            out.append(f"{report.path}: {_counts_text(report.lemmas, report.steps)}")
        for step in report.steps:
            if step.status in ("failed", "unknown"):
                out += _step_lines(step)
    out.append(summary_line(reports, elapsed))
    return "\n".join(out)


def _notes_lines(report, verbose: bool) -> list:
    """What a Markdown or LaTeX document held beside its claims: the displays not checked, the
    links not understood (each with its position, when verbose)."""
    notes = report.notes
    out = [f"{report.path}: {notes.get('displays not checked', 0)} display(s) not checked; "
           f"{notes.get('links read', 0)} of {notes.get('links', 0)} link(s) read, "
           f"{notes.get('links checked', 0)} checked"]
    if verbose:
        out += [f"    {report.path}:{line}:{col}: {message}"
                for line, col, message in notes.get("not understood", [])]
    return out


def _verbose(report) -> list:
    if not report.lemmas:
        return []
    out = [f"{report.path}"]
    for lemma in report.lemmas:
        mark = _MARK.get(lemma.status, lemma.status)
        title = lemma.name if lemma.kind == "setting" else \
            f"{lemma.kind} {lemma.name}: {lemma.statement}" + "".join(
                f"  given {g}" for g in lemma.givens)
        out.append(f"  [{mark}] {title}")
        if lemma.status != "verified" and lemma.reason:
            out.append(f"         not verified: {lemma.reason}")
        for step in lemma.steps:
            out += _step_lines(step)
    return out


def _step_lines(step) -> list:
    status = f"{step.status} ({step.basis})" if getattr(step, "basis", "") else step.status
    out = [f"    {step.file}:{step.line}:{step.column}: {status}: {step.text}"]
    if step.status != "verified" and step.reason:
        out.append(f"        why: {step.reason}")
    if step.counterexample:
        values = ", ".join(f"{k} = {v}" for k, v in step.counterexample.items())
        out.append(f"        counterexample: {values}")
    if step.missing:
        out.append(f"        the steps that could not be justified need: "
                   f"{', '.join(step.missing)}")
    return out


def summary_counts(reports, elapsed: float) -> dict:
    """The counts of a check, for the JSON document and the summary line."""
    lemmas = [lemma for r in reports for lemma in r.lemmas]
    steps = [s for r in reports for s in r.steps]

    def count(items, status):
        return sum(1 for i in items if i.status == status)

    return {"files": len(reports),
            "malformed_files": sum(1 for r in reports if r.error is not None),
            "lemmas": len(lemmas), "verified": count(lemmas, "verified"),
            "failing_as_expected": count(lemmas, "expected_failure"),
            "not_verified": count(lemmas, "failed"),
            "checks": len(steps), "checks_verified": count(steps, "verified"),
            "checks_certified": sum(1 for s in steps if getattr(s, "basis", "") == "certified"),
            "checks_expected_failures": count(steps, "expected_failure"),
            "checks_failed": count(steps, "failed"), "checks_unknown": count(steps, "unknown"),
            "seconds": round(elapsed, 3)}


def _counts_text(lemmas, steps) -> str:
    c = summary_counts([_Group(lemmas, steps)], 0.0)
    return (f"{c['lemmas']} lemmas: {c['verified']} verified, {c['failing_as_expected']} "
            f"failing as expected, {c['not_verified']} not verified; {c['checks']} checks: "
            f"{c['checks_verified']} verified ({c['checks_certified']} certified), "
            f"{c['checks_expected_failures']} expected "
            f"failures, {c['checks_failed']} failed, {c['checks_unknown']} unknown")


class _Group:
    """Lemmas and steps counted as one report (a file's line of the default output)."""

    error = None

    def __init__(self, lemmas, steps):
        self.lemmas, self.steps = lemmas, steps


def summary_line(reports, elapsed: float) -> str:
    lemmas = [lemma for r in reports for lemma in r.lemmas]
    steps = [s for r in reports for s in r.steps]
    text = _counts_text(lemmas, steps)
    errors = sum(1 for r in reports if r.error is not None)
    if errors:
        text += f"; {errors} malformed file(s)"
    return text + f" ({elapsed:.2f} s)"
