"""The planted bugs of the fuzz catalogue, one learner per bug beside the textbook one, each
caught by its variant's audit (the table's ``audit``) on fixed data.

The bugs live in the catalogue (``novikoff.fuzz``), not in the production engines: an engine
runs the textbook rule only, and a bug is an implementation whose trace the audit judges.
"""

from __future__ import annotations

import numpy as np
import pytest

from novikoff.fuzz._averaged_learners import AVERAGED_MUTANTS, averaged_after, averaged_trace
from novikoff.fuzz._batch_learners import BATCH_MUTANTS, batch, batch_trace
from novikoff.fuzz._dual_learners import KERNEL_MUTANTS, kernel_perceptron, kernel_trace
from novikoff.fuzz._voted_learners import VOTED_MUTANTS, voted, voted_trace
from novikoff.runtime import VARIANTS, load_dataset


def _learner(mutants, name):
    return {m.name: m.learner for m in mutants}[name]


def _lemmas_flagged(report) -> set:
    """Every lemma a finding names: one inequality stated by several lemmas is one finding
    naming them all."""
    return {name for f in report.violations if f["kind"] == "lemma"
            for name in [f["lemma"], *f.get("also", ())]}


@pytest.fixture(scope="module")
def iris():
    return load_dataset("iris")[:2]


def _aligned():
    """Ten copies of (1, 0) and one small example that the first step leaves misclassified:
    ||u_0|| is nearly m_0*R, so norm growth is nearly tight and a bigger step breaks it."""
    return np.array([[1.0, 0.0]] * 10 + [[-0.01, 0.001]]), np.ones(11)


def _batch_audit(learner, X, y, lemmas):
    W, converged = batch_trace(learner, X, y, max_steps=50)
    return VARIANTS["batch"].audit(X, y, W, converged=converged, lemmas=lemmas)


@pytest.mark.parametrize("name", ["batch_accumulate", "batch_twice"])
def test_a_buggy_batch_step_breaks_norm_growth(name, lemmas):
    X, y = _aligned()
    report = _batch_audit(_learner(BATCH_MUTANTS, name), X, y, lemmas)
    assert "batch_run_norm_growth" in _lemmas_flagged(report)
    assert not _batch_audit(batch, X, y, lemmas).violations


def test_a_doubled_batch_step_within_the_loose_bounds_is_a_rule_finding_only(iris, lemmas):
    """On iris ||u|| <= m*R is loose: a doubled step stays within every batch lemma, and the
    audit names the broken rule instead of guessing a lemma."""
    report = _batch_audit(_learner(BATCH_MUTANTS, "batch_twice"), *iris, lemmas)
    kinds = {f["kind"] for f in report.violations}
    assert kinds == {"rule"}


@pytest.mark.parametrize("spec", ["rbf:0.5", "poly:2"])
@pytest.mark.parametrize("name", ["kernel_update_always", "kernel_ignore_label"])
def test_a_buggy_kernel_update_breaks_a_kernel_lemma(iris, lemmas, spec, name):
    X, y = iris
    order = np.tile(np.arange(len(y)), 3)
    audit_kernel = VARIANTS["kernel"].audit
    alpha = kernel_trace(_learner(KERNEL_MUTANTS, name), X, y, order, kernel=spec)
    report = audit_kernel(X, y, order, alpha, kernel=spec, lemmas=lemmas)
    assert "kernel_norm_growth" in _lemmas_flagged(report)
    alpha = kernel_trace(kernel_perceptron, X, y, order, kernel=spec)
    assert not audit_kernel(X, y, order, alpha, kernel=spec, lemmas=lemmas).violations


@pytest.mark.parametrize("name, lemma", [("average_off_by_one", "average_run_norm"),
                                         ("average_undivided", "average_run_norm"),
                                         ("average_of_updates", "average_run_progress")])
def test_every_average_bug_is_caught_on_iris(iris, lemmas, name, lemma):
    X, y = iris
    order = np.tile(np.arange(len(y)), 3)
    audit_averaged = VARIANTS["averaged"].audit
    make = AVERAGED_MUTANTS[name][0]
    W, A = averaged_trace(make, X, y, order)
    report = audit_averaged(X, y, order, W, A, convention=getattr(make, "convention", "after"),
                            lemmas=lemmas)
    assert lemma in _lemmas_flagged(report)
    assert any(f["kind"] == "average" for f in report.violations)
    W, A = averaged_trace(averaged_after, X, y, order)
    assert not audit_averaged(X, y, order, W, A, convention="after", lemmas=lemmas).violations


@pytest.mark.parametrize("name, lemma", [("vote_every_visit", "vectors_voted"),
                                         ("vote_count_not_reset", "counts_add_up"),
                                         ("vote_survivals_only", "replaced_counted")])
def test_each_vote_bug_is_caught_on_iris(iris, lemmas, name, lemma):
    X, y = iris
    order = np.tile(np.arange(len(y)), 3)
    audit_voted = VARIANTS["voted"].audit

    def audited(make):
        tr = voted_trace(make, X, y, order)
        return audit_voted(X, y, tr["order"], tr["w"], vectors=tr["vectors"],
                           counts=tr["counts"], lemmas=lemmas)
    assert lemma in _lemmas_flagged(audited(VOTED_MUTANTS[name][0]))
    assert not audited(voted).violations
