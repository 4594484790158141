"""The pytest plugin collects .proof files, one item per lemma, failing with the checker's words."""

from __future__ import annotations

import subprocess
import sys

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


def run_pytest(path):
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "-o", "addopts=", str(path)], capture_output=True, text=True,
                          cwd=path.parent, timeout=300)


def test_proof_files_are_collected_per_lemma(tmp_path):
    (tmp_path / "lemmas.proof").write_text(PERCEPTRON + GOOD, encoding="utf-8")
    proc = run_pytest(tmp_path / "lemmas.proof")
    out = proc.stdout
    assert "1 passed" in out and "1 failed" in out and "1 xfailed" in out, out
    assert "lemmas.proof::bad" in out
    assert "counterexample" in out  # the checker's message is the failure
    assert proc.returncode == 1


def test_a_malformed_file_is_one_failing_item(tmp_path):
    (tmp_path / "broken.proof").write_text(PERCEPTRON + "lemma t: k >= \n", encoding="utf-8")
    proc = run_pytest(tmp_path / "broken.proof")
    assert "1 failed" in proc.stdout and "broken.proof:13:" in proc.stdout, proc.stdout


def test_a_lemma_resting_on_an_unverified_lemma_fails(tmp_path):
    text = PERCEPTRON + GOOD + """
lemma uses_slip: y*<w_star, x> >= 2*gamma
proof:
  y*<w_star, x> >= 2*gamma   by slip

lemma uses_slip_marked: y*<w_star, x> >= 2*gamma
proof:
  y*<w_star, x> >= 2*gamma   by slip   xfail
"""
    (tmp_path / "deps.proof").write_text(text, encoding="utf-8")
    proc = run_pytest(tmp_path / "deps.proof")
    out = proc.stdout
    assert "1 passed" in out and "2 failed" in out and "2 xfailed" in out, out
    assert "deps.proof::uses_slip " in out or "deps.proof::uses_slip\n" in out or \
        "holds only if slip holds" in out, out
