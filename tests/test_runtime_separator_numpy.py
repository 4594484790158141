"""The separator's numpy path from d = _CD_FROM (no numba, or NOVIKOFF_NO_NUMBA=1).

Without numba the working sets are solved by accelerated projected gradient (_pg_descend) in
place of numba's coordinate descent, in the same rounds, with the same promise: a direction
whose margin is within info["gap"] (1 %) of the maximum, between bounds that bracket it.  These
tests check that it is the path taken, that it keeps that promise against the exact solve and
known maxima, that the descent itself reaches a working set's optimum, and that data it cannot
settle (tiny margins, non-separable data) goes to the exact solve.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from novikoff.errors import InvalidArgument
from novikoff.runtime import _jit, _separator, max_margin_separator
from novikoff.runtime._bounds import certify_margin, data_stats
from test_runtime_separator import known_maximum, margin, planted, slsqp_reference


@pytest.fixture
def numpy_only(monkeypatch):
    monkeypatch.setattr(_jit, "AVAILABLE", False)


@contextlib.contextmanager
def numba_off():
    """numba as if absent, inside the block (a Hypothesis test cannot take a fixture per
    example; a test that compares both paths switches in the middle)."""
    _jit.AVAILABLE, old = False, _jit.AVAILABLE
    try:
        yield
    finally:
        _jit.AVAILABLE = old


def exact_maximum(X, y) -> float:
    """The maximum margin to 1e-9: the exact solve (NNLS on working sets, polished)."""
    return _separator._level_exact(X, y, lambda fraction=None: None,
                                   np.random.default_rng(0))[1]["upper"]


def test_the_numpy_path_is_taken_under_no_numba():
    code = textwrap.dedent("""
        import numpy as np
        from novikoff.runtime import _jit, _separator
        assert not _jit.AVAILABLE
        assert _separator._sweeper()[0] is _separator._pg_descend
        rng = np.random.default_rng(0)
        d = _separator._CD_FROM + 2
        w = rng.standard_normal(d)
        X = rng.standard_normal((400, d))
        m = X @ w
        X, y = X[np.abs(m) > 0.5], np.sign(m[np.abs(m) > 0.5])
        info = _separator._solve(X, y)[1]
        print(info["sweeps"] > 0, info["gap"], info["lower"] >= 0.99 * info["upper"])
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=dict(os.environ, NOVIKOFF_NO_NUMBA="1"), check=True)
    assert done.stdout.split() == ["True", "0.01", "True"]


@pytest.mark.usefixtures("numpy_only")
@pytest.mark.parametrize("n, d, seed", [(1500, 130, 11), (1000, 300, 22)])
def test_numpy_path_keeps_the_promise_against_the_exact_maximum(n, d, seed):
    X, y, w_gen = planted(n, d, 0.02, seed)
    w, info = _separator._solve(X, y)
    assert "sweeps" in info and info["gap"] == _separator._CD_GAP
    assert info["lower"] == pytest.approx(margin(X, y, w), rel=1e-9)
    assert info["lower"] >= (1 - info["gap"]) * info["upper"]
    best = exact_maximum(X, y)
    # the bounds bracket the maximum (to rounding), so the promise holds against it
    assert info["lower"] <= best * (1 + 1e-9) and best <= info["upper"] * (1 + 1e-9)
    assert margin(X, y, w) >= (1 - info["gap"]) * best
    assert margin(X, y, w_gen) <= info["upper"] * (1 + 1e-9)
    assert margin(X, y, slsqp_reference(X, y)) <= info["upper"] * (1 + 1e-9)
    assert certify_margin(X, y, w, data_stats(X, y, w)) > 0


@pytest.mark.usefixtures("numpy_only")
@pytest.mark.parametrize("delta", [1e-2, 1e-6])
def test_numpy_path_bounds_bracket_a_known_maximum(delta):
    # y*x = (delta, u) and (delta, -u): the maximum margin is delta (rows of norm ~1); 1e-6 is
    # small against ||x|| ~ 1 but above _CD_TINY: the descent settles it (in float64 rows, R /
    # upper being above _CD_SINGLE)
    X, y = known_maximum(delta)
    w, info = _separator._solve(X, y)
    assert "sweeps" in info
    assert info["lower"] <= delta * (1 + 1e-9) <= info["upper"] * (1 + 2e-9)
    assert margin(X, y, w) >= (1 - info["gap"]) * delta
    assert certify_margin(X, y, w, data_stats(X, y, w)) > 0


def test_the_descent_stops_when_the_working_set_is_settled():
    # the descent alone from 0 on a small working set, with steps to spare: it stops once its
    # direction's margin on the working set is within half the gap of the norm of its hull
    # point p = Z^T a / sum(a), and these bracket the maximum, which the exact solve gives
    X, y, _ = planted(60, 20, 0.05, seed=3)
    Z = X * y[:, None]
    a = np.zeros(len(y))
    done = _separator._pg_descend(Z, np.einsum("ij,ij->i", Z, Z), a, np.zeros(20), 5000,
                                  np.random.default_rng(0), lambda: None)
    assert 0 < done < 5000
    p = Z.T @ a / a.sum()
    lower, upper = (Z @ p).min() / np.linalg.norm(p), np.linalg.norm(p)
    assert lower >= (1 - _separator._CD_GAP / 2) * upper
    assert lower <= exact_maximum(X, y) <= upper * (1 + 1e-9)


@pytest.mark.usefixtures("numpy_only")
def test_numpy_path_reports_progress_after_every_step():
    # a step of projected gradient is the unit of work between two reports, as a sweep is for
    # coordinate descent (docs/runtime-bounds.md, "Progress")
    X, y, _ = planted(1500, 130, 0.02, 11)
    reports = []
    info = _separator._solve(X, y, progress=lambda phase, fraction: reports.append(fraction))[1]
    assert info["sweeps"] > 0 and len(reports) >= info["sweeps"]
    assert reports[-1] == 1.0


@pytest.mark.usefixtures("numpy_only")
def test_numpy_path_refuses_non_separable_data_as_the_exact_solve_does(monkeypatch):
    rng = np.random.default_rng(13)
    X = rng.standard_normal((600, 130))
    y = rng.choice([-1.0, 1.0], 600)
    with pytest.raises(InvalidArgument, match=r"not linearly separable.*examples \d") as fast:
        max_margin_separator(X, y)
    monkeypatch.setattr(_separator, "_CD_FROM", 10 ** 9)  # the exact solve only
    with pytest.raises(InvalidArgument) as ref:
        max_margin_separator(X, y)
    assert str(fast.value).split(" (")[0] == str(ref.value).split(" (")[0]
    assert "non-separable mode" in str(fast.value)


@pytest.mark.usefixtures("numpy_only")
def test_numpy_path_hands_tiny_margins_to_the_exact_solve(monkeypatch):
    # delta = 1e-8: the descent's upper bound falls below _CD_TINY, and the exact solve (NNLS,
    # polished in extended precision) decides, as it does when it is the only solve
    delta = 1e-8
    X, y = known_maximum(delta)
    descents = []
    real = _separator._pg_descend
    monkeypatch.setattr(_separator, "_pg_descend", lambda *a: descents.append(1) or real(*a))
    w, info = _separator._solve(X, y)
    assert descents and info["gap"] == _separator._TOL and "sweeps" not in info
    assert certify_margin(X, y, w, data_stats(X, y, w)) > 0
    assert info["upper"] >= delta * (1 - 1e-9)
    monkeypatch.setattr(_separator, "_CD_FROM", 10 ** 9)  # the exact solve only
    w_ref = _separator._solve(X, y)[0]
    assert margin(X, y, w) >= margin(X, y, w_ref) * (1 - 1e-9)


@pytest.mark.skipif(not _jit.AVAILABLE, reason="compares with numba's coordinate descent")
def test_numpy_and_numba_paths_keep_the_same_promise():
    X, y, _ = planted(1500, 130, 0.02, 31)
    w_cd, cd = _separator._solve(X, y)
    with numba_off():
        w_pg, pg = _separator._solve(X, y)
    assert "sweeps" in cd and "sweeps" in pg and cd["gap"] == pg["gap"] == _separator._CD_GAP
    best = exact_maximum(X, y)
    for w in (w_cd, w_pg):
        assert margin(X, y, w) >= (1 - _separator._CD_GAP) * best


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 10 ** 6), n=st.integers(1, 300), extra=st.integers(0, 12),
       gamma=st.sampled_from([1e-3, 1e-2, 0.2]))
def test_numpy_path_keeps_the_promise_on_planted_data(seed, n, extra, gamma):
    X, y, w_gen = planted(n, _separator._CD_FROM + extra, gamma, seed)
    with numba_off():
        w, info = _separator._solve(X, y)
    assert info["lower"] >= (1 - info["gap"]) * info["upper"]
    assert margin(X, y, w_gen) <= info["upper"] * (1 + 1e-9)
    assert margin(X, y, w) >= (1 - info["gap"]) * exact_maximum(X, y) * (1 - 1e-9)
    assert certify_margin(X, y, w, data_stats(X, y, w)) > 0
