"""The rounding-error bounds are bounds: float bookkeeping vs the exact mathematical run."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from novikoff.runtime._bounds import Bookkeeper, certify_margin, data_stats, exact_dot


def _exact(v):
    return [Fraction(float(a)) for a in v]


def _dot(a, b):
    return sum((x * y for x, y in zip(a, b)), Fraction(0))


@pytest.mark.parametrize("seed", range(6))
def test_bookkeeping_bounds_contain_the_exact_values(seed):
    rng = np.random.default_rng(seed)
    n, d = 60, 7
    # a wide dynamic range makes the rounding errors large
    X = rng.standard_normal((n, d)) * 10.0 ** rng.integers(-6, 7, size=(n, d))
    ws = rng.standard_normal(d)
    y = np.sign(X @ ws)
    y[y == 0] = 1
    stats = data_stats(X, y, ws)
    gamma = certify_margin(X, y, ws, stats)
    keeper = Bookkeeper(stats, y, d, order=np.arange(n), gamma=gamma, n=n, need_td=True,
                        zero_loss=False)
    Xe, wse = [_exact(r) for r in X], _exact(ws)
    w = np.zeros(d)           # the weights a float engine holds
    we = [Fraction(0)] * d    # the mathematical run's weights
    g = Fraction(3 * gamma)  # a gamma above the margin: some hinge losses are positive
    keeper.gamma = float(g)
    keeper._prepare_td()
    loss = [max(Fraction(0), g - int(y[i]) * _dot(wse, Xe[i])) for i in range(n)]
    td = Fraction(0)
    log = []
    for t in range(3 * n):    # three passes, updates on mistakes
        i = t % n
        p = float(w @ X[i])
        if y[i] * p <= 0:
            log.append((i, t, p, list(we), td))
            w += y[i] * X[i]
            we = [a + int(y[i]) * b for a, b in zip(we, Xe[i])]
        td += loss[i]
    assert len(log) > 10
    checked = 0
    for c0 in range(0, len(log), 7):  # several chunks: the carried state is checked too
        part = log[c0:c0 + 7]
        idx = np.array([e[0] for e in part])
        env_u = keeper.chunk(idx, np.array([e[2] for e in part]),
                                    np.array([e[1] for e in part]))
        for j, (i, _, _, wk, tdk) in enumerate(part):
            wk1 = [a + int(y[i]) * b for a, b in zip(wk, Xe[i])]
            exact = {"<w_star, w[k]>": _dot(wse, wk), "<w_star, w[k+1]>": _dot(wse, wk1),
                     "<w[k], w[k]>": _dot(wk, wk), "<w[k+1], w[k+1]>": _dot(wk1, wk1),
                     "<x, w[k]>": _dot(Xe[i], wk), "<x, w[k+1]>": _dot(Xe[i], wk1),
                     "<w[k], w[k+1]>": _dot(wk, wk1), "<w_star, x>": _dot(wse, Xe[i]),
                     "<x, x>": _dot(Xe[i], Xe[i]), "TD[k]": tdk, "TD[k+1]": tdk + loss[i],
                     "d": loss[i]}
            for key, ex in exact.items():
                v, e = env_u[key]
                err = Fraction(0) if e is None else Fraction(float(e[j]))
                assert abs(Fraction(float(v[j])) - ex) <= err, key
                checked += 1
    assert checked > 100


def test_exact_dot_is_exact():
    rng = np.random.default_rng(1)
    for _ in range(100):
        a = rng.standard_normal(9) * 10.0 ** rng.integers(-300, 300, 9)
        b = rng.standard_normal(9) * 10.0 ** rng.integers(-8, 8, 9)
        assert exact_dot(a, b) == _dot(_exact(a), _exact(b))


def test_certified_constants():
    rng = np.random.default_rng(2)
    X = rng.standard_normal((200, 5))
    ws = rng.standard_normal(5)
    y = np.sign(X @ ws)
    stats = data_stats(X, y, ws)
    gamma = certify_margin(X, y, ws, stats)
    exact_margins = [int(y[i]) * exact_dot(X[i], ws) for i in range(200)]
    assert Fraction(gamma) <= min(exact_margins)
    assert min(exact_margins) - Fraction(gamma) <= Fraction(1, 10 ** 15) * abs(gamma)
    norms2 = [exact_dot(X[i], X[i]) for i in range(200)]
    assert Fraction(stats.R) ** 2 >= max(norms2)


@pytest.mark.parametrize("seed", range(6))
def test_exact_margins_of_many_rows_equal_exact_dot_row_by_row(seed):
    """The batched exact margins (one scale for all rows) are exact_dot's, row for row: zeros,
    subnormals, huge and tiny entries, rows that are all zero, rows in any order."""
    from novikoff.runtime._bounds import exact_margins_scaled
    rng = np.random.default_rng(seed)
    n, d = 12, int(rng.integers(1, 9))
    X = rng.standard_normal((n, d)) * 10.0 ** rng.integers(-320, 300, (n, d))
    X[rng.random((n, d)) < 0.2] = 0.0
    X[0] = 0.0
    X[1, 0] = 5e-324  # the smallest subnormal
    w = rng.standard_normal(d) * 10.0 ** rng.integers(-20, 20, d)
    w[rng.random(d) < 0.1] = 0.0
    y = rng.choice([-1.0, 1.0], n)
    rows = rng.permutation(n)[: int(rng.integers(1, n + 1))]
    totals, exp = exact_margins_scaled(X, y, w, rows)
    scale = Fraction(2) ** exp
    assert [t * scale for t in totals] == [int(y[i]) * exact_dot(X[i], w) for i in rows]
    assert exact_margins_scaled(X, y, w, np.zeros(0, np.int64)) == ([], 0)


# ------------------------------------------------ tied margins: enclosures, exact decisions

def _rounded_down(v: Fraction) -> float:
    f = float(v)
    return float(np.nextafter(f, -np.inf)) if Fraction(f) > v else f


@st.composite
def tied_margins(draw):
    """(X, y, w_star): random rows at scales 2^-450 .. 2^450 (the enclosures' range and beyond),
    w_star with a power of two first, and around the row of smallest margin: copies with
    the sign flipped (exactly tied), and copies whose first entry moves by 0 to 2^16 ulps
    (margins from tied to many ulps of that entry apart, mostly within rounding of each
    other)."""
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1)))
    d = draw(st.integers(1, 12))
    scale = 2.0 ** draw(st.one_of(st.integers(-450, 450), st.sampled_from([-430, 430])))
    X = rng.standard_normal((draw(st.integers(1, 8)), d)) * scale
    if draw(st.booleans()):  # entries of very different sizes (cancellation, a wide sum)
        X *= 2.0 ** rng.integers(-60, 60, X.shape)
    w = rng.standard_normal(d) * 2.0 ** draw(st.integers(-40, 40))
    w[0] = 2.0 ** draw(st.integers(-40, 40))
    m = X @ w
    X = X[m != 0]
    if X.shape[0] == 0:
        X = np.eye(1, d) * scale
    y = np.sign(X @ w)
    lo = int(np.argmin(y * (X @ w)))
    extra, ys = [-X[lo]], [-y[lo]]
    spread = 2.0 ** draw(st.integers(0, 16))  # up to 2^16 ulps: some told apart in floats
    for _ in range(draw(st.integers(1, 6))):
        row = X[lo].copy()
        row[0] += rng.choice([-1, 1]) * np.spacing(row[0]) * np.floor(rng.random() * spread)
        extra.append(row)
        ys.append(y[lo])
    X, y = np.vstack([X] + extra), np.concatenate([y, ys])
    perm = rng.permutation(X.shape[0])
    return X[perm], y[perm], w


def _exact_margins(X, y, w):
    """y_i <w, x_i> in fractions.Fraction (independent of the runtime's exact_dot)."""
    we = _exact(w)
    return [int(y[i]) * _dot(_exact(X[i]), we) for i in range(X.shape[0])]


@settings(max_examples=200, deadline=None)
@given(data=tied_margins())
def test_margin_enclosures_contain_the_exact_margins(data):
    from novikoff.runtime._bounds import margin_enclosures
    X, y, w = data
    exact = _exact_margins(X, y, w)
    enc = margin_enclosures(X, y, w, np.arange(X.shape[0]))
    if enc is None:  # an entry outside 2^-400 .. 2^400: the exact path decides
        assert np.abs(X).max() > 2.0 ** 400 or np.abs(X[X != 0]).min() < 2.0 ** -400
        return
    for lo, hi, v in zip(*enc, exact):
        assert Fraction(float(lo)) <= v <= Fraction(float(hi))
        assert hi - lo <= 8 * 2.0 ** -53 * abs(float(v)) or hi - lo < 1e-300


@settings(max_examples=200, deadline=None)
@given(data=tied_margins())
def test_the_certified_gamma_is_the_exact_minimum_rounded_down(data):
    """Tied margins and margins an ulp apart: gamma is the exact minimum rounded down (never
    above it), with the enclosures deciding what they can and with exact arithmetic for every
    candidate; a given gamma is certified up to the exact minimum and refused above it."""
    from novikoff.errors import InvalidArgument
    from novikoff.runtime import _bounds
    X, y, w = data
    exact = min(_exact_margins(X, y, w))
    for entries in (0, 10 ** 9):  # the enclosures from 2 candidates; never
        with pytest.MonkeyPatch.context() as m:
            m.setattr(_bounds, "_ENCLOSE_ENTRIES", entries)
            stats = data_stats(X, y, w)
            gamma = certify_margin(X, y, w, stats)
            assert Fraction(gamma) <= exact < Fraction(float(np.nextafter(gamma, np.inf)))
            assert gamma == _rounded_down(exact)
            assert stats.gamma_exact == (Fraction(gamma) == exact)
            assert certify_margin(X, y, w, data_stats(X, y, w), gamma) == gamma
            above = float(np.nextafter(gamma, np.inf))
            if Fraction(above) > exact:
                with pytest.raises(InvalidArgument, match="smaller margin than gamma"):
                    certify_margin(X, y, w, data_stats(X, y, w), above)


def test_margin_enclosures_of_float32_data_are_those_of_its_float64_values():
    """float32 rows convert exactly: the enclosures split them as binary64 floats."""
    from novikoff.runtime._bounds import margin_enclosures
    rng = np.random.default_rng(4)
    X = rng.standard_normal((30, 9)).astype(np.float32)
    w = rng.standard_normal(9)
    y = np.sign(X.astype(np.float64) @ w).astype(np.float32)
    lo, hi = margin_enclosures(X, y, w, np.arange(30))
    lo64, hi64 = margin_enclosures(X.astype(np.float64), y.astype(np.float64), w, np.arange(30))
    assert np.array_equal(lo, lo64) and np.array_equal(hi, hi64)
    for a, b, v in zip(lo, hi, _exact_margins(X, y, w)):
        assert Fraction(float(a)) <= v <= Fraction(float(b))


@pytest.mark.parametrize("seed", range(3))
def test_a_run_certifies_tied_margins_at_the_exact_minimum(seed):
    """A run whose smallest margin is shared by 12 examples of 100 entries (tied, or an ulp of
    an entry apart, as a max-margin w* makes them): the enclosures decide between them by
    default, and the run's gamma is the exact minimum rounded down."""
    rng = np.random.default_rng(seed)
    d = 100
    w = rng.standard_normal(d)
    w[0] = 1.0
    X = rng.standard_normal((300, d))
    y = np.sign(X @ w)
    lo = int(np.argmin(y * (X @ w)))
    extra = [-X[lo]] + [X[lo] + np.eye(1, d, 0)[0] * np.spacing(X[lo, 0]) * k
                        for k in range(-5, 6)]
    X = np.vstack([X, extra])
    y = np.concatenate([y, [-y[lo]] + [y[lo]] * 11])
    exact = min(_exact_margins(X, y, w))
    from novikoff.runtime import run
    for all_examples in (False, True):
        res = run(X, y, w_star=w, lemmas=[], all_examples=all_examples)
        assert res.gamma == _rounded_down(exact)
