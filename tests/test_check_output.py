"""What `novikoff check` prints: a line per file and per failed step by default, only failures
and the summary with -q, every lemma and step with -v; the JSON summary holds counts."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from novikoff.cli import main
from novikoff.errors import CheckingStopped, InvalidArgument

PROOF = """setting s:
  real a > 0
  nat k

lemma fine: a >= 0
proof:
  a >= 0

lemma slip: k >= 1
proof:
  k >= 1      xfail

lemma wrong: a >= 1
proof:
  a >= 1
"""


@pytest.fixture
def proof(tmp_path):
    path = tmp_path / "three.proof"
    path.write_text(PROOF, encoding="utf-8")
    return path


def run(capsys, *argv):
    code = main(["check", *map(str, argv)])
    return code, capsys.readouterr().out.splitlines()


def test_default_prints_a_line_per_file_and_per_failed_step(capsys, proof):
    code, lines = run(capsys, proof)
    assert code == 1
    assert lines[0].startswith(f"{proof}: 3 lemmas: 1 verified, 1 failing as expected, "
                               f"1 not verified")
    failed = [line for line in lines if ": failed: " in line]
    assert len(failed) == 1 and ":15:" in failed[0] and "a >= 1" in failed[0]
    assert any("counterexample: a = " in line for line in lines)
    assert not any("expected_failure" in line or "[ok]" in line for line in lines)
    assert lines[-1].startswith("3 lemmas: 1 verified")


def test_quiet_prints_only_failures_and_the_summary(capsys, proof):
    code, lines = run(capsys, "-q", proof)
    assert code == 1
    assert not any(line.startswith(f"{proof}:") for line in lines)
    assert any(": failed: " in line for line in lines)
    assert lines[-1].startswith("3 lemmas:")


def test_verbose_prints_every_lemma_and_step(capsys, proof):
    code, lines = run(capsys, "-v", proof)
    assert code == 1
    for mark in ("[ok] lemma fine", "[xfail] lemma slip", "[FAIL] lemma wrong"):
        assert any(mark in line for line in lines), mark
    # a verified step says what it rests on: no certificate is stored here, so the solver
    assert any(": verified (solver): a >= 0" in line for line in lines)
    assert any(": expected_failure: k >= 1" in line for line in lines)


def test_quiet_and_verbose_together_is_a_usage_error(capsys, proof):
    with pytest.raises(SystemExit) as exc:
        main(["check", "-q", "-v", str(proof)])
    assert exc.value.code == 2


def test_json_summary_is_an_object_of_counts(capsys, proof):
    code, lines = run(capsys, "--json", proof)
    summary = json.loads("\n".join(lines))["summary"]
    assert code == 1
    assert {k: summary[k] for k in ("files", "malformed_files", "lemmas", "verified",
                                    "failing_as_expected", "not_verified", "checks",
                                    "checks_verified", "checks_expected_failures",
                                    "checks_failed", "checks_unknown")} == {
        "files": 1, "malformed_files": 0, "lemmas": 3, "verified": 1, "failing_as_expected": 1,
        "not_verified": 1, "checks": 3, "checks_verified": 1, "checks_expected_failures": 1,
        "checks_failed": 1, "checks_unknown": 0}
    assert isinstance(summary["seconds"], float)


def test_a_malformed_file_is_reported_at_every_level(capsys, tmp_path):
    bad = tmp_path / "bad.proof"
    bad.write_text("setting s:\n  real a\n\nlemma x a >= 0\nproof:\n  a >= 0\n",
                   encoding="utf-8")
    for flag in ("-q", "-v", None):
        code, lines = run(capsys, *([flag] if flag else []), bad)
        assert code == 2
        assert any(f"{bad}:4:" in line for line in lines), flag


def test_checking_in_worker_processes_gives_the_same_reports(tmp_path, proof):
    from novikoff.checker import bundled_proofs_dir, check_paths

    other = tmp_path / "other.proof"
    other.write_text("setting t:\n  real b\n\nlemma sq: b^2 >= 0\nproof:\n  b^2 >= 0\n",
                     encoding="utf-8")
    paths = [proof, other, bundled_proofs_dir() / "novikoff.proof"]

    def summary(reports):
        return [(r.path, None if r.error is None else str(r.error),
                 [(lem.name, lem.status, lem.reason) for lem in r.lemmas],
                 [(s.line, s.status, s.reason, s.counterexample) for s in r.steps])
                for r in reports]

    alone = check_paths(paths, jobs=1)
    together = check_paths(paths, jobs=2)
    assert summary(together) == summary(alone)
    assert [lem.status for lem in together[0].lemmas] == ["verified", "expected_failure",
                                                          "failed"]
    # A settled report carries no kernel object (it came from another process).
    assert all(lem.theorem is None and lem.settled for r in together for lem in r.lemmas)


def test_an_expected_failure_is_explained_only_where_the_output_shows_it(tmp_path, proof):
    """Without -v or --json nothing shows why an xfail step fails, so no counterexample is
    searched for it: the statuses are the same, the explanation is not."""
    from novikoff.checker import check_paths

    for jobs in (1, 2):
        explained, bare = (check_paths([proof], jobs=jobs, explain_expected=flag)[0]
                           for flag in (True, False))
        assert [(lem.name, lem.status) for lem in bare.lemmas] == \
            [(lem.name, lem.status) for lem in explained.lemmas]
        assert [s.status for s in bare.steps] == [s.status for s in explained.steps]
        slip = [s for s in explained.steps if s.status == "expected_failure"]
        assert slip and slip[0].counterexample["k"] == "0"
        assert [s.counterexample for s in bare.steps if s.status == "expected_failure"] == [None]


def test_verbose_and_json_show_an_expected_failures_counterexample(capsys, proof):
    _, lines = run(capsys, "-v", proof)
    assert any("counterexample:" in line and "k = 0" in line for line in lines), lines
    _, lines = run(capsys, "--json", proof)
    steps = json.loads("\n".join(lines))["steps"]
    assert [s["counterexample"]["k"] for s in steps if s["status"] == "expected_failure"] == ["0"]


def _two_small_files(tmp_path):
    paths = []
    for name in ("a", "b"):
        path = tmp_path / f"{name}.proof"
        path.write_text(f"setting {name}:\n  real c\n\nlemma sq: c^2 >= 0\nproof:\n"
                        f"  c^2 >= 0\n", encoding="utf-8")
        paths.append(path)
    return paths


def test_a_worker_that_dies_stops_checking_with_a_clear_error(capsys, tmp_path, monkeypatch):
    import novikoff.checker as checker

    paths = _two_small_files(tmp_path)
    checked = checker._checked_file

    def dies_on_b(job):  # as the kernel's out-of-memory killer would end it
        if Path(job[0]).name == "b.proof":
            os._exit(9)
        return checked(job)

    monkeypatch.setattr(checker, "_checked_file", dies_on_b)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)  # the command forks on any machine
    with pytest.raises(CheckingStopped, match=r"b\.proof stopped: .* exit code 9"):
        checker.check_paths(paths, jobs=2)
    capsys.readouterr()
    code = main(["check", *map(str, paths)])
    assert code == 2
    assert "b.proof stopped" in capsys.readouterr().err


def test_an_error_in_a_worker_reaches_the_caller(tmp_path, monkeypatch):
    import novikoff.checker as checker

    def fails(job):
        raise InvalidArgument(f"path={job[0]!r}")

    monkeypatch.setattr(checker, "_checked_file", fails)
    with pytest.raises(InvalidArgument, match="path="):
        checker.check_paths(_two_small_files(tmp_path), jobs=2)


def test_a_lemmas_givens_are_shown_beside_its_statement(capsys, tmp_path):
    path = tmp_path / "given.proof"
    path.write_text("setting s:\n  real a\n\nlemma pos: a > 0\n  given g: a > 0\nproof:\n"
                    "  a > 0    by g\n", encoding="utf-8")
    code, lines = run(capsys, "-v", path)
    assert code == 0 and any("[ok] lemma pos: a > 0  given g: a > 0" in line for line in lines)
    code, lines = run(capsys, "--json", path)
    assert json.loads("\n".join(lines))["lemmas"][0]["givens"] == ["g: a > 0"]


@pytest.mark.e2e  # a fresh process checking the whole library into a closed pipe
def test_a_reader_that_leaves_early_gets_no_traceback():
    # `novikoff check -v proofs/ | head -1`: the pipe closes while the report is printed.
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    proc = subprocess.Popen([sys.executable, "-m", "novikoff", "check", "-v", "proofs/"],
                            cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.readline()
    proc.stdout.close()
    err = proc.stderr.read().decode()
    proc.wait(timeout=600)
    assert "Traceback" not in err and "BrokenPipe" not in err


def test_a_meaningless_statement_names_the_term_and_an_instance(tmp_path):
    """'the statement may mean nothing' says which condition fails and where (issue 21)."""
    from novikoff.checker import Checker

    path = tmp_path / "k.proof"
    path.write_text("setting s:\n  nat k\n  real a\n\nlemma claim: a >= 0 => k/k >= 0\n"
                    "proof:\n  a >= 0 => 1 >= 0\n", encoding="utf-8")
    (claim,) = Checker().check_file(path).lemmas
    assert claim.status == "failed"
    assert "the statement may mean nothing where its hypotheses hold (division by k, which " \
           "may be zero: at " in claim.reason
    assert "k = 0" in claim.reason
