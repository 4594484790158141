"""The perceptron's inner loop: a compiled (numba) loop when numba is installed, a numpy fallback otherwise.

Both have the same contract.  They visit examples order[t % L] for t = state[T] .. t_end-1 and
update w <- w + eta*y*x when the variant's rule fires (classic: y<w,x> <= 0; margin: w = 0 or
y<w,x> <= (gamma/2)||w||), from the w they are given (the start w0, or where the last call
stopped).  The step rounds as fl(w_j + fl((eta*y)*x_j)) in both, never fused into one
multiply-add, so that they compute the same weights.  Per update they log the example, the
visit, the prediction fl(<w, x>), fl(<w_star, x>) and fl(||x||^2) (a zero-length log means
checks are off).

During the first pass (need_stats) they also compute, fused with the prediction so the data is
read once (docs/runtime-bounds.md, "What is compiled, and why"), what the trusted checks need:
the largest ||x||^2 (R), the smallest y<w_star, x> and its example (gamma), the second smallest
(with multiplicity: every example below it is the smallest's) and the first bad ||x||^2
(_bounds.first_bad_row); <w_star, x> and ||x||^2 of every example too when stat_m / stat_q have
room.  They return

    CONVERGED (a cyclic pass made no update), END (t_end reached), FULL (the log is full: it
    filled at the last update) or BUDGET (chunk_visits visits done: the caller checks the log,
    shows progress, resumes).

The dot products may be summed in any order (fastmath reassociation): the error bound
gamma_d * sum|a_i b_i| that the monitor uses holds for every order.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ._jit import AVAILABLE, compiled, jit

__all__ = ["HAVE_NUMBA", "run_visits", "new_state", "CONVERGED", "END", "FULL", "BUDGET", "T",
           "EM", "K", "NLOG", "BAD", "IMIN", "QW", "QMAX", "YMIN", "YMIN2", "SMALLEST_NORMAL"]

CONVERGED, END, FULL, BUDGET = 0, 1, 2, 3
# The int state: visits, updates in this pass, updates, log length, first bad row, the example
# of the smallest y<w_star, x>.
T, EM, K, NLOG, BAD, IMIN = 0, 1, 2, 3, 4, 5
# The float state: ||w||^2 (margin rule), then, over the examples whose statistics the first
# pass computed, max ||x||^2 and the smallest and second smallest y<w_star, x>.
QW, QMAX, YMIN, YMIN2 = 0, 1, 2, 3
# The smallest normal float64: below it arithmetic loses relative precision (subnormals), which
# the rounding bounds (u*|v| per operation) do not cover; such rows are refused, not misjudged.
SMALLEST_NORMAL = float(np.finfo(np.float64).tiny)


def new_state(w0=None):
    """(int state, float state) for a run from w = w0 (None: from 0)."""
    st = np.zeros(6, np.int64)
    st[BAD] = st[IMIN] = -1
    qw0 = 0.0 if w0 is None else float(w0 @ w0)  # ||w||^2 for the margin rule
    return st, np.array([qw0, 0.0, np.inf, np.inf])


HAVE_NUMBA = AVAILABLE


class LoopArgs(NamedTuple):
    """The loops' arguments, named, in the order the compiled loop takes them unpacked."""
    X: np.ndarray
    y: np.ndarray
    order: np.ndarray | None   # the positions' examples (None: the identity, compiled only)
    w: np.ndarray              # the weights, updated in place
    ws: np.ndarray             # w_star (zeros when there is none)
    st: np.ndarray             # the int state (T, EM, K, NLOG, BAD, IMIN)
    qw: np.ndarray             # the float state (QW, QMAX, YMIN, YMIN2)
    half_gamma: float          # the margin rule's gamma / 2
    t_end: int                 # the visit at which the run ends
    cyclic: bool               # a pass without an update ends it (CONVERGED)
    margin: bool               # the margin perceptron's rule
    log_i: np.ndarray          # the update log: example, visit, prediction, <w_star, x>,
    log_t: np.ndarray          # ||x||^2 (zero length: checks are off)
    log_p: np.ndarray
    log_m: np.ndarray
    log_q: np.ndarray
    stat_m: np.ndarray         # <w_star, x> and ||x||^2 of every example, when they have room
    stat_q: np.ndarray
    need_stats: bool           # compute the first pass's statistics
    chunk_visits: int          # visits at most in this call (then BUDGET)
# Runs start on the numpy loop, which costs nothing to start, and move to the compiled one once
# they have read this many entries of X or made this many updates (its start-up, some 0.8 s, is
# then a small part of the run).  Both loops make the same updates but where rounding decides a
# near-tie, so the switch depends on the run alone, never on whether numba is already in use in
# the process: the same run gives the same bits in a fresh process and in a long-lived one.
_NUMPY_ENTRIES = 2_000_000
_NUMPY_UPDATES = 2_000
_NUMPY_SLICE = 4096  # visits per call of the numpy loop while the run is small


def _numpy_visits(a: LoopArgs, eta: float):
    """Blocked numpy version: predict a block with one matrix product, stop at its first update.

    The first pass's statistics depend on the rows only, not on the updates: they are computed
    once for every position the call visited in the first pass, after the loop, not block by
    block (an update every few rows made that a few small numpy calls per update).
    """
    t0 = int(a.st[T])
    # Bad entries (NaN, inf) are reported from the statistics once the loop returns; numpy's
    # warnings about them meanwhile would only be noise.
    with np.errstate(all="ignore"):
        status = _numpy_visits_blocks(*a, eta=eta)
    if a.need_stats:
        _numpy_statistics(a, t0)
    return status


def _numpy_statistics(a: LoopArgs, t0: int) -> None:
    """The first pass's statistics of the positions from t0 to where the loop stopped, in
    numpy."""
    X, y, order, ws, st, qw = a.X, a.y, a.order, a.ws, a.st, a.qw
    t1 = min(int(st[T]), order.shape[0])
    if t0 >= t1:
        return
    rows = order[t0:t1]
    consecutive = rows[-1] - rows[0] == t1 - t0 - 1 and bool(np.all(np.diff(rows) == 1))
    step = t1 - t0 if consecutive else _NUMPY_SLICE  # a view, or copies of few rows
    with np.errstate(all="ignore"):
        for start in range(0, t1 - t0, step):
            part = rows[start:start + step]
            Xb = X[part[0]:part[-1] + 1] if consecutive else X[part]
            _numpy_first_pass(Xb, y[part], part, ws, st, qw, a.stat_m, a.stat_q)


def _numpy_visits_blocks(X, y, order, w, ws, st, qw, half_gamma, t_end, cyclic, margin,
                         log_i, log_t, log_p, log_m, log_q, stat_m, stat_q, need_stats,
                         chunk_visits, eta=1.0):
    """The visits alone (the loops' arguments; stat_m, stat_q and need_stats are its caller's,
    _numpy_visits, which computes the first pass's statistics after it)."""
    L = order.shape[0]
    cap = log_i.shape[0]
    budget_end = st[T] + chunk_visits
    block = 64
    while True:
        t = st[T]
        if t >= t_end:
            return END
        if t >= budget_end:
            return BUDGET
        r = t % L
        if r == 0:
            st[EM] = 0
        stop = min(L, r + block, r + (t_end - t), r + (budget_end - t))
        rows = order[r:stop]
        Xb = X[rows]
        p = Xb @ w
        yb = y[rows]
        if margin:
            fire = (yb * p <= half_gamma * np.sqrt(qw[QW])) | (qw[QW] == 0.0)
        else:
            fire = yb * p <= 0.0
        hits = np.flatnonzero(fire)
        if hits.size == 0:
            st[T] = t + (stop - r)
            block = min(block * 2, 1 << 16)
        else:
            f = int(hits[0])
            i = int(rows[f])
            w += y[i] * X[i] if eta == 1.0 else (eta * y[i]) * X[i]
            if margin:
                qw[QW] = float(w @ w)
            st[K] += 1
            st[EM] += 1
            st[T] = t + f + 1
            block = 64
            if cap:
                n = st[NLOG]
                log_i[n], log_t[n], log_p[n] = i, t + f, p[f]
                log_m[n], log_q[n] = X[i] @ ws, X[i] @ X[i]
                st[NLOG] = n + 1
                if n + 1 == cap:
                    return FULL
        # A block never crosses the end of a pass, so this is the end of one.
        if cyclic and st[T] % L == 0 and st[EM] == 0:
            return CONVERGED


def _numpy_first_pass(Xb, yb, rows, ws, st, qw, stat_m, stat_q):
    """The first pass's statistics of a block of rows, as the compiled loop keeps them."""
    if not rows.size:
        return
    bm = Xb @ ws
    bq = np.einsum("ij,ij->i", Xb, Xb)
    if stat_m.shape[0]:
        stat_m[rows] = bm
    if stat_q.shape[0]:
        stat_q[rows] = bq
    badq = np.flatnonzero(~((bq >= SMALLEST_NORMAL) & (bq < np.inf)))
    if badq.size and st[BAD] < 0:
        st[BAD] = rows[badq[0]]
    qw[QMAX] = np.fmax(qw[QMAX], np.fmax.reduce(bq))  # NaNs ignored, as the compiled loop does
    ym = yb * bm
    j = int(np.argmin(ym))
    if ym[j] < qw[YMIN]:
        st[IMIN] = rows[j]
    two = np.partition(np.concatenate(([qw[YMIN], qw[YMIN2]], ym)), 1)[:2]
    qw[YMIN], qw[YMIN2] = two[0], two[1]


# Reassociation lets LLVM vectorise the dot products; it changes nothing else that matters
# here (y = +-1 makes y*x exact, so a fused multiply-add in the update rounds the same).
_FAST = {"reassoc", "contract"}

# order=None stands for the identity (the default order): numba compiles a version of each
# loop without the indirection, which makes a pass over short rows some 10-15 % faster.

@jit(cache=True, fastmath=_FAST)
def _scan(X, y, order, w, r, r1, thr, always):
    """The first position in r..r1-1 where the rule fires (y<w,x> <= thr), its prediction."""
    d = X.shape[1]
    while r < r1:
        i = r if order is None else order[r]
        p = 0.0
        for j in range(d):
            p += w[j] * X[i, j]
        if always or y[i] * p <= thr:
            return r, p
        r += 1
    return r1, 0.0

@jit(cache=True, fastmath=_FAST)
def _scan_first(X, y, order, w, ws, r, r1, thr, always, stat_m, stat_q, acc):
    """_scan that also keeps the first pass's statistics of every row it reads.

    acc: (max ||x||^2, min y*m, second min y*m, first bad row, the example of the min),
    carried between calls.  Returns (r, p, m, q, acc).
    """
    qmax, ymin, ymin2, bad, imin = acc
    d = X.shape[1]
    store_m = stat_m.shape[0] > 0
    store_q = stat_q.shape[0] > 0
    p = 0.0
    m = 0.0
    q = 0.0
    fired = False
    while r < r1:
        i = r if order is None else order[r]
        p = 0.0
        m = 0.0
        q = 0.0
        for j in range(d):
            xj = X[i, j]
            p += w[j] * xj
            m += ws[j] * xj
            q += xj * xj
        # -- the row's statistics --
        if store_m:
            stat_m[i] = m
        if store_q:
            stat_q[i] = q
        qmax = max(qmax, q)
        ym = y[i] * m
        # one comparison on the common path: a row below the second smallest (rare after
        # the first rows), or a bad row
        if ym < ymin2 or not (q >= 2.2250738585072014e-308 and q < np.inf):
            if not (q >= 2.2250738585072014e-308 and q < np.inf) and bad < 0:
                bad = i
            if ym < ymin:
                ymin, ymin2, imin = ym, ymin, i
            elif ym < ymin2:
                ymin2 = ym
        # --
        if always or y[i] * p <= thr:
            fired = True
            break
        r += 1
    return (r if fired else r1), p, m, q, (qmax, ymin, ymin2, bad, imin)

@jit(cache=True, fastmath=_FAST)
def _update(X, i, yi, w, eta, step):
    """w <- w + eta*y_i*x_i."""
    if eta == 1.0:  # y*x is exact: fused or not, the same sum
        for j in range(X.shape[1]):
            w[j] += yi * X[i, j]
    else:
        # fl(w_j + fl(s*x_j)), two roundings as numpy's: the products go through memory, so
        # that 'contract' cannot fuse them into the sums (a fused multiply-add rounds once, and
        # the backends' weights would differ)
        s = eta * yi
        for j in range(X.shape[1]):
            step[j] = s * X[i, j]
        for j in range(X.shape[1]):
            w[j] += step[j]


@jit(cache=True, fastmath=_FAST)
def _statistics(X, i, ws):
    """(<w_star, x_i>, ||x_i||^2)."""
    m = 0.0
    q = 0.0
    for j in range(X.shape[1]):
        xj = X[i, j]
        m += ws[j] * xj
        q += xj * xj
    return m, q


@jit(cache=True, fastmath=_FAST)
def _numba_statistics(X, y, order, ws, st, qw, stat_m, stat_q, r0, r1):
    """The first pass's statistics of positions r0..r1-1 (read by the numpy loop before the
    switch), kept as the compiled loop keeps them: _scan_first with w = 0 and a rule that
    never fires (y*0 <= -inf is false, NaN included) reads every row once."""
    acc = (qw[QMAX], qw[YMIN], qw[YMIN2], st[BAD], st[IMIN])
    acc = _scan_first(X, y, order, np.zeros(X.shape[1]), ws, r0, r1, -np.inf, False,
                      stat_m, stat_q, acc)[4]
    qw[QMAX], qw[YMIN], qw[YMIN2] = acc[0], acc[1], acc[2]
    st[BAD], st[IMIN] = acc[3], acc[4]


@jit(cache=True, fastmath=_FAST)
def _numba_visits(X, y, order, w, ws, st, qw, half_gamma, t_end, cyclic, margin,
                  log_i, log_t, log_p, log_m, log_q, stat_m, stat_q, need_stats,
                  chunk_visits, eta):
    L = X.shape[0] if order is None else order.shape[0]
    d = X.shape[1]
    cap = log_i.shape[0]
    t = st[T]
    em = st[EM]
    k = st[K]
    nlog = st[NLOG]
    acc = (qw[QMAX], qw[YMIN], qw[YMIN2], st[BAD], st[IMIN])
    # The rule fires when y<w,x> <= thr: 0 for the classic rule, (gamma/2)||w|| for the
    # margin rule (which always fires at w = 0); both change only at an update.
    thr = half_gamma * np.sqrt(qw[QW]) if margin else 0.0
    always = margin and qw[QW] == 0.0
    step = np.empty(d if eta != 1.0 else 0)  # eta*y*x of an update
    budget_end = t + chunk_visits
    status = -1
    while status < 0:
        if t >= t_end:
            status = END
            break
        if t >= budget_end:
            status = BUDGET
            break
        # One segment of a pass: positions r0 .. r1-1 (never across the end of a pass).
        r0 = t % L
        if r0 == 0:
            em = 0
        r1 = min(L, r0 + (t_end - t), r0 + (budget_end - t))
        first = need_stats and t < L
        r = r0
        while r < r1:
            m = 0.0
            q = 0.0
            if first:
                r, p, m, q, acc = _scan_first(X, y, order, w, ws, r, r1, thr, always,
                                              stat_m, stat_q, acc)
            else:
                r, p = _scan(X, y, order, w, r, r1, thr, always)
            if r >= r1:
                break
            # an update at position r
            i = r if order is None else order[r]
            _update(X, i, y[i], w, eta, step)
            if margin:
                qq = 0.0
                for j in range(d):
                    qq += w[j] * w[j]
                qw[QW] = qq
                thr = half_gamma * np.sqrt(qq)
                always = qq == 0.0
            k += 1
            em += 1
            r += 1
            if cap > 0:
                if not first:  # the example's statistics, for the bookkeeping
                    m, q = _statistics(X, i, ws)
                log_i[nlog], log_t[nlog] = i, t + (r - 1 - r0)
                log_p[nlog], log_m[nlog], log_q[nlog] = p, m, q
                nlog += 1
                if nlog == cap:
                    status = FULL
                    break
        t += r - r0
        if status < 0 and cyclic and r == L and em == 0:
            status = CONVERGED
    st[T] = t
    st[EM] = em
    st[K] = k
    st[NLOG] = nlog
    qw[QMAX], qw[YMIN], qw[YMIN2] = acc[0], acc[1], acc[2]
    st[BAD], st[IMIN] = acc[3], acc[4]
    return status


def check_backend(backend) -> str:
    """'auto', 'numba' (InvalidArgument when numba is not available) or 'numpy'."""
    from ..errors import InvalidArgument
    if backend not in ("auto", "numba", "numpy"):
        raise InvalidArgument(f"backend={backend!r}: expected 'auto', 'numba' or 'numpy'")
    if backend == "numba" and not HAVE_NUMBA:
        raise InvalidArgument("backend='numba': numba is not installed (pip install "
                              "'novikoff[fast]') or NOVIKOFF_NO_NUMBA is set")
    return backend


def run_visits(*args, backend: str = "auto", identity: bool = False, eta: float = 1.0):
    """Dispatch to the compiled loop (backend 'numba', or 'auto' once the run is past small:
    a choice that depends on the run only) or to numpy.

    args: the fields of LoopArgs, in its order.
    identity: the order is 0..n-1, which the compiled loop then does not read.
    eta: the learning rate, a positive float (an update adds eta*y*x).
    """
    a, eta = LoopArgs(*args), float(eta)
    if backend == "numba" or (backend == "auto" and HAVE_NUMBA):
        if backend == "auto":
            status = _while_small(a, identity, eta)
            if status is not None:
                return status
        return compiled(_numba_visits)(*(a._replace(order=None) if identity else a), eta)
    return _numpy_visits(a, eta)


def _small(X, st) -> bool:
    return st[K] < _NUMPY_UPDATES and st[T] * X.shape[1] < _NUMPY_ENTRIES


def _while_small(a: LoopArgs, identity: bool, eta: float):
    """Run the numpy loop while the run is small: its status, or None once the run is past
    small with visits left in the caller's budget (the compiled loop goes on from there).

    The first pass's statistics of the positions it visits are computed when it stops: by
    the compiled loop's own code (_numba_statistics) when the run goes on past small, since
    it reads those rows in a third of numpy's time (the 20k rows before the switch at
    100k x 100: 1.2 against 0.4 ms), else by numpy.  The choice depends on the run alone.
    """
    X, st = a.X, a.st
    t0 = int(st[T])
    budget_end = t0 + a.chunk_visits
    status = None
    while _small(X, st):
        left = budget_end - int(st[T])
        status = _numpy_visits(a._replace(need_stats=False,
                                          chunk_visits=min(left, _NUMPY_SLICE)), eta)
        if status != BUDGET or left <= _NUMPY_SLICE:
            break
        status = None
    if status is None and budget_end <= st[T]:
        status = BUDGET
    if a.need_stats and (_small(X, st) or status in (END, CONVERGED)):
        _numpy_statistics(a, t0)
    elif a.need_stats:
        L = a.order.shape[0]
        compiled(_numba_statistics)(X, a.y, None if identity else a.order, a.ws, st, a.qw,
                                    a.stat_m, a.stat_q, min(t0, L), min(int(st[T]), L))
    return status


def stream_passes(X: np.ndarray, passes: int) -> float:
    """Read every entry of X `passes` times (the benchmark's memory-streaming baseline)."""
    if HAVE_NUMBA:
        return float(compiled(_numba_stream)(X, passes))
    s = 0.0
    for _ in range(passes):
        s += float(X.sum())
    return s


@jit(cache=True, fastmath=_FAST)
def _numba_stream(X, passes):
    s = 0.0
    for _ in range(passes):
        for i in range(X.shape[0]):
            for j in range(X.shape[1]):
                s += X[i, j]
    return s
