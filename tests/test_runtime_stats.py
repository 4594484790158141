"""The first pass's statistics for the trusted check: extremes, bad rows.

``run`` certifies gamma = min_i y_i <w_star, x_i> and R = max ||x_i|| from statistics that the
kernel's first pass keeps: max ||x||^2, the smallest y*m and its example, the second smallest
y*m and the first bad row.  These tests check that every way of computing them gives the same
run and the same exact certificate, that the kernels keep them as documented, and that bad data
is reported as InvalidArgument.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from novikoff.errors import InvalidArgument
from novikoff.runtime import HAVE_NUMBA, _engine, _loops, load_lemmas, run
from novikoff.runtime._bounds import DataStats, certify_margin, exact_dot
from novikoff.runtime._loops import (BAD, BUDGET, END, FULL, IMIN, NLOG, QMAX, T, YMIN, YMIN2,
                                       new_state, run_visits)

from exact_floats import dot, dot_bound, gamma_n  # noqa: E402  (tests/ is on sys.path)
from test_runtime_engine import separable  # noqa: E402
from test_runtime_inputs import WS0, X0, Y0, _with  # noqa: E402

needs_numba = pytest.mark.skipif(not HAVE_NUMBA, reason="numba is not installed")
BACKENDS = [pytest.param("numba", marks=needs_numba), "numpy"]
BACKEND_NAMES = ["numba", "numpy"] if HAVE_NUMBA else ["numpy"]
# 'auto' moves from the numpy loop to the compiled one mid-pass (kernel_first_pass)
KERNEL_BACKENDS = BACKEND_NAMES + (["auto"] if HAVE_NUMBA else [])
DEFAULT_CHUNK = 1 << 22

_CACHE: dict = {}


def _lemmas():
    if "l" not in _CACHE:
        _CACHE["l"] = load_lemmas()
    return _CACHE["l"]


# ----------------------------------------------------------------------------- helpers

def exact_min_margin(X, y, ws) -> Fraction:
    return min(int(y[i]) * exact_dot(X[i], ws) for i in range(X.shape[0]))


def rounded_down(g: Fraction) -> float:
    """The largest float <= g."""
    f = float(g)
    if Fraction(f) > g:
        f = float(np.nextafter(f, -np.inf))
    assert Fraction(f) <= g < Fraction(float(np.nextafter(f, np.inf)))
    return f


def integer_data(rng, n, d):
    """Small-integer data: every dot product is exact, whatever the summation order."""
    ws = rng.integers(-3, 4, d).astype(float)
    if not ws.any():
        ws[0] = 1.0
    X = rng.integers(-4, 5, (n, d)).astype(float)
    X = X[X @ ws != 0]  # zero rows have zero margin too
    if X.shape[0] == 0:
        X = ws[None, :].copy()
    return X, np.sign(X @ ws), ws


@st.composite
def datasets(draw, unit_rows=True):
    """(X, y, w_star): separable floats, small integers, or a few rows repeated many times.

    unit_rows=False: no float rows of norm 1 within rounding.  (On those the margin setting's
    assumption ||x|| = 1 holds only within rounding, and a lemma that needs it exactly may be
    reported violated, with that note: by design, and on a knife's edge between backends.)
    """
    kind = draw(st.sampled_from(["float", "int", "tiled"]))
    seed = draw(st.integers(0, 2 ** 32 - 1))
    d = draw(st.integers(2, 6))
    rng = np.random.default_rng(seed)
    if kind == "float":
        n = draw(st.integers(1, 40))
        X, y, ws = separable(n, d, draw(st.sampled_from([0.01, 0.1, 0.3])), seed=seed,
                             unit=unit_rows and draw(st.booleans()))
    elif kind == "int":
        X, y, ws = integer_data(rng, draw(st.integers(1, 40)), d)
    else:
        base, yb, ws = separable(draw(st.integers(1, 4)), d, 0.1, seed=seed, unit=False)
        reps = draw(st.integers(2, 10))
        X, y = np.tile(base, (reps, 1)), np.tile(yb, reps)
    return X, y, ws


def make_order(kind, n, rng):
    """(order, cyclic) of the given kind."""
    if kind == "default":
        return None, True
    if kind == "permutation":
        return rng.permutation(n), True
    # some examples only, with repeats (never all of them when n > 1)
    size = int(rng.integers(1, 2 * n + 2))
    pool = rng.choice(n, size=max(1, (n + 1) // 2), replace=False)
    order = rng.choice(pool, size=size)
    return order, kind != "partial-online"


ORDER_KINDS = ["default", "permutation", "partial-online", "partial-cyclic"]
MODES = [(be, cv) for be in BACKEND_NAMES for cv in (DEFAULT_CHUNK, 7)]


def signature(res):
    """Everything about a run that must not depend on how the statistics were computed."""
    return {"mistakes": res.mistakes, "epochs": res.epochs, "visits": res.visits,
            "converged": res.converged, "w": res.w.tobytes(), "updates": res.updates.tolist(),
            "gamma": res.gamma, "R": res.R, "checks": res.checks, "bounds": res.bounds,
            "violations": res.monitor["violations"]}


def all_modes_agree(X, y, ws, **kw):
    """Run in every mode (backend x chunk_visits); return the common signature.

    Everything must agree exactly but R (and the bounds computed from it): ||x||^2 may be
    summed in any order (numba reassociates, numpy's einsum does not), so R may differ by an
    ulp or so between backends, and between the fused pass and the pass over the rows that
    the order never visits.  On integer data every sum is exact, and so must R be.
    """
    exact = bool(np.all(X == np.round(X)) and np.abs(X).max() < 2 ** 20)
    ref = None
    for backend, chunk in MODES:
        res = run(X, y, w_star=ws, lemmas=_lemmas(), backend=backend, chunk_visits=chunk, **kw)
        sig = signature(res)
        if ref is None:
            ref, ref_mode = sig, (backend, chunk)
            continue
        for key in ref:
            mode = (key, (backend, chunk), ref_mode)
            if key in ("R", "bounds") and not exact:
                assert sig[key] == pytest.approx(ref[key], rel=1e-14, abs=0), mode
            else:
                assert sig[key] == ref[key], mode
    return ref, res


class _Read(np.ndarray):
    """A view of the kept margins that notes when an operation reads them."""
    read = False

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        _Read.read = True
        inputs = tuple(np.asarray(a) if isinstance(a, _Read) else a for a in inputs)
        return getattr(ufunc, method)(*inputs, **kwargs)


class CertifySpy:
    """Wraps the engine's certify_margin: did the certification look past the first pass's
    candidates (at the margins the first pass kept, or by re-reading the data)?"""

    def __init__(self, monkeypatch):
        self.calls = []
        original = _engine.certify_margin

        def spy(X, y, ws, stats, gamma=None):
            before = stats.candidates is not None
            kept = stats.m
            _Read.read = False
            if kept is not None:
                stats.m = kept.view(_Read)
            out = original(X, y, ws, stats, gamma)
            # past the candidates: every y*m read (kept, or X @ w_star computed into stats.m)
            past = _Read.read if kept is not None else stats.m is not None
            if kept is not None:
                stats.m = kept
            self.calls.append({"used_candidates": before, "fell_back": before and past,
                               "reread": before and kept is None and stats.m is not None})
            return out

        monkeypatch.setattr(_engine, "certify_margin", spy)


# ----------------------------------------------------------------------------- 1. equivalence

@pytest.mark.parametrize("order_kind", ORDER_KINDS)
@settings(max_examples=12, deadline=None)
@given(data=datasets(unit_rows=False), seed=st.integers(0, 2 ** 32 - 1))
def test_every_way_of_computing_the_statistics_gives_the_same_run(order_kind, data, seed):
    X, y, ws = data
    order, cyclic = make_order(order_kind, X.shape[0], np.random.default_rng(seed))
    kw = dict(order=order, cyclic=cyclic, max_epochs=200)
    classic, _ = all_modes_agree(X, y, ws, **kw)
    assert classic["violations"] == []
    gamma = classic["gamma"]
    assert gamma == rounded_down(exact_min_margin(X, y, ws))
    # the margin rule with the certified gamma, and with a given gamma below the margin
    for g in (gamma, gamma / 2):
        margin, _ = all_modes_agree(X, y, ws, variant="margin", gamma=g, **kw)
        assert margin["gamma"] == g and margin["R"] == classic["R"]
        assert margin["violations"] == []
    # a given gamma on the classic rule
    given_, _ = all_modes_agree(X, y, ws, gamma=gamma / 2, **kw)
    assert given_["mistakes"] == classic["mistakes"] and given_["w"] == classic["w"]


@settings(max_examples=10, deadline=None)
@given(data=datasets(unit_rows=False), seed=st.integers(0, 2 ** 32 - 1),
       order_kind=st.sampled_from(ORDER_KINDS))
def test_every_example_checked_gives_the_same_run_in_every_mode(data, seed, order_kind):
    """all_examples=True: <w_star, x_i> and ||x_i||^2 of every example are kept (stat_m/q)."""
    X, y, ws = data
    order, cyclic = make_order(order_kind, X.shape[0], np.random.default_rng(seed))
    sig, _ = all_modes_agree(X, y, ws, order=order, cyclic=cyclic, max_epochs=200,
                             all_examples=True)
    plain = run(X, y, w_star=ws, lemmas=_lemmas(), order=order, cyclic=cyclic, max_epochs=200)
    assert (sig["gamma"], sig["R"], sig["mistakes"]) == (plain.gamma, plain.R, plain.mistakes)
    assert sig["w"] == plain.w.tobytes() and sig["violations"] == []


def test_r_is_the_largest_norm_of_every_example_visited_or_not():
    X, y, ws = separable(30, 4, 0.1, seed=5, unit=False)
    big = int(np.argmax(np.einsum("ij,ij->i", X, X)))
    order = np.array([i for i in range(30) if i != big])  # the largest row is never visited
    for backend, chunk in MODES:
        res = run(X, y, w_star=ws, lemmas=[], order=order, backend=backend,
                  chunk_visits=chunk)
        assert res.R >= np.linalg.norm(X[big]) and res.R == pytest.approx(
            np.linalg.norm(X[big]), rel=1e-12)


# ----------------------------------------------------------------------------- 2. certification

@settings(max_examples=25, deadline=None)
@given(data=datasets(), seed=st.integers(0, 2 ** 32 - 1),
       order_kind=st.sampled_from(ORDER_KINDS))
def test_certified_gamma_is_the_exact_minimum_rounded_down(data, seed, order_kind):
    X, y, ws = data
    expected = rounded_down(exact_min_margin(X, y, ws))
    order, cyclic = make_order(order_kind, X.shape[0], np.random.default_rng(seed))
    for backend in BACKEND_NAMES:
        for all_examples in (False, True):
            res = run(X, y, w_star=ws, lemmas=[], order=order, cyclic=cyclic, max_epochs=50,
                      backend=backend, all_examples=all_examples)
            assert res.gamma == expected, (backend, all_examples)
    # the margin rule without gamma certifies it before the run: the same value
    res = run(X, y, w_star=ws, lemmas=[], variant="margin", max_epochs=50)
    assert res.gamma == expected


@pytest.mark.parametrize("m", [1, 2, 3, 7, 24, 100])
@pytest.mark.parametrize("backend", BACKENDS)
def test_orthonormal_construction_every_example_ties_at_the_minimum(m, backend):
    X, y = np.eye(m), np.ones(m)
    ws = np.ones(m) / np.sqrt(m)
    expected = rounded_down(exact_min_margin(X, y, ws))
    assert expected == ws[0]  # <w*, e_i> = fl(1/sqrt(m)) exactly
    for order in (None, np.arange(m)[::-1], np.zeros(3 * m + 1, np.int64)):
        res = run(X, y, w_star=ws, lemmas=_lemmas(), order=order, backend=backend)
        assert res.gamma == expected and res.R == pytest.approx(1.0, rel=1e-12)
        assert res.monitor["violations"] == []
        if order is None:
            assert res.mistakes == m


@pytest.mark.parametrize("backend", BACKENDS)
def test_rows_repeated_many_times(backend, monkeypatch):
    base, yb, ws = separable(5, 4, 0.1, seed=7, unit=False)
    reps = 200
    X, y = np.repeat(base, reps, axis=0), np.repeat(yb, reps)
    n = X.shape[0]
    expected = rounded_down(exact_min_margin(base, yb, ws))
    i_min = int(np.argmin(yb * (base @ ws))) * reps
    spy = CertifySpy(monkeypatch)
    cases = [(None, True),
             (np.random.default_rng(0).permutation(n), True),
             # the minimum's row visited again and again
             (np.full(n + 10, i_min), False),
             (np.concatenate([np.arange(n), np.full(n, i_min)]), False)]
    for order, cyclic in cases:
        spy.calls.clear()
        res = run(X, y, w_star=ws, lemmas=[], order=order, cyclic=cyclic, backend=backend)
        assert res.gamma == expected
        (call,) = spy.calls
        # the minimum is tied (repeated rows, or one row visited twice): every margin is looked
        # at, those the first pass kept (X is not read again)
        assert call["fell_back"] and not call["reread"]
    # with a given gamma: at the exact margin it is certified, just above it it is refused
    run(X, y, w_star=ws, gamma=expected, lemmas=[], backend=backend)
    with pytest.raises(InvalidArgument, match="smaller margin than gamma"):
        run(X, y, w_star=ws, gamma=float(np.nextafter(expected, np.inf)), lemmas=[],
            backend=backend)


def _largest_row_last(n=40, big=1e6):
    """Margins 1, 1 + 1e-12, 1 + 2e-12, ... on unit-ish rows, then a row of norm `big`.

    The margins are far apart compared with the rounding error of unit rows, but the last row's
    norm raises the certification's tolerance above the second smallest: every margin is looked at.
    """
    rng = np.random.default_rng(3)
    ws = np.array([1.0, 0.0, 0.0])
    X = np.zeros((n, 3))
    X[:, 0] = 1.0 + 1e-12 * np.arange(n)
    X[:, 1] = rng.uniform(-0.5, 0.5, n)
    X[:, 2] = rng.uniform(-0.5, 0.5, n)
    X[-1] = [big, 1.0, -1.0]
    return X, np.ones(n), ws


@pytest.mark.parametrize("backend", BACKENDS)
def test_largest_row_last_falls_back_and_keeps_the_exact_gamma(backend, monkeypatch):
    X, y, ws = _largest_row_last()
    n = X.shape[0]
    expected = rounded_down(exact_min_margin(X, y, ws))
    assert expected == 1.0
    spy = CertifySpy(monkeypatch)
    for order in (None, np.arange(n), np.r_[n - 1, np.arange(n - 1)]):
        spy.calls.clear()
        res = run(X, y, w_star=ws, lemmas=_lemmas(), order=order, backend=backend)
        assert res.gamma == expected and res.monitor["violations"] == []
        assert res.R == pytest.approx(np.linalg.norm(X[-1]), rel=1e-12)
        (call,) = spy.calls
        assert call["fell_back"] and not call["reread"]
    # given gamma: exactly the margin passes, any larger one is refused in every mode
    run(X, y, w_star=ws, gamma=1.0, lemmas=[], backend=backend)
    with pytest.raises(InvalidArgument, match=r"y\[0\]\*<w_star, X\[0\]> = 1.0 < gamma"):
        run(X, y, w_star=ws, gamma=float(np.nextafter(1.0, 2.0)), lemmas=[], backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_candidates_usually_suffice(backend, monkeypatch):
    """Rows of similar norm: the smallest margin's example suffices (no second read)."""
    X, y, ws = separable(300, 5, 0.05, seed=11)
    spy = CertifySpy(monkeypatch)
    for gamma in (None, 0.04):
        spy.calls.clear()
        run(X, y, w_star=ws, gamma=gamma, lemmas=[], backend=backend)
        (call,) = spy.calls
        assert call["used_candidates"] and not call["fell_back"]


def _incomplete_stats(X, y, ws, drop, floor):
    """DataStats as the engine builds them, with the candidates missing the rows `drop`."""
    n, d = X.shape
    m = X @ ws
    q = np.einsum("ij,ij->i", X, X)
    ym = y * m
    keep = np.setdiff1d(np.arange(n), drop)
    return DataStats(None, None, float(ws @ ws), d, float(q.max()), float(ym.min()),
                     candidates=(keep, ym[keep], floor))


def _tied_data():
    """Rows 3 and 17 one ulp apart: margins within rounding error, told apart exactly.

    Row 3's margin (about 1e-3) is a small difference of larger terms, so moving one coordinate
    of row 17 by one ulp moves its exact margin by many ulps of the margin, yet far less than
    the float margins' error bound E: only exact arithmetic decides which is the minimum.
    """
    rng = np.random.default_rng(2)
    d = 5
    ws = rng.standard_normal(d)
    X = rng.standard_normal((30, d))
    y = np.sign(X @ ws)
    z = rng.standard_normal(d)
    X[3] = z - (z @ ws) / (ws @ ws) * ws + 1e-3 * ws / (ws @ ws)
    y[3] = y[17] = 1.0
    X[17] = X[3]
    j = int(np.argmax(np.abs(ws)))
    X[17, j] = np.nextafter(X[3, j], -np.inf * np.sign(ws[j]))  # y*<w*, x> decreases
    return X, y, ws


def test_certify_margin_falls_back_when_the_candidates_are_incomplete():
    X, y, ws = _tied_data()
    ex = [int(y[i]) * exact_dot(X[i], ws) for i in range(X.shape[0])]
    i_min = min(range(X.shape[0]), key=ex.__getitem__)
    expected = rounded_down(ex[i_min])
    assert i_min == 17 and ex[17] < ex[3]
    full = certify_margin(X, y, ws, _incomplete_stats(X, y, ws, [], np.inf))
    assert full == expected
    for floor in (-np.inf, float(y[17] * (X[17] @ ws)), 0.0):
        stats = _incomplete_stats(X, y, ws, [17], floor)
        assert certify_margin(X, y, ws, stats) == expected
        assert stats.m is not None  # the data was read again
        assert stats.gamma == expected
    # Control: a floor that (falsely) claims completeness is trusted, and then row 17 is
    # missed: the fallback above is what finds it.
    lying = _incomplete_stats(X, y, ws, [17], np.inf)
    assert certify_margin(X, y, ws, lying) == rounded_down(ex[3]) > expected
    assert lying.m is None


def test_certify_margin_with_gamma_falls_back_to_find_the_violation():
    X, y, ws = _tied_data()
    g3 = float(y[3] * (X[3] @ ws))
    gamma = rounded_down(int(y[3]) * exact_dot(X[3], ws))  # above row 17's exact margin
    assert certify_margin(X, y, ws, _incomplete_stats(X, y, ws, [17], np.inf), gamma) == gamma
    for floor in (-np.inf, g3):
        stats = _incomplete_stats(X, y, ws, [17], floor)
        with pytest.raises(InvalidArgument, match=r"y\[17\]\*<w_star, X\[17\]> = .* \(exactly\)"):
            certify_margin(X, y, ws, stats, gamma)
    # and a far worse row missing from the candidates
    Xb = X.copy()
    Xb[25] = -y[25] * ws  # margin -||ws||^2
    for floor in (-np.inf, 0.0):
        with pytest.raises(InvalidArgument, match=r"does not separate the data: y\[25\]\*<w_star"):
            certify_margin(Xb, y, ws, _incomplete_stats(Xb, y, ws, [25], floor), 0.001)
    # (without gamma the engine's candidates always hold the smallest y*m)
    with pytest.raises(InvalidArgument, match=r"does not separate.*y\[25\]"):
        certify_margin(Xb, y, ws, _incomplete_stats(Xb, y, ws, [25], -np.inf))


# ----------------------------------------------------------------------------- 3. kernel level

def kernel_first_pass(X, y, ws, order, backend, *, keep=False, chunk=DEFAULT_CHUNK, log_cap=0,
                      need_stats=True):
    """One pass of run_visits over `order`, resumed after BUDGET/FULL; its statistics."""
    n, d = X.shape
    order = np.asarray(order, np.int64)
    sti, qw = new_state()
    w = np.zeros(d)
    logs = [np.empty(log_cap, np.int64), np.empty(log_cap, np.int64), np.empty(log_cap),
            np.empty(log_cap), np.empty(log_cap)]
    stat_m, stat_q = np.full(n if keep else 0, np.nan), np.full(n if keep else 0, np.nan)
    logged = []
    # 'auto': numpy slices of 3 visits, the compiled loop past 4 rows' entries (and so the
    # first pass's statistics of the numpy loop's rows kept by the compiled code)
    identity = backend == "auto" and np.array_equal(order, np.arange(n))
    saved = _loops._NUMPY_ENTRIES, _loops._NUMPY_SLICE
    while True:
        if backend == "auto":
            _loops._NUMPY_ENTRIES, _loops._NUMPY_SLICE = 4 * d, 3
        try:
            status = run_visits(X, y, order, w, ws, sti, qw, 0.0, order.shape[0], False,
                                False, *logs, stat_m, stat_q, need_stats, chunk,
                                backend=backend, identity=identity)
        finally:
            _loops._NUMPY_ENTRIES, _loops._NUMPY_SLICE = saved
        nl = int(sti[NLOG])
        logged.append([a[:nl].copy() for a in logs])
        sti[NLOG] = 0
        if status == END:
            break
        assert status in (FULL, BUDGET)
    assert sti[T] == order.shape[0]
    log = [np.concatenate([c[k] for c in logged]) for k in range(5)]
    return {"qmax": qw[QMAX], "ymin": qw[YMIN], "ymin2": qw[YMIN2], "imin": int(sti[IMIN]),
            "bad": int(sti[BAD]), "stat_m": stat_m, "stat_q": stat_q, "log": log}


def reference_first_pass(ym, q, order):
    """The documented statistics, visit by visit, in plain Python."""
    qmax, ymin, ymin2, imin = 0.0, np.inf, np.inf, -1
    for i in order:
        qmax = max(qmax, float(q[i]))
        if ym[i] < ymin:
            ymin, ymin2, imin = float(ym[i]), ymin, int(i)
        elif ym[i] < ymin2:
            ymin2 = float(ym[i])
    return {"qmax": qmax, "ymin": ymin, "ymin2": ymin2, "imin": imin}


@st.composite
def kernel_cases(draw):
    seed = draw(st.integers(0, 2 ** 32 - 1))
    rng = np.random.default_rng(seed)
    n, d = draw(st.integers(1, 40)), draw(st.integers(1, 7))
    X = rng.standard_normal((n, d)) * 10.0 ** rng.integers(-3, 4, size=(n, 1))
    ws = rng.standard_normal(d)
    y = rng.choice([-1.0, 1.0], n)  # the statistics do not need separable data
    kind = draw(st.sampled_from(["all", "permutation", "repeats"]))
    if kind == "all":
        order = np.arange(n)
    elif kind == "permutation":
        order = rng.permutation(n)
    else:
        order = rng.integers(0, n, size=int(rng.integers(1, 3 * n + 1)))
    return X, y, ws, order


@settings(max_examples=40, deadline=None)
@given(case=kernel_cases(), chunk=st.sampled_from([DEFAULT_CHUNK, 1, 5]),
       log_cap=st.sampled_from([0, 1, 3, 1000]))
def test_kernel_statistics_of_the_visited_examples(case, chunk, log_cap):
    """Float data: the statistics of the visited rows, up to the rounding of the kernel's own
    dot products; every visited example below the second smallest y*m is the smallest's."""
    X, y, ws, order = case
    visited = np.unique(order).tolist()
    # Compared with the exact values through the documented bound (any summation order:
    # within gamma_d * sum|x_j w_j|, gamma_d * ||x||^2 for a square), not with numpy's floats.
    m = {i: dot(X[i], ws) for i in visited}
    e_m = {i: dot_bound(X[i], ws) for i in visited}
    q = {i: dot(X[i], X[i]) for i in visited}
    g = gamma_n(X.shape[1])

    def m_ok(i, value):
        return abs(Fraction(float(value)) - m[i]) <= e_m[i]

    def q_ok(i, value):
        return abs(Fraction(float(value)) - q[i]) <= g * q[i]

    for backend in KERNEL_BACKENDS:
        out = kernel_first_pass(X, y, ws, order, backend, chunk=chunk, log_cap=log_cap,
                                keep=True)
        assert out["bad"] == -1
        top = max(q.values())
        assert abs(Fraction(out["qmax"]) - top) <= g * top
        imin, ymin = out["imin"], Fraction(out["ymin"])
        assert imin in visited and m_ok(imin, y[imin] * out["ymin"])
        # the smallest of the kernel's floats: no example's exact y*m is below it by more
        # than the bound; every other example's is at least the second smallest within it
        assert all(int(y[i]) * m[i] + e_m[i] >= ymin for i in visited)
        if out["ymin2"] < np.inf:  # (one visit: no second smallest)
            ymin2 = Fraction(out["ymin2"])
            assert all(int(y[i]) * m[i] + e_m[i] >= ymin2 for i in visited if i != imin)
        else:
            assert order.size == 1
        assert all(m_ok(i, out["stat_m"][i]) and q_ok(i, out["stat_q"][i]) for i in visited)
        assert np.isnan(np.delete(out["stat_m"], visited)).all()  # only the visited rows
        if log_cap:  # each update's statistics come with the update log
            i, t, _, lm, lq = out["log"]
            assert i.size >= 1 and np.array_equal(i, order[t])
            assert all(m_ok(j, a) and q_ok(j, b) for j, a, b in zip(i.tolist(), lm, lq))


def _exact_case(seed, n, d, kind):
    rng = np.random.default_rng(seed)
    X = rng.integers(-3, 4, (n, d)).astype(float)
    ws = rng.integers(-3, 4, d).astype(float)
    y = rng.choice([-1.0, 1.0], n)
    order = {"all": np.arange(n), "permutation": rng.permutation(n),
             "repeats": rng.integers(0, n, size=int(rng.integers(1, 3 * n + 1)))}[kind]
    return X, y, ws, order


@settings(max_examples=40, deadline=None)
@given(kind=st.sampled_from(["all", "permutation", "repeats"]), seed=st.integers(0, 2 ** 32 - 1),
       n=st.integers(1, 40), d=st.integers(1, 5))
def test_kernel_statistics_on_exact_data(seed, n, d, kind):
    """Integer data (exact dot products in every summation order, ties common): exactly the
    documented statistics, in every backend and chunking; repeated visits count as ties."""
    X, y, ws, order = _exact_case(seed, n, d, kind)
    ym, q = y * (X @ ws), np.einsum("ij,ij->i", X, X)
    ref = reference_first_pass(ym, q, order)
    zero = np.flatnonzero(q[order] == 0)
    for backend in KERNEL_BACKENDS:
        for chunk in (DEFAULT_CHUNK, 3):
            out = kernel_first_pass(X, y, ws, order, backend, chunk=chunk, log_cap=2)
            assert {k: out[k] for k in ref} == ref, (backend, chunk)
            assert out["bad"] == (int(order[zero[0]]) if zero.size else -1)


@pytest.mark.parametrize("backend", BACKENDS)
def test_kernel_records_the_first_bad_row_in_visit_order(backend):
    X = np.arange(1.0, 28.0).reshape(9, 3)
    X[2] = 0.0
    X[5, 1] = np.nan
    X[8] = 1e-160  # ||x||^2 is subnormal
    y, ws = np.ones(9), np.ones(3)
    with np.errstate(invalid="ignore"):
        assert kernel_first_pass(X, y, ws, np.arange(9), backend)["bad"] == 2
        assert kernel_first_pass(X, y, ws, np.arange(9)[::-1], backend)["bad"] == 8
        assert kernel_first_pass(X, y, ws, np.arange(8)[::-1], backend)["bad"] == 5
        assert kernel_first_pass(X, y, ws, [0, 1, 3], backend)["bad"] == -1


@pytest.mark.parametrize("backend", BACKENDS)
def test_kernel_keeps_no_statistics_after_the_first_pass_or_when_not_asked(backend):
    X, y, ws = separable(20, 3, 0.1, seed=4)
    out = kernel_first_pass(X, y, ws, np.arange(20), backend, need_stats=False, keep=True)
    assert out["imin"] == -1 and out["qmax"] == 0.0 and out["ymin"] == np.inf
    assert np.isnan(out["stat_m"]).all()


# ----------------------------------------------------------------------------- 4. bad data

BAD_DATA = [
    ("nan", _with(X0, (4, 1), np.nan), 4, r"X\[4, 1\]=nan is not finite"),
    ("inf", _with(X0, (7, 2), np.inf), 7, r"X\[7, 2\]=inf is not finite"),
    ("-inf", _with(X0, (7, 0), -np.inf), 7, r"X\[7, 0\]=-inf is not finite"),
    ("zero row", _with(X0, 3, 0.0), 3, r"X\[3\] is a zero row"),
    ("huge row", _with(X0, (2, 0), 1e300), 2, r"X\[2\]: \|\|X\[2\]\|\|\^2 overflows"),
    ("tiny row", _with(X0, 5, 1e-200), 5, r"X\[5\]: \|\|X\[5\]\|\|\^2 = 0.0 is below the smallest normal float"),
    ("subnormal row", _with(X0, 5, 1e-160), 5, r"X\[5\]: \|\|X\[5\]\|\|\^2 = .* is below the smallest normal float"),
    ("last row", _with(X0, (19, 2), np.nan), 19, r"X\[19, 2\]=nan is not finite"),
]
RUN_KINDS = [dict(), dict(gamma=0.05), dict(variant="margin", gamma=0.05),
             dict(variant="margin"), dict(all_examples=True)]


def _bad_orders(bad):
    rng = np.random.default_rng(bad)
    others = np.array([i for i in range(20) if i != bad])
    return [(None, True), (np.arange(20)[::-1].copy(), True),
            (np.r_[rng.choice(others, 5), bad, bad, rng.choice(others, 9)], False),
            (rng.choice(others, 30), True), (rng.choice(others, 30), False)]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name, X, bad, message", BAD_DATA, ids=[c[0] for c in BAD_DATA])
def test_bad_data_found_by_the_statistics_pass_is_named(name, X, bad, message, backend):
    for order, cyclic in _bad_orders(bad):
        for kw in RUN_KINDS:
            for chunk in (DEFAULT_CHUNK, 7):
                with np.errstate(all="ignore"), pytest.raises(InvalidArgument, match=message):
                    # (max_epochs: a zero row fires at every pass, and the kernel returns to
                    # the engine's checks only at the end, a full log or the budget)
                    run(X, Y0, w_star=WS0, lemmas=[], order=order, cyclic=cyclic,
                        backend=backend, chunk_visits=chunk,
                        max_epochs=3, **kw)


@pytest.mark.parametrize("backend", BACKENDS)
def test_several_bad_rows_one_of_them_is_named(backend):
    # Which one may depend on the mode: the fused pass names the first bad row it visits
    # (then the smallest unvisited one).
    X = _with(_with(X0, (2, 0), np.nan), 9, 0.0)
    named = r"(X\[2, 0\]=nan is not finite|X\[9\] is a zero row)"
    for order in (None, np.arange(20)[::-1].copy(), np.array([9, 2]), np.array([9, 1])):
        with np.errstate(all="ignore"), pytest.raises(InvalidArgument, match=named):
            run(X, Y0, w_star=WS0, lemmas=[], order=order, backend=backend,
                max_epochs=3)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_w_star_that_does_not_separate_names_the_example(backend):
    y11 = Y0.copy()
    y11[11] *= -1  # the only example on the wrong side
    for y, ws, i in ((Y0, -WS0, int(np.argmin(Y0 * (X0 @ -WS0)))), (y11, WS0, 11)):
        assert y[i] * (X0[i] @ ws) < 0
        unvisited = np.array([k for k in range(20) if k != i][:5])
        for order, cyclic in ((None, True), (np.arange(20)[::-1].copy(), True),
                              (np.r_[i, i, 0, 1], False), (unvisited, True)):
            for kw in RUN_KINDS:
                with pytest.raises(InvalidArgument,
                                   match=rf"does not separate the data: y\[{i}\]\*<w_star, "
                                         rf"X\[{i}\]> = -"):
                    run(X0, y, w_star=ws, lemmas=[], order=order, cyclic=cyclic,
                        backend=backend, **kw)


# ----------------------------------------------------------------------------- 5. tiny data

@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("n", [1, 2, 3])
def test_tiny_data(backend, n):
    X, y, ws = separable(n, 2, 0.2, seed=n)
    for kw in (dict(), dict(order=[n - 1], cyclic=False), dict(variant="margin", gamma=0.1),
               dict(all_examples=True)):
        a = run(X, y, w_star=ws, lemmas=_lemmas(), backend=backend, chunk_visits=1, **kw)
        b = run(X, y, w_star=ws, lemmas=_lemmas(), backend=backend, **kw)
        assert signature(a) == signature(b)
        assert a.monitor["violations"] == [] and a.converged == (kw.get("cyclic", True))
    res = run(X, y, w_star=ws, lemmas=[], backend=backend)
    assert res.gamma == rounded_down(exact_min_margin(X, y, ws))
    assert res.R == pytest.approx(np.sqrt(np.einsum("ij,ij->i", X, X).max()), rel=1e-12)


# ----------------------------------------------------------------------------- 6. fixes found here

@pytest.mark.parametrize("backend", BACKENDS)
def test_gamma_just_below_the_minimum_needs_no_second_read(backend, monkeypatch):
    """With gamma given just below the margin, the smallest margin's example suffices."""
    X, y, ws = separable(300, 5, 0.05, seed=11)
    g = float(np.nextafter(rounded_down(exact_min_margin(X, y, ws)), -np.inf))  # 1 ulp below
    spy = CertifySpy(monkeypatch)
    run(X, y, w_star=ws, gamma=g, lemmas=[], backend=backend)
    (call,) = spy.calls
    assert call["used_candidates"] and not call["fell_back"]


@pytest.mark.parametrize("w_star, what", [(np.array([1e300, 1e300]), "overflows"),
                                          (np.array([1e-300, 0.0]), "underflows")])
def test_a_w_star_whose_squared_norm_is_not_a_positive_float_is_refused(w_star, what):
    X = np.array([[1.0, 0.0], [1e10, -1e10], [3.0, 1.0]])
    y = np.ones(3)
    with pytest.raises(InvalidArgument, match=rf"w_star: \|\|w_star\|\|\^2 {what}"):
        run(X, y, w_star=w_star, lemmas=[])
    from novikoff.runtime import audit
    trace_w = np.cumsum(X * y[:, None], axis=0)
    with pytest.raises(InvalidArgument, match=rf"w_star: \|\|w_star\|\|\^2 {what}"):
        audit(X, y, order=np.arange(3), w=trace_w, w_star=w_star)


@pytest.mark.parametrize("backend", BACKENDS)
def test_bad_data_is_reported_at_the_end_of_the_first_pass(backend, monkeypatch):
    """A zero row makes the classic rule fire at every visit: the run must not go on (filling
    its log for tens of thousands of passes) before the statistics report the row."""
    X, y, ws = separable(20, 3, 0.1, seed=1, unit=False)
    X[9] = 0.0
    visits = []
    original = _engine.run_visits

    def counting(*args, **kwargs):
        status = original(*args, **kwargs)
        visits.append(int(args[5][T]))
        return status

    monkeypatch.setattr(_engine, "run_visits", counting)
    with pytest.raises(InvalidArgument, match=r"X\[9\] is a zero row"):
        run(X, y, w_star=ws, lemmas=[], backend=backend)
    assert visits and visits[-1] <= X.shape[0]


@pytest.mark.parametrize("backend", ["fortran", None, 3])
def test_an_unknown_backend_is_refused(backend):
    X, y, ws = separable(20, 3, 0.1, seed=1)
    with pytest.raises(InvalidArgument, match=r"backend="):
        run(X, y, w_star=ws, lemmas=[], backend=backend)


def test_the_numba_backend_without_numba_is_refused(monkeypatch):
    from novikoff.runtime import _loops
    monkeypatch.setattr(_loops, "HAVE_NUMBA", False)
    X, y, ws = separable(20, 3, 0.1, seed=1)
    with pytest.raises(InvalidArgument, match=r"backend='numba': numba is not installed"):
        run(X, y, w_star=ws, lemmas=[], backend="numba")


# ------------------------------------------------------------------ the default order's kernel

@pytest.mark.parametrize("variant", ["classic", "margin"])
@pytest.mark.parametrize("seed", range(3))
def test_default_order_runs_as_the_explicit_identity(variant, seed):
    """order=None gives the numba kernel no order to read (its identity version): the run must
    be the one an explicit 0..n-1 order gives, in every mode and chunking."""
    X, y, ws = separable(400 + 100 * seed, 3 + 4 * seed, 0.03, seed=seed, unit=seed != 1)
    gamma = float(np.min(y * (X @ ws))) / 2 if variant == "margin" else None
    n = X.shape[0]
    for backend in BACKEND_NAMES:
        for chunk in (DEFAULT_CHUNK, 61):
            kw = dict(w_star=ws, lemmas=_lemmas(), variant=variant, gamma=gamma,
                      backend=backend, chunk_visits=chunk)
            default = signature(run(X, y, **kw))
            explicit = signature(run(X, y, order=np.arange(n), **kw))
            assert default == explicit
            assert signature(run(X, y, order=list(range(n)), **kw)) == explicit
    off = run(X, y, w_star=ws, checks=False, validate=False, variant=variant, gamma=gamma)
    assert off.mistakes == default["mistakes"] and off.w.tobytes() == default["w"]


@needs_numba
@pytest.mark.parametrize("need_stats", [False, True])
def test_identity_kernel_matches_the_indexed_kernel(need_stats):
    X, y, ws = separable(300, 7, 0.05, seed=4, unit=False)
    n = X.shape[0]
    results = []
    for identity in (False, True):
        sti, qw = new_state()
        w = np.zeros(7)
        logs = [np.empty(4096, np.int64), np.empty(4096, np.int64), np.empty(4096),
                np.empty(4096), np.empty(4096)]
        status = run_visits(X, y, np.arange(n), w, ws, sti, qw, 0.0, 10 * n, True, False,
                            *logs, np.empty(0), np.empty(0), need_stats, 1 << 30,
                            backend="numba", identity=identity)
        nl = int(sti[NLOG])
        results.append((status, sti.tolist(), qw.tolist(), w.tobytes(),
                        [a[:nl].tolist() for a in logs]))
    assert results[0] == results[1]
    assert results[0][1][NLOG] > 5  # the run made updates
