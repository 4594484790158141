"""Defence in depth: `check --smt2 DIR` writes every obligation, `--cross-check` asks cvc5 too."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from helpers import PERCEPTRON, check_text, lemma_of, steps_of

pytest.importorskip("cvc5")

from novikoff.crosscheck import CrossCheck  # noqa: E402
from novikoff.kernel import solver  # noqa: E402
from novikoff.kernel.certified import LEDGER  # noqa: E402
from novikoff.crosscheck.smtlib import run_cvc5  # noqa: E402

BODY = """
lemma progress: <w_star, w[k]> >= k*gamma
proof by induction on k:
  base:
    <w_star, w[0]> = 0                                   by start
  step:
    <w_star, w[k+1]> = <w_star, w[k]> + y*<w_star, x>    by update
                     >= k*gamma + gamma                  by ih, margin
                     = (k+1)*gamma

lemma slip: y*<w_star, x> >= 2*gamma
proof:
  y*<w_star, x> >= 2*gamma   by margin   xfail
"""


def novikoff(*args, cwd):
    return subprocess.run([sys.executable, "-m", "novikoff.cli", *args], capture_output=True,
                          text=True, cwd=cwd, timeout=300)


def test_smt2_files_are_self_contained_and_agree_with_the_verdicts(tmp_path):
    (tmp_path / "p.proof").write_text(PERCEPTRON + BODY, encoding="utf-8")
    out = tmp_path / "smt"
    done = novikoff("check", "p.proof", "--smt2", str(out), cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    files = sorted(out.glob("*.smt2"))
    assert len(files) >= 5
    for f in files:
        text = f.read_text(encoding="utf-8")
        assert "(set-logic" in text and text.rstrip().endswith("(check-sat)")
        said = [line for line in text.splitlines()
                if line.startswith(("; z3: ", "; sympy: "))][0].split()[2]
        if said == "valid":  # anyone can re-check a verified obligation: cvc5 finds it unsat
            assert run_cvc5(text, 5000).answer == "valid", f.name


def test_cross_check_agrees_and_keeps_the_verdicts(tmp_path):
    (tmp_path / "p.proof").write_text(PERCEPTRON + BODY, encoding="utf-8")
    done = novikoff("check", "p.proof", "--cross-check", "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    summary = {lemma["name"]: lemma["status"] for lemma in json.loads(done.stdout)["lemmas"]}
    assert summary == {"progress": "verified", "slip": "expected_failure"}


def test_identities_settled_by_sympy_are_written_and_cross_checked(tmp_path, monkeypatch):
    """An equality whose normal form is 0 never reaches z3; it is still exported (`; sympy:
    valid`) and cvc5 must confirm it (issue 21, 4)."""
    (tmp_path / "p.proof").write_text(PERCEPTRON + BODY, encoding="utf-8")
    out = tmp_path / "smt"
    done = novikoff("check", "p.proof", "--smt2", str(out), cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    identities = [f for f in sorted(out.glob("*.smt2"))
                  if "; sympy: valid" in f.read_text(encoding="utf-8")]
    assert identities  # <w_star, w[0]> = 0 by start, = (k+1)*gamma
    for f in identities:
        assert run_cvc5(f.read_text(encoding="utf-8"), 5000).answer == "valid", f.name

    from novikoff.crosscheck import smtlib

    def contrary(hypotheses, goal, timeout_ms, *, nats=()):
        return smtlib.Cvc5Verdict("invalid", "planted disagreement")

    monkeypatch.setattr(smtlib, "cvc5_entails", contrary)
    monkeypatch.setattr(solver, "AUDIT",
                        solver.Audit(second_opinion=CrossCheck(cross_check=True)))
    # The ledger is process-wide: after another test checked the bundled library, its shipped
    # certificates would replay this identity ("verified (certified)") before any solver.
    monkeypatch.setattr(LEDGER, "store", {})
    report = check_text(tmp_path, """
        lemma t: (gamma + 1)^2 = gamma^2 + 2*gamma + 1
        proof:
          (gamma + 1)^2 = gamma^2 + 2*gamma + 1
        """)
    (step,) = steps_of(report, "t")
    assert step.status == "unknown" and "sympy says valid" in step.reason


def test_a_disagreement_makes_the_step_unknown(tmp_path, monkeypatch):
    from novikoff.crosscheck import smtlib

    def contrary(hypotheses, goal, timeout_ms, *, nats=()):
        return smtlib.Cvc5Verdict("invalid", "planted disagreement")

    monkeypatch.setattr(smtlib, "cvc5_entails", contrary)
    monkeypatch.setattr(solver, "AUDIT",
                        solver.Audit(second_opinion=CrossCheck(cross_check=True)))
    # (no stored certificate: a certified step asks no solver, and so no second opinion)
    monkeypatch.setattr(LEDGER, "store", {})
    report = check_text(tmp_path, """
        lemma t: y*<w_star, x> >= gamma/2
        proof:
          y*<w_star, x> >= gamma/2   by margin
        """)
    (step,) = steps_of(report, "t")
    assert step.status == "unknown"
    assert "z3 says valid" in step.reason and "cvc5 says invalid" in step.reason
    assert lemma_of(report, "t").status == "failed"


def test_bad_smt2_directory_is_a_usage_error(tmp_path):
    (tmp_path / "p.proof").write_text(PERCEPTRON + BODY, encoding="utf-8")
    (tmp_path / "file").write_text("x", encoding="utf-8")
    done = novikoff("check", "p.proof", "--smt2", str(tmp_path / "file" / "sub"), cwd=tmp_path)
    assert done.returncode == 2 and "--smt2" in done.stderr and "Traceback" not in done.stderr
