"""The perceptron's inner loop: a numba kernel when numba is installed, a numpy fallback otherwise.

Both have the same contract.  They visit examples order[t % L] for t = state[T] .. t_end-1 and
update w <- w + y*x when the variant's rule fires (classic: y<w,x> <= 0; margin: w = 0 or
y<w,x> <= (gamma/2)||w||).  Per update they log the example, the visit, the prediction
fl(<w, x>), fl(<w_star, x>) and fl(||x||^2) (when the log has room: a zero-length log means
checks are off).  During the first pass (need_stats) they also compute <w_star, x> (stored per
example) and ||x||^2 (stored only if stat_q has room; its maximum and the first one that is not
finite and positive are kept) for every example visited, fused with the prediction so the data is
read once.  They return

    CONVERGED (a cyclic pass made no update), END (t_end reached), FULL (the log is full) or
    BUDGET (chunk_visits visits done: the caller checks the log, shows progress, resumes).

The dot products may be summed in any order (fastmath reassociation): the error bound
gamma_d * sum|a_i b_i| that the monitor uses holds for every order.
"""

from __future__ import annotations

import numpy as np

__all__ = ["HAVE_NUMBA", "run_visits", "new_state", "CONVERGED", "END", "FULL", "BUDGET", "T",
           "EM", "K", "NLOG", "BAD", "QW", "QMAX", "YMIN"]

CONVERGED, END, FULL, BUDGET = 0, 1, 2, 3
T, EM, K, NLOG, BAD = 0, 1, 2, 3, 4  # indices into the int state
# The float state qw: ||w||^2 (margin rule), then max ||x||^2 and min y<w_star, x> over the
# examples whose statistics the first pass computed (for the trusted checks).
QW, QMAX, YMIN = 0, 1, 2


def new_state():
    """(int state, float state) for a run from w = 0."""
    st = np.zeros(5, np.int64)
    st[BAD] = -1
    return st, np.array([0.0, 0.0, np.inf])

try:  # numba is optional (pip install novikoff[fast])
    import numba as _nb
    HAVE_NUMBA = True
except ImportError:  # pragma: no cover - depends on the environment
    _nb = None
    HAVE_NUMBA = False


def _numpy_visits(X, y, order, w, ws, st, qw, half_gamma, t_end, cyclic, margin,
                  log_i, log_t, log_p, log_m, log_q, stat_m, stat_q, need_stats, chunk_visits):
    """Blocked numpy version: predict a block with one matrix product, stop at its first update."""
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
        if need_stats and t < L:  # the first pass: every example of the order is visited
            nr = rows
            bm = Xb @ ws
            bq = np.einsum("ij,ij->i", Xb, Xb)
            stat_m[nr] = bm
            if stat_q.shape[0]:
                stat_q[nr] = bq
            badq = np.flatnonzero(~(np.isfinite(bq) & (bq > 0)))
            if badq.size and st[BAD] < 0:
                st[BAD] = nr[badq[0]]
            good = bq[np.isfinite(bq)]
            if good.size:
                qw[QMAX] = max(qw[QMAX], float(good.max()))
            qw[YMIN] = min(qw[YMIN], float(np.nanmin(y[nr] * bm)) if bm.size else np.inf)
        p = Xb @ w
        yb = y[rows]
        if margin:
            fire = (yb * p <= half_gamma * np.sqrt(qw[0])) | (qw[0] == 0.0)
        else:
            fire = yb * p <= 0.0
        hits = np.flatnonzero(fire)
        if hits.size == 0:
            st[T] = t + (stop - r)
            block = min(block * 2, 1 << 16)
        else:
            f = int(hits[0])
            i = int(rows[f])
            if cap and st[NLOG] >= cap:
                st[T] = t + f
                return FULL
            w += y[i] * X[i]
            if margin:
                qw[0] = float(w @ w)
            if cap:
                n = st[NLOG]
                log_i[n], log_t[n], log_p[n] = i, t + f, p[f]
                log_m[n], log_q[n] = X[i] @ ws, X[i] @ X[i]
                st[NLOG] = n + 1
            st[K] += 1
            st[EM] += 1
            st[T] = t + f + 1
            block = 64
        # A block never crosses the end of a pass, so this is the end of one.
        if cyclic and st[T] % L == 0 and st[EM] == 0:
            return CONVERGED


if HAVE_NUMBA:
    # Reassociation lets LLVM vectorise the dot products; it changes nothing else that matters
    # here (y = +-1 makes y*x exact, so a fused multiply-add in the update rounds the same).
    _fast = {"reassoc", "contract"}

    @_nb.njit(cache=True, fastmath=_fast)
    def _numba_visits(X, y, order, w, ws, st, qw, half_gamma, t_end, cyclic, margin,
                      log_i, log_t, log_p, log_m, log_q, stat_m, stat_q, need_stats,
                      chunk_visits):
        L = order.shape[0]
        store_q = stat_q.shape[0] > 0
        d = X.shape[1]
        cap = log_i.shape[0]
        t = st[0]
        em = st[1]
        k = st[2]
        nlog = st[3]
        bad = st[4]
        qmax = qw[1]
        ymin = qw[2]
        budget_end = t + chunk_visits
        while True:
            if t >= t_end:
                status = 1
                break
            if t >= budget_end:
                status = 3
                break
            # One segment of a pass: positions r0 .. r1-1, no division in the inner loop.
            r0 = t % L
            if r0 == 0:
                em = 0
            r1 = min(L, r0 + (t_end - t), r0 + (budget_end - t))
            status = -1
            # The first pass (a segment never crosses the end of a pass) also computes
            # <w_star, x> and ||x||^2 of every example it visits, fused with the prediction so
            # that each row is read once.
            first = need_stats and t < L
            r = r0
            m = 0.0
            q = 0.0
            while r < r1:
                i = order[r]
                p = 0.0
                if first:
                    m = 0.0
                    q = 0.0
                    for j in range(d):
                        xj = X[i, j]
                        p += w[j] * xj
                        m += ws[j] * xj
                        q += xj * xj
                    stat_m[i] = m
                    if store_q:
                        stat_q[i] = q
                    # the trusted checks' reductions, while the row is at hand
                    if not (q > 0.0 and q < np.inf) and bad < 0:
                        bad = i
                    qmax = max(qmax, q)
                    ymin = min(ymin, y[i] * m)
                else:
                    for j in range(d):
                        p += w[j] * X[i, j]
                yi = y[i]
                if margin:
                    fire = qw[0] == 0.0 or yi * p <= half_gamma * np.sqrt(qw[0])
                else:
                    fire = yi * p <= 0.0
                if fire:
                    if cap > 0 and nlog >= cap:
                        status = 2
                        break
                    for j in range(d):
                        w[j] += yi * X[i, j]
                    if margin:
                        qq = 0.0
                        for j in range(d):
                            qq += w[j] * w[j]
                        qw[0] = qq
                    if cap > 0:
                        if not first:  # the example's statistics, for the bookkeeping
                            m = 0.0
                            q = 0.0
                            for j in range(d):
                                xj = X[i, j]
                                m += ws[j] * xj
                                q += xj * xj
                        log_i[nlog] = i
                        log_t[nlog] = t + (r - r0)
                        log_p[nlog] = p
                        log_m[nlog] = m
                        log_q[nlog] = q
                        nlog += 1
                    k += 1
                    em += 1
                r += 1
            t += r - r0
            if status == 2:
                break
            if cyclic and r == L and em == 0:
                status = 0
                break
        st[0] = t
        st[1] = em
        st[2] = k
        st[3] = nlog
        st[4] = bad
        qw[1] = qmax
        qw[2] = ymin
        return status


def run_visits(*args, backend: str = "auto"):
    """Dispatch to the numba kernel (backend 'numba' or 'auto' with numba) or to numpy."""
    if backend == "numba" or (backend == "auto" and HAVE_NUMBA):
        if not HAVE_NUMBA:
            raise ImportError("numba is not installed (pip install 'novikoff[fast]')")
        return _numba_visits(*args)
    return _numpy_visits(*args)


def stream_passes(X: np.ndarray, passes: int) -> float:
    """Read every entry of X `passes` times (the benchmark's memory-streaming baseline)."""
    if HAVE_NUMBA:
        return float(_numba_stream(X, passes))
    s = 0.0
    for _ in range(passes):
        s += float(X.sum())
    return s


if HAVE_NUMBA:
    @_nb.njit(cache=True, fastmath=_fast)
    def _numba_stream(X, passes):
        s = 0.0
        for _ in range(passes):
            for i in range(X.shape[0]):
                for j in range(X.shape[1]):
                    s += X[i, j]
        return s


def scan_norms(nx2: np.ndarray):
    """(index of the first ||x||^2 that is not finite and positive, or -1; the largest one)."""
    if HAVE_NUMBA:
        bad, top = _numba_scan_norms(nx2)
        return int(bad), float(top)
    ok = np.isfinite(nx2) & (nx2 > 0)
    if not ok.all():
        return int(np.flatnonzero(~ok)[0]), float("nan")
    return -1, float(nx2.max()) if nx2.size else 0.0


def margins_near(m: np.ndarray, y: np.ndarray, gamma, tol: float, lo=None):
    """Rows whose y*m is within tol above gamma (or above the minimum of y*m if gamma is None).

    Returns (indices, min of y*m); lo: that minimum, if already known.
    """
    if HAVE_NUMBA:
        idx, lo = _numba_margins_near(m, y, np.nan if gamma is None else float(gamma), tol,
                                      np.nan if lo is None else float(lo))
        return idx, float(lo)
    ym = y * m
    lo = float(ym.min()) if lo is None else lo
    threshold = (lo if gamma is None else gamma) + tol
    return np.flatnonzero(ym <= threshold), lo


if HAVE_NUMBA:
    @_nb.njit(cache=True)
    def _numba_scan_norms(nx2):
        top = 0.0
        good = 0
        for i in range(nx2.shape[0]):  # branch-free: vectorisable
            v = nx2[i]
            good += (v > 0.0) & (v < np.inf)
            top = max(top, v)
        if good == nx2.shape[0]:
            return -1, top
        for i in range(nx2.shape[0]):
            v = nx2[i]
            if not (v > 0.0 and v < np.inf):
                return i, np.nan
        return -1, top

    @_nb.njit(cache=True)
    def _numba_margins_near(m, y, gamma, tol, lo):
        if np.isnan(lo):
            lo = np.inf
            for i in range(m.shape[0]):
                lo = min(lo, y[i] * m[i])
        threshold = (lo if np.isnan(gamma) else gamma) + tol
        # One pass into a buffer of the worst-case size (its untouched pages cost nothing).
        buf = np.empty(m.shape[0], np.int64)
        c = 0
        for i in range(m.shape[0]):
            buf[c] = i
            c += y[i] * m[i] <= threshold
        return buf[:c].copy(), lo


def first_bad_label(y: np.ndarray) -> int:
    """The index of the first label not in {-1, +1} (NaN included), or -1."""
    if HAVE_NUMBA and y.dtype == np.float64:
        return int(_numba_bad_label(y))
    bad = np.flatnonzero(np.abs(y) != 1)
    return int(bad[0]) if bad.size else -1


if HAVE_NUMBA:
    @_nb.njit(cache=True)
    def _numba_bad_label(y):
        good = 0
        for i in range(y.shape[0]):  # branch-free count first: the common case is all good
            good += abs(y[i]) == 1.0
        if good == y.shape[0]:
            return -1
        for i in range(y.shape[0]):
            if not abs(y[i]) == 1.0:
                return i
        return -1
