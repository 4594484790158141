"""Soundness corpus: small adversarial .proof files, each judging one lemma named `claim`.

Every file under cases/ that starts with an `# expect:` header is a test case (files without it are
helpers imported by a sibling).  The header:

    # expect: rejected | verified
    # claim: the statement in words, and why it is false (or true)
    # counterexample: concrete values making it false        (rejected files only)
    # note: ...                                               (optional)

`rejected`: the file fails to load with a positioned error, or lemma `claim` is not verified.
`verified`: a true control close to an attack; it loads and lemma `claim` is verified.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from novikoff.checker import Checker

from helpers import run_cli  # noqa: E402  (tests/ is on sys.path)

CASES = Path(__file__).resolve().parent / "cases"
EXPECT = re.compile(r"^# expect:\s*(rejected|verified)\s*$", re.M)


def _expectation(path: Path) -> str | None:
    m = EXPECT.search(path.read_text(encoding="utf-8"))
    return m.group(1) if m else None


def _corpus() -> list:
    return sorted(p for p in CASES.rglob("*.proof") if _expectation(p) is not None)


CORPUS = _corpus()
IDS = [p.relative_to(CASES).as_posix() for p in CORPUS]


def _claim(report):
    found = [lemma for lemma in report.lemmas if lemma.name == "claim"]
    return found[0] if found else None


def _describe(report) -> str:
    lines = []
    for lemma in report.lemmas:
        lines.append(f"{lemma.name}: {lemma.status} {lemma.reason}")
        for step in lemma.steps:
            if step.status != "verified":
                lines.append(f"  {step.line}:{step.column} {step.status}: {step.reason}")
    return "\n".join(lines)


LIMITATION = re.compile(r"^# known-limitation:", re.M)


# Cases whose check takes the solver many seconds (15 s for this one, about as long as the rest
# of the corpus together): run by .ci/run with -m e2e, not by the default test command.
# The second: its setting (update, mistake and radius over sequences of examples) takes one Z3
# check of 2-3 s to be shown consistent, which passed the 5 s timeout when the machine was loaded
# (the true control then fails "could not show the assumptions consistent").
SLOW = {"redteam4/rewrite_abs_float.proof", "redteam_attack2/m14_norm_growth_unit_ok.proof",
        "redteam17/r06_written_out_termwise_roots_timeout_ok.proof"}


def _params() -> list:
    """A control that states a known limitation is a strict xfail: it fails loudly once fixed."""
    out = []
    for path, name in zip(CORPUS, IDS):
        marks = []
        if LIMITATION.search(path.read_text(encoding="utf-8")):
            marks.append(pytest.mark.xfail(strict=True, reason="a known false rejection"))
        if name in SLOW:
            marks.append(pytest.mark.e2e)
        out.append(pytest.param(path, id=name, marks=marks))
    return out


@pytest.mark.parametrize("path", _params())
def test_case(path):
    expect = _expectation(path)
    report = Checker(timeout_ms=5000).check_file(path)
    claim = _claim(report)
    if expect == "rejected":
        if report.error is not None:
            return  # refused with a positioned error
        assert claim is not None, f"corpus file without lemma 'claim': {path}"
        assert claim.status != "verified", (
            f"false claim verified: {path.relative_to(CASES)}\n{_describe(report)}")
    else:
        assert report.error is None, f"control does not load: {report.error}"
        assert claim is not None, f"corpus file without lemma 'claim': {path}"
        assert claim.status == "verified", (
            f"true control not verified: {path.relative_to(CASES)}\n{_describe(report)}")


def test_corpus_size():
    assert len(CORPUS) >= 120, len(CORPUS)
    rejected = [p for p in CORPUS if _expectation(p) == "rejected"]
    verified = [p for p in CORPUS if _expectation(p) == "verified"]
    assert rejected and verified


def test_headers_are_complete():
    """Every judged file says what it claims; every attack gives its counterexample."""
    bad = []
    for path in CORPUS:
        text = path.read_text(encoding="utf-8")
        head = text.split("\n\n", 1)[0]
        if "# claim:" not in head:
            bad.append(f"{path}: no '# claim:'")
        if _expectation(path) == "rejected" and "# counterexample:" not in head:
            bad.append(f"{path}: no '# counterexample:'")
        if len(re.findall(r"^lemma claim:|^theorem claim:", text, re.M)) != 1:
            bad.append(f"{path}: not exactly one lemma named claim")
    assert not bad, "\n".join(bad)


# ---------------------------------------------------------------------- the command line

CLI_REJECTED = [
    "division/k_over_k_nat.proof",
    "induction/given_k_ge_3.proof",
    "settings/constant_vs_per_update.proof",
    "contradiction/cauchy_schwarz_impossible.proof",
    "dependencies/cites_failed.proof",
    "imports/xfail/claim.proof",
]
CLI_VERIFIED = [
    "induction/progress_ok.proof",
    "imports/compatible/claim.proof",
]


def _cli() -> list:
    """`python -m novikoff.cli`, else the `novikoff` script next to the interpreter."""
    probe = subprocess.run([sys.executable, "-m", "novikoff.cli", "--help"],
                           capture_output=True, text=True, timeout=120)
    if probe.returncode == 0:
        return [sys.executable, "-m", "novikoff.cli"]
    script = Path(sys.executable).with_name("novikoff")
    if script.exists():
        return [str(script)]
    found = shutil.which("novikoff")
    assert found, "neither 'python -m novikoff.cli' nor a 'novikoff' executable works"
    return [found]


@pytest.fixture(scope="module", params=["in-process", pytest.param("fresh", marks=pytest.mark.e2e)])
def cli(request):
    """The command line: in this process (no start-up: cheap), or as a user runs it (e2e)."""
    return None if request.param == "in-process" else _cli()


def _run(cli, rel: str):
    if cli is None:
        return run_cli("check", CASES / rel, cwd=CASES)
    env = dict(os.environ)
    env.setdefault("PYTHONIOENCODING", "utf-8")
    return subprocess.run(cli + ["check", str(CASES / rel)], capture_output=True, text=True,
                          timeout=300, env=env, cwd=CASES)


@pytest.mark.parametrize("rel", CLI_REJECTED)
def test_cli_exits_nonzero_on_rejected(cli, rel):
    assert _expectation(CASES / rel) == "rejected"
    done = _run(cli, rel)
    assert done.returncode in (1, 2), f"exit {done.returncode} for {rel}:\n{done.stdout}"
    assert "Traceback" not in done.stderr, done.stderr


@pytest.mark.parametrize("rel", CLI_VERIFIED)
def test_cli_exits_zero_on_controls(cli, rel):
    assert _expectation(CASES / rel) == "verified"
    done = _run(cli, rel)
    assert done.returncode == 0, f"exit {done.returncode} for {rel}:\n{done.stdout}\n{done.stderr}"
