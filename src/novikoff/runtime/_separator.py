"""w_star and gamma when the user gives none: established solvers (SciPy), then a trusted check.

The solvers are untrusted: whatever they return is certified by ``certify_margin`` (gamma = min
y<w*, x> > 0, decided exactly where rounding could matter) before any lemma uses it.
"""

from __future__ import annotations

import numpy as np

from ..errors import InvalidArgument

__all__ = ["max_margin_separator", "soft_margin_separator", "hinge_candidates"]


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
# vectors), and adds the examples that the resulting direction violates most.  One pass over the
# data per round (a matrix-vector product), a few rounds: the cost grows linearly with n.
# ||p|| over S bounds the best margin from above and min_i z_i.p/||p|| from below; the loop stops
# when they agree to _TOL (relative), so the margin found is the maximum to that precision.

_TOL = 1e-9            # relative gap between the two bounds at which the solve stops
_ROUNDS = 200          # passes over the data at most
_INFEASIBLE = 1e-14    # NNLS residual (data of radius ~1) below which 0 is in the hull
_AMBIGUOUS = 1e-10     # ... below which a linear program confirms either way


def _normalised(X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Z = y*X divided by two powers of two: max |entry| and then max ||row|| in [1/2, 1).

    Scaling by a power of two is exact (barring underflow of entries far below the largest), so
    X*c and X give the same Z up to the rounding of X*c itself, and the same direction w*.
    """
    Z = np.multiply(np.asarray(X, dtype=np.float64), np.asarray(y, dtype=np.float64)[:, None])
    if not np.isfinite(Z).all():
        i, j = (int(v) for v in np.argwhere(~np.isfinite(Z))[0])
        raise InvalidArgument(f"X[{i}, {j}]={float(X[i, j])!r} is not finite")
    nonzero = Z.any(axis=1)
    if not nonzero.all():
        i = int(np.flatnonzero(~nonzero)[0])
        raise InvalidArgument(f"X, y: the data is not linearly separable through the origin: "
                              f"X[{i}] is the zero vector, so y<w, x> = 0 for every w")
    np.ldexp(Z, -int(np.frexp(np.abs(Z).max())[1]), out=Z)
    with np.errstate(under="ignore"):
        top = float(np.sqrt(np.einsum("ij,ij->i", Z, Z).max()))
        np.ldexp(Z, -int(np.frexp(top)[1]), out=Z)
    return Z


def _min_norm_point(opt, ZS: np.ndarray):
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
        u, rnorm = opt.nnls(E, f, maxiter=50 * (k + d + 1))
    except RuntimeError:  # iteration limit: keep the best the caller has
        return None, np.inf
    return u, float(rnorm)


def _polish(ZA: np.ndarray):
    """The minimum-norm point of the affine hull of the rows of ZA (the support found by NNLS),
    by least squares with iterative refinement of the residual in extended precision: for tiny
    margins, the residual p = z_0 + D^T mu (D: rows z_i - z_0) is a small difference of O(1)
    vectors.  None if the weights of that point are not all positive (not the hull's point)."""
    Zl = ZA.astype(np.longdouble)
    z0, D = Zl[0], Zl[1:] - Zl[0]
    if D.shape[0] == 0:
        return Zl[0]
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


def _lp_direction(opt, ZS: np.ndarray):
    """max t s.t. Z_S w >= t, |w_j| <= 1 (HiGHS): (t, w)."""
    k, d = ZS.shape
    c = np.zeros(d + 1)
    c[d] = -1.0
    A = np.hstack([-ZS, np.ones((k, 1))])
    lp = opt.linprog(c, A_ub=A, b_ub=np.zeros(k), bounds=[(-1, 1)] * d + [(None, 1)],
                     method="highs")
    if lp.status != 0:
        return None, None
    return float(lp.x[d]), lp.x[:d]


def _not_separable(S: np.ndarray, why: str) -> InvalidArgument:
    ex = ", ".join(str(int(i)) for i in np.sort(S)[:12]) + (", ..." if S.size > 12 else "")
    return InvalidArgument(f"X, y: the data is not linearly separable through the origin ({why}; "
                           f"examples {ex} admit no w with y<w, x> > 0 for all of them); use the "
                           f"non-separable mode with a given w_star and gamma")


def _solve(X: np.ndarray, y: np.ndarray, progress=None):
    """(w, info): the unit direction and {"lower", "upper", "passes", "support", "polished"},
    the two bounds on the best margin of the normalised data (radius in [1/2, 1))."""
    opt = _scipy()
    report = progress if progress is not None else (lambda phase, fraction: None)
    report("separator: normalise", 0.0)
    Z = _normalised(X, y)
    n, d = Z.shape
    report("separator: solve", 0.0)
    k_add = 4 * (d + 1)
    v = Z.sum(axis=0)
    if not np.any(v):
        v = Z[0].copy()
    v /= np.linalg.norm(v)
    m = Z @ v
    passes = 1
    start = max(256, 2 * k_add)
    S = np.argpartition(m, start)[:start] if n > start else np.arange(n)
    best = (m.min(), v)  # the best direction seen, by its margin over all the data
    upper, polished = np.inf, False
    inS = np.zeros(n, dtype=bool)
    for _ in range(_ROUNDS):
        ZS = Z[S]
        u, rnorm = _min_norm_point(opt, ZS)
        if u is None:
            break
        if rnorm < _AMBIGUOUS:
            support = S[u > 0] if rnorm > 0 else S
            if rnorm <= _INFEASIBLE:
                raise _not_separable(S[u > 0], "0 lies in the convex hull of their y*x")
            t, w = _lp_direction(opt, ZS)
            if t is None or t <= _INFEASIBLE:
                raise _not_separable(support, "a linear program finds no positive margin")
            mw = Z @ w
            passes += 1
            if mw.min() > 0:
                best = (mw.min() / np.linalg.norm(w), w / np.linalg.norm(w))
            break
        A = u > 0
        p = _polish(ZS[A])
        polished = p is not None
        if p is None:
            p = ZS.T @ u / u.sum()
        upper = float(np.sqrt(np.sum(p * p)))
        v = (p / upper).astype(np.float64)
        m = Z @ v
        passes += 1
        lower = float(m.min())
        if lower > best[0]:
            best = (lower, v)
        report("separator: solve", max(0.0, min(1.0, lower / upper)))
        if lower >= upper * (1 - _TOL):
            break
        cand = np.flatnonzero(m < upper * (1 - _TOL))
        inS[S] = True
        cand = cand[~inS[cand]]
        if cand.size == 0:  # the violators are all in S: rounding, not a missing constraint
            break
        if cand.size > k_add:
            cand = cand[np.argpartition(m[cand], k_add)[:k_add]]
        S = np.concatenate([S[A], S[~A], cand])
    lower, v = best
    if not lower > 0:
        raise InvalidArgument("X, y: no separator through the origin found (the solvers' best "
                              f"direction has margin {lower:.3g} relative to the radius); give "
                              "w_star, or use the non-separable mode")
    report("separator: solve", 1.0)
    return v / np.linalg.norm(v), {"lower": lower, "upper": upper, "passes": passes,
                                   "support": int(np.count_nonzero(u)) if u is not None else 0,
                                   "polished": polished}


def max_margin_separator(X: np.ndarray, y: np.ndarray, progress=None) -> np.ndarray:
    """A unit w* maximising min y<w, x> (hard-margin SVM through the origin).

    The data is first divided by powers of two near its radius (so the direction does not depend
    on the data's scale); then a working set of examples grows from the most violated ones, its
    maximum-margin direction computed exactly by NNLS (least distance programming, Lawson and
    Hanson) and polished on its support vectors, until the direction's margin over all the data
    matches the working set's maximum (relative gap 1e-9): a few passes over the data, so the
    cost is linear in n.  Non-separable data raises InvalidArgument naming examples that no w
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


def hinge_candidates(margins: np.ndarray, counts: np.ndarray | None = None, grid: int = 256):
    """Candidate gammas and TD_gamma = sum c_i max(0, gamma - margin_i) at each of them."""
    ms = np.asarray(margins, dtype=float)
    c = np.ones_like(ms) if counts is None else np.asarray(counts, dtype=float)
    pos = ms[ms > 0]
    hi = max(float(pos.max()) if pos.size else 1.0, 1e-300)
    lo = float(pos.min()) / 100 if pos.size else hi * 1e-6
    cand = np.unique(np.concatenate([pos, np.geomspace(lo, hi, grid)]))
    order = np.argsort(ms)
    sm, sc = ms[order], c[order]
    C = np.concatenate(([0.0], np.cumsum(sc)))
    S = np.concatenate(([0.0], np.cumsum(sc * sm)))
    j = np.searchsorted(sm, cand, side="left")  # examples with margin < gamma
    td = cand * C[j] - S[j]
    return cand, np.maximum(td, 0.0)
