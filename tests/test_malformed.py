"""Malformed files give one positioned line, exit 2, never a traceback; nothing in them runs."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from novikoff.checker import Checker
from novikoff.cli import main

from helpers import PERCEPTRON, run_cli

GOOD_LEMMA = """
lemma t: y*<w_star, x> >= gamma
proof:
  y*<w_star, x> >= gamma   by margin
"""

# (body appended to the perceptron setting, expected (line, column), message fragment)
CASES = [
    ("lemma t: k >= 0\nproof:\n  k >= 0 by\n", (15, 12), "expected the name of a fact"),
    ("lemma t: k >= \nproof:\n  k >= 0\n", (13, 14), "expected an expression"),
    ("lemma t: k R >= 0\nproof:\n  k >= 0\n", (13, 12), "implicit multiplication"),
    ("lemma t: q >= 0\nproof:\n  q >= 0\n", (13, 10), "unknown name 'q'"),
    ("lemma t: x + gamma >= 0\nproof:\n  k >= 0\n", (13, 12), "cannot add a vector and a scalar"),
    ("lemma t: <gamma, x> >= 0\nproof:\n  k >= 0\n", (13, 11), "this is a scalar"),
    ("lemma t: x*x >= 0\nproof:\n  k >= 0\n", (13, 11), "cannot multiply two vectors"),
    ("lemma t: w >= 0\nproof:\n  k >= 0\n", (13, 10), "w is a sequence"),
    ("lemma t: k >= 0\nproof:\n  k >= 0 by nowhere\n", (15, 13), "unknown fact 'nowhere'"),
    ("lemma t: k >= 0\nproof:\n  k >= 0 by later\nlemma later: k >= 0\nproof:\n  k >= 0\n",
     (15, 13), "proved later"),
    ("lemma t: k >= 0\nproof:\n  k >= 0 by t\n", (15, 13), "cites itself"),
    ("lemma t: k >= 0\nproof:\n  k >= 0 by ih\n", (15, 13), "ih is available only"),
    ("lemma t: k >= 0\n", (13, 1), "has no proof"),
    ("lemma t: k >= 0\nproof:\n      k >= 0\n    k >= 0\n", (16, 5), "indentation"),
    ("lemma t: k >= 0\nproof:\n  k >= 0 $\n", (15, 10), "unexpected character '$'"),
    ("lemma t: ||gamma|| >= 0\nproof:\n  k >= 0\n", (13, 12), "this is a scalar"),
    ("lemma t: k >= 0\nproof by induction on gamma:\n  base:\n    0 >= 0\n  step:\n    k >= 0\n",
     (14, 23), "not declared nat"),
    ("lemma t: k >= 0\nproof:\n  hence k >= 0\n", (15, 3), "'hence' needs a fact"),
    ("lemma t: w[gamma] = w[0]\nproof:\n  k >= 0\n", (13, 12), "index"),
]


@pytest.mark.parametrize("body,where,fragment", CASES)
def test_positioned_error(tmp_path, body, where, fragment):
    path = tmp_path / "bad.proof"
    path.write_text(PERCEPTRON + body, encoding="utf-8")
    report = Checker().check_file(path)
    if report.error is not None:  # a syntax error, or an error outside every lemma
        err = report.error
        assert fragment in err.message
        assert (err.line, err.column) == where, str(err)
        assert "\n" not in str(err)
        return
    # An error inside a lemma (a type error, an unknown name or fact) fails that lemma, at its
    # position, and the rest of the file is still checked.
    lemma = next(lemma for lemma in report.lemmas if lemma.name == "t")
    assert lemma.status == "failed"
    errors = [s for s in lemma.steps if s.reason.startswith("error: ")]
    assert len(errors) == 1, [s.reason for s in lemma.steps]
    assert fragment in errors[0].reason
    assert (errors[0].line, errors[0].column) == where
    assert errors[0].status == "failed"


@pytest.mark.parametrize("text,fragment", [
    ("", "the file is empty"),
    ("# only a comment\n", "the file is empty"),
    ("lemma t: k >= 0\nproof:\n  k >= 0\n", "needs a setting"),
    ("setting s:\n  real a, a\n", "declared twice"),
    ("setting s:\n  real proof\n", "expected a real name"),
    ("setting s:\n  vector x > 0\n", "only reals take a sign constraint"),
    ("setting s:\n  real a\n  assume h: a < \n", "expected an expression"),
    ("from nowhere import x\n", "no file nowhere.proof"),
    ("setting s:\n  vectors u, v\n  real c\n  assume bad: c*u = c*v\n", "must define a vector"),
    ("setting s:\n  label sequence m in {0, 2}\n", "labels are in {-1, 1} or {0, 1}"),
    ("setting s:\n  real sequence a in {0, 1}\n", "unexpected 'in'"),
])
def test_file_level_errors(tmp_path, text, fragment):
    path = tmp_path / "bad.proof"
    path.write_text(text, encoding="utf-8")
    report = Checker().check_file(path)
    assert report.error is not None and fragment in report.error.message, report.error


def test_circular_import(tmp_path):
    (tmp_path / "a.proof").write_text("from b import q\n" + PERCEPTRON + GOOD_LEMMA)
    (tmp_path / "b.proof").write_text("from a import t\n" + PERCEPTRON + GOOD_LEMMA)
    report = Checker().check_file(tmp_path / "a.proof")
    assert report.error is not None and "circular import" in report.error.message


def test_import_brings_a_verified_lemma(tmp_path):
    (tmp_path / "base.proof").write_text(PERCEPTRON + GOOD_LEMMA)
    (tmp_path / "use.proof").write_text("from base import t\n" + PERCEPTRON + """
lemma twice: 2*y*<w_star, x> >= 2*gamma
proof:
  2*y*<w_star, x> >= 2*gamma   by t
""")
    report = Checker().check_file(tmp_path / "use.proof")
    assert report.error is None
    assert [l.status for l in report.lemmas] == ["verified"]


@pytest.mark.parametrize("imports", ["from base import t\nfrom other import t\n",
                                     "from base import t, t\n"])
def test_a_second_import_of_a_name_is_an_error_not_a_replacement(tmp_path, imports):
    # Otherwise the lemma cited as `t` would silently be the last file's, which may state
    # something else under the same name.
    (tmp_path / "base.proof").write_text(PERCEPTRON + GOOD_LEMMA)
    (tmp_path / "other.proof").write_text(PERCEPTRON + GOOD_LEMMA)
    (tmp_path / "use.proof").write_text(imports + PERCEPTRON)
    report = Checker().check_file(tmp_path / "use.proof")
    err = report.error
    assert err is not None and "t is imported twice (first at line 1)" in err.message
    assert err.line == imports.count("\n") and err.column > 1


def test_import_from_a_setting_with_other_assumptions_is_not_verified(tmp_path):
    (tmp_path / "base.proof").write_text(PERCEPTRON + GOOD_LEMMA)
    other = PERCEPTRON.replace("assume margin:   y*<w_star, x> >= gamma",
                               "assume margin:   y*<w_star, x> >= 2*gamma")
    (tmp_path / "use.proof").write_text("from base import t\n" + other + """
lemma twice: 2*y*<w_star, x> >= 2*gamma
proof:
  2*y*<w_star, x> >= 2*gamma   by t
""")
    report = Checker().check_file(tmp_path / "use.proof")
    lemma = report.lemmas[0]
    assert lemma.status == "failed" and "not an assumption" in lemma.reason


PAYLOAD = "__import__('os').system('touch PWNED')"


def _positions():
    """The perceptron file with the payload in each position of the grammar."""
    base = PERCEPTRON + GOOD_LEMMA
    spots = [
        ("setting perceptron:", f"setting {PAYLOAD}:"),
        ("vectors  w_star, x", f"vectors  w_star, {PAYLOAD}"),
        ("real     gamma > 0, R > 0", f"real     gamma > {PAYLOAD}"),
        ("assume margin:   y*<w_star, x> >= gamma", f"assume margin: {PAYLOAD} >= gamma"),
        ("assume start:", f"assume {PAYLOAD}:"),
        ("lemma t:", f"lemma {PAYLOAD}:"),
        ("lemma t: y*<w_star, x> >= gamma", f"lemma t: {PAYLOAD} >= gamma"),
        ("  y*<w_star, x> >= gamma   by margin", f"  y*<w_star, x> >= {PAYLOAD}   by margin"),
        ("by margin", f"by {PAYLOAD}"),
        ("proof:", f"proof by induction on {PAYLOAD}:"),
        ("per update: x, y", f"per update: {PAYLOAD}"),
        ("sequence w", f"sequence w\n  define d = {PAYLOAD}"),
    ]
    out = [("import", f"from {PAYLOAD} import t\n" + base)]
    for old, new in spots:
        assert old in base, old
        out.append((old, base.replace(old, new, 1)))
    return out


@pytest.mark.parametrize("where,text", _positions(), ids=lambda v: v[:24] if len(v) < 40 else "")
def test_payloads_do_not_run(tmp_path, monkeypatch, where, text):
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "evil.proof"
    path.write_text(text, encoding="utf-8")
    proc = run_cli("check", path, cwd=tmp_path)  # `novikoff check` in this process
    assert not (tmp_path / "PWNED").exists()
    assert "Traceback" not in proc.stderr + proc.stdout
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "evil.proof:" in proc.stdout + proc.stderr


@pytest.mark.e2e
def test_payloads_do_not_run_in_a_fresh_process(tmp_path):
    """Every payload above, checked by `python -m novikoff check` in a fresh process."""
    for j, (_, text) in enumerate(_positions()):
        (tmp_path / f"evil{j:02}.proof").write_text(text, encoding="utf-8")
    proc = subprocess.run([sys.executable, "-m", "novikoff", "check", str(tmp_path)],
                          capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert not (tmp_path / "PWNED").exists()
    assert "Traceback" not in proc.stderr + proc.stdout
    assert proc.returncode == 2, proc.stdout + proc.stderr
    for j in range(len(_positions())):
        assert f"evil{j:02}.proof:" in proc.stdout + proc.stderr, j


def test_cli_exit_codes_and_json(tmp_path, capsys):
    good = tmp_path / "good.proof"
    good.write_text(PERCEPTRON + GOOD_LEMMA)
    assert main(["check", str(good)]) == 0
    bad = tmp_path / "bad.proof"
    bad.write_text(PERCEPTRON + GOOD_LEMMA.replace(">= gamma   by margin", ">= 2*gamma   by margin"))
    capsys.readouterr()
    assert main(["check", "--json", str(bad)]) == 1
    doc = json.loads(capsys.readouterr().out)
    step = [s for s in doc["steps"] if s["status"] == "failed"][0]
    assert set(step) == {"file", "line", "column", "lemma", "text", "status", "reason",
                         "counterexample", "missing", "judgement", "basis"}
    assert step["lemma"] == "t" and step["line"] == 16
    assert all(isinstance(v, str) for v in step["counterexample"].values())
    malformed = tmp_path / "m.proof"
    malformed.write_text("setting s:\n  real a\nlemma t: a >= \n")
    assert main(["check", str(malformed)]) == 2
    assert main(["check", str(tmp_path / "missing.proof")]) == 2
    with pytest.raises(SystemExit) as exc:
        main(["check", "--timeout", "soon"])
    assert exc.value.code == 2


@pytest.mark.parametrize("command", ["check", "certify", "report"])
@pytest.mark.parametrize("value", ["0", "-5"])
def test_a_timeout_that_is_not_positive_is_a_usage_error(tmp_path, capsys, command, value):
    good = tmp_path / "good.proof"
    good.write_text(PERCEPTRON + GOOD_LEMMA)
    with pytest.raises(SystemExit) as exc:
        main([command, "--timeout", value, str(good)]
             + (["-o", str(tmp_path / "out")] if command == "report" else []))
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert f"--timeout: {value} is not a positive number of milliseconds" in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


# ---------------------------------------------------------------------------- error recovery

RECOVERY = PERCEPTRON + """
lemma typo: <w_star, w[k+1]> = <w_star, w[k]> + y*<w_star, x>
proof:
  <w_star, w[k+1]> = <w_star, w[k] + y*x>     by update
                   = <w_star, w[k]> + y*w_star   xfail
"""

AFTER = """
lemma fine: <w_star, w[k+1]> = <w_star, w[k]> + y*<w_star, x>
proof:
  <w_star, w[k+1]> = <w_star, w[k] + y*x>     by update
                   = <w_star, w[k]> + y*<w_star, x>
"""


def test_a_type_error_marked_xfail_is_an_expected_failure_and_the_file_goes_on(tmp_path):
    path = tmp_path / "typo.proof"
    path.write_text(RECOVERY + AFTER, encoding="utf-8")
    report = Checker().check_file(path)
    assert report.error is None
    typo, fine = report.lemmas
    assert typo.status == "expected_failure"
    assert typo.steps[-1].status == "expected_failure"
    assert "cannot add a vector and a scalar" in typo.steps[-1].reason
    assert (typo.steps[-1].line, typo.steps[-1].column) == (17, 37)
    assert fine.status == "verified"
    assert main(["check", "-q", str(path)]) == 0


def test_a_type_error_not_marked_fails_its_lemma_only(tmp_path):
    path = tmp_path / "typo.proof"
    path.write_text(RECOVERY.replace("   xfail", "") + AFTER, encoding="utf-8")
    report = Checker().check_file(path)
    typo, fine = report.lemmas
    assert typo.status == "failed" and fine.status == "verified"
    assert main(["check", "-q", str(path)]) == 1


def test_a_syntax_error_in_a_lemma_is_malformed_but_the_other_lemmas_are_checked(tmp_path):
    path = tmp_path / "syntax.proof"
    broken = "\nlemma broken: k >= 0\nproof:\n  k >= 0 +\n"
    cites = "\nlemma cites: k >= 0\nproof:\n  k >= 0   by broken\n"
    path.write_text(PERCEPTRON + broken + AFTER + cites, encoding="utf-8")
    report = Checker().check_file(path)
    assert report.error is not None and report.error.line == 16
    broken_report, fine, citing = report.lemmas
    assert broken_report.status == "failed" and broken_report.steps[0].line == 16
    assert fine.status == "verified"
    # only its proof is broken: it can be cited, as not verified
    assert citing.status == "failed"
    assert citing.steps[0].reason == "holds only if broken holds, which is not verified"
    assert main(["check", "-q", str(path)]) == 2
    # a broken statement cannot be cited at all
    path.write_text(PERCEPTRON + broken.replace("k >= 0\nproof", "k >= \nproof") + AFTER
                    + cites, encoding="utf-8")
    citing = Checker().check_file(path).lemmas[-1]
    assert "broken cannot be cited: its statement or givens have an error" in \
        citing.steps[0].reason


def test_citing_a_lemma_whose_setting_declares_other_symbols_is_a_positioned_error(tmp_path):
    path = tmp_path / "two.proof"
    path.write_text(PERCEPTRON + """
lemma here: gamma > 0
proof:
  gamma > 0

setting other:
  real gamma > 0

lemma there: gamma > 0
proof:
  gamma > 0    by here
""", encoding="utf-8")
    report = Checker().check_file(path)
    there = report.lemmas[-1]
    assert there.status == "failed"
    (step,) = there.steps
    assert step.reason.startswith("error: ") and "not declared" in step.reason
    assert step.line == 23
