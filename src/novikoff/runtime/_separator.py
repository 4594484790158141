"""w_star and gamma when the user gives none: solvers (SciPy's NNLS, descent on the dual), then a trusted check.

The solvers are untrusted: whatever they return is certified by ``certify_margin`` (gamma = min
y<w*, x> > 0, decided exactly where rounding could matter) before any lemma uses it.
"""

from __future__ import annotations

import sys

import numpy as np

from ..errors import InvalidArgument
from . import _jit
from ._threads import one_blas_thread

__all__ = ["max_margin_separator", "soft_margin_separator", "hinge_candidates", "td_at"]


def _scipy():
    try:
        import scipy.optimize as opt
    except ImportError:  # pragma: no cover - scipy is a dependency
        raise InvalidArgument("w_star=None: computing a separator needs scipy "
                              "(pip install scipy), or give w_star") from None
    return opt


# ------------------------------------------------------------------ the max-margin separator
#
# max_{||w|| = 1} min_i z_i.w (z_i = y_i x_i) is the distance from 0 to the convex hull of the
# z_i, attained at its minimum-norm point p (w* = p/||p||), when that distance is positive; 0 in
# the hull means that no w separates.  ||p|| over a working set S of examples bounds the best
# margin from above and min_i z_i.p/||p|| from below: the solver grows S until they agree
# (docs/runtime-bounds.md, "The separator when no w* is given", says how).
#
# From d = _CD_FROM the exact solve of a working set is too slow (NNLS adds one support vector
# at a time, and at d = 1000 there are some 900): descent on the dual (_level_dual) takes its
# place and stops when the two bounds are within _CD_GAP, which is all the runtime needs, since
# the margin of the direction found is certified afterwards from the direction itself.  With
# numba the descent is coordinate descent, compiled; without, accelerated projected gradient in
# numpy (matrix-vector products).  Its steps read the working set's rows rounded to float32
# while the margin is not too small for that (_CD_SINGLE); both bounds are computed from the
# float64 data.
#
# Scale: every quantity is homogeneous in X, and the working sets are divided by a power of two
# near their radius (exact), so X*c and X give the same direction up to the rounding of X*c.
# Data whose margins would over- or underflow is first copied divided by a power of two.

_TOL = 1e-9            # relative gap between the two bounds at which the solve stops
_ROUNDS = 200          # passes over the data at most (per level)
_SPLIT = 32            # each level solves a random 1/_SPLIT of the data first ...
_SMALLEST = 2048       # ... while that part has at least this many examples
_KEEP = 4              # non-support examples kept in the working set: _KEEP * _ADD * (d + 1)
_ADD = 16              # examples added per round: _ADD * (d + 1), the most violated
_CAP = 256             # ... and of each at most max(d + 1, _CAP)
_INFEASIBLE = 1e-14    # NNLS residual (working set of radius ~1) below which 0 is in the hull
_AMBIGUOUS = 1e-10     # ... below which a linear program confirms either way
_OWN_NNLS_ROWS = 8     # NNLS in numpy up to d = 7 (SciPy's is more robust on hard larger data)
_OWN_NNLS_MOST = 20    # ... for the first calls of a process (SciPy's is faster once imported)
_OWN_NNLS_CALLS = [0]
_OWN_NNLS_USED = [False]  # in the current solve (None: SciPy's only, a solve done again)
_SAFE = 2.0 ** 600     # margins outside [1/_SAFE, _SAFE] are recomputed on a rescaled copy
# From this dimension on, a working set is solved by descent on the dual to within _CD_GAP of
# its maximum instead of exactly by NNLS, whose active set grows one example at a time: at
# d = 1000 the support holds some 900 examples, and NNLS took 3 s per solve.  (Measured on
# planted data with numba: 100k x 100 1.5 s either way; 20k x 128 0.6 against 0.9 s; 100k x
# 200 2.7 against 3.1 s; 20k x 1000 2.3-4 s against 55 s; with float32 sweeps, 20k x 128 takes
# 0.11-0.15 s against 0.3-0.6 s for the exact solve.  Without numba, 20k x 1000: 0.3 s against
# 5-6 s for the exact solve.)
_CD_FROM = 128
_CD_GAP = 1e-2         # the margin found is at least (1 - _CD_GAP) times the maximum
_CD_OMEGA = 1.5        # over-relaxation (20k x 1000: 744 sweeps; 801 at 1.0, 859 at 1.85)
_CD_ROUNDS = 100       # rounds (a pass over the data each) at most, then the exact solve decides
_CD_UNSURE = 12        # ... or after this many rounds when no direction found separates yet,
_CD_SPREAD = 3         # ... or sooner when more than _CD_SPREAD (d + 1) weights are positive:
# a separable working set's optimum has at most d + 1 (Caratheodory), while on non-separable
# data the weights spread over ever more examples.  (Separable planted data, margins down to
# 1e-4, peaked at 1.1-2.4 (d + 1) with projected gradient, 2.0-3.2 with coordinate descent,
# which above 2.8 did not separate them in 12 rounds either; random labels at 5k x 1000 passed
# 3 (d + 1) in the third round, and 5k and 20k x 1000 were refused in 1.1-1.5 s where 12 rounds
# of projected gradient took 3.4 and 7.4 s.)
# Sweeps over the working set between two passes over the data: (work, least, most), about
# work times a pass's entries, at least least and at most most (_round_steps).  (Measured on
# planted data, best of 3, against (6, 10, 200): 20k x 1000 0.19 against 0.205 s, 10 passes
# against 15, where 15 and 25 took 0.22 and 0.28 s; at margin 1e-3, 20k x 1000 1.0 against
# 1.25 s and 50k x 500 1.7 against 4.7 s, which the shorter rounds left to the exact solve;
# 100k x 200 the same, 0.28 s; 20k x 128 0.067 against 0.044 s.)
_CD_ROUND = (10, 10, 400)
_CD_SHRINK = 8         # one sweep in 8 visits every example of the working set, the others
#                        only those with a positive weight (about half at d = 1000)
_CD_SINGLE = 2.0 ** 13  # the sweeps read float32 rows while R / upper is below this: their
#                         rounding (2^-24 relative) moves y<w, x> by at most 2^-11 of the margin
# Without numba, accelerated projected gradient (_pg_descend) takes coordinate descent's place.
# Its step is 1/L for L = _PG_SAFETY times _PG_POWER steps of power iteration's estimate of the
# largest eigenvalue, which approaches it from below (0.93-0.95 of it after 12 steps on 2,000
# rows at d = 1000, whose top eigenvalues crowd together; a step up to 2/L still descends).
_PG_SAFETY = 1.25
_PG_POWER = 12
# Its steps per round, as _CD_ROUND: FISTA's momentum restarts every round, so its rounds are
# longer, and a round ends early once the working set is settled.  (20k x 1000: 8 passes, 700
# steps; work 6 took 14 passes, 20 took 7 but 1,070 steps; 20k x 128 and 100k x 200: 14 and 18
# passes, some 0.1 and 0.3 s.)
_PG_ROUND = (10, 100, 1000)
_PG_CHECK = 10         # steps between two checks whether the working set is settled
_CD_TINY = 1e-7        # an upper bound below this (x / 2^e, radius ~1): the exact solve decides
_PASS_ENTRIES = 1 << 22  # entries of X per block of a pass over the data (a progress report)


class _Rescale(Exception):
    """The margins over- or underflow, or are not finite: solve on a normalised copy."""


def _measured_pass(X, y, v, say, best: tuple, upper: float) -> tuple:
    """One pass over the data with direction v: (its margins, the smallest, the best (margin,
    direction) so far), with progress against the upper bound; raises _Rescale when the margins
    are out of the safe range (or NaN)."""
    m = _margins(X, y, v, say)
    with np.errstate(all="ignore"):
        top = max(float(m.max()), -float(m.min()))
    if not 1 / _SAFE < top < _SAFE:  # also NaN (max and min propagate it)
        raise _Rescale
    lower = float(m.min())
    if lower > best[0]:
        best = (lower, v)
    if np.isfinite(upper):
        say(max(0.0, min(1.0, lower / upper)))
    return m, lower, best


def _normalised(X: np.ndarray, y: np.ndarray):
    """(Z, e): Z = y*X / 2^e, e chosen for max |entry| and then max ||row|| in [1/2, 1),
    checking that every entry is finite and no row is zero."""
    Z = np.multiply(X, y[:, None])
    bad = ~np.isfinite(Z)
    if bad.any():
        i, j = (int(v) for v in np.argwhere(bad)[0])
        raise InvalidArgument(f"X[{i}, {j}]={float(X[i, j])!r} is not finite")
    nonzero = Z.any(axis=1)
    if not nonzero.all():
        raise _zero_row(int(np.flatnonzero(~nonzero)[0]))
    e = int(np.frexp(np.abs(Z).max())[1])
    with np.errstate(under="ignore"):
        np.ldexp(Z, -e, out=Z)
        top = float(np.sqrt(np.einsum("ij,ij->i", Z, Z).max()))
        np.ldexp(Z, -int(np.frexp(top)[1]), out=Z)
    return Z, e + int(np.frexp(top)[1])


def _zero_row(i: int) -> InvalidArgument:
    return InvalidArgument(f"X, y: the data is not linearly separable through the origin: "
                           f"X[{i}] is the zero vector, so y<w, x> = 0 for every w")


def _scaled(ZS: np.ndarray):
    """(ZS / 2^e, 2^-e) with the largest row norm in [1/2, 1)."""
    with np.errstate(under="ignore", over="ignore"):
        a = np.ldexp(ZS, -int(np.frexp(np.abs(ZS).max())[1]))
        top = float(np.sqrt(np.einsum("ij,ij->i", a, a).max()))
    e = int(np.frexp(np.abs(ZS).max())[1]) + int(np.frexp(top)[1])
    with np.errstate(under="ignore"):
        return np.ldexp(ZS, -e), float(np.ldexp(1.0, -e))


def _min_norm_point(ZS: np.ndarray):
    """(u, rnorm): NNLS for the least distance program min ||w|| s.t. Z_S w >= 1 (Lawson and
    Hanson, ch. 23): u >= 0 minimises ||Z_S^T u||^2 + (sum u - 1)^2; the minimum-norm point of
    conv(Z_S) is Z_S^T u / sum(u), and rnorm = 0 exactly when 0 is in the hull."""
    k, d = ZS.shape
    E = np.empty((d + 1, k))
    E[:d] = ZS.T
    E[d] = 1.0
    f = np.zeros(d + 1)
    f[d] = 1.0
    try:
        u, rnorm = _nnls(E, f, maxiter=50 * (k + d + 1))
    except RuntimeError:  # iteration limit: keep the best direction found so far
        return None, np.inf
    return u, float(rnorm)


def _nnls(E: np.ndarray, f: np.ndarray, maxiter: int):
    """(u, ||E u - f||) with u >= 0 minimising ||E u - f||: SciPy's NNLS, or for a small E the
    same active-set method (Lawson and Hanson, ch. 23) in numpy, which spares importing
    scipy.optimize (0.4 s) for a small data set.  RuntimeError past maxiter inner steps."""
    _OWN_NNLS_CALLS[0] += 1
    if (E.shape[0] > _OWN_NNLS_ROWS or _OWN_NNLS_CALLS[0] > _OWN_NNLS_MOST
            or "scipy.optimize" in sys.modules or _OWN_NNLS_USED[0] is None):
        return _scipy().nnls(E, f, maxiter=maxiter)
    _OWN_NNLS_USED[0] = True
    k = E.shape[1]
    u, passive = np.zeros(k), np.zeros(k, dtype=bool)
    tol = 10 * np.finfo(float).eps * np.abs(E).sum(axis=0).max() * max(E.shape)
    gradient = E.T @ f
    steps = 0
    while not passive.all() and gradient[~passive].max() > tol:
        passive[np.argmax(np.where(passive, -np.inf, gradient))] = True
        while True:
            steps += 1
            if steps > maxiter:
                raise RuntimeError("NNLS: iteration limit")
            z = np.zeros(k)
            z[passive] = np.linalg.lstsq(E[:, passive], f, rcond=None)[0]
            if z[passive].min() > 0:
                break
            # step from u toward z as far as u stays non-negative; the variables that reach 0
            # leave the passive set
            block = passive & (z <= 0)
            u += (u[block] / (u[block] - z[block])).min() * (z - u)
            passive &= u > tol
            u[~passive] = 0.0
        u = z
        gradient = E.T @ (f - E @ u)
    return u, float(np.linalg.norm(E @ u - f))


@_jit.jit(cache=True, fastmath=True)
def _cd_sweep(ZS, q, a, w, order, omega, scratch):
    """One sweep of dual coordinate descent for min ||ZS^T a||^2 / 2 - sum(a) over a >= 0 (the
    hard-margin SVM through the origin, w = ZS^T a kept up to date): each example of `order`
    in turn moves a_i omega times the way to the minimum along its coordinate (over-relaxed,
    0 < omega < 2: Mangasarian and Musicant's SOR for SVMs), clipped at 0.  The dual optimum
    is w = w*/gamma^2 for the working set's maximum margin gamma, attained at w*.  The row
    products are computed in the dtype of ZS and w (scratch: one element of it), so float32
    rows run in float32 SIMD lanes.  (fastmath: the solve is untrusted, and the margin of what
    it returns is computed afterwards.)"""
    d = ZS.shape[1]
    for t in range(order.shape[0]):
        i = order[t]
        scratch[0] = 0.0
        g = scratch[0]
        for j in range(d):
            g += ZS[i, j] * w[j]
        new = a[i] - omega * (g - 1.0) / q[i]
        if new < 0.0:
            new = 0.0
        step = new - a[i]
        if step != 0.0:
            a[i] = new
            scratch[0] = step
            s = scratch[0]
            for j in range(d):
                w[j] += s * ZS[i, j]


@_jit.jit(cache=True)
def _cd_rows(X, rows, scale, out, q):
    """out[t] = X[rows[t]] * scale[t], rounded to out's dtype, and q[t] = ||out[t]||^2 (in
    float64): the working set's rows, gathered and scaled in one pass."""
    for t in range(rows.shape[0]):
        r, c = rows[t], scale[t]
        s = 0.0
        for j in range(X.shape[1]):
            out[t, j] = X[r, j] * c
            s += float(out[t, j]) * float(out[t, j])
        q[t] = s


@_jit.jit(cache=True)
def _cd_point(X, rows, coef, w):
    """w = sum_t coef[t] X[rows[t]] in float64 over the non-zero coef, row by row in order."""
    w[:] = 0.0
    for t in range(rows.shape[0]):
        c = coef[t]
        if c != 0.0:
            r = rows[t]
            for j in range(X.shape[1]):
                w[j] += c * X[r, j]


def _polish(ZA: np.ndarray):
    """The minimum-norm point of the affine hull of the rows of ZA (the support found by NNLS),
    by least squares with iterative refinement of the residual in extended precision: for tiny
    margins, the residual p = z_0 + D^T mu (D: rows z_i - z_0) is a small difference of O(1)
    vectors.  None if the weights of that point are not all positive (not the hull's point)."""
    Zl = ZA.astype(np.longdouble)
    z0, D = Zl[0], Zl[1:] - Zl[0]
    if D.shape[0] == 0:
        return z0
    Dt = D.T.astype(np.float64)
    mu = np.zeros(D.shape[0], dtype=np.longdouble)
    r = z0
    for _ in range(3):
        delta = np.linalg.lstsq(Dt, -r.astype(np.float64), rcond=None)[0]
        mu = mu + delta.astype(np.longdouble)
        r = z0 + D.T @ mu
    lam = np.concatenate(([1 - mu.sum()], mu))
    if (lam < 0).any() or not np.any(r):
        return None
    return r


def _lp_direction(ZS: np.ndarray):
    """max t s.t. Z_S w >= t, |w_j| <= 1 (HiGHS): (t, w), or (None, None)."""
    k, d = ZS.shape
    c = np.zeros(d + 1)
    c[d] = -1.0
    A = np.hstack([-ZS, np.ones((k, 1))])
    lp = _scipy().linprog(c, A_ub=A, b_ub=np.zeros(k), bounds=[(-1, 1)] * d + [(None, 1)],
                     method="highs")
    if lp.status != 0:
        return None, None
    return float(lp.x[d]), lp.x[:d]


def _not_separable(S: np.ndarray, why: str) -> InvalidArgument:
    ex = ", ".join(str(int(i)) for i in np.sort(S)[:12]) + (", ..." if S.size > 12 else "")
    return InvalidArgument(f"X, y: the data is not linearly separable through the origin ({why}; "
                           f"examples {ex} admit no w with y<w, x> > 0 for all of them); use the "
                           f"non-separable mode with a given w_star and gamma")


def _start(X, y, rng, ids, say):
    """(unit direction, working set, None or (its dual weights, e)) to start a level from: the
    solve of a random 1/_SPLIT of the data (its support, and the weights coordinate descent
    gave it for the rows y*x / 2^e), or the mean of the y*x for small data."""
    n = X.shape[0]
    S, alpha = np.zeros(0, dtype=np.int64), None
    if n // _SPLIT >= _SMALLEST:
        idx = np.sort(rng.integers(0, n, n // _SPLIT))  # repeats are harmless
        v, sub = _level(X[idx], y[idx], _quiet(say), rng, idx if ids is None else ids[idx])
        S = np.unique(idx[sub["S"]])
        if "alpha" in sub:  # a repeated example's weights add up: the same hull point
            alpha = np.zeros(n)
            np.add.at(alpha, idx[sub["S"]], sub["alpha"])
            alpha = (alpha[S], sub["exponent"])
    else:
        v = X.T @ y
        if not (np.isfinite(v).all() and np.any(v)):
            v = X[0] * y[0]
    with np.errstate(all="ignore"):
        v = v / np.linalg.norm(v)
    if not np.isfinite(v).all():
        raise _Rescale
    return v, S, alpha


def _quiet(say):
    """say without its fractions: a sample's solve reports that the solve goes on, but its
    bounds are not the whole data's."""
    return lambda fraction=None: say()


def _margins(X, y, v, say):
    """y * (X @ v), by blocks of _PASS_ENTRIES entries with a progress report after each."""
    n, d = X.shape
    rows = max(1, _PASS_ENTRIES // max(d, 1))
    m = np.empty(n)
    with np.errstate(all="ignore"):
        for lo in range(0, n, rows):
            _block_margins(X[lo:lo + rows], v, m[lo:lo + rows])
            say()
        m *= y
    return m


def _block_margins(Xb, v, out) -> None:
    """out = Xb @ v: the unit of a pass's work between two progress reports."""
    np.matmul(Xb, v, out=out)


def _sweeper():
    """(descend, rows, point) of a round: descend(Z, q, a, w, n, rng, say) improves the
    working set's weights a in place (say() after each unit of work) and returns its steps;
    rows and point are _cd_rows and _cd_point.  With numba, compiled coordinate descent
    (_cd_descend); without, accelerated projected gradient (_pg_descend) and numpy for rows
    and point, since the Python versions of the compiled functions loop over single entries."""
    if _jit.AVAILABLE:
        sweep = _jit.compiled(_cd_sweep)
        return ((lambda *args: _cd_descend(sweep, *args)), _jit.compiled(_cd_rows),
                _jit.compiled(_cd_point))
    return _pg_descend, _np_rows, _np_point


def _np_rows(X, rows, scale, out, q):
    """_cd_rows in numpy."""
    np.multiply(X[rows], scale[:, None], out=out, casting="same_kind")
    np.einsum("ij,ij->i", out, out, out=q, dtype=np.float64)


def _np_point(X, rows, coef, w):
    """_cd_point in numpy (one matrix-vector product, rounded in another order)."""
    np.matmul(coef, X[rows], out=w)


def _level(X, y, say, rng, ids=None):
    """One level of the solve on (X, y): (v, info) with info["S"] the final working set.
    ids: the examples' indices in the caller's data (for messages), if X is a sample of it.
    say(fraction=None): a progress report, the lower bound's fraction of the upper one.
    Exact (NNLS on working sets) below d = _CD_FROM; from it, descent on the dual to within
    _CD_GAP of the maximum, which hands data it cannot settle to the exact solve."""
    if X.shape[1] >= _CD_FROM:
        found = _level_dual(X, y, say, rng, ids)
        if found is not None:
            return found
    return _level_exact(X, y, say, rng, ids)


def _level_dual(X, y, say, rng, ids=None):
    """_level by descent on the dual over a working set that changes every round: the examples
    with a positive weight and those nearest the margin, improved by _sweeper()'s descent,
    then one pass over all the data for the bounds.  Stops when the direction's margin on all
    the data is within _CD_GAP of the upper bound ||w|| / sum(a).
    None when the data are beyond it (not done within _CD_ROUNDS rounds, or no separating
    direction yet after _CD_UNSURE rounds or with weights spread past _CD_SPREAD (d + 1)
    examples; a bound below _CD_TINY: not separable, or a margin too small to tell; rows whose
    ||x||^2 underflows or overflows): the exact solve decides."""
    n, d = X.shape
    v, S, alpha = _start(X, y, rng, ids, say)
    a, e, w, single = np.zeros(n), None, None, True
    best, upper, passes, sweeps = (-np.inf, v), np.inf, 0, 0
    keep = 2 * (d + 1)  # the examples nearest the margin in each round's working set
    work = _sweeper()
    while passes <= _CD_ROUNDS:
        m, lower, best = _measured_pass(X, y, v, say, best, upper)
        passes += 1
        if lower >= upper * (1 - _CD_GAP):
            break
        if lower <= 0 and (passes > _CD_UNSURE or np.count_nonzero(a) > _CD_SPREAD * (d + 1)):
            return None  # perhaps not separable: the exact solve says
        near = np.argpartition(m, keep)[:keep] if n > keep else np.arange(n)
        act = np.union1d(np.flatnonzero(a), near)
        if e is None:
            # The descent works on y*x / 2^e (max entry of the first set in [1/2, 1)),
            # which keeps ||x||^2 finite, and X * 2^k then takes the same steps (a * 4^-k).
            Xa = X[act]
            e = int(np.frexp(max(float(Xa.max()), -float(Xa.min())))[1])
            if alpha is not None:
                a[S] = np.ldexp(alpha[0], 2 * (e - alpha[1]))
                act = np.union1d(S, act)
        with np.errstate(under="ignore"):
            scale = np.ldexp(y[act], -e)
        found = _dual_round(X, act, scale, a[act], w, work, rng, say, single)
        if found is None:
            return None
        a[act], w, radius, done = found
        sweeps += done
        norm, total = float(np.sqrt(w @ w)), float(a[act].sum())
        if not norm > _CD_TINY * total:
            return None
        v, upper = w / norm, float(np.ldexp(norm / total, e))
        single = single and radius < _CD_SINGLE * norm / total  # (upper >= the margin)
    else:
        return None
    lower, v = best
    S = np.flatnonzero(a)
    return v, {"lower": lower, "upper": upper, "passes": passes, "S": S, "polished": False,
               "support": S.size, "alpha": a[S], "exponent": e, "sweeps": sweeps,
               "gap": _CD_GAP}


def _dual_round(X, act, scale, aa, w, work, rng, say, single):
    """A round's descent over the rows z_i = scale_i * X[act_i] (scale: y / 2^e) from the
    weights aa: (aa, w = sum aa_i z_i, the working set's radius, the steps taken), or None for
    rows that the steps cannot use.  work: _sweeper()'s (descend, rows, point).  single: the
    steps read the rows rounded to float32 (half the memory of float64, which at d = 1000 keeps
    a working set of 2,000 rows in cache: 3-4 x faster per step); w is computed afterwards from
    the float64 rows, so the bounds are those of the data itself."""
    descend, gather, point = work
    Z = np.empty((act.size, X.shape[1]), dtype=np.float32 if single else np.float64)
    q = np.empty(act.size)
    gather(X, act, scale, Z, q)  # exact but for the rounding to float32 (and underflow)
    if not (np.isfinite(q).all() and (q > 0).all()):
        return None
    if w is None:  # else w is the hull point of the last round, whose support is in aa
        w = np.empty(X.shape[1])
        point(X, act, aa * scale, w)
    done = descend(Z, q, aa, w.astype(Z.dtype), X.shape[0], rng, say)
    w = np.empty(X.shape[1])
    point(X, act, aa * scale, w)
    return aa, w, float(np.sqrt(q.max())), done


def _cd_descend(sweep, Z, q, aa, wz, n, rng, say):
    """Sweeps of coordinate descent (sweep: the compiled _cd_sweep) over the working set's rows
    Z (of the n examples), each in a random order: _round_steps(n, k, _CD_ROUND) of them.
    After a sweep over every row, the next _CD_SHRINK - 1 sweep only the rows with a positive
    weight (the others met the margin at their last visit)."""
    count = _round_steps(n, aa.size, _CD_ROUND)
    scratch = np.zeros(1, dtype=Z.dtype)
    rows = np.arange(aa.size)
    for t in range(count):
        full = t % _CD_SHRINK == 0
        sweep(Z, q, aa, wz, rng.permutation(aa.size if full else rows), _CD_OMEGA, scratch)
        if full:
            rows = np.flatnonzero(aa)
        say()
    return count


def _pg_descend(Z, q, aa, wz, n, rng, say):
    """Steps of accelerated projected gradient for the same dual, min ||Z^T a||^2 / 2 - sum(a)
    over a >= 0 (wz = Z^T aa), numba's coordinate descent being one example at a time, too slow
    in Python: each step is two matrix-vector products.  FISTA (Beck and Teboulle) with step
    1/L, L about the largest eigenvalue of Z Z^T, its momentum dropped whenever a step goes
    against the gradient (O'Donoghue and Candes' adaptive restart, which spares the momentum's
    detours).  It stops after _round_steps(n, k, _PG_ROUND) steps, or earlier when the working
    set is settled (_settled): more steps on it would barely move the bounds over all the data,
    and an early working set is not worth solving to the end (its support is not the data's)."""
    count = _round_steps(n, aa.size, _PG_ROUND)
    L = _PG_SAFETY * _top_eigenvalue(Z, rng, say)
    x, wx = aa.astype(Z.dtype), wz   # the iterate and Z^T x
    b, wb, t = x, wx, 1.0            # the point extrapolated by the momentum, Z^T b
    for step in range(count + 1):
        if step == count or step % _PG_CHECK == 0 and _settled(Z, x, wx):
            break
        g = Z @ wb - 1
        new = np.maximum(b - g / L, 0)
        if float(g @ (new - x)) > 0:  # restart: a plain projected gradient step from x
            b, wb, t = x, wx, 1.0
            continue
        wn = new @ Z
        t_next = (1 + (1 + 4 * t * t) ** 0.5) / 2
        beta = (t - 1) / t_next
        b, wb = new + beta * (new - x), wn + beta * (wn - wx)
        x, wx, t = new, wn, t_next
        say()
    aa[:] = x
    return step


def _settled(Z, a, w) -> bool:
    """Whether the working set's bounds for the weights a (w = Z^T a) are within half the gap:
    no more steps on it can do much for the bounds over all the data."""
    norm, total = float(np.sqrt(w @ w)), float(a.sum())
    return norm > 0 and float((Z @ w).min()) * total >= (1 - _CD_GAP / 2) * norm * norm


def _top_eigenvalue(Z, rng, say) -> float:
    """The largest eigenvalue of Z Z^T (that of Z^T Z), approached from below by _PG_POWER
    steps of power iteration from a random start (each a unit of work, as a descent step)."""
    u = rng.standard_normal(Z.shape[1]).astype(Z.dtype)
    top = 0.0
    for _ in range(_PG_POWER):
        u = (Z @ u) @ Z
        top = float(np.sqrt(u @ u))
        if not top > 0:
            break
        u /= top
        say()
    return top


def _round_steps(n: int, k: int, rule: tuple) -> int:
    """Steps (sweeps) over a working set of k of the n examples per round, for rule = (work,
    least, most): about work times the entries of the pass over all of them that follows (a
    step reads the working set's rows once or twice, in float32, a third of the cost of a
    float64 entry of the pass), and within [least, most]."""
    work, least, most = rule
    return int(min(most, max(least, work * n // max(k, 1))))


def _level_exact(X, y, say, rng, ids=None):
    """_level by exact solves of working sets (NNLS, polished on the support): the lower and
    upper bounds agree to _TOL."""
    n, d = X.shape
    name = (lambda i: i) if ids is None else (lambda i: ids[i])
    tol = _TOL
    # NNLS costs grow faster than the working set: large d adds about d+1 examples per round.
    k_add = max(d + 1, min(_ADD * (d + 1), _CAP))
    k_keep = max(d + 1, min(_KEEP * k_add, _CAP))
    v, S = _start(X, y, rng, ids, say)[:2]
    inS = np.zeros(n, dtype=bool)
    best, upper, passes, u, polished = (-np.inf, v), np.inf, 0, None, False
    support = S.size
    for _ in range(_ROUNDS + 1):
        m, lower, best = _measured_pass(X, y, v, say, best, upper)
        passes += 1
        if lower >= upper * (1 - tol):
            break
        cand = np.flatnonzero(m < upper * (1 - tol))
        inS[S] = True
        cand = cand[~inS[cand]]
        inS[S] = False
        if cand.size == 0:  # the violators are all in S: rounding, not a missing constraint
            break
        if cand.size > k_add:
            cand = cand[np.argpartition(m[cand], k_add)[:k_add]]
        # The support of the last solve and the new violators: the working set's optimum is
        # kept, and each round adds constraints it violates, so its margin only grows.
        # The non-support examples of S that are closest to the margin stay too (up to _KEEP
        # rounds' worth), which saves passes that would add them again.
        rest = S[support:]
        if rest.size > k_keep:
            rest = rest[np.argpartition(m[rest], k_keep)[:k_keep]]
        S = np.concatenate([S[:support], rest, cand])
        zero = ~X[S].any(axis=1)
        if zero.any():
            raise _zero_row(int(name(S[np.argmax(zero)])))
        ZS, scale = _scaled(X[S] * y[S][:, None])
        u, rnorm = _min_norm_point(ZS)
        if u is None:
            break
        if rnorm < _AMBIGUOUS:
            if rnorm <= _INFEASIBLE:
                raise _not_separable(name(S[u > 0]), "0 lies in the convex hull of their y*x")
            t, w = _lp_direction(ZS)
            if t is None or t <= _INFEASIBLE:
                raise _not_separable(name(S[u > 0]), "a linear program finds no positive margin")
            mw = (X @ w) * y
            passes += 1
            if mw.min() > 0:
                best = (float(mw.min() / np.linalg.norm(w)), w / np.linalg.norm(w))
            break
        A = u > 0
        S = np.concatenate([S[A], S[~A]])  # the support first
        support = int(A.sum())
        p = _polish(ZS[A])
        polished = p is not None
        if p is None:
            p = ZS.T @ u / u.sum()
        norm = float(np.sqrt(np.sum(p * p)))
        v = (p / norm).astype(np.float64)
        upper = norm / scale
    lower, v = best
    return v, {"lower": lower, "upper": upper, "passes": passes, "S": S[:support],
               "polished": polished, "support": support, "gap": tol}


def _solve(X: np.ndarray, y: np.ndarray, progress=None):
    """(w, info): the unit direction and {"lower", "upper", "passes", "support", "polished",
    "S"}: bounds on the best margin (in X's units), passes over all of X, the support size.
    A solve whose numpy NNLS did not reach the optimum (ill-conditioned data) is done again
    with SciPy's."""
    _OWN_NNLS_USED[0] = False
    try:
        v, info = _solve_once(X, y, progress)
        if not _OWN_NNLS_USED[0] or info["lower"] >= info["upper"] * (1 - 1e-6):
            return v, info
    except InvalidArgument:
        if not _OWN_NNLS_USED[0]:
            raise
    _OWN_NNLS_USED[0] = None
    try:
        return _solve_once(X, y, progress)
    finally:
        _OWN_NNLS_USED[0] = False


def _reporter(progress, phase: str):
    """say(fraction=None): progress(phase, fraction), the last fraction again when none is
    given (the solve goes on)."""
    last = [0.0]

    def say(fraction=None):
        if fraction is not None:
            last[0] = fraction
        if progress is not None:
            progress(phase, last[0])
    return say


def _solve_once(X: np.ndarray, y: np.ndarray, progress=None):
    X = np.ascontiguousarray(X, dtype=np.float64)
    y = np.ascontiguousarray(y, dtype=np.float64)
    say = _reporter(progress, "separator: solve")
    say(0.0)
    try:
        v, info = _level(X, y, say, np.random.default_rng(0))
    except _Rescale:
        say = _reporter(progress, "separator: normalise")
        say(0.0)
        Z, e = _normalised(X, y)
        v, info = _level(Z, np.ones(X.shape[0]), say, np.random.default_rng(0))
        with np.errstate(over="ignore", under="ignore"):
            info["lower"], info["upper"] = (float(np.ldexp(info[k], e))
                                            for k in ("lower", "upper"))
    if not info["lower"] > 0:
        raise InvalidArgument("X, y: no separator through the origin found (the solvers' best "
                              f"direction has margin {info['lower']:.3g}); give w_star, or use "
                              "the non-separable mode")
    say(1.0)
    return v / np.linalg.norm(v), info


@one_blas_thread
def max_margin_separator(X: np.ndarray, y: np.ndarray, progress=None) -> np.ndarray:
    """A unit w* whose margin min y<w, x> is at least 99% of the maximum (the maximum to 1e-9
    below d = _CD_FROM): the hard-margin SVM through the origin.

    Working sets of examples chosen by passes over the data, each solved exactly by NNLS (least
    distance programming, Lawson and Hanson) for small d, by descent on the dual from
    d = _CD_FROM (coordinate descent with numba, accelerated projected gradient without), until
    the direction's margin over all the data is within the gap of an upper bound on the
    maximum.  A warm start from a random 1/32 of the data (recursively) leaves a
    few passes over all of it, so the cost is linear in n.  X * 2^k gives the same w*; another
    scale changes it only through the rounding of X*c (data whose margins would over- or
    underflow is solved on a copy divided by a power of two).  Non-separable data raises
    InvalidArgument naming examples that no w separates.  progress, if given, is called as
    progress(phase: str, fraction: float) after every unit of work (a block of a pass, a step
    of the descent).
    The result is not trusted: the caller certifies its margin (certify_margin).
    """
    return _solve(X, y, progress)[0]


def soft_margin_separator(X: np.ndarray, y: np.ndarray, lam: float = 1e-3) -> np.ndarray:
    """A unit w* minimising the squared hinge loss + lam*||w||^2 (for non-separable data)."""
    opt = _scipy()
    Z = y[:, None] * X
    n = Z.shape[0]

    def f(w):
        r = np.maximum(0.0, 1.0 - Z @ w)
        return float(r @ r) / n + lam * float(w @ w), -2.0 * (Z.T @ r) / n + 2 * lam * w

    res = opt.minimize(f, np.zeros(X.shape[1]), jac=True, method="L-BFGS-B")
    w = res.x
    if not np.any(w):
        raise InvalidArgument("w_star=None: the soft-margin solver returned 0; give w_star")
    return w / np.linalg.norm(w)


def hinge_candidates(margins: np.ndarray, grid: int = 256) -> np.ndarray:
    """Candidate gammas for the hinge bound: the positive margins and a geometric grid."""
    pos = margins[margins > 0]
    hi = max(float(pos.max()) if pos.size else 1.0, 1e-300)
    lo = float(pos.min()) / 100 if pos.size else hi * 1e-6
    return np.unique(np.concatenate([pos, np.geomspace(lo, hi, grid)]))


def td_at(margins: np.ndarray, counts: np.ndarray, gammas: np.ndarray) -> np.ndarray:
    """TD_gamma = sum_i counts_i max(0, gamma - margins_i) at each of the gammas."""
    order = np.argsort(margins)
    sm, sc = margins[order], counts[order]
    C = np.concatenate(([0.0], np.cumsum(sc)))
    S = np.concatenate(([0.0], np.cumsum(sc * sm)))
    j = np.searchsorted(sm, gammas, side="left")  # examples with margin < gamma
    return np.maximum(gammas * C[j] - S[j], 0.0)
