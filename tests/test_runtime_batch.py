"""The batch perceptron, monitored (runtime/_batch_run.py): proofs/batch.proof's batch_run lemmas
checked at every step, no false alarm, bugs caught."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from novikoff.errors import InvalidArgument
from novikoff.runtime import run
from novikoff.runtime._batch_run import run_batch
from novikoff.runtime._io import load_dataset

from helpers import run_cli  # noqa: E402  (tests/ is on sys.path)

BATCH_LEMMAS = {"batch_run_progress", "batch_run_norm_growth", "batch_steps_at_most_total",
                "batch_squares_at_most_n_times", "batch_run_corrections", "batch_step_bound"}


def plain_batch(X, y, eta, max_steps=10_000):
    """The textbook batch perceptron in plain numpy: the steps and the corrections per step."""
    w = np.zeros(X.shape[1])
    counts = []
    while len(counts) < max_steps:
        mis = y * (X @ w) <= 0
        if not mis.any():
            break
        u = y[mis] @ X[mis]
        w = w + eta * u
        counts.append(int(mis.sum()))
    return len(counts), counts, w


def planted(n=300, d=6, seed=0):
    rng = np.random.default_rng(seed)
    w = rng.normal(size=d)
    X = rng.normal(size=(n, d))
    m = X @ w / np.linalg.norm(w)
    keep = np.abs(m) > 0.05
    X = X[keep]
    y = np.where(X @ w > 0, 1.0, -1.0)
    return X, y


DATA = {"iris": lambda: load_dataset("iris")[:2], "planted": planted}


@pytest.mark.parametrize("eta", [1.0, 0.5])
@pytest.mark.parametrize("data", sorted(DATA))
def test_batch_lemmas_hold_and_the_run_is_the_textbook_one(data, eta):
    X, y = DATA[data]()
    res = run(X, y, variant="batch", eta=eta)
    mon = {m["lemma"]: m for m in res.monitor["monitored"]}
    assert BATCH_LEMMAS <= set(mon)
    for name in BATCH_LEMMAS:
        assert mon[name]["applies"], mon[name]
        assert mon[name]["checks"] > 0
        assert mon[name]["violations"] == 0
    assert res.checks > 0 and not res.monitor["violations"]
    assert res.variant == "batch" and res.converged
    steps, counts, w = plain_batch(X, y, eta)
    assert res.mistakes == steps
    assert res.updates.tolist() == counts
    assert res.monitor["corrections"] == sum(counts)
    np.testing.assert_array_equal(res.w, w)
    assert "batch_step_bound" in res.bounds and "batch_steps_at_most_total" not in res.bounds
    n = X.shape[0]
    R2w2 = res.R ** 2 * float(res.w_star @ res.w_star) / res.gamma ** 2
    assert res.bound == pytest.approx(n * R2w2, rel=1e-9)
    assert res.mistakes <= res.bound


def test_the_online_lemmas_are_not_monitored_on_batch_steps_and_vice_versa():
    X, y = load_dataset("iris")[:2]
    res = run(X, y, variant="batch")
    reasons = {m["lemma"]: m["reason"] for m in res.monitor["not_monitorable"]}
    assert "a batch step has no single example" in reasons["mistake_bound"]
    classic = run(X, y)
    reasons = {m["lemma"]: m["reason"] for m in classic.monitor["not_monitorable"]}
    assert "batch" in reasons["batch_step_bound"]
    assert not BATCH_LEMMAS & {m["lemma"] for m in classic.monitor["monitored"]}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(2, 12), st.integers(1, 4), st.integers(0, 10_000),
       st.sampled_from([1.0, 0.5, 0.1, 3.0]), st.sampled_from([1e-6, 1.0, 1e5]))
def test_no_false_violation_on_small_separable_data(n, d, seed, eta, scale):
    rng = np.random.default_rng(seed)
    w = rng.normal(size=d)
    X = rng.integers(-4, 5, size=(n, d)).astype(float) * scale
    X[~X.any(axis=1), 0] = scale
    y = np.where(X @ w > 0, 1.0, -1.0)
    ok = (X @ w) != 0
    if not ok.any():
        return
    X, y = X[ok], y[ok]
    try:
        res = run_batch(X, y, eta=eta, max_epochs=200)
    except InvalidArgument:  # duplicate rows with opposite labels etc.: not separable
        return
    assert not res.monitor["violations"]
    steps, counts, _ = plain_batch(X, y, eta, max_steps=200)
    assert res.updates.tolist() == counts
    if res.converged:
        assert res.mistakes <= res.bound


def test_ties_are_decided_as_the_float_run_and_never_reported():
    # integer data with exact zero predictions at several steps
    X = np.array([[1.0, 1.0], [1.0, -1.0], [2.0, 0.0], [0.0, 1.0]])
    y = np.array([1.0, 1.0, 1.0, 1.0])
    res = run_batch(X, y, on_violation="collect")
    assert not res.monitor["violations"] and res.converged


@pytest.mark.parametrize("kwargs, match", [
    ({"exact": True}, "exact"), ({"w0": np.ones(4)}, "w0"), ({"order": [0, 1]}, "order"),
    ({"cyclic": False}, "cyclic"), ({"separable": False}, "separable"),
    ({"all_examples": True}, "all_examples"), ({"eta": 0.0}, "eta"), ({"eta": np.nan}, "eta"),
    ({"max_epochs": 0}, "max_epochs"), ({"w_star": np.ones(3)}, "w_star"),
])
def test_bad_arguments(kwargs, match):
    X, y = load_dataset("iris")[:2]
    with pytest.raises(InvalidArgument, match=match):
        run(X, y, variant="batch", **kwargs)


def _cli(*args):
    return run_cli("run", *args)  # in this process: the command line's code, no start-up


def test_cli_runs_the_batch_perceptron():
    out = _cli("iris", "--variant", "batch", "--eta", "0.5")
    assert out.returncode == 0, out.stderr
    assert "batch_step_bound" in out.stdout and "no violation" in out.stdout
    assert "steps      7" in out.stdout


@pytest.mark.e2e
def test_cli_runs_the_batch_perceptron_in_a_fresh_process():
    out = subprocess.run([sys.executable, "-m", "novikoff", "run", "iris", "--variant", "batch",
                          "--eta", "0.5"], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    assert "steps      7" in out.stdout and "no violation" in out.stdout


@pytest.mark.parametrize("flag", [["--exact"], ["--save", "r.npz"], ["--plot", "p.png"],
                                  ["--online"], ["--order", "random"]])
def test_cli_refuses_what_does_not_apply(flag, tmp_path):
    out = _cli("iris", "--variant", "batch", *flag)
    assert out.returncode == 2
    assert out.stderr.count("\n") == 1 and "batch perceptron" in out.stderr


def test_the_exact_inner_product_of_a_tie_is_exact():
    from fractions import Fraction

    from novikoff.runtime._batch_run import _Exact
    rng = np.random.default_rng(1)
    X = rng.normal(size=(5, 3)) * np.array([1e-8, 1.0, 1e6])
    y = np.array([1.0, -1.0, 1.0, 1.0, -1.0])
    alpha, Y = np.array([2.0, 0.0, 1.0, 0.0, 3.0]), [1, 3]
    rows = [[Fraction(v) for v in r] for r in X]
    A = [sum(int(alpha[i] * y[i]) * rows[i][j] for i in range(5)) for j in range(3)]
    B = [sum(int(y[t]) * rows[t][j] for t in Y) for j in range(3)]
    assert _Exact(X, y, 0.5).inner(alpha, Y) == Fraction(1, 2) * sum(a * b for a, b in zip(A, B))
