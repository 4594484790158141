"""Red team: certificate files edited or hand-crafted so that `novikoff check` would report a false
step `verified (certified)`, or replay one step's certificate for another.

Every attack works on copies in tmp_path (the shipped certificate files are never edited).  What
must hold: a false step is never verified, with or without --require-certificates; a malformed
certificate file is a usage error (exit 2), never a traceback.  A test that fails today is a
strict xfail whose reason names the finding.
"""

from __future__ import annotations

import json
import shutil
from fractions import Fraction
from pathlib import Path

import pytest
import z3

from novikoff.certify.models import find_model
from novikoff.certify.store import certificate_path
from novikoff.checker import Checker
from novikoff.cli import main
from novikoff.kernel import solver
from novikoff.kernel.certificates import FORMAT, CertificateError, check
from novikoff.kernel.certified import LEDGER
from novikoff.kernel.statements import NoStatement, statement_of

CASES = Path(__file__).resolve().parent / "cases"


# The ledger is process-wide: every test starts and ends with an empty one (conftest.py).
pytestmark = pytest.mark.usefixtures("clean_ledger")


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def _certify(path: Path) -> dict:
    assert main(["certify", str(path)]) == 0
    return json.loads(certificate_path(path).read_text(encoding="utf-8"))["certificates"]


def _store(path: Path, certificates: dict) -> None:
    target = certificate_path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps({"format": FORMAT, "certificates": certificates}),
                      encoding="utf-8")


def _satisfiable_statements(path: Path) -> dict:
    """key -> statement text of every decision of the file that a solver found false."""
    LEDGER.recording = True
    try:
        Checker(timeout_ms=5000).check_file(path)
        return dict(LEDGER.satisfiable)
    finally:
        LEDGER.recording, LEDGER.pending, LEDGER.used, LEDGER.labels = False, {}, {}, {}
        LEDGER.store = {}


def _claim(path: Path, *, required: bool = False):
    LEDGER.required = required
    try:
        report = Checker(timeout_ms=5000).check_file(path)
    finally:
        LEDGER.required = False
    found = [lemma for lemma in report.lemmas if lemma.name == "claim"]
    return report, (found[0] if found else None)


def _refused(path: Path) -> None:
    for required in (False, True):
        report, claim = _claim(path, required=required)
        assert report.error is not None or claim is None or claim.status != "verified", (
            required, [(s.line, s.status, s.basis, s.reason) for s in claim.steps])


TRUE = """\
setting s:
  real a, b
  nat k
  assume h: a > b

lemma claim: a >= b
proof:
  a >= b    by h
"""
FALSE = TRUE.replace("a >= b", "a >= b + 1")


def test_every_certificate_of_a_true_step_moved_onto_its_false_edit_is_refused(tmp_path):
    """Certify `a >= b by h`, edit it into `a >= b + 1 by h`, and store every certificate of the
    true file under every key of the false one."""
    true = _write(tmp_path / "true.proof", TRUE)
    certificates = list(_certify(true).values())
    assert certificates
    false = _write(tmp_path / "false.proof", FALSE)
    keys = _satisfiable_statements(false)
    assert keys
    _store(false, {key: certificates[i % len(certificates)] for i, key in enumerate(keys)})
    _refused(false)


NAT_STEP = """\
setting s:
  {kind} k

lemma claim: k >= 1
  given g: k > 0
proof:
  k >= 1    by g
"""


def _leaf(*products):
    return {"by": "psatz", "products": [["1", list(p)] for p in products], "squares": [],
            "multiples": []}


# For the nat: literals k >= 0 (0), k > 0 (1); the negated goal is a compound or(or(1 - k > 0)):
# open it (literal 2), then split k <= 0 (literal 3: k + (-k) = 0 with k > 0 strict) or k >= 1
# (literal 3: (1 - k) + (k - 1) = 0 with 1 - k > 0 strict).
NAT_CERTIFICATE = {"by": "or", "at": 0, "cases": [{"by": "or", "at": 1, "cases": [
    {"by": "integer", "poly": [["1", [["k", 1]]]], "at": "0",
     "cases": [_leaf([1], [3]), _leaf([2], [3])]}]}]}


def test_a_nat_certificate_replayed_where_the_symbol_is_real_is_refused(tmp_path):
    """k > 0 gives k >= 1 for a nat (an integer split at 0), not for a real (k = 1/2): the
    nat's certificate, stored under the real's key, must not replay."""
    nat = _write(tmp_path / "nat.proof", NAT_STEP.format(kind="nat"))
    LEDGER.recording, LEDGER.unmodelled = True, {}
    Checker(timeout_ms=5000).check_file(nat)
    (nat_key, nat_text), = LEDGER.pending.items()
    # (certificates required: the given is shown consistent only by a stored model)
    models = {key: find_model(text) for key, text in LEDGER.unmodelled.items()}
    LEDGER.recording, LEDGER.pending, LEDGER.unmodelled = False, {}, {}
    assert models and None not in models.values()
    check(nat_text, NAT_CERTIFICATE)  # the forger's certificate is right for the nat
    _store(nat, {nat_key: NAT_CERTIFICATE, **models})
    report, claim = _claim(nat, required=True)
    assert claim.status == "verified" and {s.basis for s in claim.steps} == {"certified"}
    real = _write(tmp_path / "real.proof", NAT_STEP.format(kind="real"))
    keys = _satisfiable_statements(real)
    assert keys and nat_key not in keys
    _store(real, {key: NAT_CERTIFICATE for key in keys})
    _refused(real)
    for text in keys.values():  # the kernel's checker itself: no integer split on a real
        with pytest.raises(CertificateError):
            check(text, NAT_CERTIFICATE)
    # the nat's statement with its nats list emptied is the real's situation
    with pytest.raises(CertificateError, match="nats"):
        check(nat_text.replace('"nats":["k"]', '"nats":[]'), NAT_CERTIFICATE)


def test_a_certificate_is_about_its_statement_not_its_file(tmp_path):
    """Control: the same true step in another file replays the first file's certificate (a
    certificate proves a statement; where it is stored does not matter)."""
    first = _write(tmp_path / "first.proof", TRUE)
    certificates = _certify(first)
    second = _write(tmp_path / "second.proof", TRUE.replace("setting s:", "setting t:"))
    _store(second, certificates)
    report, claim = _claim(second, required=True)
    assert claim.status == "verified"
    assert {s.basis for s in claim.steps} == {"certified"}


def _hand_made(key_text: str) -> list:
    """Certificates a forger might try on a statement: every node kind misused."""
    one = [["1", []]]
    return [
        {"by": "psatz", "products": [["0", []]], "squares": [], "multiples": []},
        {"by": "psatz", "products": [["1", []]], "squares": [["-1", one, []]],
         "multiples": []},
        {"by": "psatz", "products": [["1", []]], "squares": [], "multiples": [[[["-1", []]],
                                                                              0]]},
        {"by": "integer", "poly": [["1", [["a", 1]]]], "at": "0", "cases": []},
        {"by": "integer", "poly": [["1/2", []]], "at": "0",
         "cases": [{"by": "psatz", "products": [["1", []]], "squares": [], "multiples": []}] * 2},
        {"by": "or", "at": -1, "cases": []},
        {"by": "or", "at": 10 ** 6, "cases": []},
        {"by": "cut", "fact": ["or", []], "proof": {"by": "or", "at": 0, "cases": []},
         "then": {"by": "or", "at": 0, "cases": []}},
        {"by": "sign", "poly": [], "cases": [None, None, None]},
        {"by": "psatz", "products": [["NaN", []]], "squares": [], "multiples": []},
        {"by": "psatz", "products": [[float("inf"), []]], "squares": [], "multiples": []},
        {"by": "psatz", "products": [["1", [True]]], "squares": [], "multiples": []},
    ]


def test_hand_made_certificates_for_a_false_step_are_refused(tmp_path):
    false = _write(tmp_path / "false.proof", FALSE)
    keys = _satisfiable_statements(false)
    assert keys
    for key, text in keys.items():
        for certificate in _hand_made(text):
            with pytest.raises(CertificateError):
                check(text, certificate)
    # and in a file: every forgery at once, one key each in turn
    for certificate in _hand_made(""):
        _store(false, {key: certificate for key in keys})
        _refused(false)


def test_a_certificate_file_of_json_constants_is_refused(tmp_path):
    """NaN and Infinity are JSON to Python's reader: they are not rationals."""
    false = _write(tmp_path / "false.proof", FALSE)
    keys = _satisfiable_statements(false)
    certificate_path(false).parent.mkdir()
    body = ", ".join(f'"{k}": {{"by": "psatz", "products": [[NaN, []], [Infinity, [0]]], '
                     f'"squares": [], "multiples": []}}' for k in keys)
    certificate_path(false).write_text(f'{{"format": "{FORMAT}", "certificates": {{{body}}}}}',
                                       encoding="utf-8")
    _refused(false)


@pytest.mark.parametrize("command", ["check", "certify"])
def test_a_deeply_nested_certificate_file_is_a_usage_error(tmp_path, capsys, command):
    path = _write(tmp_path / "t.proof", TRUE)
    certificate_path(path).parent.mkdir()
    certificate_path(path).write_text(
        '{"format": "%s", "certificates": {"x": %s%s}}' % (FORMAT, "[" * 100_000, "]" * 100_000),
        encoding="utf-8")
    try:
        code = main([command, str(path)])
    except RecursionError:
        pytest.fail("RecursionError escaped: a traceback for the user")
    assert code == 2, capsys.readouterr()


def test_a_certificate_file_that_is_a_directory_is_a_usage_error(tmp_path, capsys):
    path = _write(tmp_path / "t.proof", TRUE)
    certificate_path(path).mkdir(parents=True)  # `.certificates/t.proof.json/`
    code = main(["check", str(path)])
    out = capsys.readouterr()
    assert code in (0, 2), out  # no certificates (not a file), or refused; never a traceback
    assert "Traceback" not in out.err


# ---------------------------------------------------------------------------- fidelity

def _z3_fact(fact, env, nats):
    kind, body = fact
    if kind in ("and", "or"):
        parts = [_z3_fact(f, env, nats) for f in body]
        if not parts:
            return z3.BoolVal(kind == "and")
        return z3.And(*parts) if kind == "and" else z3.Or(*parts)
    total = z3.RealVal(0)
    for coefficient, monomial in body:
        term = z3.RealVal(str(Fraction(coefficient)))
        for atom, exponent in monomial:
            if atom not in env:
                env[atom] = z3.Int(atom) if atom in nats else z3.Real(atom)
            value = z3.ToReal(env[atom]) if atom in nats else env[atom]
            for _ in range(exponent):
                term = term * value
        total = total + term
    return {"ge": total >= 0, "gt": total > 0, "eq": total == 0, "ne": total != 0}[kind]


FIDELITY = sorted(p for p in CASES.glob("redteam_attack2/*.proof")
                  if "# expect: rejected" in p.read_text(encoding="utf-8"))


@pytest.mark.parametrize("path", FIDELITY, ids=[p.name for p in FIDELITY])
def test_a_decision_the_solver_finds_false_has_a_satisfiable_statement(path, monkeypatch):
    """A certificate proves its statement contradictory; the statement must say no more than
    the obligation.  So every obligation that Z3 finds a model for must have a statement that
    Z3 (nats as integers) also finds satisfiable, or a certificate could make it verified."""
    seen: dict = {}
    decide = solver.entails

    def spy(hypotheses, goal, timeout_ms, nats=frozenset()):
        verdict = decide(hypotheses, goal, timeout_ms, nats)
        if verdict.answer == "invalid":
            try:
                seen.setdefault(statement_of(hypotheses, goal, nats).text, str(goal))
            except NoStatement:
                pass
        return verdict

    monkeypatch.setattr(solver, "entails", spy)
    Checker(timeout_ms=5000).check_file(path)
    for text, goal in seen.items():
        statement = json.loads(text)
        nats, env = set(statement["nats"]), {}
        s = z3.Solver()
        s.set("timeout", 5000)
        for fact in statement["facts"]:
            s.add(_z3_fact(fact, env, nats))
        assert s.check() != z3.unsat, f"the statement of a false decision is contradictory: {goal}"


# ---------------------------------------------------------------------------- cost

def test_an_oversized_square_is_refused_before_it_is_multiplied_out(monkeypatch):
    """Counted, not timed: the number of monomial products the checker makes for a square
    whose expansion must exceed the term bound.  A P of 200 distinct atoms has 20,100 monomials
    in P^2 (over the 5,000-term bound) and costs 40,000 products to expand."""
    from novikoff.kernel import certificates as C

    calls = {"n": 0}
    original = C._mono_mul

    def counted(a, b):
        calls["n"] += 1
        return original(a, b)

    monkeypatch.setattr(C, "_mono_mul", counted)
    statement = C.canonical_statement([["gt", [["1", [["g", 1]]]]],
                                       ["ge", [["-1", [["g", 1]]]]]], [])
    square = [[str(i + 1), [[f"a{i}", 1]]] for i in range(200)]
    certificate = {"by": "psatz", "products": [["1", [0]], ["1", [1]]],
                   "squares": [["1", square, []]], "multiples": []}
    with pytest.raises(CertificateError):
        C.check(statement, certificate)
    assert calls["n"] < 10_000, calls
