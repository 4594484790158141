"""Auditing traces of external implementations: scikit-learn, and perceptrons with bugs."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
import sympy as sp
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from novikoff.errors import InvalidArgument
from novikoff.kernel import Inner, Relation
from novikoff.runtime import Lemma, audit, audit_files, run

from exact_floats import margins  # noqa: E402  (tests/ is on sys.path)
from helpers import cli  # noqa: E402  (tests/ is on sys.path)
from test_runtime_engine import separable  # noqa: E402



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
    rep = audit(X, y, order, W, w_star=ws, lemmas=[lem], include_unverified=True)
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
    # the classic bookkeeping slip: the hinge losses summed over the data set once (the first
    # pass's running sum, then frozen; summed as good is, so the same floats during that pass)
    once = good[np.minimum(np.arange(order.size), n - 1)]
    rep = audit(X, y, order, W, w_star=ws, gamma=gamma, separable=False, td=once,
                lemmas=lemmas)
    # Which visits the slip makes wrong is decided exactly (the exact hinge losses), not by how
    # numpy rounded the sums: every visit of the later passes from the first one whose example
    # has a positive loss.
    loss = [max(Fraction(0), Fraction(gamma) - m) for m in margins(X, y, ws)]
    wrong = [t for t in range(n, order.size) if any(loss[i] > 0 for i in order[n:t + 1])]
    (v,) = [v for v in rep.violations if v["kind"] == "td"]
    assert v["visit"] == wrong[0] and v["lemma"] is None and "TD = " in v["message"]
    assert rep.td_violations == len(wrong)
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


# ----------------------------------------------------------------------------- ties
# The classic rule updates when y<w, x> <= 0.  Where every float evaluation of <w, x> is exact
# (w = 0, integer data and weights), a skipped update at a tie is a violation; elsewhere a
# decision that only rounding could explain is "undetermined", never a violation, never silent.

def tie_data():
    """Integer data separated by w* = (1, 0): after the update on example 0 (w = (1, -1)),
    example 1 is a tie: y<w, x> = 1*1 + (-1)*1 = 0."""
    X = np.array([[1.0, -1.0], [1.0, 1.0], [2.0, 1.0], [1.0, 3.0]])
    return X, np.ones(4), np.array([1.0, 0.0])


def integer_data(n=40, d=3, seed=0):
    """Small integer rows labelled by an integer w*, rows on its hyperplane dropped."""
    rng = np.random.default_rng(seed)
    ws = np.array([1.0, 2.0, -1.0, 1.0, 3.0][:d])
    X = rng.integers(-2, 3, size=(n, d)).astype(float)
    m = X @ ws
    X, m = X[m != 0], m[m != 0]
    return X, np.sign(m), ws


def mlxtend_trace(X, y, order):
    """mlxtend's Perceptron convention (no bias, eta = 1, zero start): predict class 1 when
    <w, x> >= 0 and update by (y - prediction) x, so a tie on a positive example is skipped."""
    return textbook_trace(X, y, order, fire=lambda w, x, yi: (1.0 if w @ x >= 0 else -1.0) != yi)


def test_an_all_zero_trace_is_flagged_at_its_first_visit(lemmas):
    """A learner that never learns: at w = 0, y<w, x> = 0 exactly, so the rule updates."""
    X, y, ws = tie_data()
    order = np.tile(np.arange(4), 2)
    rep = audit(X, y, order, np.zeros((8, 2)), w_star=ws, lemmas=lemmas)
    assert not rep.ok and rep.rule_violations == 8 and rep.undetermined == 0
    first = rep.violations[0]
    assert first["kind"] == "rule" and first["visit"] == 0 and first["k"] == 0
    assert "but w did not change" in first["message"] and "y<w,x> = 0.0, exact" in first["message"]
    # also on float data: w = 0 makes every product 0, so the tie is exact there too
    Xf, yf, wsf = separable(30, 4, 0.1, seed=7, unit=False)
    rep = audit(Xf, yf, np.arange(30), np.zeros((30, 4)), w_star=wsf, lemmas=lemmas)
    assert rep.rule_violations == 30 and rep.violations[0]["visit"] == 0


def test_a_strict_perceptron_is_flagged_at_a_tie(lemmas):
    X, y, ws = tie_data()
    order = np.arange(4)
    # updates only when y<w, x> < 0: never moves from w = 0 (the all-zero trace)
    strict = textbook_trace(X, y, order, fire=lambda w, x, yi: yi * (w @ x) < 0)
    assert not strict.any()
    rep = audit(X, y, order, strict, w_star=ws, lemmas=lemmas)
    assert rep.rule_violations == 4 and rep.violations[0]["visit"] == 0
    # strict except at w = 0: the first update happens, the tie after it is skipped
    strict0 = textbook_trace(X, y, order,
                             fire=lambda w, x, yi: not w.any() or yi * (w @ x) < 0)
    assert strict0[0].tolist() == [1.0, -1.0] and (strict0[1] == strict0[0]).all()
    rep = audit(X, y, order, strict0, w_star=ws, lemmas=lemmas)
    assert not rep.ok and rep.undetermined == 0
    (v,) = [v for v in rep.violations if v["kind"] == "rule"]
    assert v["visit"] == 1 and v["k"] == 1 and v["example"] == 1
    assert "the rule updates (y<w,x> <= 0: y<w,x> = 0.0, exact" in v["message"]
    # the classic perceptron updates at the tie and passes
    classic = textbook_trace(X, y, order)
    assert (classic[1] != classic[0]).any()
    rep = audit(X, y, order, classic, w_star=ws, lemmas=lemmas)
    assert rep.ok and rep.rule_violations == 0 and rep.undetermined == 0


def test_mlxtends_tie_convention_is_flagged_at_every_skipped_tie(lemmas):
    X, y, ws = integer_data(60, 3, seed=11)
    order = np.tile(np.arange(X.shape[0]), 3)
    W = mlxtend_trace(X, y, order)
    Wb = np.vstack([np.zeros((1, 3)), W[:-1]])
    skipped_ties = np.flatnonzero((_rows(Wb, X[order]) == 0) & (W == Wb).all(axis=1))
    assert skipped_ties.size >= 3 and (y[order[skipped_ties]] > 0).all()
    rep = audit(X, y, order, W, w_star=ws, lemmas=lemmas)
    assert not rep.ok and rep.undetermined == 0
    assert rep.rule_violations == skipped_ties.size  # each skipped tie, and nothing else
    rule = [v for v in rep.violations if v["kind"] == "rule"]
    assert [v["visit"] for v in rule] == skipped_ties.tolist()
    assert all("but w did not change" in v["message"] and "= 0.0, exact" in v["message"]
               for v in rule)
    # the classic perceptron on the same data and order passes
    classic = textbook_trace(X, y, order)
    rep = audit(X, y, order, classic, w_star=ws, lemmas=lemmas)
    assert rep.ok and rep.undetermined == 0 and rep.undetermined_visits == []


def _rows(A, B):
    return np.einsum("ij,ij->i", A, B)


def test_an_update_at_a_positive_exact_prediction_is_flagged(lemmas):
    """Integer data: y<w, x> = 1 > 0 exactly (far inside the float bound's scale of nothing)."""
    X, y, ws = tie_data()
    order = np.array([0, 2])
    W = np.array([[1.0, -1.0], [3.0, 0.0]])  # y<w, x2> = 2 - 1 = 1 > 0, yet updated
    rep = audit(X, y, order, W, w_star=ws, lemmas=lemmas)
    (v,) = [v for v in rep.violations if v["kind"] == "rule"]
    assert v["visit"] == 1 and "does not update (y<w,x> = 1.0" in v["message"]


def near_tie_data():
    """After the update on example 0 (w = x0), y<w, x1> = -2^-61 exactly: the rule updates, but
    a float evaluation in the natural order gives ((1 - 2^-60) - 1) + 2^-61 = 2^-61 > 0."""
    X = np.array([[1.0, 2.0 ** -60, 1.0, 2.0 ** -61], [1.0, -1.0, -1.0, 1.0]])
    return X, np.ones(2), np.array([1.0, 0.0, 0.0, 0.0])


def test_a_near_tie_within_the_rounding_bound_is_undetermined(lemmas):
    X, y, ws = near_tie_data()
    w, x = X[0], X[1]
    assert ((w[0] * x[0] + w[1] * x[1]) + w[2] * x[2]) + w[3] * x[3] > 0  # a float skip
    order = np.array([0, 1])
    skipped = np.array([X[0], X[0]])
    rep = audit(X, y, order, skipped, w_star=ws, lemmas=lemmas)
    assert rep.ok and rep.violations == [] and rep.rule_violations == 0
    assert rep.undetermined == 1
    (u,) = rep.undetermined_visits
    assert u["kind"] == "undetermined" and u["visit"] == 1 and u["k"] == 1
    assert "-4.336808689942018e-19 in exact arithmetic" in u["message"]
    assert "may skip it" in u["message"]
    doc = rep.as_dict()
    assert doc["undetermined"] == 1 and doc["undetermined_visits"] == [u]
    # updating there follows the rule in exact arithmetic: nothing to report
    updated = np.array([X[0], X[0] + X[1]])
    rep = audit(X, y, order, updated, w_star=ws, lemmas=lemmas)
    assert rep.ok and rep.undetermined == 0 and rep.undetermined_visits == []


def test_a_near_tie_that_rounding_cannot_explain_is_a_violation(lemmas):
    """Exact value -2^-30: beyond the rounding bound (about 1e-15), the skip is a violation."""
    X = np.array([[1.0, 2.0 ** -60, 1.0, 2.0 ** -30], [1.0, -1.0, -1.0, -1.0]])
    y, ws = np.ones(2), np.array([1.0, 0.0, 0.0, 0.0])
    rep = audit(X, y, np.array([0, 1]), np.array([X[0], X[0]]), w_star=ws, lemmas=lemmas)
    assert rep.rule_violations == 1 and rep.undetermined == 0
    assert "but w did not change" in rep.violations[0]["message"]


def test_an_undetermined_visit_alone_exits_0_with_a_count_in_the_json(tmp_path, capsys):
    import json

    X, y, ws = near_tie_data()
    np.savez(tmp_path / "d.npz", X=X, y=y)
    np.save(tmp_path / "ws.npy", ws)
    np.savez(tmp_path / "t.npz", order=np.array([0, 1]), w=np.array([X[0], X[0]]))
    np.savez(tmp_path / "zero.npz", order=np.array([0, 1]), w=np.zeros((2, 4)))
    base = ["audit", "--data", str(tmp_path / "d.npz"), "--w-star", str(tmp_path / "ws.npy"),
            "--json", "--trace"]
    code, out, _ = cli(base + [str(tmp_path / "t.npz")], capsys)
    doc = json.loads(out)
    assert code == 0 and doc["violations"] == [] and doc["undetermined"] == 1
    assert doc["undetermined_visits"][0]["visit"] == 1
    code, out, _ = cli(base + [str(tmp_path / "zero.npz")], capsys)
    doc = json.loads(out)
    assert code == 1 and doc["rule_violations"] == 2 and doc["undetermined"] == 0
    text = [a for a in base if a != "--json"]
    code, out, _ = cli(text + [str(tmp_path / "t.npz")], capsys)
    assert code == 0
    assert "undecided  1 visit(s) within the rounding bound" in out
    assert "[undetermined] " in out


def test_the_exactness_test_is_sound():
    """Rows called exact evaluate to the same value in every order; rows that lose bits are not
    called exact."""
    from fractions import Fraction

    from novikoff.runtime._audit import _exact_rows
    from novikoff.runtime._bounds import exact_dot as _exact_dot
    rng = np.random.default_rng(0)
    A = rng.integers(-5, 6, size=(200, 6)) * 2.0 ** rng.integers(-40, 40, size=(200, 1))
    B = rng.integers(-5, 6, size=(200, 6)) * 2.0 ** rng.integers(-40, 40, size=(200, 1))
    ok = _exact_rows(A, B)
    assert ok.all()
    for a, b in zip(A[:50], B[:50]):
        q = _exact_dot(a, b)
        for perm in (slice(None), slice(None, None, -1)):
            acc = 0.0
            for u, v in zip(a[perm], b[perm]):
                acc += u * v
            assert Fraction(acc) == q
    assert not _exact_rows(np.array([[1.0, 2.0 ** -60]]), np.array([[1.0, 1.0]]))[0]
    assert not _exact_rows(np.array([[1.0 / 3, 0.0]]), np.array([[3.0, 0.0]]))[0]
    assert not _exact_rows(np.array([[2.0 ** -600]]), np.array([[2.0 ** -600]]))[0]  # underflow
    assert not _exact_rows(np.array([[2.0 ** 600]]), np.array([[2.0 ** 600]]))[0]  # overflow
    assert _exact_rows(np.zeros((1, 3)), np.array([[np.pi, 1e300, 1e-300]]))[0]  # w = 0
    assert _exact_rows(np.array([[2.0 ** 52, 1.0]]), np.array([[1.0, 1.0]]))[0]
    assert not _exact_rows(np.array([[2.0 ** 53, 1.0]]), np.array([[1.0, 1.0]]))[0]


@settings(max_examples=40, deadline=None)
@given(data=st.data(), d=st.integers(1, 4), n=st.integers(1, 8),
       scale=st.sampled_from([1.0, 2.0 ** -20, 2.0 ** 20, 0.5]))
def test_the_classic_perceptrons_own_trace_on_integer_data_is_never_flagged(data, d, n, scale,
                                                                           lemmas):
    """Random small integer data (scaled by a power of two), any order with repeats: the
    classic perceptron's trace has no rule violation and no undetermined visit; the strict
    (`< 0`, except at w = 0) perceptron's trace is flagged exactly at its skipped ties."""
    ints = st.integers(-3, 3)
    ws = np.array(data.draw(st.lists(ints, min_size=d, max_size=d).filter(any)), dtype=float)
    X = np.array(data.draw(st.lists(st.lists(ints, min_size=d, max_size=d),
                                    min_size=n, max_size=n)), dtype=float) * scale
    m = X @ ws
    keep = m != 0
    assume(keep.any())
    X, y = X[keep], np.sign(m[keep])
    order = np.array(data.draw(st.lists(st.integers(0, X.shape[0] - 1), min_size=1,
                                        max_size=30)))
    W = textbook_trace(X, y, order)
    rep = audit(X, y, order, W, w_star=ws, lemmas=lemmas)
    assert rep.rule_violations == 0 and rep.undetermined == 0 and rep.ok, rep.violations
    S = textbook_trace(X, y, order, fire=lambda w, x, yi: not w.any() or yi * (w @ x) < 0)
    Sb = np.vstack([np.zeros((1, d)), S[:-1]])
    ties = np.flatnonzero((_rows(Sb, X[order]) == 0) & Sb.any(axis=1))
    rep = audit(X, y, order, S, w_star=ws, lemmas=lemmas, max_rule=1000)
    assert rep.undetermined == 0
    assert [v["visit"] for v in rep.violations if v["kind"] == "rule"] == ties.tolist()


def test_the_margin_rule_near_its_threshold_is_decided_exactly_or_undetermined(lemmas):
    """w = (3, 4), x = (-1, 1): y<w, x> = 1 and (gamma/2)||w|| = 0.2 * 5, where fl(0.4) makes
    the exact threshold 1 + 5.6e-17: the rule updates in exact arithmetic, within rounding."""
    X = np.array([[3.0, 4.0], [-1.0, 1.0]])
    y, ws, order = np.ones(2), np.array([0.0, 1.0]), np.array([0, 1])
    updated = audit(X, y, order, np.array([X[0], X[0] + X[1]]), w_star=ws, gamma=0.4,
                    variant="margin", lemmas=lemmas)
    assert updated.ok and updated.undetermined == 0
    skipped = audit(X, y, order, np.array([X[0], X[0]]), w_star=ws, gamma=0.4,
                    variant="margin", lemmas=lemmas)
    assert skipped.ok and skipped.rule_violations == 0 and skipped.undetermined == 1
    assert "(gamma/2)||w|| = 1.0" in skipped.undetermined_visits[0]["message"]
    # far from the threshold (y<w, x> = 1 against 0.1 * 5 = 0.5): skipping is not the rule's
    # fault, updating is a violation
    spurious = audit(X, y, order, np.array([X[0], X[0] + X[1]]), w_star=ws, gamma=0.2,
                     variant="margin", lemmas=lemmas)
    assert spurious.rule_violations == 1 and spurious.undetermined == 0
    assert "does not update" in spurious.violations[0]["message"]


# ----------------------------------------------------------------------------- declared rules
# A trace may declare its start w0, learning rate eta, a bias column and float32 arithmetic;
# without the declaration, the rule findings are summarised by their pattern.

def declared_trace(X, y, order, *, w0=None, eta=1.0, dtype=np.float64):
    """The classic rule from w0 with step eta*y*x, computed in dtype (x cast to it)."""
    Xd = X.astype(dtype)
    w = np.zeros(X.shape[1], dtype) if w0 is None else np.asarray(w0, dtype).copy()
    W = []
    for i in order:
        if y[i] * (w @ Xd[i]) <= 0:
            w = (w + dtype(eta * y[i]) * Xd[i]).astype(dtype)
        W.append(w.copy())
    return np.array(W)


def _not_applicable(rep):
    return {m["lemma"]: m["inapplicable"] for m in rep.monitor["monitored"] if not m["applies"]}


def test_a_learning_rate_trace_passes_with_eta_and_is_summarised_without(lemmas, tmp_path,
                                                                       capsys):
    X, y, ws = separable(80, 4, 0.1, seed=5, unit=False)
    order = np.tile(np.arange(80), 3)
    W = declared_trace(X, y, order, eta=0.5)
    rep = audit(X, y, order, W, w_star=ws, lemmas=lemmas)
    assert not rep.ok and rep.rule_violations == rep.updates > 2
    (p,) = rep.patterns
    assert p["pattern"] == "learning_rate" and p["suggest"] == "--eta 0.5"
    assert "a learning rate of 0.5? audit with --eta 0.5" in p["message"]
    assert "the rule holds on every visit" in p["message"]
    rep = audit(X, y, order, W, w_star=ws, lemmas=lemmas, eta=0.5)
    assert rep.ok and rep.rule_violations == 0 and rep.patterns == [] and rep.checks > 0
    na = _not_applicable(rep)
    # the lemmas assuming the step y*x do not apply: not applicable, with the reason
    assert "w[k+1] = w[k] + y*x" in na["norm_growth"] and "eta = 0.5" in na["norm_growth"]
    assert {"progress", "mistake_bound"} <= set(na)
    assert rep.rule == {"w0": None, "eta": 0.5, "bias": False, "arithmetic": "float64"}
    # a learning rate that is not a power of two rounds its step: still no finding
    W = declared_trace(X, y, order, eta=0.1)
    assert audit(X, y, order, W, w_star=ws, lemmas=lemmas, eta=0.1).ok
    assert "a learning rate of 0.1?" in audit(X, y, order, W, w_star=ws,
                                              lemmas=lemmas).patterns[0]["message"]
    # the command line: the pattern is printed before the visits
    np.savez(tmp_path / "d.npz", X=X, y=y)
    np.save(tmp_path / "ws.npy", ws)
    np.savez(tmp_path / "t.npz", order=order, w=declared_trace(X, y, order, eta=0.5))
    base = ["audit", "--data", str(tmp_path / "d.npz"), "--w-star", str(tmp_path / "ws.npy"),
            "--trace", str(tmp_path / "t.npz")]
    code, out, _ = cli(base, capsys)
    assert code == 1
    assert out.index("[pattern] ") < out.index("[rule] ")
    assert "a learning rate of 0.5? audit with --eta 0.5" in out
    code, out, _ = cli(base + ["--eta", "0.5"], capsys)
    assert code == 0 and "declared   w <- w + 0.5*y*x from 0, float64" in out
    assert "not applicable  norm_growth: assumption update" in out


def test_a_non_zero_start_passes_with_w0(lemmas, tmp_path, capsys):
    X, y, ws = separable(80, 4, 0.1, seed=5, unit=False)
    order = np.tile(np.arange(80), 3)
    w0 = np.array([0.3, -0.2, 0.1, 0.05])
    W = declared_trace(X, y, order, w0=w0)
    rep = audit(X, y, order, W, w_star=ws, lemmas=lemmas)
    assert not rep.ok and rep.violations[0]["visit"] == 0
    (p,) = rep.patterns
    assert p["pattern"] == "start" and p["suggest"] == "--w0 W0.npy"
    assert "a non-zero start?" in p["message"] and "--w0" in p["message"]
    np.testing.assert_array_equal(p["w0"], w0 if not (W[0] != w0).any() else W[0] - y[0] * X[0])
    rep = audit(X, y, order, W, w_star=ws, lemmas=lemmas, w0=w0)
    assert rep.ok and rep.rule_violations == 0 and rep.lemma_violations == 0
    na = _not_applicable(rep)
    assert "w[0] = 0" in na["progress"] and "non-zero start" in na["progress"]
    # lemmas that assume only the step (norm_step) or nothing of the learner still apply
    applied = {m["lemma"] for m in rep.monitor["monitored"] if m["applies"]}
    assert "w_star_nonzero" in applied
    # a zero w0 is the default rule: every lemma applies
    rep0 = audit(X, y, order, declared_trace(X, y, order), w_star=ws, lemmas=lemmas,
                 w0=np.zeros(4))
    assert rep0.ok and "progress" not in _not_applicable(rep0)
    with pytest.raises(InvalidArgument, match=r"w0: shape \(3,\)"):
        audit(X, y, order, W, w_star=ws, lemmas=[], w0=w0[:3])
    np.savez(tmp_path / "d.npz", X=X, y=y)
    np.save(tmp_path / "ws.npy", ws)
    np.save(tmp_path / "w0.npy", w0)
    np.savez(tmp_path / "t.npz", order=order, w=W)
    code, out, _ = cli(["audit", "--data", str(tmp_path / "d.npz"), "--w-star",
                     str(tmp_path / "ws.npy"), "--trace", str(tmp_path / "t.npz"), "--w0",
                     str(tmp_path / "w0.npy"), "--json"], capsys)
    import json
    doc = json.loads(out)
    assert code == 0 and doc["rule"]["w0"] == w0.tolist() and doc["patterns"] == []


def offset_data(n=80, seed=0):
    """Data separable by a hyperplane with an offset (not through the origin)."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 3))
    v, b = np.array([1.0, -0.5, 0.3]), 0.7
    m = X @ v + b
    keep = np.abs(m) > 0.1
    return X[keep], np.where(m[keep] > 0, 1.0, -1.0)


def test_a_bias_column_trace_passes_with_bias(lemmas, tmp_path, capsys):
    """scikit-learn's Perceptron with fit_intercept=True: the trace is (coef_, intercept_)."""
    from sklearn.linear_model import Perceptron
    X, y = offset_data()
    order = np.tile(np.arange(X.shape[0]), 5)
    clf = Perceptron(fit_intercept=True, shuffle=False, eta0=1.0)
    W = []
    for i in order:
        clf.partial_fit(X[i:i + 1], y[i:i + 1], classes=np.array([-1.0, 1.0]))
        W.append(np.concatenate([clf.coef_[0], clf.intercept_]))
    W = np.array(W)
    rep = audit(X, y, order, W, bias=True, lemmas=lemmas)
    assert rep.ok and rep.updates > 1 and rep.checks > 0
    assert rep.rule["bias"] and _not_applicable(rep).get("norm_growth") is None
    with pytest.raises(InvalidArgument, match="a bias column\\? audit with --bias"):
        audit(X, y, order, W, lemmas=lemmas)
    np.savez(tmp_path / "d.npz", X=X, y=y)
    np.savez(tmp_path / "t.npz", order=order, w=W)
    code, out, _ = cli(["audit", "--data", str(tmp_path / "d.npz"), "--trace",
                     str(tmp_path / "t.npz"), "--bias"], capsys)
    assert code == 0 and "x with a bias column 1" in out


def test_a_float32_implementation_passes_with_float32(lemmas):
    X, y, ws = separable(80, 4, 0.1, seed=5, unit=False)
    order = np.tile(np.arange(80), 3)
    W = declared_trace(X, y, order, dtype=np.float32)
    assert W.dtype == np.float32
    rep = audit(X, y, order, W, w_star=ws, lemmas=lemmas)
    assert not rep.ok and rep.rule_violations > 2
    (p,) = rep.patterns
    assert p["pattern"] == "float32" and p["suggest"] == "--float32"
    assert "differences of float32 size" in p["message"] and "--float32" in p["message"]
    rep = audit(X, y, order, W, w_star=ws, lemmas=lemmas, float32=True)
    assert rep.ok and rep.rule_violations == 0 and rep.undetermined == 0
    # eta = 1 from 0: every lemma applies, checked with float32's drift bound
    assert rep.lemma_violations == 0 and rep.checks > 0 and _not_applicable(rep) == {}
    assert rep.rule["arithmetic"] == "float32"
    # float32 with a learning rate: both are suggested, and both declared pass
    W = declared_trace(X, y, order, eta=0.5, dtype=np.float32)
    pats = {p["pattern"]: p for p in audit(X, y, order, W, w_star=ws, lemmas=lemmas).patterns}
    assert set(pats) == {"learning_rate", "float32"}
    assert "--eta 0.5 --float32" in pats["learning_rate"]["message"]
    assert audit(X, y, order, W, w_star=ws, lemmas=lemmas, float32=True, eta=0.5).ok
    # a float64 step that is wrong by more than float32 rounding is still caught in float32
    bad = declared_trace(X, y, order, eta=1.01, dtype=np.float32)
    rep = audit(X, y, order, bad, w_star=ws, lemmas=lemmas, float32=True)
    assert rep.rule_violations > 0 and "not y*x" in rep.violations[0]["message"]


def float32_trace(X, y, order, eta, *, backend="numpy"):
    """A correct float32 perceptron as numpy (or torch) runs it: x, w and eta held in float32."""
    if backend == "torch":
        import torch
        Xt = torch.tensor(X, dtype=torch.float32)
        w = torch.zeros(X.shape[1], dtype=torch.float32)
        W = []
        for i in order:
            if float(y[i]) * float(w @ Xt[i]) <= 0:
                w = w + eta * float(y[i]) * Xt[i]
            W.append(w.clone().numpy())
        return np.array(W)
    X32, e32 = X.astype(np.float32), np.float32(eta)
    w = np.zeros(X.shape[1], np.float32)
    W = []
    for i in order:
        if np.float32(y[i]) * (w @ X32[i]) <= 0:
            w = w + e32 * np.float32(y[i]) * X32[i]
        W.append(w.copy())
    return np.array(W)


@st.composite
def float32_runs(draw):
    """Separable data (gaussian, or on a decimal grid where float32 and float64 round ties
    differently), an order, a learning rate float32 may not hold exactly, gamma and w* given
    or not."""
    seed = draw(st.integers(0, 2 ** 32 - 1))
    rng = np.random.default_rng(seed)
    d = draw(st.integers(2, 12))
    if draw(st.booleans()):
        X, y, ws = separable(draw(st.integers(3, 40)), d, draw(st.sampled_from(
            [0.3, 0.01, 1e-4])), seed=seed % 1000, unit=draw(st.booleans()))
    else:
        X = rng.integers(-5, 6, (40, d)) * draw(st.sampled_from([0.1, 0.3, 1 / 3, 0.7]))
        ws = rng.integers(-3, 4, d).astype(float)
        assume(ws.any())
        X = X[np.abs(X @ ws) > 0.05]
        assume(X.shape[0] >= 2)
        y = np.sign(X @ ws)
    eta = draw(st.sampled_from([1.0, 0.1, 0.3, 1 / 3]) | st.floats(1e-3, 10.0))
    order = np.tile(np.arange(X.shape[0]), draw(st.integers(1, 6)))
    if not draw(st.booleans()):
        return X, y, order, eta, None, None  # the audit computes w* and certifies gamma
    # a gamma as numpy computes it on the float64 data: the cast may lower the margin below it
    gamma = float(np.min(y * (X @ ws))) if draw(st.booleans()) else None
    return X, y, order, eta, ws, gamma


@settings(max_examples=60, deadline=None)
@given(float32_runs())
def test_a_correct_float32_perceptron_is_never_flagged(lemmas, case):
    """x and eta are held in float32 (eta = 0.1 is 0.100000001...): the trace is judged on the
    data and rate the implementation holds, so neither eta's rounding nor a decision the cast
    of x flips is charged to it."""
    X, y, order, eta, ws, gamma = case
    W = float32_trace(X, y, order, eta)
    rep = audit(X, y, order, W, w_star=ws, gamma=gamma, lemmas=lemmas, float32=True, eta=eta)
    assert rep.violations == [], rep.violations[:3]
    assert rep.rule["eta"] == eta and rep.rule["arithmetic"] == "float32"


def test_a_float32_learning_rate_is_held_in_float32(lemmas):
    """eta = 0.806... rounds in float32 (by 2.5e-8 relative): a step of that float32 run is
    three roundings from eta*y*x, not two, and was flagged; a rate off by more is caught."""
    X, y, ws = separable(50, 4, 0.002, seed=73, unit=False)
    eta = 0.8064347758301839
    assert float(np.float32(eta)) != eta
    order = np.tile(np.arange(50), 6)
    W = float32_trace(X, y, order, eta)
    rep = audit(X, y, order, W, w_star=ws, lemmas=lemmas, float32=True, eta=eta)
    assert rep.violations == [] and rep.updates > 10 and rep.checks > 0
    W = float32_trace(X, y, order, eta * (1 + 2.0 ** -16))
    rep = audit(X, y, order, W, w_star=ws, lemmas=lemmas, float32=True, eta=eta)
    assert rep.rule_violations > 0 and "not eta*y*x" in rep.violations[0]["message"]


def test_a_correct_torch_float32_perceptron_is_never_flagged(lemmas):
    pytest.importorskip("torch")
    for seed in range(20):
        X, y, ws = separable(30, 5, 0.01, seed=seed, unit=False)
        order = np.tile(np.arange(30), 4)
        eta = float(np.random.default_rng(seed).uniform(0.01, 3.0))
        W = float32_trace(X, y, order, eta, backend="torch")
        rep = audit(X, y, order, W, w_star=ws, lemmas=lemmas, float32=True, eta=eta)
        assert rep.violations == [], (seed, rep.violations[:3])


def test_a_learning_rate_float32_cannot_hold_is_bad_input():
    X, y, ws = separable(10, 3, 0.1, seed=1)
    W = np.zeros((10, 3))
    with pytest.raises(InvalidArgument, match="eta=1e-50 is not a positive finite float32"):
        audit(X, y, np.arange(10), W, w_star=ws, lemmas=[], float32=True, eta=1e-50)
    with pytest.raises(InvalidArgument, match=r"X\[0, 0\]=-?1e\+39 is not a finite float32"):
        audit(X * 1e39 / np.abs(X[0, 0]), y, np.arange(10), W, lemmas=[], float32=True)


def test_float32_exact_ties_are_decided_in_float32():
    """Integer data in float32: the prediction is exact (rounding bound 0), a skipped tie is a
    violation; the exactness test needs the entries to be float32 numbers."""
    from novikoff.runtime._audit import _F32, _exact_rows
    assert _exact_rows(np.array([[3.0, -2.0]]), np.array([[1.0, 5.0]]), _F32)[0]
    assert not _exact_rows(np.array([[2.0 ** 24, 1.0]]), np.array([[1.0, 1.0]]), _F32)[0]
    assert _exact_rows(np.array([[2.0 ** 23, 1.0]]), np.array([[1.0, 1.0]]), _F32)[0]
    assert not _exact_rows(np.array([[1.0 + 2.0 ** -30]]), np.array([[1.0]]), _F32)[0]
    X, y, ws = tie_data()
    order = np.arange(4)
    strict0 = textbook_trace(X, y, order,
                             fire=lambda w, x, yi: not w.any() or yi * (w @ x) < 0)
    rep = audit(X, y, order, strict0.astype(np.float32), w_star=ws, lemmas=[], float32=True)
    assert rep.rule_violations == 1 and rep.undetermined == 0
    assert "exact" in rep.violations[0]["message"]


def test_an_aliased_weight_buffer_is_summarised(lemmas):
    """The implementation appends the same array at every visit: every row is the final w."""
    X, y, ws = separable(80, 4, 0.1, seed=5, unit=False)
    order = np.tile(np.arange(80), 3)
    w = np.zeros(4)
    rows = []
    for i in order:
        if y[i] * (w @ X[i]) <= 0:
            w += y[i] * X[i]  # in place
        rows.append(w)  # not a copy
    W = np.array(rows)
    rep = audit(X, y, order, W, w_star=ws, lemmas=lemmas)
    assert not rep.ok
    (p,) = rep.patterns
    assert p["pattern"] == "aliased_buffer"
    assert "every row of w is the same vector" in p["message"] and "copy" in p["message"]


def numpy_gamma_data():
    """A seed where numpy's min(y * (X @ w*)) exceeds the exact margin."""
    from fractions import Fraction

    from novikoff.runtime._bounds import exact_dot
    for seed in range(200):
        X, y, ws = separable(60, 5, 0.1, seed=seed, unit=False)
        g = float(np.min(y * (X @ ws)))
        exact = min(int(y[i]) * exact_dot(X[i], ws) for i in range(len(y)))
        if Fraction(g) > exact:
            return X, y, ws, g, exact
    pytest.skip("no seed with a rounded-up numpy margin")


def test_a_numpy_gamma_slightly_above_the_exact_margin_is_accepted_with_a_note(lemmas,
                                                                                tmp_path,
                                                                                capsys):
    from fractions import Fraction
    X, y, ws, g, exact = numpy_gamma_data()
    order = np.tile(np.arange(X.shape[0]), 2)
    W = textbook_trace(X, y, order)
    rep = audit(X, y, order, W, w_star=ws, gamma=g, lemmas=lemmas)
    assert rep.ok and rep.checks > 0
    (note,) = rep.notes
    assert f"gamma={g!r} exceeds the exact margin" in note and "accepted" in note
    # the lemmas use the exact margin (the float at or just below it), not the given gamma
    assert Fraction(rep.gamma) <= exact < Fraction(g) and rep.gamma < g
    assert rep.gamma == audit(X, y, order, W, w_star=ws, lemmas=lemmas).gamma
    # a gamma above the margin by more than rounding is still refused
    with pytest.raises(InvalidArgument, match="smaller margin than gamma"):
        audit(X, y, order, W, w_star=ws, gamma=g * (1 + 1e-9), lemmas=lemmas)
    np.savez(tmp_path / "d.npz", X=X, y=y)
    np.save(tmp_path / "ws.npy", ws)
    np.savez(tmp_path / "t.npz", order=order, w=W)
    code, out, _ = cli(["audit", "--data", str(tmp_path / "d.npz"), "--w-star",
                     str(tmp_path / "ws.npy"), "--trace", str(tmp_path / "t.npz"),
                     "--gamma", repr(g)], capsys)
    assert code == 0 and "note       gamma=" in out


def test_each_lemma_is_reported_once(lemmas):
    """norm_growth is proved in novikoff.proof and hinge_loss.proof: one finding, both files."""
    X, y, ws = separable(80, 4, 0.1, seed=5)
    order = np.tile(np.arange(80), 3)
    W = textbook_trace(X, y, order, step=lambda w, x, yi: w + 2 * yi * x)
    rep = audit(X, y, order, W, w_star=ws, lemmas=lemmas)
    found = [v for v in rep.violations if v["kind"] == "lemma"]
    names = [v["lemma"] for v in found]
    assert len(names) == len(set(names)) == rep.lemma_violations
    (ng,) = [v for v in found if v["lemma"] == "norm_growth"]
    files = sorted(s.split("/")[-1].split(":")[0] for s in ng["sources"])
    assert files == ["hinge_loss.proof", "novikoff.proof"]
    assert "also violated as proved in" in ng["message"]
    assert rep.patterns and rep.patterns[0]["pattern"] == "learning_rate"
    assert "a learning rate of 2.0?" in rep.patterns[0]["message"]


@pytest.mark.parametrize("variant, extra", [("classic", {}), ("voted", {}),
                                            ("averaged", {"average": "w"})])
def test_a_bad_weight_array_is_named_with_its_trace_file(tmp_path, capsys, variant, extra):
    X, y = separable(12, 3, 0.1, seed=4)[:2]
    np.savez(tmp_path / "D.npz", X=X, y=y)
    order = np.arange(12)
    W = np.zeros((12, 3))
    W[5, 1] = np.nan
    arrays = {"order": order, "w": W}
    arrays.update({k: W for k in extra})
    np.savez(tmp_path / "T.npz", **arrays)
    code, _, err = cli(["audit", "--variant", variant, "--data", str(tmp_path / "D.npz"),
                        "--trace", str(tmp_path / "T.npz")], capsys)
    assert code == 2 and "T.npz" in err and "w[5, 1]=nan is not finite" in err, err


# ------------------------------------------------------------------ the likely bug, named

def _buggy_trace(X, y, order, *, step=None, fire=None, start=None, log_before=False):
    """A classic perceptron with one piece swapped: step(w, X, i, prev, k, t) the update at
    visit t (example i, previous visit's example prev, k updates before)."""
    w = np.zeros(X.shape[1]) if start is None else np.array(start, dtype=float)
    W, k, prev = [], 0, 0
    for t, i in enumerate(order):
        before = w.copy()
        if (fire or (lambda w_, x, yi: yi * (w_ @ x) <= 0))(w, X[i], y[i]):
            w = step(w, X, i, prev, k, t) if step else w + y[i] * X[i]
            k += 1
        prev = i
        W.append(before if log_before else w.copy())
    return np.array(W)


_BUGS = {
    "wrong_sign": (dict(step=lambda w, X, i, p, k, t: w - _Y[i] * X[i]), "sign is flipped"),
    "previous_example": (dict(step=lambda w, X, i, p, k, t: w + _Y[i] * X[p]),
                         "the previous visit's example"),
    "previous_label": (dict(step=lambda w, X, i, p, k, t: w + _Y[p] * X[i]),
                       "the previous visit's label"),
    "logged_before_update": (dict(log_before=True), "logged before the update"),
    "step_schedule": (dict(step=lambda w, X, i, p, k, t: w + _Y[i] * X[i] / (1 + k)),
                      "eta/(1+k) with eta = 1"),
    "never_updates": (dict(fire=lambda w, x, yi: False), "a strict test y<w,x> < 0"),
    "start_never_updates": (dict(start=[0.3, -0.2, 0.1, 0.5], fire=lambda w, x, yi: False),
                            "never updates"),
}
_X, _Y, _WS = separable(60, 4, 0.1, seed=3, unit=False)


@pytest.mark.parametrize("bug", sorted(_BUGS))
def test_the_likely_bug_is_named(lemmas, bug):
    kwargs, said = _BUGS[bug]
    order = np.tile(np.arange(60), 3)
    rep = audit(_X, _Y, order, _buggy_trace(_X, _Y, order, **kwargs), w_star=_WS,
                lemmas=lemmas)
    assert not rep.ok
    (p,) = rep.patterns
    assert p["pattern"] == bug.replace("start_", "") and said in p["message"], p
    # the correct learner: no pattern, no finding
    assert audit(_X, _Y, order, _buggy_trace(_X, _Y, order), w_star=_WS, lemmas=lemmas).ok


def test_an_unchanged_bias_column_is_named(lemmas):
    X, y = _X, _Y
    Xb = np.hstack([X, np.ones((60, 1))])
    order = np.tile(np.arange(60), 3)
    W = _buggy_trace(Xb, y, order,
                     step=lambda w, X_, i, p, k, t: w + y[i] * np.append(X_[i, :-1], 0.0))
    rep = audit(X, y, order, W, bias=True, lemmas=lemmas)
    (p,) = rep.patterns
    assert p["pattern"] == "bias_unchanged" and "does not update its intercept" in p["message"]


def test_an_aliased_buffer_is_told_from_a_start_that_never_updates(lemmas):
    order = np.tile(np.arange(60), 3)
    W = _buggy_trace(_X, _Y, order)
    aliased = np.broadcast_to(W[-1], W.shape)
    (p,) = audit(_X, _Y, order, aliased, w_star=_WS, lemmas=lemmas).patterns
    assert p["pattern"] == "aliased_buffer" and "w.copy()" in p["message"]
    (p,) = audit(_X, _Y, order, np.broadcast_to(W[-1] / 3, W.shape), w_star=_WS,
                 lemmas=lemmas).patterns
    assert p["pattern"] == "never_updates" and "copy" not in p["message"]


def test_one_inequality_under_several_names_is_one_finding(lemmas):
    order = np.tile(np.arange(60), 3)
    W = _buggy_trace(_X, _Y, order, step=lambda w, X, i, p, k, t: w - _Y[i] * X[i])
    rep = audit(_X, _Y, order, W, w_star=_WS, lemmas=lemmas)
    found = [v for v in rep.violations if v["kind"] == "lemma"]
    assert rep.lemma_violations == len(found) <= 3
    progress = next(v for v in found if v["lemma"] == "progress")
    assert "kernel_progress" in progress["also"] and "reported once" in progress["message"]
    points = [(v["visit"], v["k"], v["message"].split(": lhs")[1]) for v in found]
    assert len(set(points)) == len(points)  # no fact twice


def test_a_wrong_step_names_the_coordinate_over_its_tolerance(lemmas):
    """Coordinate 0 is off by more than coordinate 1 but within its own tolerance (its value
    is large); coordinate 1 (a small value) is the one the rule breaks."""
    X = np.array([[1e6, 1e-3], [-1e6, 2e-3]])
    y = np.array([1.0, -1.0])
    W = np.array([[np.nextafter(1e6, 2e6), 1e-3 + 1e-12]])
    assert W[0, 0] - 1e6 > W[0, 1] - 1e-3  # the larger deviation is coordinate 0's
    rep = audit(X, y, np.array([0]), W, w_star=np.array([1.0, 0.0]), lemmas=[])
    msg = rep.violations[0]["message"]
    assert "coordinate 1:" in msg and "where rounding allows" in msg, msg
