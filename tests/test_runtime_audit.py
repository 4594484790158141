"""Auditing traces of external implementations: scikit-learn, and perceptrons with bugs."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp

from novikoff.errors import InvalidArgument
from novikoff.kernel import Inner, Relation
from novikoff.runtime import Lemma, audit, audit_files, load_lemmas, run

from test_runtime_engine import separable  # noqa: E402  (tests/ is on sys.path)


@pytest.fixture(scope="module")
def lemmas():
    return load_lemmas()


def sklearn_trace(X, y, order):
    """scikit-learn's Perceptron driven one example at a time: the weights after each visit."""
    from sklearn.linear_model import Perceptron
    clf = Perceptron(fit_intercept=False, shuffle=False, eta0=1.0)
    W = []
    for i in order:
        clf.partial_fit(X[i:i + 1], y[i:i + 1], classes=np.array([-1.0, 1.0]))
        W.append(clf.coef_[0].copy())
    return np.array(W)


def textbook_trace(X, y, order, *, step=lambda w, x, yi: w + yi * x, fire=None):
    fire = fire or (lambda w, x, yi: yi * (w @ x) <= 0)
    w = np.zeros(X.shape[1])
    W = []
    for i in order:
        if fire(w, X[i], y[i]):
            w = step(w, X[i], y[i])
        W.append(w.copy())
    return np.array(W)


def test_sklearn_perceptron_passes_the_audit(lemmas):
    X, y, ws = separable(150, 5, 0.05, seed=1, unit=False)
    order = np.tile(np.arange(150), 4)
    W = sklearn_trace(X, y, order)
    rep = audit(X, y, order, W, w_star=ws, lemmas=lemmas)
    assert rep.ok and rep.violations == [] and rep.checks > 0
    res = run(X, y, w_star=ws, lemmas=lemmas, max_epochs=4)
    assert rep.updates == res.mistakes
    np.testing.assert_array_equal(W[-1], res.w)  # the same float run, bit for bit
    names = {m["lemma"] for m in rep.monitor["monitored"] if m["applies"] and m["checks"]}
    assert {"progress", "norm_growth", "mistake_bound", "hinge_bound"} <= names


@pytest.mark.parametrize("bug, kind, what", [
    ("forgets_y", "rule", "not y*x"),
    ("always_updates", "rule", "does not update"),
    ("stops_updating", "rule", "but w did not change"),
    ("double_step", "rule", "not y*x"),
])
def test_buggy_perceptrons_are_caught(lemmas, bug, kind, what):
    X, y, ws = separable(80, 4, 0.1, seed=2, unit=False)
    order = np.tile(np.arange(80), 3)
    if bug == "forgets_y":
        W = textbook_trace(X, y, order, step=lambda w, x, yi: w + x)
    elif bug == "always_updates":
        W = textbook_trace(X, y, order, fire=lambda w, x, yi: True)
    elif bug == "stops_updating":
        W = textbook_trace(X, y, order)
        W[3:] = W[2]
    else:
        W = textbook_trace(X, y, order, step=lambda w, x, yi: w + 2 * yi * x)
    rep = audit(X, y, order, W, w_star=ws, lemmas=lemmas)
    assert not rep.ok
    first = rep.violations[0]
    assert first["kind"] == kind and what in first["message"]
    assert set(first) >= {"kind", "lemma", "visit", "k", "message"}


def test_a_legitimate_variant_keeps_its_invariants_checked(lemmas):
    """The margin perceptron audited as classic: rule findings, and its own lemmas checked."""
    X, y, ws = separable(100, 5, 0.1, seed=3)
    g = 0.1
    order = np.tile(np.arange(100), 6)
    W = textbook_trace(X, y, order, fire=lambda w, x, yi: not w.any() or
                       yi * (w @ x) <= g / 2 * np.linalg.norm(w))
    as_margin = audit(X, y, order, W, w_star=ws, gamma=g, variant="margin", lemmas=lemmas)
    assert as_margin.ok
    as_classic = audit(X, y, order, W, w_star=ws, gamma=g, variant="classic", lemmas=lemmas)
    assert as_classic.rule_violations > 0 and as_classic.lemma_violations == 0
    mon = {(m["lemma"], m["source"].split("/")[-1].split(":")[0]): m
           for m in as_classic.monitor["monitored"]}
    assert mon[("update_bound", "margin_perceptron.proof")]["applies"]
    assert mon[("update_bound", "margin_perceptron.proof")]["checks"] == as_classic.updates + 1
    # Judged by the claimed variant's lemmas, gated by the data only: the classic lemmas are
    # checked too (they hold on this trace), whatever the rule findings.
    assert mon[("norm_growth", "novikoff.proof")]["applies"]
    assert mon[("norm_growth", "novikoff.proof")]["checks"] > 0


def test_lemma_findings_name_the_lemma_visit_and_k():
    X, y, ws = separable(60, 4, 0.1, seed=4, unit=False)
    order = np.tile(np.arange(60), 2)
    W = textbook_trace(X, y, order)
    k = sp.Symbol("k", real=True)
    R = sp.Symbol("R", real=True)
    w = sp.Function("w")
    lem = Lemma("quarter_growth", Relation("<=", Inner(w(k), w(k)), k * R ** 2 / 16))
    rep = audit(X, y, order, W, w_star=ws, lemmas=[lem])
    assert rep.lemma_violations == 1 and rep.rule_violations == 0
    v = rep.violations[0]
    assert v["kind"] == "lemma" and v["lemma"] == "quarter_growth"
    assert v["k"] >= 1 and 0 <= v["visit"] < order.size
    assert (np.flatnonzero((W != np.vstack([np.zeros((1, 4)), W[:-1]])).any(axis=1))
            [v["k"] - 1] == v["visit"])  # state k is the one before update k: visit of update k


def _poke(W, where, value):
    W = W.copy()
    W[where] = value
    return W


@pytest.mark.parametrize("mutate, name", [
    (lambda o, W, X: (o, W[:-1]), "w"),
    (lambda o, W, X: (o, W[:, :-1]), "w"),
    (lambda o, W, X: (o + 10 ** 6, W), "order"),
    (lambda o, W, X: (o, _poke(W, (5, 0), np.nan)), "w[5, 0]=nan"),
    (lambda o, W, X: (o.astype(float) + 0.5, W), "order[0]"),
])
def test_a_trace_that_does_not_fit_the_data_is_bad_input(mutate, name):
    """Shapes that do not match, indices out of range, non-finite weights: InvalidArgument."""
    X, y, ws = separable(30, 3, 0.1, seed=5, unit=False)
    order = np.arange(30)
    W = textbook_trace(X, y, order)
    o2, W2 = mutate(order, W, X)
    with pytest.raises(InvalidArgument, match=name.replace("[", r"\[")):
        audit(X, y, o2, W2, w_star=ws, lemmas=[])


def test_audit_files(tmp_path, lemmas):
    X, y, ws = separable(50, 3, 0.1, seed=6, unit=False)
    order = np.tile(np.arange(50), 2)
    W = textbook_trace(X, y, order)
    np.savez(tmp_path / "d.npz", X=X, y=y)
    np.savez(tmp_path / "t.npz", order=order, w=W)
    np.save(tmp_path / "ws.npy", ws)
    rep = audit_files(tmp_path / "d.npz", tmp_path / "t.npz", w_star=tmp_path / "ws.npy",
                      lemmas=lemmas)
    assert rep.ok
    np.savez(tmp_path / "bad.npz", order=order)
    with pytest.raises(InvalidArgument, match="no array 'w'"):
        audit_files(tmp_path / "d.npz", tmp_path / "bad.npz")


def test_a_rule_breaking_trace_is_still_judged_by_the_lemmas(lemmas):
    """Learning rate 2: the rule finding and the lemma it breaks (norm growth: 4x) both show."""
    X, y, ws = separable(80, 4, 0.1, seed=5)
    order = np.tile(np.arange(80), 3)
    W = textbook_trace(X, y, order, step=lambda w, x, yi: w + 2 * yi * x)
    rep = audit(X, y, order, W, w_star=ws, lemmas=lemmas)
    kinds = {v["kind"] for v in rep.violations}
    assert kinds == {"rule", "lemma"}
    assert "norm_growth" in {v["lemma"] for v in rep.violations if v["kind"] == "lemma"}


# ----------------------------------------------------------------------------- non-separable

def nonseparable_unit(n=60, d=4, flips=6, seed=3):
    """Unit rows labelled by a unit w* with a few labels flipped: no separator exists."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    X /= np.linalg.norm(X, axis=1)[:, None]
    ws = rng.standard_normal(d)
    ws /= np.linalg.norm(ws)
    y = np.where(X @ ws >= 0, 1.0, -1.0)
    y[rng.choice(n, flips, replace=False)] *= -1
    return X, y, ws


def reported_td(X, y, ws, gamma, order):
    """What a correct implementation reports: TD after each visit, over the examples presented."""
    return np.cumsum(np.maximum(0.0, gamma - y[order] * (X[order] @ ws)))


def test_a_non_separable_trace_is_judged_by_the_hinge_bound(lemmas):
    X, y, ws = nonseparable_unit()
    order = np.tile(np.arange(X.shape[0]), 3)
    W = textbook_trace(X, y, order)
    with pytest.raises(InvalidArgument, match="does not separate"):
        audit(X, y, order, W, w_star=ws, gamma=0.1, lemmas=lemmas)
    rep = audit(X, y, order, W, w_star=ws, gamma=0.1, separable=False,
                td=reported_td(X, y, ws, 0.1, order), lemmas=lemmas)
    assert rep.ok and not rep.separable and rep.td_violations == 0
    checked = {m["lemma"]: m["checks"] for m in rep.monitor["monitored"] if m["applies"]}
    assert checked.get("hinge_bound", 0) > 0 and checked.get("norm_growth", 0) > 0
    # gamma not given: the one minimising the hinge bound, as run() chooses it
    chosen = audit(X, y, order, W, w_star=ws, separable=False, lemmas=lemmas)
    res = run(X, y, w_star=ws, order=order, cyclic=False, separable=False, lemmas=lemmas)
    assert chosen.ok and chosen.gamma == res.gamma > 0


def test_a_wrong_step_on_non_separable_data_is_caught(lemmas):
    X, y, ws = nonseparable_unit()
    order = np.tile(np.arange(X.shape[0]), 2)
    W = textbook_trace(X, y, order, step=lambda w, x, yi: w + 2 * yi * x)
    rep = audit(X, y, order, W, w_star=ws, gamma=0.1, separable=False, lemmas=lemmas)
    kinds = {v["kind"] for v in rep.violations}
    assert "rule" in kinds and rep.rule_violations > 0


def test_a_reported_td_that_is_not_its_definition_is_caught(lemmas):
    X, y, ws = nonseparable_unit()
    n = X.shape[0]
    order = np.tile(np.arange(n), 3)
    W = textbook_trace(X, y, order)
    gamma = 0.1
    good = reported_td(X, y, ws, gamma, order)
    # the classic bookkeeping slip: the hinge losses summed over the data set once
    once = np.array([np.maximum(0.0, gamma - y[:min(t + 1, n)] * (X[:min(t + 1, n)] @ ws)).sum()
                     for t in range(order.size)])
    assert np.array_equal(once[:n], good[:n])  # the same during the first pass
    rep = audit(X, y, order, W, w_star=ws, gamma=gamma, separable=False, td=once,
                lemmas=lemmas)
    first_bad = n + int(np.flatnonzero(good[n:] != once[n:])[0])
    (v,) = [v for v in rep.violations if v["kind"] == "td"]
    assert v["visit"] == first_bad and v["lemma"] is None and "TD = " in v["message"]
    assert rep.td_violations == int((np.abs(good - once) > 1e-9).sum())
    # rounding of a correct implementation (another summation order) is not a finding
    noisy = good * (1 + 4e-16 * np.cos(np.arange(order.size)))
    assert audit(X, y, order, W, w_star=ws, gamma=gamma, separable=False, td=noisy,
                 lemmas=lemmas).td_violations == 0


@pytest.mark.parametrize("td, message", [
    (np.zeros(5), r"td: shape \(5,\) does not match order"),
    (np.full((180,), np.nan), r"td\[0\]=nan is not finite"),
    (np.zeros((180, 1)), r"td: shape \(180, 1\)"),
])
def test_a_td_that_does_not_fit_the_trace_is_bad_input(td, message):
    X, y, ws = nonseparable_unit()
    order = np.tile(np.arange(X.shape[0]), 3)
    W = textbook_trace(X, y, order)
    with pytest.raises(InvalidArgument, match=message):
        audit(X, y, order, W, w_star=ws, gamma=0.1, separable=False, td=td, lemmas=[])
