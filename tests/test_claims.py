"""`claim NAME: refuted by run FILE` in .proof files: a witness run replayed by the checker.

A refuted claim fails as expected; a run that does not refute it, an unreadable or outside file,
or a malformed clause is a failure or a positioned error; a claim is never verified nor citable.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from novikoff.checker import Checker

WITNESSES = Path(__file__).resolve().parents[1] / "proofs" / "seeds" / "witnesses"


def check(tmp_path, text: str):
    proof = tmp_path / "claims.proof"
    proof.write_text(text, encoding="utf-8")
    return Checker().check_file(proof)


@pytest.fixture
def witnesses(tmp_path) -> Path:
    shutil.copytree(WITNESSES, tmp_path / "witnesses")
    return tmp_path / "witnesses"


def test_a_refuted_claim_fails_as_expected_with_what_the_run_showed(tmp_path, witnesses):
    report = check(tmp_path, "claim stops_at_separator: refuted by run "
                             "witnesses/seed003_batch_stop.json\n")
    assert report.error is None
    (claim,) = report.lemmas
    assert (claim.kind, claim.status) == ("claim", "expected_failure")
    assert "separating hyperplane" in claim.statement
    (step,) = claim.steps
    assert step.status == "expected_failure" and step.line == 1 and step.column == 7
    assert step.reason.startswith("refuted by run witnesses/seed003_batch_stop.json")
    assert "theta = (1/2, 2)" in step.reason


def test_a_run_that_does_not_refute_its_claim_is_a_failure(tmp_path, witnesses):
    unit = {"format": "novikoff-witness/1", "claim": "normalising-preserves-run",
            "X": [[1, 0], [0, 1]], "y": [1, -1], "max_epochs": 10}
    (witnesses / "unit.json").write_text(json.dumps(unit), encoding="utf-8")
    report = check(tmp_path, "claim harmless: refuted by run witnesses/unit.json\n")
    (claim,) = report.lemmas
    assert claim.status == "failed"
    assert "does not refute" in claim.steps[0].reason


@pytest.mark.parametrize("path, message", [
    ("witnesses/missing.json", "cannot read"),
    ("/etc/hostname", "must be in the directory of the .proof file"),
    ("../outside.json", "must be in the directory of the .proof file"),
])
def test_an_unusable_witness_file_is_a_failure_with_its_reason(tmp_path, witnesses, path,
                                                               message):
    (tmp_path.parent / "outside.json").write_text("{}", encoding="utf-8")
    report = check(tmp_path, f"claim c: refuted by run {path}\n")
    (claim,) = report.lemmas
    assert claim.status == "failed"
    assert claim.steps[0].reason.startswith("error:") and message in claim.steps[0].reason


def test_a_corrupt_witness_is_a_failure_not_a_traceback(tmp_path, witnesses):
    (witnesses / "bad.json").write_text('{"format": "novikoff-witness/1", "claim": 3}',
                                        encoding="utf-8")
    report = check(tmp_path, "claim c: refuted by run witnesses/bad.json\n")
    assert report.lemmas[0].status == "failed"
    assert "bad.json" in report.lemmas[0].steps[0].reason


@pytest.mark.parametrize("line, message", [
    ("claim c refuted by run w.json", "':' after the claim's name"),
    ("claim c: refuted by w.json", "expected 'refuted by run FILE'"),
    ("claim c: refuted by run", "expected the witness file"),
    ("claim : refuted by run w.json", "the claim's name"),
])
def test_a_malformed_claim_is_a_positioned_error(tmp_path, line, message):
    report = check(tmp_path, line + "\n")
    assert report.error is not None
    assert report.error.line == 1 and message in str(report.error)


def test_a_claim_cannot_be_cited(tmp_path, witnesses):
    report = check(tmp_path, "claim normalising: refuted by run "
                             "witnesses/seed000_normalise.json\n\n"
                             "setting s:\n  real a\n\nlemma use: a = a\nproof:\n"
                             "  a = a    by normalising\n")
    lemma = next(lem for lem in report.lemmas if lem.name == "use")
    assert lemma.status == "failed"
    assert "unknown fact 'normalising'" in lemma.steps[0].reason


def test_a_claim_may_not_take_a_lemmas_name(tmp_path, witnesses):
    report = check(tmp_path, "setting s:\n  real a\n\nlemma twice: a = a\nproof:\n  a = a\n\n"
                             "claim twice: refuted by run witnesses/seed000_normalise.json\n")
    assert report.error is not None and "already a lemma's name" in str(report.error)


def test_a_pipe_or_a_huge_file_is_refused_without_reading_it(tmp_path, witnesses):
    os.mkfifo(witnesses / "pipe.json")  # reading it would block the checker
    (witnesses / "huge.json").write_text(" " * (1 << 21), encoding="utf-8")
    report = check(tmp_path, "claim a: refuted by run witnesses/pipe.json\n"
                             "claim b: refuted by run witnesses/huge.json\n")
    reasons = [claim.steps[0].reason for claim in report.lemmas]
    assert "not a regular file" in reasons[0]
    assert "larger than" in reasons[1]


def test_a_loop_of_symbolic_links_is_a_failure_not_a_traceback(tmp_path):
    (tmp_path / "loopa").symlink_to(tmp_path / "loopb")
    (tmp_path / "loopb").symlink_to(tmp_path / "loopa")
    report = check(tmp_path, "claim c: refuted by run loopa/w.json\n")
    assert report.lemmas[0].status == "failed"
    assert report.lemmas[0].steps[0].reason.startswith("error:")
