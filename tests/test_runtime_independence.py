"""Runs are independent of each other, and the bookkeeping of a chunk keeps its floats.

Interleaved, nested and threaded runs report what they report alone (the compiled monitors and
programs are shared between runs: they must hold no run state); the bookkeeping, compiled by
numba or run as Python, computes the floats of tests/data/bookkeeping_golden.npz, bit for bit.
"""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pytest

from novikoff.kernel import Inner, Relation
from novikoff.runtime import HAVE_NUMBA, Lemma, LemmaViolation, load_lemmas, run
from novikoff.runtime import _bounds, _jit
from novikoff.runtime._bounds import _NROWS, _factors, gam

from test_runtime_engine import R, k, separable, w  # noqa: E402

needs_numba = pytest.mark.skipif(not HAVE_NUMBA, reason="numba is not installed")
_LEMMAS: list = []


def _lemmas():
    if not _LEMMAS:
        _LEMMAS.extend(load_lemmas())
    return _LEMMAS


def _summary(res):
    """What a run reports, as plain data (updates and weights included)."""
    return (res.mistakes, res.epochs, res.visits, res.converged, res.gamma, res.R, res.checks,
            res.bounds, res.monitor, res.w.tolist(), res.updates.tolist())


def test_runs_interleaved_with_other_runs_report_the_same():
    Xa, ya, wa = separable(300, 6, 0.05, seed=1)
    Xb, yb, wb = separable(900, 11, 0.02, seed=2)
    first = _summary(run(Xa, ya, w_star=wa, lemmas=_lemmas()))
    other = _summary(run(Xb, yb, w_star=wb, lemmas=_lemmas()))
    again = _summary(run(Xa, ya, w_star=wa, lemmas=_lemmas()))
    assert first == again
    assert other == _summary(run(Xb, yb, w_star=wb, lemmas=_lemmas()))


def _textbook_updates(X, y, max_epochs=1000):
    """The classic perceptron in plain Python (exact on integer data): its updates' examples."""
    w = np.zeros(X.shape[1])
    updates = []
    for _ in range(max_epochs):
        clean = True
        for i in range(X.shape[0]):
            if y[i] * float(w @ X[i]) <= 0:
                w = w + y[i] * X[i]
                updates.append(i)
                clean = False
        if clean:
            break
    return updates, w


def test_a_run_reports_its_own_updates_across_many_chunks():
    """The update log is reused from chunk to chunk: what the result keeps must be copied."""
    rng = np.random.default_rng(7)
    ws = rng.integers(-3, 4, 6).astype(float)
    X = rng.integers(-4, 5, (400, 6)).astype(float)
    m = X @ ws
    X, y = X[np.abs(m) >= 2], np.sign(m[np.abs(m) >= 2])
    expected, w = _textbook_updates(X, y)
    assert len(expected) > 30
    for chunk in (7, 1 << 22):
        res = run(X, y, w_star=ws, lemmas=_lemmas(), chunk_visits=chunk)
        assert res.updates.tolist() == expected and res.w.tolist() == w.tolist()


def test_a_run_nested_in_another_does_not_disturb_it():
    Xa, ya, wa = separable(400, 5, 0.03, seed=3)
    Xb, yb, wb = separable(200, 9, 0.05, seed=4)
    alone = _summary(run(Xa, ya, w_star=wa, lemmas=_lemmas(), chunk_visits=97))
    inner = []

    def progress(*_):  # a run inside the outer run's loop, between its chunks
        inner.append(_summary(run(Xb, yb, w_star=wb, lemmas=_lemmas())))

    nested = _summary(run(Xa, ya, w_star=wa, lemmas=_lemmas(), chunk_visits=97,
                          progress=progress))
    assert nested == alone
    assert len(inner) > 3 and all(s == inner[0] for s in inner)


def test_runs_in_threads_report_what_they_report_alone():
    data = [separable(300 + 50 * s, 4 + s, 0.04, seed=10 + s) for s in range(4)]
    alone = [_summary(run(X, y, w_star=w, lemmas=_lemmas(), chunk_visits=131))
             for X, y, w in data]
    got = [None] * len(data)

    def work(j):
        X, y, w = data[j]
        for _ in range(3):
            got[j] = _summary(run(X, y, w_star=w, lemmas=_lemmas(), chunk_visits=131))

    threads = [threading.Thread(target=work, args=(j,)) for j in range(len(data))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert got == alone


def test_a_violation_after_reuse_reports_its_own_run():
    X, y, ws = separable(100, 4, 0.1, seed=12)
    too_much = Lemma("too_much", Relation("<=", Inner(w(k), w(k)), k * R ** 2 / 16))
    with pytest.raises(LemmaViolation) as fresh:
        run(X, y, w_star=ws, lemmas=[too_much], include_unverified=True)
    Xg, yg, wg = separable(700, 4, 0.02, seed=5)
    run(Xg, yg, w_star=wg, lemmas=_lemmas())  # a clean run fills the scratch with its values
    with pytest.raises(LemmaViolation) as reused:
        run(X, y, w_star=ws, lemmas=[too_much], include_unverified=True)
    a, b = fresh.value, reused.value
    assert (a.k, a.visit, a.example, a.lhs, a.rhs, a.tolerance) == \
        (b.k, b.visit, b.example, b.lhs, b.rhs, b.tolerance)


# ------------------------------------------------------------------ compiled bookkeeping


_GOLDEN = Path(__file__).parent / "data" / "bookkeeping_golden.npz"


@pytest.mark.parametrize("python", [False, pytest.param(True, marks=needs_numba)])
def test_bookkeeping_is_the_one_before_it_was_compiled(python):
    """The bookkeeping (compiled when numba is installed, and as Python) against the numpy
    bookkeeping of commit f65809a, bit for bit, including chunks with NaN, inf, -0, subnormal
    and huge entries (tests/data/make_bookkeeping_golden.py)."""
    rows = _bounds._chunk_rows if python or not HAVE_NUMBA else _jit.compiled(_bounds._chunk_rows)
    golden = np.load(_GOLDEN)
    cases = sorted({key.split("_")[0] for key in golden.files}, key=int)
    assert len(cases) == 40
    for c in cases:
        g = {key.split("_", 1)[1]: golden[key] for key in golden.files
             if key.split("_")[0] == c}
        s, d = float(g["s_d"][0]), int(g["s_d"][1])
        _, _, _, ge, cn, ce = _factors(s, d)
        L = g["y"].shape[0]
        out, ends = np.full((_NROWS, L), -7.0), np.full(6, -7.0)
        inputs = (g["y"], g["p"], g["m"], g["nx2"])
        if python or not HAVE_NUMBA:  # Python reads lists (as chunk_rows passes them)
            inputs = tuple(a.tolist() for a in inputs)
        rows(*inputs, *map(float, g["state"]), cn, ce, ge, gam(d), out, ends)
        assert np.array_equal(out, g["out"], equal_nan=True), c
        assert np.array_equal(ends, g["ends"], equal_nan=True), c
