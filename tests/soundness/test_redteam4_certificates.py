"""Red team 4: hostile certificate and model files against the trusted checker
(kernel/certificates.py).  Strict xfails are real findings; the rest are attacks refused today,
kept as regression tests."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from novikoff.certify.store import certificate_path
from novikoff.checker import Checker
from novikoff.kernel.certificates import (FORMAT, CertificateError, check, check_model,
                                          read_statement)
from novikoff.kernel.certified import LEDGER

# a > 0 and -a > 0: contradictory, so a certificate exists; used to aim hostile nodes at.
STMT = '{"facts":[["gt",[["1",[["a",1]]]]],["gt",[["-1",[["a",1]]]]]],"nats":[]}'
# a > 0 alone: consistent, nothing may prove it contradictory.
SAT = '{"facts":[["gt",[["1",[["a",1]]]]]],"nats":[]}'
SAT_NAT = '{"facts":[["gt",[["2",[["n",1]]],["-1",[]]]],["gt",[["-2",[["n",1]]],["2",[]]]]],"nats":["n"]}'
# 2n - 1 > 0 and 2 - 2n > 0: n in (1/2, 1): no integer, but satisfiable over the reals.
SAT_REAL = SAT_NAT.replace('"nats":["n"]', '"nats":[]')


# The ledger is process-wide: every test starts and ends with an empty one (conftest.py).
pytestmark = pytest.mark.usefixtures("clean_ledger")


def _refused(statement, certificate):
    with pytest.raises(CertificateError):
        check(statement, certificate)


# ------------------------------------------------------------------ refused attacks (regression)

def test_the_integer_split_needs_nats():
    """n in (1/2, 1) over the reals: the integer split at 0 closes both sides by linear
    arithmetic, so it is accepted with nats=[n] (correct) and refused when n is real."""
    # low: -n >= 0 (literal 2): (2n - 1) + 2(-n) + 1 = 0; high: n - 1 >= 0: (2 - 2n) + 2(n - 1) = 0
    cert = {"by": "integer", "poly": [["1", [["n", 1]]]], "at": "0", "cases": [
        {"by": "psatz", "products": [["1", [0]], ["2", [2]], ["1", []]], "squares": [],
         "multiples": []},
        {"by": "psatz", "products": [["1", [1]], ["2", [2]]], "squares": [], "multiples": []}]}
    check(SAT_NAT, cert)
    _refused(SAT_REAL, cert)


@pytest.mark.parametrize("certificate", [
    {"by": "psatz", "products": [["1", []]], "squares": [], "multiples": []},  # 1 = 0
    {"by": "psatz", "products": [["0", []]], "squares": [], "multiples": []},
    {"by": "psatz", "products": [["1/0", []]], "squares": [], "multiples": []},
    {"by": "psatz", "products": [["1", [True]]], "squares": [], "multiples": []},
    {"by": "psatz", "products": [["1", [0]]], "squares": [["-1", [["1", [["a", 1]]]], []]],
     "multiples": []},
    {"by": "psatz", "products": [[1, [0]]], "squares": [], "multiples": []},
    {"by": "psatz", "products": [["1e0", [0]]], "squares": [], "multiples": []},
    {"by": "psatz", "products": [["NaN", [0]]], "squares": [], "multiples": []},
    {"by": "psatz", "products": [["1", [0]]], "squares": [], "multiples": [[[["-1", [["a", 1]]]], 0]]},
    {"by": "integer", "poly": [["1", [["a", 1]]]], "at": "0", "cases": []},
    {"by": "or", "at": True, "cases": []},
    {"by": "cut", "fact": ["or", []], "proof": {}, "then": {}},
    {"by": "sign", "poly": [["1", [["a", 1], ["a", 1]]]], "cases": []},
    {"by": "psatz", "products": [["1", [0]]], "squares": [], "multiples": [], "extra": 1},
])
def test_forged_leaves_against_a_consistent_statement_are_refused(certificate):
    _refused(SAT, certificate)


def test_a_cut_whose_proof_side_is_forged_is_refused():
    # cut on a <= 0: the then-side closes with a > 0, the proof side (a > 0) cannot close.
    cert = {"by": "cut", "fact": ["ge", [["-1", [["a", 1]]]]],
            "proof": {"by": "psatz", "products": [["1", [0]]], "squares": [], "multiples": []},
            "then": {"by": "psatz", "products": [["1", [0]], ["1", [1]]], "squares": [],
                     "multiples": []}}
    _refused(SAT, cert)


@pytest.mark.parametrize("values", [
    {"n": "1/2"},                       # a non-integer nat
    {"n": "3/4"},
    {},                                 # an atom missing
    {"n": "1", "m": "0"},               # an extra atom
    {"n": True},                        # a bool
    {"n": 0.75},                        # a float
    {"n": "1/0"},
    {"n": "-1"},
])
def test_hostile_models_of_an_integer_free_setting_are_refused(values):
    facts, nats, _ = read_statement(SAT_NAT)
    with pytest.raises(CertificateError):
        check_model(facts, nats, {"by": "model", "values": values})


def test_a_model_with_a_huge_value_is_refused_quickly():
    facts, nats, _ = read_statement(SAT_NAT)
    with pytest.raises(CertificateError):
        check_model(facts, nats, {"by": "model", "values": {"n": "9" * 400}})


FALSE_PROOF = """\
setting s:
  real a, b
  assume h: a > b

lemma claim: a >= b + 1
proof:
  a >= b + 1    by h
"""


def test_a_students_certificate_file_beside_the_proof_is_read_but_a_forged_one_refused(tmp_path):
    """check (and grade, through Checker.check_file) reads .certificates/ beside the proof: a
    certificate stored under the false step's key is replayed and refused."""
    path = tmp_path / "hw.proof"
    path.write_text(FALSE_PROOF, encoding="utf-8")
    LEDGER.recording = True
    Checker(timeout_ms=5000).check_file(path)
    keys = dict(LEDGER.satisfiable) | dict(LEDGER.unmodelled)
    LEDGER.recording, LEDGER.pending, LEDGER.used, LEDGER.store = False, {}, {}, {}
    assert keys
    forged = {"by": "psatz", "products": [["1", []]], "squares": [], "multiples": []}
    target = certificate_path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps({"format": FORMAT, "certificates": {k: forged for k in keys}}),
                      encoding="utf-8")
    for required in (False, True):
        LEDGER.required = required
        report = Checker(timeout_ms=5000).check_file(path)
        LEDGER.required = False
        claim = [lemma for lemma in report.lemmas if lemma.name == "claim"]
        assert report.error is not None or not claim or claim[0].status != "verified"
    assert set(LEDGER.refused) & set(keys)


# ------------------------------------------------------------------ findings

_DOS = textwrap.dedent("""
    import random, sys
    from novikoff.kernel.certificates import check, CertificateError
    random.seed(1)
    def big():
        return f"{random.getrandbits(650)}/{random.getrandbits(650) | 1}"
    def poly(k):
        return [[big(), [["x%d" % i, 1]]] for i in range(k)]
    cert = {"by": "psatz", "products": [["1", [0]]],
            "squares": [["1", poly(70), []] for _ in range(200)], "multiples": []}
    try:
        check(sys.argv[1], cert)
    except CertificateError as exc:
        print(exc)
""")


def test_a_certificate_of_huge_coefficients_is_refused_by_the_work_bound():
    """The work bound counts coefficient length: 200 squares of 70-term polynomials with
    ~390-digit p/q coefficients (a 6 MB file) kept check() busy for over 60 s."""
    refused = subprocess.run([sys.executable, "-c", _DOS, STMT], capture_output=True,
                             text=True, check=True).stdout
    assert "too much arithmetic" in refused, refused
