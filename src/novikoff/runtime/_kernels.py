"""The perceptron's inner loop: a numba kernel when numba is installed, a numpy fallback otherwise.

Both have the same contract.  They visit examples order[t % L] for t = state[T] .. t_end-1 and
update w <- w + y*x when the variant's rule fires (classic: y<w,x> <= 0; margin: w = 0 or
y<w,x> <= (gamma/2)||w||).  Per update they log the example, the visit, the prediction
fl(<w, x>), fl(<w_star, x>) and fl(||x||^2) (a zero-length log means checks are off).

During the first pass (need_stats) they also compute <w_star, x> and ||x||^2 of every example
visited, fused with the prediction so the data is read once, for the trusted checks: the largest
||x||^2 (R), the smallest y<w_star, x> (gamma), the first ||x||^2 that is not finite and positive
(bad data), and the candidates for the minimum margin.  The contract: every example whose
y<w_star, x> is below FLOOR is a candidate (with its y<w_star, x>), so the caller knows where the
candidates suffice and re-reads the data when it needs more.  The rule: an example is kept when
its y<w_star, x> is at most  base + cand_coef * sqrt(Q), where base is cand_gamma, or the
smallest y<w_star, x> so far when cand_gamma is NaN, and Q is a max ||x||^2 so far (the numba
kernel refreshes the square root only for an example that it keeps or that lowers FLOOR, to keep
it off the common path); FLOOR is the smallest y<w_star, x> among the examples not kept (-inf
when the candidate buffer ran out of room).  <w_star, x> and ||x||^2 of every example are stored
too when stat_m / stat_q have room.  They return

    CONVERGED (a cyclic pass made no update), END (t_end reached), FULL (the log is full: it
    filled at the last update) or BUDGET (chunk_visits visits done: the caller checks the log,
    shows progress, resumes).

The dot products may be summed in any order (fastmath reassociation): the error bound
gamma_d * sum|a_i b_i| that the monitor uses holds for every order.
"""

from __future__ import annotations

import os

import numpy as np

__all__ = ["HAVE_NUMBA", "run_visits", "new_state", "CONVERGED", "END", "FULL", "BUDGET", "T",
           "EM", "K", "NLOG", "BAD", "NCAND", "QW", "QMAX", "YMIN", "FLOOR"]

CONVERGED, END, FULL, BUDGET = 0, 1, 2, 3
T, EM, K, NLOG, BAD, NCAND = 0, 1, 2, 3, 4, 5  # indices into the int state
# The float state: ||w||^2 (margin rule), then, over the examples whose statistics the first
# pass computed, max ||x||^2, min y<w_star, x> and the smallest y<w_star, x> of a non-candidate.
QW, QMAX, YMIN, FLOOR = 0, 1, 2, 3


def new_state():
    """(int state, float state) for a run from w = 0."""
    st = np.zeros(6, np.int64)
    st[BAD] = -1
    return st, np.array([0.0, 0.0, np.inf, np.inf])


# numba is optional (pip install novikoff[fast]); NOVIKOFF_NO_NUMBA=1 runs the numpy fallback
# with numba installed (CI tests both).
try:
    if os.environ.get("NOVIKOFF_NO_NUMBA", "") not in ("", "0"):
        raise ImportError("NOVIKOFF_NO_NUMBA is set")
    import numba as _nb
    HAVE_NUMBA = True
except ImportError:  # pragma: no cover - depends on the environment
    _nb = None
    HAVE_NUMBA = False


def _numpy_visits(*args):
    """Blocked numpy version: predict a block with one matrix product, stop at its first update."""
    # Bad entries (NaN, inf) are reported from the statistics once the kernel returns; numpy's
    # warnings about them meanwhile would only be noise.
    with np.errstate(all="ignore"):
        return _numpy_visits_blocks(*args)


def _numpy_visits_blocks(X, y, order, w, ws, st, qw, half_gamma, t_end, cyclic, margin,
                         log_i, log_t, log_p, log_m, log_q, stat_m, stat_q, cand_i, cand_y,
                         cand_gamma, cand_coef, need_stats, chunk_visits):
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
        seen = (stop - r) if hits.size == 0 else int(hits[0]) + 1
        if need_stats and t < L:  # the first pass: the statistics of the rows visited
            _numpy_first_pass(Xb[:seen], yb[:seen], rows[:seen], ws, st, qw, stat_m, stat_q,
                              cand_i, cand_y, cand_gamma, cand_coef)
        if hits.size == 0:
            st[T] = t + (stop - r)
            block = min(block * 2, 1 << 16)
        else:
            f = int(hits[0])
            i = int(rows[f])
            w += y[i] * X[i]
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


def _numpy_first_pass(Xb, yb, rows, ws, st, qw, stat_m, stat_q, cand_i, cand_y, cand_gamma,
                      cand_coef):
    """The first pass's statistics of a block of rows, as the numba kernel keeps them row by row."""
    if not rows.size:
        return
    bm = Xb @ ws
    bq = np.einsum("ij,ij->i", Xb, Xb)
    if stat_m.shape[0]:
        stat_m[rows] = bm
    if stat_q.shape[0]:
        stat_q[rows] = bq
    badq = np.flatnonzero(~(np.isfinite(bq) & (bq > 0)))
    if badq.size and st[BAD] < 0:
        st[BAD] = rows[badq[0]]
    ym = yb * bm
    # the running max ||x||^2 and min y*m after each row (NaNs ignored, as the kernel does)
    qrun = np.fmax.accumulate(np.concatenate(([qw[QMAX]], np.where(bq > 0, bq, 0.0))))[1:]
    yrun = np.fmin.accumulate(np.concatenate(([qw[YMIN]], ym)))[1:]
    qw[QMAX], qw[YMIN] = qrun[-1], yrun[-1]
    base = yrun if np.isnan(cand_gamma) else cand_gamma
    keep = ym <= base + cand_coef * np.sqrt(qrun)
    rejected = ym[~keep & ~np.isnan(ym)]
    if rejected.size:
        qw[FLOOR] = min(qw[FLOOR], float(rejected.min()))
    kept = np.flatnonzero(keep)
    c = int(st[NCAND])
    room = max(min(kept.size, cand_i.shape[0] - c), 0)
    cand_i[c:c + room], cand_y[c:c + room] = rows[kept[:room]], ym[kept[:room]]
    if room < kept.size:  # out of room: the candidates are complete below no margin
        qw[FLOOR] = -np.inf
    st[NCAND] = c + room


if HAVE_NUMBA:
    # Reassociation lets LLVM vectorise the dot products; it changes nothing else that matters
    # here (y = +-1 makes y*x exact, so a fused multiply-add in the update rounds the same).
    _fast = {"reassoc", "contract"}

    # order=None stands for the identity (the default order): numba compiles a version of each
    # loop without the indirection, which makes a pass over short rows some 10-15 % faster.

    @_nb.njit(cache=True, fastmath=_fast)
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

    # The rare path of the first pass's statistics (a row below the gate) is a function of its
    # own (_rare_row): it is off the common path.

    @_nb.njit(cache=True, inline="always")
    def _gate(floor, ymin, by_min, cand_gamma, excess):
        """The largest y*m that can still matter to the candidates: a row is kept at most at
        base + excess, and lowers FLOOR only below it.  ymin only changes at a row that is
        below base + excess, so the gate stays valid until the rare path recomputes it."""
        return max(floor, (ymin if by_min else cand_gamma) + excess)

    @_nb.njit(cache=True, fastmath=_fast)
    def _rare_row(i, ym, q, qmax, ymin, floor, bad, ncand, by_min, cand_gamma, cand_coef,
                  cand_i, cand_y):
        """A row below the gate (or a bad row): record a bad row, keep the row as a candidate or
        let it lower FLOOR.  The excess, stale since max ||x||^2 last grew, is refreshed here
        (the square root stays off the common path; a stale one only ever keeps fewer rows, and
        FLOOR covers those).  Returns (excess, floor, bad, ncand, gate)."""
        if not (q > 0.0 and q < np.inf) and bad < 0:
            bad = i
        excess = cand_coef * np.sqrt(qmax)
        if ym <= (ymin if by_min else cand_gamma) + excess:
            if ncand < cand_i.shape[0]:
                cand_i[ncand] = i
                cand_y[ncand] = ym
                ncand += 1
            else:  # out of room: the candidates are complete below no margin
                floor = -np.inf
        elif ym < floor:
            floor = ym
        return excess, floor, bad, ncand, _gate(floor, ymin, by_min, cand_gamma, excess)

    @_nb.njit(cache=True, fastmath=_fast)
    def _scan_first(X, y, order, w, ws, r, r1, thr, always, stat_m, stat_q, cand_i, cand_y,
                    cand_gamma, cand_coef, acc):
        """_scan that also keeps the first pass's statistics of every row it reads.

        acc: (max ||x||^2, min y*m, floor, the candidates' threshold excess, first bad row,
        number of candidates), carried between calls.  Returns (r, p, m, q, acc).
        """
        qmax, ymin, floor, excess, bad, ncand = acc
        d = X.shape[1]
        store_m = stat_m.shape[0] > 0
        store_q = stat_q.shape[0] > 0
        by_min = np.isnan(cand_gamma)
        gate = _gate(floor, ymin, by_min, cand_gamma, excess)
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
            ymin = min(ymin, ym)
            # One comparison on the common path: gate >= FLOOR and >= the keeping threshold, so
            # a row below either one (or a bad row) takes the rare path.
            if ym <= gate or not (q > 0.0 and q < np.inf):
                excess, floor, bad, ncand, gate = _rare_row(
                    i, ym, q, qmax, ymin, floor, bad, ncand, by_min, cand_gamma, cand_coef,
                    cand_i, cand_y)
            # --
            if always or y[i] * p <= thr:
                fired = True
                break
            r += 1
        return (r if fired else r1), p, m, q, (qmax, ymin, floor, excess, bad, ncand)

    @_nb.njit(cache=True, fastmath=_fast)
    def _numba_visits(X, y, order, w, ws, st, qw, half_gamma, t_end, cyclic, margin,
                      log_i, log_t, log_p, log_m, log_q, stat_m, stat_q, cand_i, cand_y,
                      cand_gamma, cand_coef, need_stats, chunk_visits):
        L = X.shape[0] if order is None else order.shape[0]
        d = X.shape[1]
        cap = log_i.shape[0]
        t = st[T]
        em = st[EM]
        k = st[K]
        nlog = st[NLOG]
        acc = (qw[QMAX], qw[YMIN], qw[FLOOR], cand_coef * np.sqrt(qw[QMAX]), st[BAD],
               st[NCAND])
        # The rule fires when y<w,x> <= thr: 0 for the classic rule, (gamma/2)||w|| for the
        # margin rule (which always fires at w = 0); both change only at an update.
        thr = half_gamma * np.sqrt(qw[QW]) if margin else 0.0
        always = margin and qw[QW] == 0.0
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
                                                  stat_m, stat_q, cand_i, cand_y, cand_gamma,
                                                  cand_coef, acc)
                else:
                    r, p = _scan(X, y, order, w, r, r1, thr, always)
                if r >= r1:
                    break
                # an update at position r
                i = r if order is None else order[r]
                yi = y[i]
                for j in range(d):
                    w[j] += yi * X[i, j]
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
                        for j in range(d):
                            xj = X[i, j]
                            m += ws[j] * xj
                            q += xj * xj
                    log_i[nlog] = i
                    log_t[nlog] = t + (r - 1 - r0)
                    log_p[nlog] = p
                    log_m[nlog] = m
                    log_q[nlog] = q
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
        qw[QMAX], qw[YMIN], qw[FLOOR] = acc[0], acc[1], acc[2]
        st[BAD], st[NCAND] = acc[4], acc[5]
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


def run_visits(*args, backend: str = "auto", identity: bool = False):
    """Dispatch to the numba kernel (backend 'numba' or 'auto' with numba) or to numpy.

    identity: the order (args[2]) is 0..n-1, which the numba kernel then does not read.
    """
    if backend == "numba" or (backend == "auto" and HAVE_NUMBA):
        if not HAVE_NUMBA:
            raise ImportError("numba is not installed (pip install 'novikoff[fast]')")
        if identity:
            args = args[:2] + (None,) + args[3:]
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


# The smallest normal float64: below it arithmetic loses relative precision (subnormals), which
# the rounding bounds (u*|v| per operation) do not cover; such rows are refused, not misjudged.
SMALLEST_NORMAL = float(np.finfo(np.float64).tiny)


def scan_norms(nx2: np.ndarray):
    """(index of the first ||x||^2 that is not finite and at least SMALLEST_NORMAL, or -1; the
    largest one)."""
    if HAVE_NUMBA:
        bad, top = _numba_scan_norms(nx2)
        return int(bad), float(top)
    ok = np.isfinite(nx2) & (nx2 >= SMALLEST_NORMAL)
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
            good += (v >= 2.2250738585072014e-308) & (v < np.inf)  # SMALLEST_NORMAL
            top = max(top, v)
        if good == nx2.shape[0]:
            return -1, top
        for i in range(nx2.shape[0]):
            v = nx2[i]
            if not (v >= 2.2250738585072014e-308 and v < np.inf):
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
