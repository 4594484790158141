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
    except ImportError:  # pragma: no cover - scipy ships with the test extra
        raise InvalidArgument("w_star=None: computing a separator needs scipy "
                              "(pip install scipy), or give w_star") from None
    return opt


def max_margin_separator(X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """A unit w* maximising min y<w, x> (hard-margin SVM through the origin).

    The dual, min 1/2 ||Z^T a||^2 - sum(a) over a >= 0 with Z = y*X, is solved by L-BFGS-B; if
    its solution does not separate, a linear program (HiGHS) decides separability: infeasible means
    no separator through the origin exists.
    """
    opt = _scipy()
    Z = y[:, None] * X
    n = Z.shape[0]

    def f(a):
        v = Z.T @ a
        return 0.5 * float(v @ v) - float(a.sum()), Z @ v - 1.0

    res = opt.minimize(f, np.zeros(n), jac=True, method="L-BFGS-B",
                       bounds=opt.Bounds(np.zeros(n), np.full(n, np.inf)),
                       options={"maxiter": 20000, "ftol": 1e-15, "gtol": 1e-12})
    w = Z.T @ res.x
    if np.any(w) and (Z @ w).min() > 0:
        return w / np.linalg.norm(w)
    lp = opt.linprog(np.zeros(Z.shape[1]), A_ub=-Z, b_ub=-np.ones(n),
                     bounds=[(None, None)] * Z.shape[1], method="highs")
    if lp.status == 2:
        raise InvalidArgument("X, y: the data is not linearly separable through the origin "
                              "(the LP y<w, x> >= 1 is infeasible); use the non-separable mode "
                              "with a given w_star and gamma")
    if lp.status != 0 or (Z @ lp.x).min() <= 0:
        raise InvalidArgument(f"X, y: no separator found (solver status {lp.status}: "
                              f"{lp.message}); give w_star")
    return lp.x / np.linalg.norm(lp.x)


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
