"""docs/runtime-howto.md's example of what `audit` is for: scikit-learn's averaged SGD perceptron,
trained one example per partial_fit, drops its plain intercept between calls
(examples/audit_sklearn_intercept.py).  Skipped when scikit-learn is missing or keeps the
intercept (the defect fixed): detected on the trace, not assumed from a version number."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from novikoff.runtime import audit

from helpers import cli  # noqa: E402  (tests/ is on sys.path)

pytest.importorskip("sklearn.linear_model")
EXAMPLE = Path(__file__).parents[1] / "examples" / "audit_sklearn_intercept.py"


@pytest.fixture(scope="module")
def example():
    spec = importlib.util.spec_from_file_location("audit_sklearn_intercept", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def written(example, tmp_path_factory):
    """The example's files, written as the docs run it (2000 partial_fit calls: once)."""
    out = tmp_path_factory.mktemp("sklearn_example")
    example.main(str(out))
    return out


@pytest.fixture(scope="module")
def traces(written):
    with np.load(written / "data.npz") as d, np.load(written / "sgd_trace.npz") as s, \
            np.load(written / "perceptron_trace.npz") as p:
        X, y, order, sgd, perceptron = d["X"], d["y"], s["order"], s["w"], p["w"]
    plain_intercept = sgd[:, -1]
    if np.any(plain_intercept != 0.0):
        import sklearn
        pytest.skip(f"scikit-learn {sklearn.__version__} keeps the plain intercept between "
                    f"partial_fit calls: the defect this example shows is fixed")
    return X, y, order, sgd, perceptron


def test_the_dropped_intercept_is_named_at_the_first_visit(traces, lemmas):
    X, y, order, sgd, perceptron = traces
    rep = audit(X, y, order, sgd, bias=True, lemmas=lemmas)
    assert not rep.ok and rep.rule_violations == rep.updates > 100
    first = rep.violations[0]
    assert first["kind"] == "rule" and first["visit"] == 0
    assert f"coordinate {X.shape[1]}: 0.0 instead of" in first["message"]  # the bias column
    (p,) = rep.patterns
    assert p["pattern"] == "bias_unchanged" and "does not update its intercept" in p["message"]
    # the same data and order through Perceptron: clean, and far fewer updates
    rep = audit(X, y, order, perceptron, bias=True, lemmas=lemmas)
    assert rep.ok and 0 < rep.updates < 100


def test_without_an_intercept_or_without_averaging_the_trace_is_clean(example, traces, lemmas):
    from sklearn.linear_model import SGDClassifier
    X, y, order, _, _ = traces
    for average, fit_intercept in ((True, False), (False, True)):
        clf = SGDClassifier(loss="perceptron", learning_rate="constant", eta0=1.0,
                            penalty=None, average=average, fit_intercept=fit_intercept,
                            shuffle=False)
        W = example.online_trace(clf, X, y, order[:400], plain=average)
        W = W if fit_intercept else W[:, :-1]
        rep = audit(X, y, order[:400], W, bias=fit_intercept, lemmas=lemmas,
                    separable=fit_intercept)
        assert not rep.rule_violations, (average, fit_intercept, rep.violations[:2])


def test_the_documented_commands(traces, written, capsys):
    code, out, err = cli(["audit", "--data", str(written / "data.npz"), "--trace",
                          str(written / "sgd_trace.npz"), "--bias"], capsys)
    assert code == 1, err
    assert "rule       496 violation(s) of the update rule" in out
    assert "[pattern] the bias (the last column of w) never changes" in out
    assert "[rule] ... 491 more rule finding(s) (--json lists the first 100)" in out
    code, out, err = cli(["audit", "--data", str(written / "data.npz"), "--trace",
                          str(written / "perceptron_trace.npz"), "--bias"], capsys)
    assert code == 0 and "rule       0 violation(s)" in out, out + err
