"""`novikoff audit --variant batch`: batch perceptron traces judged by the rule and batch_run."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from novikoff.errors import InvalidArgument
from novikoff.runtime import audit_batch, audit_batch_files, batch_trace
from novikoff.runtime._batch_run import run_batch

from test_runtime_engine import separable  # noqa: E402  (tests/ is on sys.path)
from helpers import cli  # noqa: E402  (tests/ is on sys.path)

BATCH_LEMMAS = {"batch_run_progress", "batch_run_norm_growth", "batch_steps_at_most_total",
                "batch_squares_at_most_n_times", "batch_run_corrections", "batch_step_bound"}



def plain_batch(X, y, *, eta=1.0, max_steps=500, step=None, mistakes=None):
    """An independent batch perceptron: python loops, the sum taken example by example (another
    summation order than numpy's matrix product).  step(w, u, state) and mistakes(s) swap in a
    bug.  Returns (W (K, d), converged)."""
    n, d = X.shape
    w = np.zeros(d)
    rows, state = [], {"acc": np.zeros(d), "n": n}
    while len(rows) < max_steps:
        s = np.array([y[i] * sum(w[j] * X[i, j] for j in range(d)) for i in range(n)])
        mis = mistakes(s) if mistakes else s <= 0
        if not mis.any():
            return np.array(rows).reshape(len(rows), d), True
        u = np.zeros(d)
        for i in np.flatnonzero(mis):
            u = u + y[i] * X[i]
        state["m"] = int(mis.sum())
        w = step(w, u, eta, state) if step else w + eta * u
        rows.append(w.copy())
    return np.array(rows), False


def twice(w, u, eta, state):
    return w + eta * u + eta * u


def accumulate(w, u, eta, state):
    state["acc"] = state["acc"] + u
    return w + eta * state["acc"]


def mean_twice(w, u, eta, state):
    return w + eta * u / state["n"] / state["m"]


@pytest.fixture(scope="module")
def data():
    # shifted off the origin, so that the first step's sum is a poor separator: 11 steps
    X, y, ws = separable(60, 4, 0.05, seed=2, unit=False)
    X = X + 3 * np.array([1.0, 0.5, 0.0, 0.0])
    assert (y * (X @ ws) > 0).all()
    return X, y, ws


def batch_status(rep):
    return {m["lemma"]: m for m in rep.monitor["monitored"] if m["lemma"] in BATCH_LEMMAS}


# ----------------------------------------------------------------------------- clean traces

@pytest.mark.parametrize("eta", [1.0, 0.37])
def test_a_trace_of_the_engine_passes(data, lemmas, eta):
    X, y, ws = data
    res = run_batch(X, y, eta=eta, w_star=ws, lemmas=lemmas, keep_trace=True)
    tr = batch_trace(res)
    assert tr["w"].shape == (res.mistakes, X.shape[1]) and bool(tr["converged"])
    rep = audit_batch(X, y, tr["w"], eta=eta, w_star=ws, converged=True, lemmas=lemmas)
    assert rep.ok and rep.violations == [] and rep.undetermined == 0
    assert rep.visits == res.mistakes and rep.rule["corrections"] == res.monitor["corrections"]
    applied = batch_status(rep)
    assert set(applied) == BATCH_LEMMAS and all(m["applies"] and m["checks"]
                                                for m in applied.values())
    assert rep.checks > 0


def test_a_trace_of_an_independent_implementation_passes(data, lemmas):
    X, y, ws = data
    W, converged = plain_batch(X, y, eta=0.5)
    assert converged and len(W) > 2
    rep = audit_batch(X, y, W, eta=0.5, w_star=ws, converged=True, lemmas=lemmas)
    assert rep.ok, rep.violations
    engine = run_batch(X, y, eta=0.5, w_star=ws, lemmas=lemmas, keep_trace=True).steps
    assert engine.shape == W.shape and np.allclose(engine, W, rtol=1e-12, atol=1e-12)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(2, 30), d=st.integers(2, 6),
       eta=st.sampled_from([1.0, 0.1, 3.0]))
def test_no_false_violation_on_random_float_data(lemmas, seed, n, d, eta):
    X, y, ws = separable(n, d, 0.02, seed=seed, unit=False)
    # shifted orthogonally to w_star (the margins stay): many steps, non-dyadic weights
    v = np.random.default_rng(seed).standard_normal(d)
    X = X + 3 * (v - (v @ ws) * ws)
    W, converged = plain_batch(X, y, eta=eta, max_steps=60)
    rep = audit_batch(X, y, W, eta=eta, w_star=ws, converged=converged, lemmas=lemmas)
    assert rep.ok, rep.violations[:2]


def test_an_unfinished_trace_is_not_asked_to_converge(data, lemmas):
    X, y, ws = data
    W, _ = plain_batch(X, y)
    rep = audit_batch(X, y, W[:2], w_star=ws, lemmas=lemmas)
    assert rep.ok and rep.visits == 2


# ----------------------------------------------------------------------------- rule findings

@pytest.mark.parametrize("bug, hint", [
    (twice, "twice the step"),
    (accumulate, "not reset between steps"),
    (mean_twice, "averaged twice"),
])
def test_a_wrong_step_is_a_rule_finding_with_what_it_is(data, lemmas, bug, hint):
    X, y, ws = data
    W, converged = plain_batch(X, y, step=bug, max_steps=40)
    rep = audit_batch(X, y, W, w_star=ws, converged=converged, lemmas=lemmas)
    assert not rep.ok and rep.rule_violations >= 1
    rules = [v for v in rep.violations if v["kind"] == "rule"]
    assert any(hint in v["message"] for v in rules), rules[0]["message"]
    assert rules[0]["message"].startswith(f"step {rules[0]['k']}: ")


def test_a_strict_mistake_test_stops_at_once_and_is_caught(data, lemmas):
    X, y, ws = data
    W, converged = plain_batch(X, y, mistakes=lambda s: s < 0)
    assert converged and W.shape == (0, X.shape[1])  # from w = 0 every example is a tie
    rep = audit_batch(X, y, W, w_star=ws, converged=True, lemmas=lemmas)
    assert rep.rule_violations == 1
    assert "stops as converged, but w[0] misclassifies 60 example(s)" in \
        rep.violations[0]["message"]
    # without the claim that it converged, an empty trace says nothing wrong
    assert audit_batch(X, y, W, w_star=ws, lemmas=lemmas).ok


def test_a_step_after_convergence_is_a_rule_finding(data, lemmas):
    X, y, ws = data
    W, _ = plain_batch(X, y)
    extra = np.vstack([W, W[-1:]])
    rep = audit_batch(X, y, extra, w_star=ws, lemmas=lemmas)
    assert rep.rule_violations == 1
    v = rep.violations[0]
    assert v["k"] == len(W) and "the batch perceptron stops here" in v["message"]
    assert "(w does not change)" in v["message"]


def test_the_first_mistake_only_is_a_rule_finding(data, lemmas):
    X, y, ws = data
    W, _ = plain_batch(X, y)
    wrong = W.copy()
    wrong[0] = y[0] * X[0]  # one example's step instead of the batch sum
    rep = audit_batch(X, y, wrong[:1], w_star=ws, lemmas=lemmas)
    assert rep.rule_violations == 1 and "coordinate" in rep.violations[0]["message"]


def test_max_rule_counts_but_does_not_show(data, lemmas):
    X, y, ws = data
    W, converged = plain_batch(X, y, step=twice, max_steps=40)
    rep = audit_batch(X, y, W, w_star=ws, lemmas=lemmas, max_rule=1)
    assert rep.rule_violations > 1
    assert sum(v["kind"] == "rule" for v in rep.violations) == 1


# ----------------------------------------------------------------------------- lemma findings

def test_a_step_added_twice_breaks_norm_growth(lemmas):
    # two nearly aligned examples: ||2u||^2 = 4*||x0 + x1||^2 > R^2*m^2 = 4
    X, y = np.array([[1.0, 0.0], [0.75, 0.25]]), np.array([1.0, 1.0])
    W, converged = plain_batch(X, y, step=twice, max_steps=40)
    rep = audit_batch(X, y, W, converged=converged, lemmas=lemmas)
    found = {v["lemma"] for v in rep.violations if v["kind"] == "lemma"}
    assert "batch_run_norm_growth" in found
    v = next(v for v in rep.violations if v["lemma"] == "batch_run_norm_growth")
    assert v["visit"] == v["k"] and "||w[k]||^2 <= eta^2*R^2*Q[k]" in v["message"]


def test_a_step_divided_by_n_and_m_breaks_progress(data, lemmas):
    X, y, ws = data
    W, converged = plain_batch(X, y, step=mean_twice, max_steps=40)
    rep = audit_batch(X, y, W, w_star=ws, converged=converged, lemmas=lemmas)
    assert "batch_run_progress" in {v["lemma"] for v in rep.violations}


# ----------------------------------------------------------------------------- ties

# Example 0 is orthogonal to w[1] = fl(sum(y*x)) = (0.7, 2.1, 0) up to rounding: y<w[1], x0> =
# -2.8e-18 in exact arithmetic (fl(0.7), fl(2.1) and fl(0.3), fl(0.1) are not the decimals),
# within the rounding bound of a float evaluation; the examples are integers otherwise.
TIE_X = np.array([[-0.3, 0.1, 0.0], [0.0, 6.0, -4.0], [-1.0, 4.0, -4.0]])
TIE_Y = np.array([1.0, 1.0, -1.0])
TIE_WS = np.array([0.25, 1.25, 1.25])


def test_a_tie_within_rounding_is_undetermined_not_a_violation(lemmas):
    from novikoff.runtime._bounds import exact_dot
    X, y = TIE_X, TIE_Y
    w1 = y @ X
    assert -1e-17 < exact_dot(w1, X[0]) < 0  # the exact rule counts example 0 at step 1
    counted = audit_batch(X, y, np.array([w1, w1 + X[0] - X[2]]), w_star=TIE_WS, lemmas=lemmas)
    assert counted.ok and counted.undetermined == 0
    # a float implementation may see y<w, x0> > 0 and leave example 0 out: undetermined
    skipped = audit_batch(X, y, np.array([w1, w1 - X[2]]), w_star=TIE_WS, lemmas=lemmas)
    assert skipped.ok and skipped.undetermined == 1 and skipped.rule_violations == 0
    v = skipped.undetermined_visits[0]
    assert v["k"] == 1 and v["example"] == 0 and "y<w,x> = -2.77" in v["message"]
    # leaving out example 2 (y<w, x2> = -7.7) is a violation
    wrong = audit_batch(X, y, np.array([w1, w1 + X[0]]), w_star=TIE_WS, lemmas=lemmas)
    assert wrong.rule_violations == 1


def test_an_exact_tie_is_decided_exactly(lemmas):
    # at w = 0 every y<w, x> is exactly 0: every example is misclassified, step 0 sums them all
    X, y = TIE_X, TIE_Y
    rep = audit_batch(X, y, np.array([y[:2] @ X[:2]]), w_star=TIE_WS, lemmas=lemmas)
    assert rep.rule_violations == 1 and "m = 3" in rep.violations[0]["message"]


# ----------------------------------------------------------------------------- bad input

@pytest.mark.parametrize("w, match", [
    (np.zeros((2, 3)), r"w: shape \(2, 3\) does not match X: expected \(K, 4\)"),
    (np.zeros(4), r"w: shape \(4,\) does not match X"),
    (np.array([[0.0, np.nan, 0, 0]]), r"w\[0, 1\]=nan is not finite"),
    (np.array([["a"] * 4]), r"w: dtype <U1 is not numeric"),
])
def test_bad_traces_are_refused_with_a_clear_message(data, w, match):
    X, y, ws = data
    with pytest.raises(InvalidArgument, match=match):
        audit_batch(X, y, w, w_star=ws)


def test_bad_arguments_are_refused(data):
    X, y, ws = data
    W, _ = plain_batch(X, y)
    with pytest.raises(InvalidArgument, match="eta"):
        audit_batch(X, y, W, eta=-1.0, w_star=ws)
    with pytest.raises(InvalidArgument, match="converged='yes' is not a boolean"):
        audit_batch(X, y, W, w_star=ws, converged="yes")
    with pytest.raises(InvalidArgument, match="w_star does not separate"):
        audit_batch(X, y, W, w_star=-ws)
    with pytest.raises(InvalidArgument, match="keep_trace=True"):
        batch_trace(run_batch(X, y, w_star=ws))


def test_files(tmp_path, data, lemmas):
    X, y, ws = data
    W, converged = plain_batch(X, y)
    np.savez(tmp_path / "d.npz", X=X, y=y)
    np.savez(tmp_path / "t.npz", w=W, converged=converged)
    np.save(tmp_path / "ws.npy", ws)
    rep = audit_batch_files(tmp_path / "d.npz", tmp_path / "t.npz", w_star=tmp_path / "ws.npy",
                            lemmas=lemmas)
    assert rep.ok and rep.rule["converged"]


# ----------------------------------------------------------------------------- CLI



def test_cli(tmp_path, capsys, data):
    X, y, ws = data
    np.savez(tmp_path / "d.npz", X=X, y=y)
    np.save(tmp_path / "ws.npy", ws)
    res = run_batch(X, y, w_star=ws, keep_trace=True)
    np.savez(tmp_path / "ok.npz", **batch_trace(res))
    W, converged = plain_batch(X, y, step=twice, max_steps=40)
    np.savez(tmp_path / "bug.npz", w=W, converged=converged)
    np.savez(tmp_path / "nan.npz", w=np.full((1, 4), np.nan))
    np.savez(tmp_path / "flag.npz", w=W, converged=np.array([1, 0]))
    base = ["audit", "--variant", "batch", "--data", str(tmp_path / "d.npz"),
            "--w-star", str(tmp_path / "ws.npy")]
    code, out, err = cli(base + ["--trace", str(tmp_path / "ok.npz")], capsys)
    assert code == 0, err
    assert f"trace      {res.mistakes} batch steps" in out and "(converged)" in out
    assert "0 violation(s) of the update rule" in out and "0 lemma(s) violated" in out
    code, out, _ = cli(base + ["--trace", str(tmp_path / "bug.npz"), "--json"], capsys)
    doc = json.loads(out)
    assert code == 1 and doc["rule_violations"] > 0 and doc["rule"]["variant"] == "batch"
    code, out, err = cli(base + ["--trace", str(tmp_path / "nan.npz")], capsys)
    assert code == 2 and out == "" and "nan.npz" in err and "w[0, 0]=nan is not finite" in err
    assert len(err.strip().splitlines()) == 1
    code, _, err = cli(base + ["--trace", str(tmp_path / "flag.npz")], capsys)
    assert code == 2 and "converged=[1, 0] is not a boolean" in err
    code, _, err = cli(base + ["--trace", str(tmp_path / "ok.npz"), "--w0", "x.npy"], capsys)
    assert code == 2 and "--w0: not available for --variant batch" in err
    code, _, err = cli(base + ["--trace", str(tmp_path / "ok.npz"), "--eta", "0"], capsys)
    assert code == 2 and "eta" in err
