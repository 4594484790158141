"""The kernel perceptron, monitored (`novikoff run DATA --variant kernel --kernel SPEC`): the
lemmas of proofs/kernel.proof checked at every update with honest rounding-error bounds."""

from __future__ import annotations

import argparse
import math
from decimal import Decimal, getcontext
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from novikoff.errors import InvalidArgument
from novikoff.runtime import load_dataset, run
from novikoff.runtime import _dual_run as kr
from novikoff.runtime._dual_run import EXP_ULPS, gram, parse_kernel, run_kernel
from novikoff.runtime.cli import register

KERNELS = ("linear", "poly:2", "poly:3", "rbf:0.5")
KERNEL_LEMMAS = ("kernel_progress", "kernel_norm_growth", "kernel_mistake_bound")


@pytest.fixture(scope="module")
def iris():
    X, y, _ = load_dataset("iris")
    return X, y


def _status(res) -> dict:
    return {m["lemma"]: m for m in res.monitor["monitored"]}


def _assert_clean(res):
    status = _status(res)
    for name in KERNEL_LEMMAS:
        assert status[name]["applies"], status[name]
        assert status[name]["checks"] > 0
        assert status[name]["violations"] == 0
    assert res.monitor["violations"] == []
    assert "kernel_mistake_bound" in res.bounds
    assert res.mistakes <= res.bound


@pytest.mark.parametrize("spec", KERNELS)
def test_iris_every_kernel_is_monitored_without_violation(iris, spec):
    X, y = iris
    res = run(X, y, variant="kernel", kernel=spec)
    _assert_clean(res)
    assert res.variant == "kernel" and res.converged
    assert res.w.shape == (150,) and res.w_star.shape == (150,)
    # w: the dual coefficients alpha*y of the final weights, alpha the update counts
    assert np.array_equal(np.bincount(res.updates, minlength=150) * y, res.w)
    assert res.gamma > 0 and res.R > 0
    assert res.monitor["kernel"] == str(parse_kernel(spec))
    # the classic lemmas of novikoff.proof hold in feature space and are checked too
    status = _status(res)
    for name in ("progress", "norm_growth", "mistake_bound"):
        assert status[name]["applies"] and status[name]["checks"] > 0


def test_rbf_radius_is_exactly_one(iris):
    res = run_kernel(*iris, kernel="rbf:0.5")
    assert res.R == 1.0  # K(x, x) = 1 exactly: unit-data lemmas apply
    assert _status(res)["mistake_bound_unit"]["applies"]


def _planted(n, d, margin, seed):
    rng = np.random.default_rng(seed)
    w = rng.normal(size=d)
    w /= np.linalg.norm(w)
    X = rng.normal(size=(4 * n, d))
    keep = np.abs(X @ w) >= margin * np.linalg.norm(X, axis=1)
    X = X[keep][:n]
    return X, np.where(X @ w > 0, 1.0, -1.0)


@pytest.mark.parametrize("seed", [0, 1])
def test_linear_kernel_makes_the_classic_runs_updates(iris, seed):
    cases = [iris, _planted(200, 5, 0.05, seed)]
    for X, y in cases:
        order = np.random.default_rng(seed).permutation(X.shape[0])
        for kw in ({}, {"order": order}, {"order": np.concatenate([order, order[:7]]),
                                          "cyclic": False}):
            classic = run(X, y, **kw)
            kern = run(X, y, variant="kernel", kernel="linear", **kw)
            assert kern.mistakes == classic.mistakes
            assert np.array_equal(kern.updates, classic.updates)
            assert kern.visits == classic.visits and kern.converged == classic.converged
            # the same weights, exactly: alpha_i*y_i counts example i's updates, whose sum of
            # y_i*x_i the classic engine holds (rounded coordinate by coordinate, update after
            # update: the same floats in any BLAS, unlike a matrix product kern.w @ X)
            counts = np.bincount(classic.updates, minlength=X.shape[0]).astype(float)
            np.testing.assert_array_equal(kern.w, counts * y)
            w = np.zeros(X.shape[1])
            for i in classic.updates:
                w = w + y[i] * X[i]
            np.testing.assert_array_equal(classic.w, w)


def circles(n=80, seed=0):
    """Two rings around the origin: no hyperplane through the origin separates them."""
    rng = np.random.default_rng(seed)
    angle = rng.uniform(0, 2 * np.pi, n)
    inner = np.arange(n) % 2 == 0
    radius = np.where(inner, rng.uniform(0.2, 0.8, n), rng.uniform(1.5, 2.0, n))
    X = np.c_[radius * np.cos(angle), radius * np.sin(angle)]
    return X, np.where(inner, 1.0, -1.0)


def test_circles_need_a_nonlinear_kernel():
    X, y = circles()
    with pytest.raises(InvalidArgument, match="not linearly separable"):
        run(X, y)  # the classic perceptron: no separator through the origin
    with pytest.raises(InvalidArgument, match="did not converge|does not separate"):
        run(X, y, variant="kernel", kernel="linear", max_epochs=50)
    for spec in ("poly:2", "rbf:1"):
        res = run(X, y, variant="kernel", kernel=spec, max_epochs=1000)
        _assert_clean(res)
        assert res.converged
        f = kr.gram(X, parse_kernel(spec))[0] @ res.w  # the final predictions
        assert np.all(y * f > 0)


# ------------------------------------------------------------------ honest bounds

def _exact_kernel(a, b, kern):
    dot = sum((Fraction(u) * Fraction(v) for u, v in zip(a, b)), Fraction(0))
    if kern.kind == "linear":
        return dot
    if kern.kind == "poly":
        return (dot + Fraction(kern.c)) ** kern.degree
    s = sum(((Fraction(u) - Fraction(v)) ** 2 for u, v in zip(a, b)), Fraction(0))
    mpmath.mp.dps = 60
    return mpmath.exp(-mpmath.mpf(kern.g) * (mpmath.mpf(s.numerator) / s.denominator))


@pytest.mark.parametrize("spec", ["linear", "poly:3", "poly:5:0.3", "rbf:0.7", "rbf:3"])
def test_gram_error_bounds_contain_the_exact_values(spec):
    kern = parse_kernel(spec)
    rng = np.random.default_rng(3)
    X = rng.normal(size=(12, 5)) * rng.choice([1e-3, 1.0, 30.0], size=(12, 1))
    X[5] = X[4]  # a duplicate: distance 0 computed through the Gram form
    K, E, _ = gram(X, kern)
    assert np.array_equal(K, K.T) and np.array_equal(E, E.T)
    for i in range(12):
        for j in range(12):
            exact = _exact_kernel(X[i], X[j], kern)
            if kern.kind == "rbf":
                err = abs(mpmath.mpf(float(K[i, j])) - exact)
                assert err <= mpmath.mpf(float(E[i, j])), (i, j)
            else:
                assert abs(Fraction(float(K[i, j])) - exact) <= Fraction(float(E[i, j])), (i, j)
    if kern.kind == "rbf":
        assert np.all(np.diagonal(K) == 1.0) and np.all(np.diagonal(E) == 0.0)


@pytest.mark.parametrize("spec,scale", [
    ("linear", 1e-150), ("linear", 1e-25), ("linear", 1e30), ("linear", 1e150),
    ("poly:3:0", 1e-40), ("poly:2", 1e60), ("rbf:1e12", 1.0), ("rbf:1e18", 1.0),
    ("rbf:1e300", 1.0), ("rbf:0.5", 1e100)])
def test_gram_error_bounds_are_float64_and_true_at_extreme_scales(spec, scale):
    """float32 bounds floored at 1.4e-45 (refusing small data) and overflowed above 3.4e38; a wide
    rbf overflowed expm1.  The float64 bounds stay finite and contain the exact values."""
    kern = parse_kernel(spec)
    rng = np.random.default_rng(5)
    X = rng.normal(size=(8, 3)) * scale
    X[3] = X[2]  # a duplicate: distance 0 computed through the Gram form
    with np.errstate(over="raise", divide="raise", invalid="raise"):  # no warning leaks out
        K, E, _ = gram(X, kern)
    assert E.dtype == np.float64 and np.all(np.isfinite(E)) and np.all(E >= 0)
    for i in range(8):
        for j in range(8):
            exact = _exact_kernel(X[i], X[j], kern)
            if kern.kind == "rbf":
                assert abs(mpmath.mpf(float(K[i, j])) - exact) <= mpmath.mpf(float(E[i, j]))
            else:
                assert abs(Fraction(float(K[i, j])) - exact) <= Fraction(float(E[i, j])), (i, j)
                # relative, as the classic engine's bounds: no float32 floor, no overflow
                assert E[i, j] <= 1e-12 * math.sqrt(K[i, i]) * math.sqrt(K[j, j])
    if kern.kind == "rbf":
        off = ~np.eye(8, dtype=bool)
        off[2, 3] = off[3, 2] = False
        assert np.all(E <= 1.0 + 1e-5)  # the cap: K and K_exact both lie in [0, 1]
        if kern.g >= 1e18:  # exponents far below -746: exact and computed K are ~0
            assert np.all(K[off] == 0.0) and np.all(E[off] <= 2.0 ** -1021)


def test_a_wide_rbf_caps_at_one_where_the_exponent_is_uncertain():
    """G*||a - b||^2 ~ 10 with a rounding error ~ 10: expm1 of the exponent's bound is large, so
    the bound is the cap (exact and computed K both in [0, 1]), and it is still a true bound."""
    kern = parse_kernel("rbf:1e16")
    X = np.array([[1.0, 0.0], [1.0 + 2.0 ** -52, 0.0], [1.0 + 2.0 ** -50, 0.0]])
    K, E, _ = gram(X, kern)
    assert E[0, 2] > 0.5  # the cap, not the expm1 formula
    for i in range(3):
        for j in range(3):
            exact = _exact_kernel(X[i], X[j], kern)
            assert abs(mpmath.mpf(float(K[i, j])) - exact) <= mpmath.mpf(float(E[i, j]))


def test_numpy_exp_is_within_the_assumed_ulps():
    """The rbf bounds assume |np.exp(z) - exp(z)| <= EXP_ULPS ulps: check it against a correctly
    rounded exp (Decimal, 40 digits) on this platform, over the range the kernel uses."""
    getcontext().prec = 40
    rng = np.random.default_rng(0)
    z = np.concatenate([-rng.exponential(5.0, 4000), rng.uniform(-708, 0, 4000),
                        -rng.uniform(0, 1e-6, 500)])
    got = np.exp(z)
    worst = 0.0
    for zi, gi in zip(z.tolist(), got.tolist()):
        exact = Decimal(zi).exp()
        ulp = math.ulp(float(exact))
        worst = max(worst, float(abs(Decimal(gi) - exact) / Decimal(ulp)))
    assert worst <= EXP_ULPS, worst


# ------------------------------------------------------------------ no false violation

@st.composite
def kernel_runs(draw):
    n = draw(st.integers(2, 10))
    d = draw(st.integers(1, 4))
    scale = draw(st.sampled_from([1e-3, 1.0, 100.0]))
    ints = draw(st.booleans())
    flat = draw(st.lists(st.integers(-4, 4) if ints else
                         st.floats(-2, 2, allow_nan=False, allow_subnormal=False),
                         min_size=n * d, max_size=n * d))
    X = np.array(flat, float).reshape(n, d) * scale
    assume(np.all(np.abs(X).sum(axis=1) > 0))
    spec = draw(st.sampled_from(["linear", "poly:2", "poly:3:0", "poly:4:2.5", "rbf:0.5",
                                 "rbf:20"]))
    if spec.startswith("rbf"):
        X = X / scale  # keep G*||a - b||^2 moderate
    beta = np.array(draw(st.lists(st.integers(-3, 3), min_size=n, max_size=n)), float)
    assume(beta.any())
    cyclic = draw(st.booleans())
    order = None if cyclic and draw(st.booleans()) else np.array(
        draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=3 * n)))
    return X, beta, spec, order, cyclic


@settings(max_examples=60, deadline=None)
@given(kernel_runs())
def test_no_false_violation_on_small_random_runs(case):
    X, beta, spec, order, cyclic = case
    K = gram(X, parse_kernel(spec))[0]
    m = K @ beta
    y = np.where(m > 0, 1.0, -1.0)  # labels planted by beta: separable in feature space
    try:
        res = run_kernel(X, y, kernel=spec, w_star=beta, order=order, cyclic=cyclic,
                         max_epochs=200)
    except InvalidArgument as err:  # a margin within rounding of 0: not certifiable
        assume("cannot be certified" not in str(err) and "does not separate" not in str(err))
        raise
    assert res.monitor["violations"] == []
    if res.mistakes:
        assert _status(res)["kernel_progress"]["checks"] > 0
        assert res.mistakes <= res.bound * (1 + 1e-9)


# ------------------------------------------------------------------ bugs caught

# ------------------------------------------------------------------ bad input

@pytest.mark.parametrize("spec,why", [
    ("poly:x", "degree 'x' is not a positive integer"), ("poly:0", "positive integer"),
    ("poly", "needs a degree"), ("poly:2:-1", "negative"), ("poly:2:abc", "not a number"),
    ("rbf", "needs a width"), ("rbf:0", "not positive"), ("rbf:-1", "not positive"),
    ("rbf:nan", "not finite"), ("sigmoid:1", "unknown kernel 'sigmoid'"),
    ("linear:2", "no parameter"), (3, "not a kernel spec")])
def test_bad_kernel_specs(iris, spec, why):
    with pytest.raises(InvalidArgument, match=f"kernel={spec!r}") as err:
        run(*iris, variant="kernel", kernel=spec)
    assert why in str(err.value)


def test_bad_dual_coefficients(iris):
    X, y = iris
    good = run_kernel(X, y, kernel="poly:2").w_star
    with pytest.raises(InvalidArgument, match=r"shape \(4,\) does not match the number of "
                                              r"examples n=150 .*dual coefficients"):
        run_kernel(X, y, kernel="poly:2", w_star=np.ones(4))
    with pytest.raises(InvalidArgument, match="does not separate the data in the feature space"):
        run_kernel(X, y, kernel="poly:2", w_star=-good)
    with pytest.raises(InvalidArgument, match="zero vector"):
        run_kernel(X, y, kernel="poly:2", w_star=np.zeros(150))
    bad = good.copy()
    bad[3] = np.nan
    with pytest.raises(InvalidArgument, match=r"w_star\[3\]=nan is not finite"):
        run_kernel(X, y, kernel="poly:2", w_star=bad)
    res = run_kernel(X, y, kernel="poly:2", w_star=good)
    with pytest.raises(InvalidArgument, match="gamma"):
        run_kernel(X, y, kernel="poly:2", w_star=good, gamma=2 * res.gamma)
    # a given gamma below the certified margin is used as given
    assert run_kernel(X, y, kernel="poly:2", w_star=good, gamma=res.gamma / 2).gamma == \
        res.gamma / 2


def test_exact_mode_and_large_data_are_refused(iris, monkeypatch):
    with pytest.raises(InvalidArgument, match="no exact mode"):
        run_kernel(*iris, kernel="poly:2", exact=True)
    monkeypatch.setattr(kr, "MAX_N", 100)
    with pytest.raises(InvalidArgument, match=r"n=150 .*Gram matrix.*n=100 \(16\*n\^2 bytes"):
        run_kernel(*iris, kernel="rbf:1")


def planted(n=30, d=3, seed=1, margin=0.05):
    rng = np.random.default_rng(seed)
    w = rng.normal(size=d)
    w /= np.linalg.norm(w)
    X = rng.normal(size=(n * 4, d))
    X = X[np.abs(X @ w) > margin][:n]
    return X, np.where(X @ w > 0, 1.0, -1.0)


@settings(max_examples=25, deadline=None)
@given(st.integers(-500, 505))
def test_linear_kernel_runs_what_the_classic_engine_runs_at_any_scale(e):
    """X*2^e (exact scaling): the linear kernel makes the classic run's mistakes, with no
    violation, from 2^-500 (rows near the smallest normal) to 2^505 (near overflow)."""
    X, y = planted()
    Xs = np.ldexp(X, e)
    classic = run(Xs, y, on_violation="collect")
    res = run(Xs, y, variant="kernel", kernel="linear", on_violation="collect")
    assert res.mistakes == classic.mistakes and res.converged
    _assert_clean(res)


def test_default_separator_is_normalised(iris):
    """The default beta is scaled (by a power of two) to ||w_star|| in [1/2, 1), like the classic
    engine's unit-vector default: slots such as (y*<w_star, x>)^2 then stay far from underflow."""
    X, y = planted()
    for scale in (2.0 ** -480, 1.0, 2.0 ** 480):
        beta = run_kernel(X * scale, y, kernel="linear").w_star
        K = gram(X * scale, parse_kernel("linear"))[0]
        assert 0.25 <= float(beta @ K @ beta) < 1.0 + 1e-9


@pytest.mark.parametrize("row,spec", [([1e-300], "linear"), ([0.0], "linear"),
                                      ([1e-160, 0.0], "linear"), ([1e-100, 0.0], "poly:2:0"),
                                      ([1e-60, 1e-60], "poly:6:0")])
def test_a_row_whose_kernel_diagonal_underflows_is_refused(row, spec):
    X = np.array([[1.0] * len(row), row])
    y = np.array([1.0, -1.0])
    for checks in (True, False):
        with pytest.raises(InvalidArgument, match=r"X\[1\]: K\(X\[1\], X\[1\]\) = .* under kernel="
                                                  rf"'{spec.split(':0')[0]}.*smallest normal"):
            run_kernel(X, y, kernel=spec, checks=checks)
    with pytest.raises(InvalidArgument, match=r"X\[0\]"):  # the n = 1 case of the red team
        run(np.array([row]), np.array([1.0]), variant="kernel", kernel=spec)


def test_a_row_whose_kernel_diagonal_is_normal_is_accepted():
    # poly with C > 0 and rbf: K(x, x) >= C^D, = 1; a zero row is then a point like any other
    X = np.array([[0.0, 0.0], [1.0, 1.0]])
    y = np.array([1.0, -1.0])
    for spec in ("poly:2", "rbf:1"):
        _assert_clean(run_kernel(X, y, kernel=spec))
    _assert_clean(run_kernel(np.array([[1e-300], [1.0]]), y, kernel="rbf:1"))


def test_an_overflow_names_what_to_rescale(iris):
    X, y = iris
    good = run_kernel(X, y, kernel="poly:2").w_star
    with pytest.raises(InvalidArgument, match="rescale the given w_star"):
        run_kernel(X, y, kernel="poly:2", w_star=good * 1e300)
    with pytest.raises(InvalidArgument, match=r"kernel='poly:3'.*overflows; rescale the data"):
        run_kernel(X * 1e110, y, kernel="poly:3")


def test_perceptron_coefficients_as_default_separator(iris, monkeypatch):
    monkeypatch.setattr(kr, "_EIGH_MAX", 0)  # as above the eigh limit
    res = run_kernel(*iris, kernel="poly:2")
    _assert_clean(res)


def test_checks_off_makes_the_same_run(iris):
    for spec in KERNELS:
        on = run(*iris, variant="kernel", kernel=spec)
        off = run(*iris, variant="kernel", kernel=spec, checks=False)
        assert off.checks == 0 and off.monitor is None
        assert off.mistakes == on.mistakes and np.array_equal(off.w, on.w)


def test_cli(capsys):
    parser = argparse.ArgumentParser(prog="novikoff")
    register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["run", "iris", "--variant", "kernel", "--kernel", "poly:3"])
    assert args.handler(args) == 0
    out = capsys.readouterr().out
    assert "kernel perceptron" in out and "no violation" in out
    args = parser.parse_args(["run", "iris", "--variant", "kernel", "--kernel", "poly:x"])
    assert args.handler(args) == 2
    assert "kernel='poly:x'" in capsys.readouterr().err


def test_audit_gates_kernel_lemmas_by_their_own_names():
    # kernel.proof binds phi to the example: deciding which assumptions are about the data is
    # done in the run vocabulary (once, phi made every assumption look like one about data).
    from novikoff.runtime._compile import about_data
    from novikoff.runtime._compile import as_lemma
    from novikoff.runtime import load_lemmas
    lemmas = {l.name: as_lemma(l) for l in load_lemmas()
              if l.name in ("kernel_progress", "kernel_norm_growth")}
    about = {name: about_data(f, lem) for lem in lemmas.values() for name, f in lem.hypotheses}
    assert about["margin"] is True and about["radius"] is True
    assert about["mistake"] is False and about["update"] is False


def test_the_audit_takes_no_kernel_traces():
    from novikoff.errors import InvalidArgument
    from novikoff.runtime import audit
    X, y, _ = load_dataset("iris")
    with pytest.raises(InvalidArgument, match="variant='kernel'"):
        audit(X, y, np.arange(len(y)), np.zeros((len(y), X.shape[1])), variant="kernel")
