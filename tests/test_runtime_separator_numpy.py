"""The separator's numpy path from d = _CD_FROM (no numba, or NOVIKOFF_NO_NUMBA=1).

Without numba the working sets are solved exactly (SciPy's NNLS) in the lean mode: a working
set's NNLS point is polished only when it does not settle the working set to the gap, and few
non-support examples stay in the working set.  These tests check that it is the path taken,
that it keeps the exact solve's promise (the maximum margin to 1e-9), and that it refuses
non-separable data as the other paths do.
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


def full_exact(monkeypatch):
    """Make _level the exact solve that polishes every working set (the reference)."""
    monkeypatch.setattr(_separator, "_level",
                        lambda X, y, say, rng, ids=None: _separator._level_exact(X, y, say, rng, ids))


def test_the_numpy_path_is_taken_under_no_numba():
    code = textwrap.dedent("""
        import numpy as np
        from novikoff.runtime import _jit
        from novikoff.runtime._separator import _CD_FROM, _solve
        assert not _jit.AVAILABLE
        rng = np.random.default_rng(0)
        w = rng.standard_normal(_CD_FROM + 2)
        X = rng.standard_normal((400, _CD_FROM + 2))
        m = X @ w
        X, y = X[np.abs(m) > 0.5], np.sign(m[np.abs(m) > 0.5])
        info = _solve(X, y)[1]
        print(info["lean"], "sweeps" in info, info["gap"])
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=dict(os.environ, NOVIKOFF_NO_NUMBA="1"), check=True)
    assert done.stdout.split() == ["True", "False", "1e-09"]


@pytest.mark.usefixtures("numpy_only")
@pytest.mark.parametrize("n, d, seed", [(1500, 130, 11), (1000, 300, 22)])
def test_numpy_path_margin_matches_the_fully_polished_exact_solve(monkeypatch, n, d, seed):
    X, y, w_gen = planted(n, d, 0.02, seed)
    w, info = _separator._solve(X, y)
    assert info["lean"] and info["gap"] == 1e-9
    assert info["lower"] == pytest.approx(margin(X, y, w), rel=1e-9)
    assert info["lower"] >= (1 - 1e-9) * info["upper"]
    assert margin(X, y, w_gen) <= info["upper"] * (1 + 1e-9)
    assert margin(X, y, slsqp_reference(X, y)) <= info["upper"] * (1 + 1e-9)
    assert certify_margin(X, y, w, data_stats(X, y, w)) > 0
    full_exact(monkeypatch)
    w_ref, ref = _separator._solve(X, y)
    assert not ref["lean"]
    assert margin(X, y, w) >= margin(X, y, w_ref) * (1 - 1e-9)


@pytest.mark.skipif(not _jit.AVAILABLE, reason="compares with numba's coordinate descent")
def test_numpy_path_margin_is_at_least_numba_paths():
    X, y, _ = planted(1500, 130, 0.02, 31)
    w_cd, info = _separator._solve(X, y)
    assert "sweeps" in info  # numba's coordinate descent (within 1 %)
    with numba_off():
        w_np, lean = _separator._solve(X, y)
    assert lean["lean"]
    assert margin(X, y, w_np) >= margin(X, y, w_cd) * (1 - 1e-9)
    assert margin(X, y, w_cd) >= (1 - info["gap"]) * lean["upper"] * (1 - 1e-9)


@pytest.mark.usefixtures("numpy_only")
def test_numpy_path_refuses_non_separable_data_as_the_exact_solve_does(monkeypatch):
    rng = np.random.default_rng(13)
    X = rng.standard_normal((600, 130))
    y = rng.choice([-1.0, 1.0], 600)
    with pytest.raises(InvalidArgument, match=r"not linearly separable.*examples \d") as lean:
        max_margin_separator(X, y)
    full_exact(monkeypatch)
    with pytest.raises(InvalidArgument) as ref:
        max_margin_separator(X, y)
    assert str(lean.value).split(" (")[0] == str(ref.value).split(" (")[0]
    assert "non-separable mode" in str(lean.value)


@pytest.mark.usefixtures("numpy_only")
@pytest.mark.parametrize("delta", [1e-6, 1e-8])
def test_numpy_path_polishes_tiny_margins_as_the_exact_solve_does(monkeypatch, delta):
    # y*x = (delta, u) and (delta, -u): the maximum margin is delta, tiny against ||x|| ~ 1, so
    # NNLS's hull point is a small difference of O(1) vectors that does not settle the working
    # set: the lean solve polishes, as the exact solve does, and finds the same margin.
    X, y = known_maximum(delta)
    calls = []
    real = _separator._polish
    monkeypatch.setattr(_separator, "_polish", lambda ZA: calls.append(ZA.shape) or real(ZA))
    w, info = _separator._solve(X, y)
    assert calls and not info["lean"]  # the level stopped being lean
    assert certify_margin(X, y, w, data_stats(X, y, w)) > 0
    assert info["upper"] >= delta * (1 - 1e-9)
    full_exact(monkeypatch)
    w_ref, ref = _separator._solve(X, y)
    assert margin(X, y, w) >= margin(X, y, w_ref) * (1 - 1e-9)


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 10 ** 6), n=st.integers(1, 300), extra=st.integers(0, 12),
       gamma=st.sampled_from([1e-3, 1e-2, 0.2]))
def test_numpy_path_keeps_the_exact_promise_on_planted_data(seed, n, extra, gamma):
    X, y, w_gen = planted(n, _separator._CD_FROM + extra, gamma, seed)
    with numba_off():
        w, info = _separator._solve(X, y)
    assert info["lean"]
    assert info["lower"] >= (1 - 1e-9) * info["upper"]
    assert margin(X, y, w_gen) <= info["upper"] * (1 + 1e-9)
    assert certify_margin(X, y, w, data_stats(X, y, w)) > 0
