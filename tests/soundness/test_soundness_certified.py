"""The soundness corpus with certificates required: no false claim is ever verified.

With `--require-certificates` the kernel turns every 'valid' that no certificate backs, and
every consistency check that no model shows, into 'unknown'.  Here the untrusted search runs on
the fly (kernel LEDGER.searcher and LEDGER.model_searcher), so the kernel's checkers, not Z3,
are what a false claim would have to get past.  A true control may fail here (its certificate
may be beyond the search); a false claim must never be verified.

The corpus stores no certificates or models, and the searchers are asked only after the
solver's 'valid' (a certificate) or 'invalid' (a model): so what is verified here is a subset
of what test_soundness sees verified, which rejects every false claim.  The default run takes one case in eight (the way --require-certificates reaches
the kernel); `-m slow` runs the others, and the whole corpus with the search.  The certificate
checker itself is tried against forged, mutated and misplaced certificates in
tests/test_certificates.py.
"""

from __future__ import annotations

import pytest

from novikoff.certify.models import find_model
from novikoff.certify.search import find_certificate
from novikoff.checker import Checker
from novikoff.kernel.certified import LEDGER

from test_soundness import (CASES, CORPUS, IDS, LIMITATION, _claim, _describe,  # noqa: E402
                            _expectation)

# One case in SAMPLE by default; all of them with -m slow.
SAMPLE = 8
REJECTED = [pytest.param(p, id=i, marks=[] if n % SAMPLE == 0 else [pytest.mark.slow])
            for n, (p, i) in enumerate((p, i) for p, i in zip(CORPUS, IDS)
                                       if _expectation(p) == "rejected")]
# With the search, a rejected case that states a known limitation (a vacuous setting that the
# consistency check does not catch) is an xfail, as in test_soundness: a vacuous setting has
# exact certificates too, and its consistency check a model of what it is told (not of the
# setting itself) when the search finds one in its budget; so not a strict one (measured: the
# Gram class, g4 and gg, found none).  (Without a solver its consistency cannot be shown.)
SEARCHED = [pytest.param(p, id=i, marks=[pytest.mark.xfail(strict=False,
                                                           reason="a known limitation")]
                         if LIMITATION.search(p.read_text(encoding="utf-8")) else [])
            for p, i in zip(CORPUS, IDS) if _expectation(p) == "rejected"]


@pytest.fixture
def required():
    LEDGER.required = True
    try:
        yield LEDGER
    finally:
        LEDGER.required, LEDGER.searcher, LEDGER.store = False, None, {}
        LEDGER.model_searcher = None
        LEDGER.used = {}


def _judge(path):
    report = Checker(timeout_ms=5000).check_file(path)
    claim = _claim(report)
    assert report.error is not None or claim is None or claim.status != "verified", (
        f"false claim verified with certificates required: {path}\n{_describe(report)}")
    return report


@pytest.mark.parametrize("path", REJECTED)
def test_false_claims_stay_unverified_without_a_solver(path, required):
    """Certificates required and none stored: only the structural rules and certificates
    remain, and they verify no false claim."""
    _judge(path)


@pytest.mark.slow
@pytest.mark.parametrize("path", SEARCHED)
def test_false_claims_stay_unverified_with_certificates_searched(path, required):
    """Each decision the solver calls valid gets a certificate searched for it, and each check
    it finds satisfiable a model (a setting or givens is shown consistent only by one, with
    certificates required), which the kernel checks; still no false claim is verified."""
    required.searcher = lambda text: find_certificate(text, 3000, budget_s=5.0)
    required.model_searcher = lambda text: find_model(text, 3000, budget_s=5.0)
    _judge(path)


def test_a_contradiction_only_a_solver_finds_is_never_read_as_consistency(required):
    """With certificates required, a solver's 'valid' that no certificate backs is 'unknown':
    where 'valid' is evidence against a lemma (the setting contradicts itself at large values,
    a step's hypotheses contradict each other), that unknown must not count as consistent, or
    requiring certificates would verify more than the solver alone does."""
    required.searcher = lambda text: None  # no certificate is ever found
    required.model_searcher = lambda text: find_model(text, 3000, budget_s=5.0)
    far = CASES / "setting_at_large_values" / "element_equals_index_bounded_far.proof"
    report = Checker(timeout_ms=5000).check_file(far)
    claim = _claim(report)
    assert claim is not None and claim.status != "verified", _describe(report)
    assert "may contradict each other" in _describe(report)
    assert "may contradict each other where every nat is at least" in _describe(report)


def test_a_step_whose_hypotheses_only_a_solver_finds_contradictory_is_not_verified(
        required, tmp_path):
    """The goal's certificate is found (its statement names b), the contradiction's is not:
    the step would hold only vacuously, so it is not verified."""
    required.searcher = lambda text: (find_certificate(text, 3000, budget_s=5.0)
                                      if '"b"' in text else None)
    required.model_searcher = lambda text: find_model(text, 3000, budget_s=5.0)
    path = tmp_path / "vacuous_step.proof"
    path.write_text("setting s:\n  real a, b\n\n"
                    "lemma claim: a <= b\n  given low: a*a + 1 <= 0\nproof:\n"
                    "  a <= b    by low\n", encoding="utf-8")
    report = Checker(timeout_ms=5000).check_file(path)
    claim = _claim(report)
    assert claim is not None and claim.status != "verified", _describe(report)
    assert "may contradict each other" in _describe(report)
