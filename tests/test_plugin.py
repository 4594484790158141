"""The pytest plugin collects .proof files, one item per lemma, failing with the checker's words."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections import Counter

import pytest

from helpers import PERCEPTRON

GOOD = """
lemma good: y*<w_star, x> >= gamma
proof:
  y*<w_star, x> >= gamma   by margin

lemma bad: y*<w_star, x> >= 2*gamma
proof:
  y*<w_star, x> >= 2*gamma   by margin

lemma slip: y*<w_star, x> >= 2*gamma
proof:
  y*<w_star, x> >= 2*gamma   by margin   xfail
"""


DEPS = GOOD + """
lemma uses_slip: y*<w_star, x> >= 2*gamma
proof:
  y*<w_star, x> >= 2*gamma   by slip

lemma uses_slip_marked: y*<w_star, x> >= 2*gamma
proof:
  y*<w_star, x> >= 2*gamma   by slip   xfail
"""


@pytest.fixture(scope="module")
def session(tmp_path_factory):
    """One pytest run (a fresh process, as a user runs it) over three .proof files: (exit code,
    output).  One run for the three tests below: each fresh pytest costs seconds of start-up."""
    where = tmp_path_factory.mktemp("plugin")
    (where / "lemmas.proof").write_text(PERCEPTRON + GOOD, encoding="utf-8")
    (where / "broken.proof").write_text(PERCEPTRON + "lemma t: k >= \n", encoding="utf-8")
    (where / "deps.proof").write_text(PERCEPTRON + DEPS, encoding="utf-8")
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rA", "-p", "no:cacheprovider",
                           "-o", "addopts=", str(where)], capture_output=True, text=True,
                          cwd=where, timeout=300, env=dict(os.environ, COLUMNS="400"))
    return proc.returncode, proc.stdout


def outcomes(out: str, name: str) -> Counter:
    """How many items of file `name` passed, failed, xfailed (the short summary, -rA)."""
    found = re.findall(rf"^(PASSED|FAILED|XFAIL) {re.escape(name)}::", out, re.M)
    return Counter(found)


def failures(out: str, name: str) -> str:
    """The failure sections of file `name`'s items (each starts with the file's name)."""
    sections = re.split(r"^_{3,} .* _{3,}$", out.split("= PASSES =")[0], flags=re.M)[1:]
    return "\n".join(s for s in sections if s.lstrip().startswith(f"{name}:"))


def test_proof_files_are_collected_per_lemma(session):
    code, out = session
    assert outcomes(out, "lemmas.proof") == {"PASSED": 1, "FAILED": 1, "XFAIL": 1}, out
    assert "lemmas.proof::bad" in out
    assert "counterexample" in failures(out, "lemmas.proof")  # the checker's message
    assert code == 1


def test_a_malformed_file_is_one_failing_item(session):
    _, out = session
    assert outcomes(out, "broken.proof") == {"FAILED": 1}, out
    assert "broken.proof:13:" in failures(out, "broken.proof"), out


def test_a_lemma_resting_on_an_unverified_lemma_fails(session):
    _, out = session
    assert outcomes(out, "deps.proof") == {"PASSED": 1, "FAILED": 2, "XFAIL": 2}, out
    assert "holds only if slip holds" in failures(out, "deps.proof"), out
