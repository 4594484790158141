"""w_star and gamma when the user gives none: established solvers (SciPy), then a trusted check.

The solvers are untrusted: whatever they return is certified by ``certify_margin`` (gamma = min
y<w*, x> > 0, decided exactly where rounding could matter) before any lemma uses it.
"""

from __future__ import annotations

import sys

import numpy as np

from ..errors import InvalidArgument

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
# the hull means that no w separates.  The solver generates constraints: it keeps a working set S
# of examples, computes the minimum-norm point of conv(z_S) exactly (Lawson and Hanson's least
# distance programming through NNLS, an active-set method that ends on at most d+1 support
# vectors, polished on them in extended precision), and adds the examples that the resulting
# direction violates most.  ||p|| over S bounds the best margin from above and min_i z_i.p/||p||
# from below; the loop stops when they agree to _TOL (relative), so the margin found is the
# maximum to that precision.  Each round is one pass over the data (a matrix-vector product); a
# warm start from the same solve on a random 1/32 of the data (recursively) leaves a few rounds
# on the whole: the cost grows linearly with n.
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


class _Rescale(Exception):
    """The margins over- or underflow, or are not finite: solve on a normalised copy."""


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


def _start(X, y, rng, ids):
    """(unit direction, working set) to start a level from: the solve of a random 1/_SPLIT of
    the data (its support), or the mean of the y*x when the data are small."""
    n = X.shape[0]
    S = np.zeros(0, dtype=np.int64)
    if n // _SPLIT >= _SMALLEST:
        idx = np.sort(rng.integers(0, n, n // _SPLIT))  # repeats are harmless
        v, sub = _level(X[idx], y[idx], None, rng, idx if ids is None else ids[idx])
        S = np.unique(idx[sub["S"]])
    else:
        v = X.T @ y
        if not (np.isfinite(v).all() and np.any(v)):
            v = X[0] * y[0]
    with np.errstate(all="ignore"):
        v = v / np.linalg.norm(v)
    if not np.isfinite(v).all():
        raise _Rescale
    return v, S


def _level(X, y, report, rng, ids=None):
    """One level of the solve on (X, y): (v, info) with info["S"] the final working set.
    ids: the examples' indices in the caller's data (for messages), if X is a sample of it."""
    n, d = X.shape
    name = (lambda i: i) if ids is None else (lambda i: ids[i])
    # NNLS costs grow faster than the working set: large d adds about d+1 examples per round.
    k_add = max(d + 1, min(_ADD * (d + 1), _CAP))
    k_keep = max(d + 1, min(_KEEP * k_add, _CAP))
    v, S = _start(X, y, rng, ids)
    inS = np.zeros(n, dtype=bool)
    best, upper, passes, u, polished = (-np.inf, v), np.inf, 0, None, False
    support = S.size
    for _ in range(_ROUNDS + 1):
        with np.errstate(all="ignore"):
            m = X @ v
            m *= y
            top = max(float(m.max()), -float(m.min()))
        passes += 1
        if not 1 / _SAFE < top < _SAFE:  # also NaN (max and min propagate it)
            raise _Rescale
        lower = float(m.min())
        if lower > best[0]:
            best = (lower, v)
        if report is not None and np.isfinite(upper):
            report("separator: solve", max(0.0, min(1.0, lower / upper)))
        if lower >= upper * (1 - _TOL):
            break
        cand = np.flatnonzero(m < upper * (1 - _TOL))
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
               "polished": polished, "support": support}


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


def _solve_once(X: np.ndarray, y: np.ndarray, progress=None):
    report = progress if progress is not None else (lambda phase, fraction: None)
    X = np.ascontiguousarray(X, dtype=np.float64)
    y = np.ascontiguousarray(y, dtype=np.float64)
    report("separator: solve", 0.0)
    try:
        v, info = _level(X, y, report, np.random.default_rng(0))
    except _Rescale:
        report("separator: normalise", 0.0)
        Z, e = _normalised(X, y)
        v, info = _level(Z, np.ones(X.shape[0]), report, np.random.default_rng(0))
        with np.errstate(over="ignore", under="ignore"):
            info["lower"], info["upper"] = (float(np.ldexp(info[k], e))
                                            for k in ("lower", "upper"))
    if not info["lower"] > 0:
        raise InvalidArgument("X, y: no separator through the origin found (the solvers' best "
                              f"direction has margin {info['lower']:.3g}); give w_star, or use "
                              "the non-separable mode")
    report("separator: solve", 1.0)
    return v / np.linalg.norm(v), info


def max_margin_separator(X: np.ndarray, y: np.ndarray, progress=None) -> np.ndarray:
    """A unit w* maximising min y<w, x> (hard-margin SVM through the origin).

    A working set of examples grows from the most violated ones, its maximum-margin direction
    computed exactly by NNLS (least distance programming, Lawson and Hanson) on the set divided by
    a power of two near its radius, and polished on its support vectors, until the direction's
    margin over all the data matches the working set's maximum (relative gap 1e-9).  A warm start
    from a random 1/32 of the data (recursively) leaves a few passes over all of it, so the cost
    is linear in n.  The direction does not depend on the data's scale (X*c gives the same w* up
    to the rounding of X*c; data whose margins would over- or underflow is solved on a copy
    divided by a power of two).  Non-separable data raises InvalidArgument naming examples that no w
    separates.  progress, if given, is called as progress(phase: str, fraction: float).
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
