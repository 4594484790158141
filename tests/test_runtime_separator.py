"""The max-margin separator computed when no w* is given (runtime._separator).

Its result is untrusted (the engine certifies it), so these tests check what the solver promises:
the maximum margin to within 1% of independent references, a direction that does not depend on
the data's scale, non-separable data refused with a clear message, and degenerate inputs.
"""

from __future__ import annotations

import re
import warnings
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from novikoff.errors import InvalidArgument
from novikoff.runtime import max_margin_separator, run
from novikoff.runtime._bounds import certify_margin, data_stats, exact_dot
from novikoff.runtime._separator import _solve


def planted(n, d, gamma=0.01, seed=0):
    """Unit rows labelled by a random unit w_gen, those with |<w_gen, x>| < gamma dropped."""
    rng = np.random.default_rng(seed)
    w = rng.standard_normal(d)
    w /= np.linalg.norm(w)
    Xs, ys, have = [], [], 0
    while have < n:
        X = rng.standard_normal((max(2 * n, 64), d))
        X /= np.linalg.norm(X, axis=1)[:, None]
        m = X @ w
        keep = np.abs(m) >= gamma
        Xs.append(X[keep])
        ys.append(np.sign(m[keep]))
        have += int(keep.sum())
    return np.concatenate(Xs)[:n], np.concatenate(ys)[:n], w


def margin(X, y, w):
    return float((y * (X @ w)).min() / np.linalg.norm(w))


def certified(X, y, w):
    return certify_margin(X, y, w, data_stats(X, y, w))


def slsqp_reference(X, y):
    """An independent solver: min ||w||^2 s.t. y<w, x> >= 1 over the d primal variables."""
    import scipy.optimize as opt
    Z = y[:, None] * X
    w0 = np.linalg.lstsq(Z, np.ones(len(y)), rcond=None)[0]
    res = opt.minimize(lambda w: w @ w, w0 * 2, jac=lambda w: 2 * w, method="SLSQP",
                       constraints=[{"type": "ineq", "fun": lambda w: Z @ w - 1,
                                     "jac": lambda w: Z}],
                       options={"maxiter": 1000, "ftol": 1e-14})
    return res.x


# ---------------------------------------------------------------- the maximum margin

@pytest.mark.parametrize("n, d, seed", [(200, 5, 0), (500, 10, 1), (1000, 3, 2)])
def test_margin_within_one_percent_of_independent_solvers(n, d, seed):
    X, y, w_gen = planted(n, d, 0.02, seed)
    w = max_margin_separator(X, y)
    assert np.linalg.norm(w) == pytest.approx(1.0, abs=1e-12)
    refs = [margin(X, y, w_gen), margin(X, y, slsqp_reference(X, y))]
    sklearn = pytest.importorskip("sklearn.svm")
    clf = sklearn.LinearSVC(loss="hinge", C=1e6, fit_intercept=False, tol=1e-10, max_iter=10 ** 5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # liblinear's ConvergenceWarning at high C
        clf.fit(X, y)
    refs.append(margin(X, y, clf.coef_.ravel()))
    assert margin(X, y, w) >= 0.99 * max(refs)
    assert certified(X, y, w) > 0


def test_the_bounds_of_the_solve_bracket_the_maximum():
    # lower = min y<w, x> of the direction found; upper = the working set's maximum margin,
    # which no direction beats on all the data.  They agree to 1e-9 relative.
    X, y, w_gen = planted(3000, 8, 0.01, seed=3)
    w, info = _solve(X, y)
    assert info["lower"] == pytest.approx(margin(X, y, w), rel=1e-12)
    assert info["lower"] <= info["upper"] * (1 + 1e-12)
    assert info["upper"] - info["lower"] <= 1e-9 * info["upper"]
    assert margin(X, y, w_gen) <= info["upper"] * (1 + 1e-12)


def test_the_sampled_warm_start_finds_the_same_maximum():
    # n >= 32 * 2048: the solve starts from a random 1/32 of the data.
    X, y, w_gen = planted(70_000, 6, 0.01, seed=4)
    w, info = _solve(X, y)
    assert info["upper"] - info["lower"] <= 1e-9 * info["upper"]
    assert margin(X, y, w) >= margin(X, y, w_gen)
    assert certified(X, y, w) > 0


def test_progress_reports_phases_and_fractions():
    X, y, _ = planted(500, 4)
    calls = []
    max_margin_separator(X, y, progress=lambda phase, f: calls.append((phase, f)))
    assert calls and all(isinstance(p, str) and 0.0 <= f <= 1.0 for p, f in calls)
    assert calls[-1][1] == 1.0


def test_tiny_margin_real_data_is_certified():
    datasets = pytest.importorskip("sklearn.datasets")
    X, t = datasets.load_breast_cancer(return_X_y=True)
    y = np.where(t == 0, 1.0, -1.0)
    w, info = _solve(X, y)
    g = certified(X, y, w)
    assert g > 0
    assert info["lower"] >= 0.99 * info["upper"]  # within 1% though the margin is ~1e-8 R


# ---------------------------------------------------------------- scale

@pytest.mark.parametrize("scale", [1e15, 1e-15, 1e300, 1e-300, 2.0 ** -1000])
def test_the_direction_does_not_depend_on_the_scale(scale):
    X, y, _ = planted(400, 6, 0.01, seed=5)
    w = max_margin_separator(X, y)
    ws = max_margin_separator(X * scale, y)
    np.testing.assert_allclose(ws, w, rtol=0, atol=1e-9)
    if scale < 1e150:  # beyond, ||x||^2 overflows: the engine refuses such rows anyway
        assert certified(X * scale, y, ws) > 0


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10 ** 6), n=st.integers(1, 300), d=st.integers(1, 8),
       gamma=st.sampled_from([1e-4, 1e-2, 0.2]),
       scale=st.sampled_from([1e-15, 1e-6, 1.0, 3.0, 1e15]))
def test_scaled_data_gives_the_same_certified_direction(seed, n, d, gamma, scale):
    X, y, _ = planted(n, d, gamma, seed)
    w = max_margin_separator(X, y)
    ws = max_margin_separator(X * scale, y)
    np.testing.assert_allclose(ws, w, rtol=0, atol=1e-9)
    for data, v in ((X, w), (X * scale, ws)):
        assert certified(data, y, v) > 0


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10 ** 6), n=st.integers(1, 200), d=st.integers(1, 6),
       rel=st.sampled_from([1e-7, 1e-4, 1e-2, 0.3]),
       scale=st.sampled_from([1e-12, 1e-3, 1.0, 1e6]), unit=st.booleans())
def test_the_certified_gamma_is_always_positive(seed, n, d, rel, scale, unit):
    X, y, w_gen = planted(n, d, rel, seed)
    if not unit:
        X = X * np.random.default_rng(seed).uniform(0.1, 10.0, n)[:, None]
    X = X * scale
    w = max_margin_separator(X, y)
    g = certified(X, y, w)
    assert g > 0
    # never worse than the generating separator (beyond rounding)
    assert g >= margin(X, y, w_gen) * (1 - 1e-6)


def test_a_run_without_w_star_certifies_the_computed_separator():
    X, y, w_gen = planted(2000, 5, 0.05, seed=6)
    res = run(X, y, lemmas=[])
    assert res.gamma > 0 and res.gamma >= margin(X, y, w_gen)
    assert np.linalg.norm(res.w_star) == pytest.approx(1.0)


# ---------------------------------------------------------------- not separable

@pytest.mark.parametrize("X, y", [
    (np.array([[1.0, 0.0], [-1.0, 0.0]]), np.array([1.0, 1.0])),     # x and -x, one label
    (np.array([[1.0, 2.0], [1.0, 2.0]]), np.array([1.0, -1.0])),     # one x, both labels
    (np.array([[1.0], [2.0], [-3.0]]), np.array([1.0, 1.0, 1.0])),   # d = 1
])
def test_non_separable_data_is_refused_with_the_examples(X, y):
    with pytest.raises(InvalidArgument, match=r"not linearly separable through the origin.*"
                                              r"examples \d"):
        max_margin_separator(X, y)


def test_random_labels_are_not_separable():
    rng = np.random.default_rng(7)
    X = rng.standard_normal((5000, 10))
    y = rng.choice([-1.0, 1.0], 5000)
    with pytest.raises(InvalidArgument, match="not linearly separable") as err:
        max_margin_separator(X, y)
    assert "non-separable mode" in str(err.value)


def test_flipped_labels_among_many_separable_are_found():
    X, y, _ = planted(70_000, 8, 0.01, seed=8)  # with the sampled warm start
    y = y.copy()
    y[[17, 60_001]] *= -1
    with pytest.raises(InvalidArgument, match="not linearly separable") as err:
        max_margin_separator(X, y)
    # the examples named are indices of the whole data set, and include a flipped one (every
    # set of the others is separable)
    named = re.search(r"examples ([\d, ]+)", str(err.value)).group(1).split(", ")
    assert {"17", "60001"} & set(named)
    assert all(0 <= int(i) < 70_000 for i in named)


# ---------------------------------------------------------------- degenerate inputs

def test_one_example():
    x = np.array([[3.0, -4.0]])
    np.testing.assert_allclose(max_margin_separator(x, np.array([-1.0])), [-0.6, 0.8])


def test_one_dimension():
    X = np.array([[2.0], [0.5], [-1.0]])
    y = np.array([-1.0, -1.0, 1.0])
    np.testing.assert_array_equal(max_margin_separator(X, y), [-1.0])


def test_duplicated_rows_change_nothing():
    X, y, _ = planted(300, 5, 0.02, seed=9)
    w = max_margin_separator(X, y)
    Xd, yd = np.repeat(X, 3, axis=0), np.repeat(y, 3)
    np.testing.assert_allclose(max_margin_separator(Xd, yd), w, rtol=0, atol=1e-9)


def test_a_zero_row_is_named():
    X, y, _ = planted(100, 3, 0.02)
    X = X.copy()
    X[42] = 0.0
    with pytest.raises(InvalidArgument, match=r"X\[42\] is the zero vector"):
        max_margin_separator(X, y)


def test_a_non_finite_entry_is_named():
    X, y, _ = planted(100, 3, 0.02)
    X = X.copy()
    X[7, 2] = np.nan
    with pytest.raises(InvalidArgument, match=r"X\[7, 2\]=nan is not finite"):
        max_margin_separator(X, y)


def test_every_example_on_one_side_of_a_coordinate():
    # All examples equal up to positive factors: w* is their direction.
    X = np.outer(np.array([1.0, 2.0, 0.5, 7.0]), np.array([1.0, -2.0, 2.0]))
    w = max_margin_separator(X, np.ones(4))
    np.testing.assert_allclose(w, np.array([1.0, -2.0, 2.0]) / 3.0, atol=1e-12)


# ---------------------------------------------------------------- large d: coordinate descent
#
# From d = _CD_FROM the working sets are solved by descent on the dual (coordinate descent with
# numba, projected gradient without), which stops when the direction's margin is within
# info["gap"] (1%) of an upper bound on the maximum; below it, the exact solve (gap 1e-9).  The
# assertions hold for both.

def test_large_d_margin_is_within_the_documented_gap_of_the_maximum():
    X, y, w_gen = planted(1500, 130, 0.02, seed=11)
    w, info = _solve(X, y)
    assert info["lower"] == pytest.approx(margin(X, y, w), rel=1e-9)
    assert info["lower"] >= (1 - info["gap"]) * info["upper"]
    # the upper bound is an upper bound: no direction beats it
    assert margin(X, y, w_gen) <= info["upper"] * (1 + 1e-9)
    assert margin(X, y, slsqp_reference(X, y)) <= info["upper"] * (1 + 1e-9)
    assert certified(X, y, w) > 0


def exact_margins(X, y, w):
    """y_i <w, x_i> of every example, in exact rationals."""
    return [int(y[i]) * exact_dot(X[i], w) for i in range(len(y))]


@pytest.mark.parametrize("n, d, gamma, seed", [(1500, 130, 0.02, 21), (1000, 300, 0.02, 22)])
def test_large_d_direction_separates_and_its_margins_are_reported_honestly(n, d, gamma, seed):
    # The sweeps read float32 rows; what the solve reports and what the run certifies must be
    # the float64 data's: the direction separates every example (decided exactly), the solve's
    # lower bound is its smallest margin within the rounding bound E of data_stats (gamma_d
    # ||w|| max ||x||), and the run's gamma is the exact smallest margin rounded down.
    X, y, w_gen = planted(n, d, gamma, seed)
    w, info = _solve(X, y)
    smallest = min(exact_margins(X, y, w))
    assert smallest > 0
    E = Fraction(data_stats(X, y, w).E)
    assert abs(Fraction(info["lower"]) - smallest) <= E
    # the promise, against the upper bound (which w_gen's exact margin does not exceed)
    assert smallest >= (1 - info["gap"]) * Fraction(info["upper"]) - E
    assert min(exact_margins(X, y, w_gen)) / Fraction(float(np.linalg.norm(w_gen))) <= (
        Fraction(info["upper"]) * (1 + Fraction(1, 10 ** 9)))
    res = run(X, y, lemmas=[])
    exact = min(exact_margins(X, y, res.w_star))
    assert Fraction(res.gamma) <= exact < Fraction(np.nextafter(res.gamma, np.inf))


def known_maximum(delta: float, d: int = 200):
    """(X, y) with y*x = (delta, u) and (delta, -u) for 300 unit u in the other d - 1
    coordinates: 0 is in the hull of the u, so the maximum margin is exactly delta (times
    ||x|| ~ 1)."""
    rng = np.random.default_rng(23)
    U = rng.standard_normal((300, d - 1))
    U /= np.linalg.norm(U, axis=1)[:, None]
    Z = np.hstack([np.full((600, 1), delta), np.vstack([U, -U])])
    y = rng.choice([-1.0, 1.0], 600)
    return Z * y[:, None], y


@pytest.mark.parametrize("delta", [1e-2, 1e-4])
def test_large_d_margin_against_a_known_maximum(delta):
    # At 1e-4 (R / margin above _CD_SINGLE) float32 rows could not resolve the margins.
    X, y = known_maximum(delta)
    w, info = _solve(X, y)
    smallest = min(exact_margins(X, y, w))
    E = Fraction(data_stats(X, y, w).E)
    assert smallest > 0
    # w is a unit vector up to rounding, so its margin is at most delta ||w||; the solve keeps
    # its promise against the true maximum, and its upper bound is one
    norm = Fraction(float(np.linalg.norm(w)))
    assert smallest <= Fraction(delta) * norm * (1 + Fraction(1, 10 ** 12)) + E
    assert smallest >= Fraction(1 - info["gap"]) * Fraction(delta) * norm - E
    assert info["upper"] >= delta * (1 - 1e-9)
    assert certified(X, y, w) > 0


def test_large_d_direction_does_not_depend_on_a_power_of_two_scale():
    X, y, _ = planted(800, 130, 0.02, seed=12)
    w = max_margin_separator(X, y)
    for k in (-300, 200):
        np.testing.assert_array_equal(max_margin_separator(np.ldexp(X, k), y), w)


def test_large_d_non_separable_data_is_refused_with_the_examples():
    rng = np.random.default_rng(13)
    X = rng.standard_normal((600, 130))
    y = rng.choice([-1.0, 1.0], 600)
    with pytest.raises(InvalidArgument, match=r"not linearly separable.*examples \d"):
        max_margin_separator(X, y)


def test_large_d_non_separable_data_goes_to_the_exact_solve_once_the_weights_spread(
        monkeypatch):
    # random labels on 2,000 examples in d = 130: no direction separates them, and the
    # descent's positive weights pass _CD_SPREAD (d + 1) before _CD_UNSURE rounds are done
    from novikoff.runtime import _separator
    rng = np.random.default_rng(17)
    X = rng.standard_normal((2000, 130))
    y = rng.choice([-1.0, 1.0], 2000)
    passes = []
    real = _separator._measured_pass
    monkeypatch.setattr(_separator, "_measured_pass", lambda *a: passes.append(1) or real(*a))
    assert _separator._level_dual(X, y, lambda fraction=None: None,
                                  np.random.default_rng(0)) is None
    assert len(passes) <= _separator._CD_UNSURE
    with pytest.raises(InvalidArgument, match=r"not linearly separable.*examples \d"):
        max_margin_separator(X, y)


def test_progress_lines_during_the_solve_are_at_most_2_s_apart(monkeypatch, capsys):
    # A fake clock charged for the solve's work at a fixed rate: a pass's block of
    # _PASS_ENTRIES entries, or a step of coordinate descent over its working set, costs at
    # most 0.25 s.  The solve reports after each such unit, and the command prints a log's line
    # once 1.75 s have passed since the last, so its lines are at most 2 s apart.  Small units
    # and data make it quick; the Python sweep stands in for numba's twin.
    from novikoff.runtime import _jit, _separator
    from novikoff.runtime.cli import _Progress
    monkeypatch.setattr(_separator, "_PASS_ENTRIES", 1 << 12)
    monkeypatch.setattr(_separator, "_CD_FROM", 4)
    monkeypatch.setattr(_jit, "AVAILABLE", True)
    unit = 0.25
    rate = unit / (1 << 12)  # fake seconds per entry read
    clock = [0.0]

    def block_margins(Xb, v, out, real=_separator._block_margins):
        clock[0] += Xb.size * rate
        real(Xb, v, out)

    def charged(fn, entries):
        def work(*args):
            size = entries(*args)
            assert size <= 1 << 12, "a step costs more than the unit the test models"
            clock[0] += size * rate
            fn(*args)
        return work

    # a sweep, gathering the working set's rows, and its hull point in float64: each reads at
    # most the working set (the Python functions stand in for numba's twins)
    sweep = charged(_separator._cd_sweep, lambda Z, *rest: Z.size)
    rows = charged(_separator._cd_rows, lambda X, act, scale, out, q: out.size)
    point = charged(_separator._cd_point, lambda X, act, coef, w: act.size * X.shape[1])
    descend = lambda *args: _separator._cd_descend(sweep, *args)  # noqa: E731
    monkeypatch.setattr(_separator, "_block_margins", block_margins)
    monkeypatch.setattr(_separator, "_sweeper", lambda: (descend, rows, point))
    X, y, _ = planted(20_000, 10, 0.01, seed=14)
    progress = _Progress(True, forced=True, clock=lambda: clock[0])
    progress.tty = False
    max_margin_separator(X, y, progress=progress.phase)
    times = [float(t) for t in re.findall(r"\((\d+\.\d) s\)", capsys.readouterr().err)]
    assert clock[0] > 30 and len(times) > 10  # a long solve, shown all along
    gaps = np.diff([1.0] + times + [clock[0]])
    assert gaps.max() <= 2.0 + 0.1  # (the times are printed to 0.1 s)
