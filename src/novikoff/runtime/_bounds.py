"""Run quantities with rounding-error bounds (Higham's gamma_n analysis), kept incrementally.

How its floats are bounded: docs/runtime-bounds.md, "Run quantities and their bounds".
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ..errors import InvalidArgument
from . import _jit
from ._loops import SMALLEST_NORMAL


__all__ = ["U", "gam", "DataStats", "data_stats", "certify_margin", "Bookkeeper", "start_slots"]

U = 2.0 ** -53
# Bounds are computed in floating point, so each is inflated by SAFETY (relative 1e-6, far above
# the O(n u) relative error of computing them: docs/runtime-bounds.md, "Honest floats").
SAFETY = 1.0 + 1e-6


def gam(n: int) -> float:
    """Higham's gamma_n = n*u / (1 - n*u)."""
    return n * U / (1.0 - n * U)


def _down(x):
    return np.nextafter(x, -np.inf)


def _factors(s: float, d: int):
    """Error-bound factors of the data statistics for ||w_star||^2 = s in dimension d."""
    g = gam(d) * SAFETY
    e_s = float(g * s * (1.0 + 2 * g))
    ws_up = float(np.sqrt(s + e_s) * (1.0 + 4 * U))
    # |fl(||x||^2) - ||x||^2| <= gamma_d ||x||^2 <= gamma_d/(1 - gamma_d) fl(||x||^2); the
    # factors (1 + 4u) cover the rounding of the square roots and products below.
    ge = g * (1.0 + 2 * g)
    cn = float(np.sqrt(1.0 + ge) * (1.0 + 4 * U))
    ce = float(g * ws_up * (1.0 + 4 * U))
    return g, e_s, ws_up, ge, cn, ce


class DataStats:
    """Per-example <w_star, x_i> and ||x_i||^2 with error bounds; R and gamma certified.

    The error bounds are cheap functions of ||x_i||^2, computed for the examples that need them
    (those of the updates) rather than stored for the whole data set.
    """

    def __init__(self, m, nx2, s, d, R_hint=None, ym_min=None, candidates=None):
        self.m = m  # fl(<w_star, x_i>), or None when only the candidates below were kept
        self.ym_min = ym_min  # min_i y_i*m_i if already known
        # (indices, their y*m, floor): every example whose y*m is below floor, with its y*m
        self.candidates = candidates
        self.nx2 = nx2  # fl(||x_i||^2)
        self.d = d
        self.s = float(s)  # fl(||w_star||^2)
        self.g, self.e_s, self.ws_up, self._ge, self._cn, self._ce = _factors(self.s, d)
        # nx2 may be None when the engine computed only its maximum (R_hint): the squared norms
        # of the updates' examples then come with the update log.
        top = float(nx2.max()) if R_hint is None else R_hint
        self.R = float(np.sqrt(top) * self._cn) if nx2 is None or nx2.size else 0.0
        self.E = self.R * self._ce  # >= every e_m(i)
        self.gamma = None  # certified: gamma <= y_i <w_star, x_i> for every i
        self.gamma_exact = False  # gamma is the exact minimum (not only a lower bound)

    def e_nx2(self, idx=slice(None)):
        return self.nx2[idx] * self._ge

    def nx_up(self, idx=slice(None)):
        """Certified upper bounds of ||x_i||."""
        return np.sqrt(self.nx2[idx]) * self._cn

    def e_m(self, idx=slice(None)):
        """Bounds on |fl(<w_star, x_i>) - <w_star, x_i>| (gamma_d ||w_star|| ||x_i||)."""
        return self.nx_up(idx) * self._ce


def data_stats(X, y, w_star, m=None, nx2=None, nx2_max=None, ym_min=None) -> DataStats:
    """Compute (or take precomputed) <w_star, x_i>, ||x_i||^2 and their error bounds."""
    if nx2 is None:
        nx2 = np.einsum("ij,ij->i", X, X)
    if m is None:
        m = X @ w_star
    return DataStats(m, nx2, float(w_star @ w_star), X.shape[1], nx2_max, ym_min)


def first_bad_row(nx2) -> int:
    """The first i whose fl(||x_i||^2) is not finite and at least the smallest normal float, or
    -1: ||x||^2 is so exactly when x is finite, non-zero, not huge and not subnormally small."""
    ok = (nx2 >= SMALLEST_NORMAL) & (nx2 < np.inf)
    return -1 if ok.all() else int(np.argmin(ok))


def check_rows(X, bad: int, name: str = "X") -> None:
    """Raise InvalidArgument for row `bad` of X (found by first_bad_row or the engine's first
    pass): a non-finite entry, a zero row, or a squared norm that over- or underflows."""
    if bad < 0:
        return
    i = bad
    row = X[i]
    with np.errstate(over="ignore", under="ignore"):
        qi = float(row @ row)
    nonfinite = np.flatnonzero(~np.isfinite(row))
    if nonfinite.size:
        j = int(nonfinite[0])
        raise InvalidArgument(f"{name}[{i}, {j}]={row[j].item()!r} is not finite")
    if not row.any():
        raise InvalidArgument(f"{name}[{i}] is a zero row (no margin can separate it)")
    if not np.isfinite(qi):
        raise InvalidArgument(f"{name}[{i}]: ||{name}[{i}]||^2 overflows (entries up to "
                              f"{float(np.abs(row).max())!r}); rescale the data")
    raise InvalidArgument(f"{name}[{i}]: ||{name}[{i}]||^2 = {qi!r} is below the smallest "
                          f"normal float (entries up to {float(np.abs(row).max())!r}), where "
                          f"rounding is no longer relative; rescale the data")


# Refining ties exactly costs O(rows * d) Fraction products; beyond this it is not attempted.
_EXACT_BUDGET = 2_000_000


def _significands(a) -> tuple:
    """(m, e, nonzero) with a = m * 2**(e - 53) exactly, m a whole number (int64; 0 where a
    is): the binary significand of each float entry as an integer."""
    ma, ea = np.frexp(np.asarray(a, dtype=np.float64))
    return (ma * 2.0 ** 53).astype(np.int64), ea, ma != 0


def exact_dot(a, b) -> Fraction:
    """<a, b> of two float vectors, exactly (integer arithmetic on the binary significands)."""
    ia, ea, nza = _significands(a)
    ib, eb, nzb = _significands(b)
    keep = nza & nzb
    if not keep.any():
        return Fraction(0)
    ia, ib = ia[keep].tolist(), ib[keep].tolist()
    ex = (ea[keep] + eb[keep]).tolist()
    low = min(ex)
    total = sum(x * z << (e - low) for x, z, e in zip(ia, ib, ex))
    return _scaled(total, low - 106)


def _scaled(total: int, exp: int) -> Fraction:
    """total * 2**exp, exactly."""
    return Fraction(total << exp) if exp >= 0 else Fraction(total, 1 << -exp)


def exact_margins_scaled(X, y, w_star, rows) -> tuple:
    """y_i <w_star, x_i> exactly for every i of rows, as integers t_i on one scale:
    y_i <w_star, x_i> = t_i * 2**exp.  Returns ([t_i], exp).

    exact_dot's arithmetic for many rows at once: the significands' products and their shifts
    in numpy object arrays (Python integers, so exact), one exponent for all rows, so that the
    rows compare as integers and only the one a caller keeps becomes a Fraction (twice as fast
    as exact_dot row by row on 99 rows of 100 entries; no gcd per row).
    """
    rows = np.asarray(rows, dtype=np.int64)
    if rows.size == 0:
        return [], 0
    ia, ea, nza = _significands(X[rows])
    ib, eb, nzb = _significands(w_star)
    keep = nza & nzb
    if not keep.any():
        return [0] * rows.size, 0
    ex = (ea + eb).astype(np.int64)
    low = int(ex[keep].min())
    # a zero term is 0 (its shift too)
    ia = np.where(keep, ia, 0).astype(object)
    ib = ib.astype(object)
    shifts = np.where(keep, ex - low, 0).astype(object)
    totals = ((ia * ib) << shifts).sum(axis=1).tolist()
    signs = [int(v) for v in np.asarray(y)[rows].tolist()]
    return [s * int(t) for s, t in zip(signs, totals)], low - 106


# margin_enclosures needs every non-zero entry within these powers of two: the products of
# Veltkamp halves (at most 2^801, multiples of at least 2^-904) then neither overflow nor
# leave the normal range, where each is exact.
_ENCLOSE_TINY, _ENCLOSE_HUGE = 2.0 ** -400, 2.0 ** 400
# From this many entries (rows x d) the enclosures below pay for themselves: fewer go to exact
# arithmetic (break-even measured at 16-20 rows of 20, 5-6 rows of 100, 2-3 rows of 1000).
_ENCLOSE_ENTRIES = 512


def _in_range(a) -> bool:
    m = np.abs(a)
    return bool(((m == 0) | ((m >= _ENCLOSE_TINY) & (m <= _ENCLOSE_HUGE))).all())


def _split(a):
    """Veltkamp's split a = hi + lo, exactly, hi and lo with at most 26 significant bits each
    (round to nearest, no overflow: Dekker 1971), so that a product of two halves is exact."""
    c = a * 134217729.0  # 2^27 + 1
    hi = c - (c - a)
    return hi, a - hi


def margin_enclosures(X, y, w_star, rows):
    """(lo, hi) floats with lo_i <= y_i <w_star, x_i> <= hi_i for every i of rows, about
    2u|margin| wide; None when an entry is outside 2^-400 .. 2^400 (the exact path decides).

    Why: the float margin's bound gamma_d ||w_star|| ||x|| cannot tell apart the tied margins
    of a max-margin w* (1e-16 apart), and exact integers cost some 8 us a row (99 rows at
    100k x 100: 0.85 ms, against 0.09 ms here).  The margin is the sum of 4d exact products
    of Veltkamp halves; one error-free extraction (Rump, Ogita and Oishi, "Accurate
    floating-point summation I", 2008) takes the high parts of the largest d, whose float sum
    is exact, and the remainders and the 3d small products are summed in floats with Higham's
    bound gamma_4d * sum|term|.
    """
    # float64 (float32 data converts exactly): the split below is binary64's; y = +-1: exact
    A = np.asarray(X[rows], dtype=np.float64) * y[rows][:, None]
    if not (_in_range(A) and _in_range(w_star)):
        return None
    ah, al = _split(A)
    bh, bl = _split(np.asarray(w_star, dtype=np.float64))
    H = ah * bh  # this and the three products below are exact; their sum is the margin
    L = [ah * bl, al * bh, al * bl]  # each below 2^-25 |a b|: their rounded sum is close
    # sigma: a power of two >= 2d max|h|.  q = fl(sigma + h) - sigma is then a multiple of
    # 2^-53 sigma, and |q| <= |h| + 2^-53 sigma, so every partial sum of the q is a multiple of
    # 2^-53 sigma below sigma: representable, the float sum exact in any order.  r = h - q is
    # the rounding error of sigma + h, a float (exact), |r| <= 2^-53 sigma.
    sigma = np.ldexp(1.0, np.frexp(np.abs(H).max(axis=1))[1] + (2 * H.shape[1]).bit_length())
    Q = (sigma[:, None] + H) - sigma[:, None]
    T = (H - Q) + L[0] + L[1] + L[2]
    tau, rest = Q.sum(axis=1), T.sum(axis=1)
    c = tau + rest
    # margin = tau + (the exact sum of the 4d terms of T): |margin - c| <= u|tau + rest| +
    # gamma_4d * sum of the terms' |.|; SAFETY covers the rounding of this bound
    size = np.abs(H - Q) + np.abs(L[0]) + np.abs(L[1]) + np.abs(L[2])
    e = (U * np.abs(c) * (1.0 + 4 * U) + gam(4 * H.shape[1]) * size.sum(axis=1)) * SAFETY
    # fl(c -+ e) is the float nearest c -+ e: the next float outward is beyond it
    return np.nextafter(c - e, -np.inf), np.nextafter(c + e, np.inf)


def _undecided(X, y, w_star, rows, gamma=None):
    """The rows of `rows` that exact arithmetic must decide: every row that may hold the
    smallest margin (gamma None), or whose margin may be below gamma; in the order given."""
    if rows.size < 2 or rows.size * X.shape[1] < _ENCLOSE_ENTRIES:
        return rows
    enc = margin_enclosures(X, y, w_star, rows)
    if enc is None:
        return rows
    lo, hi = enc
    # The smallest margin v_k: lo_k <= v_k <= v_j <= hi_j for every j, so lo_k <= min hi (and
    # so for every row tied with it).
    return rows[lo <= (hi.min() if gamma is None else gamma)]


def certify_margin(X, y, w_star, stats: DataStats, gamma=None) -> float:
    """The trusted check: gamma = min_i y_i <w_star, x_i> > 0, or gamma <= it when gamma is given.

    Float margins decide every example whose error bound is clear of the threshold; the others
    (ties, near-zero margins) by enclosures some 2u|margin| wide (margin_enclosures), and those
    that these leave open in exact arithmetic.  Returns a certified gamma (the exact minimum
    rounded down when gamma is None) and sets stats.gamma.
    """
    n, d = X.shape
    E = stats.E
    if stats.ym_min is not None and not np.isfinite(stats.ym_min) or not np.isfinite(E):
        raise InvalidArgument("y*<w_star, x> or its error bound overflows for some example; "
                              "rescale w_star or X")
    if gamma is None:
        # Rows that could hold the minimum: y*m within 2E of the smallest y*m.
        cand, ym, ym_min = _margins_near(X, y, w_star, stats, None, 2 * E)
        if cand.size * max(d, 1) <= _EXACT_BUDGET:
            cand = _undecided(X, y, w_star, cand)
            totals, exp = exact_margins_scaled(X, y, w_star, cand)
            j = min(range(len(totals)), key=totals.__getitem__)  # the first smallest
            i_min, g_exact = int(cand[j]), _scaled(totals[j], exp)
            if g_exact <= 0:
                raise InvalidArgument(
                    f"w_star does not separate the data: y[{i_min}]*<w_star, X[{i_min}]> = "
                    f"{float(g_exact)!r} <= 0 (for data it does not separate, use the "
                    f"non-separable mode: the hinge-loss bound)")
            gf = float(g_exact)
            if Fraction(gf) > g_exact:
                gf = float(_down(gf))
            stats.gamma, stats.gamma_exact = gf, Fraction(gf) == g_exact
            return gf
        i_min = int(cand[np.argmin(ym)])
        if ym_min - E <= 0:
            raise InvalidArgument(
                f"w_star does not separate the data (within rounding): y[{i_min}]*<w_star, "
                f"X[{i_min}]> = {float(ym_min)!r} <= {E:.3g}")
        stats.gamma = float(_down(ym_min - E))
        return stats.gamma
    gamma = float(gamma)
    # Rows with y*m < gamma + E are unsure; those with y*m < gamma - E certainly violate.
    unsure, ym, _ = _margins_near(X, y, w_star, stats, gamma, E)
    if unsure.size:
        worst = int(np.argmin(ym))
        if float(ym[worst]) + E < gamma:
            i, v = int(unsure[worst]), float(ym[worst])
            what = "does not separate the data" if v <= 0 else "has a smaller margin than gamma"
            raise InvalidArgument(
                f"w_star {what}: y[{i}]*<w_star, X[{i}]> = {v!r} < gamma={gamma!r}")
    if unsure.size * max(d, 1) > _EXACT_BUDGET:
        raise InvalidArgument(f"gamma={gamma!r}: too many examples ({unsure.size}) are within "
                              f"rounding error of the margin to certify it exactly")
    g = Fraction(gamma)
    unsure = _undecided(X, y, w_star, unsure, gamma)
    totals, exp = exact_margins_scaled(X, y, w_star, unsure)
    for i, t in zip(unsure.tolist(), totals):
        e = _scaled(t, exp)
        if e < g:
            raise InvalidArgument(
                f"w_star has a smaller margin than gamma: y[{i}]*<w_star, X[{i}]> = "
                f"{float(e)!r} < gamma={gamma!r} (exactly)")
    stats.gamma, stats.gamma_exact = gamma, True
    return gamma


def _margins_near(X, y, w_star, stats: DataStats, gamma, tol):
    """Examples whose y*m is at most tol above gamma (or above the smallest y*m).

    Returns (their indices, their y*m, the smallest y*m).  Uses the engine's candidates when
    they are complete up to that threshold; otherwise the margins kept by the engine's first
    pass, or every <w_star, x_i> computed once more.
    """
    if stats.candidates is not None:
        idx, ym, floor = stats.candidates
        threshold = (stats.ym_min if gamma is None else gamma) + tol
        if threshold < floor:
            keep = ym <= threshold
            return idx[keep], ym[keep], stats.ym_min
        if stats.m is None:
            # The candidates may miss an example: the minimum comes from the new margins too.
            stats.m, stats.ym_min = X @ w_star, None
    ym = y * stats.m
    if stats.ym_min is None:
        stats.ym_min = float(ym.min())
    idx = np.flatnonzero(ym <= (stats.ym_min if gamma is None else gamma) + tol)
    return idx, ym[idx], stats.ym_min


def _hinge_err(hv, e_m):
    """Error of max(0, gamma - y*m): none where gamma - y*m is certainly negative (loss 0)."""
    e = e_m + U * np.abs(hv)
    return np.where(hv + e < 0, 0.0, e)


# The smallest subnormal float: a product that underflows rounds by up to this much, which the
# relative bound u*|product| does not cover.
TINY = 2.0 ** -1074


def rowdot(A, B) -> np.ndarray:
    """<A[i], B[i]> for every row i."""
    return np.einsum("ij,ij->i", A, B)


def one_slot(value, error=None) -> tuple:
    """The slot of one value (a constant, or the final state): (array([value]), array([error])
    or None when the value is exact)."""
    return np.array([float(value)]), None if error is None else np.array([error])


def constant_slots(gamma, R, s, e_s) -> dict:
    """The constants of every run: gamma, R and <w_star, w_star> = s (within e_s)."""
    return {"gamma": one_slot(gamma), "R": one_slot(R), "<w_star, w_star>": one_slot(s, e_s)}


def final_slots(k, a, e_a, q, e_q) -> dict:
    """The final state after k updates: k = M, <w_star, w[k]> = a and <w[k], w[k]> = q within
    e_a and e_q (widened by SAFETY)."""
    kk = np.array([float(k)])
    return {"k": (kk, None), "M": (kk, None),
            "<w_star, w[k]>": (np.array([a]), np.array([e_a * SAFETY])),
            "<w[k], w[k]>": (np.array([q]), np.array([e_q * SAFETY]))}


def start_slots(w0=None, w_star=None, eta=1.0, *, exact: bool = False) -> dict:
    """The slots of how a run starts, which every engine supplies to the monitor: <w0, w0> and
    <w_star, w0> of the start w0 = w[0], and the learning rate eta.

    w0: the start as a float vector, None for the zero vector (then w_star is not read);
    w_star: a float vector; eta: a positive float.  Floats by default, each slot
    (array([value]), array([error bound]) or None when exact); exact=True: Fractions, the exact
    values of the floats' products.
    """
    zero = w0 is None or not np.any(w0)
    if exact:
        if zero:
            return {"<w0, w0>": Fraction(0), "<w_star, w0>": Fraction(0), "eta": Fraction(eta)}
        return {"<w0, w0>": exact_dot(w0, w0), "<w_star, w0>": exact_dot(w_star, w0),
                "eta": Fraction(eta)}
    if zero:
        return {"<w0, w0>": one_slot(0.0), "<w_star, w0>": one_slot(0.0), "eta": one_slot(eta)}
    w0 = np.asarray(w0, dtype=np.float64)
    ws = np.asarray(w_star, dtype=np.float64)
    d = w0.shape[0]
    # |fl(<a, b>) - <a, b>| <= gamma_d sum|a_i b_i| + d 2^-1074 (products that underflow)
    g = gam(d) * SAFETY
    with np.errstate(over="ignore", under="ignore"):
        q = float(w0 @ w0)
        a = float(ws @ w0)
        e_q = (g * q + d * TINY) * SAFETY
        e_a = (g * float(np.abs(ws) @ np.abs(w0)) + d * TINY) * SAFETY
    return {"<w0, w0>": one_slot(q, e_q), "<w_star, w0>": one_slot(a, e_a), "eta": one_slot(eta)}


@dataclass
class Bookkeeper:
    """Incremental <w_star, w[k]>, ||w[k]||^2 and TD with error bounds, chunk by chunk."""

    stats: DataStats
    y: np.ndarray
    d: int
    order: np.ndarray | None = None  # the presentation cycle (for TD)
    gamma: float | None = None
    need_td: bool = False
    # Separable with a certified gamma: every hinge loss is exactly 0, so TD is exactly 0.
    zero_loss: bool = False
    # running state after the last update seen: k, values and bounds
    k: int = 0
    a: float = 0.0
    e_a: float = 0.0
    q: float = 0.0
    e_q: float = 0.0
    D: float = 0.0  # ||w~[k] - w[k]|| bound
    N: float = 0.0  # sum of ||x|| upper bounds over the updates: ||w[k]|| <= N
    n: int = 0
    P: np.ndarray | None = None  # TD before each position of the order, and its error bound
    eP: np.ndarray | None = None
    # how the run starts (start_slots): w[0] = w0 and the step eta*y*x; None: from 0 with eta 1
    start: dict | None = None
    eta: float = 1.0

    def __post_init__(self):
        if self.start is None:
            self.start = start_slots()
        self.eta = float(self.start["eta"][0][0])
        if self.k == 0:  # the state before the first update is the start's
            (a,), ea = self.start["<w_star, w0>"]
            (q,), eq = self.start["<w0, w0>"]
            self.a, self.e_a = float(a), 0.0 if ea is None else float(ea[0])
            self.q, self.e_q = float(q), 0.0 if eq is None else float(eq[0])
            # ||w0|| <= sqrt(q + e_q), the square root rounded up
            self.N = float(np.sqrt(self.q + self.e_q) * (1.0 + 4 * U))
        if self.need_td and not self.zero_loss:
            self._prepare_td()

    # -------------------------------------------------------------- TD (hinge over presentations)
    def _prepare_td(self):
        st, order = self.stats, self.order
        gm = self.gamma
        hv = gm - self.y[order] * st.m[order]
        h = np.maximum(hv, 0.0)
        e_h = _hinge_err(hv, st.e_m(order))
        P = np.concatenate(([0.0], np.cumsum(h)))
        eP = np.concatenate(([0.0], np.cumsum(e_h) + U * np.cumsum(np.abs(P[1:]))))
        self.P, self.eP = P, eP * SAFETY

    def td(self, visits):
        """TD before the given (global) visit indices, with error bounds."""
        if self.zero_loss:
            z = np.zeros(np.shape(visits))
            return z, None
        L = self.P.size - 1
        visits = np.asarray(visits, dtype=np.int64)
        e, r = np.divmod(visits, L)
        v = e * self.P[L] + self.P[r]
        err = (e * self.eP[L] + self.eP[r] + 2 * U * np.abs(v)) * SAFETY
        return v, err

    def hinge(self, examples):
        """max(0, gamma - y<w_star, x>) of the given examples, with error bounds."""
        if self.zero_loss:
            return np.zeros(np.shape(examples)), None
        st = self.stats
        hv = self.gamma - self.y[examples] * st.m[examples]
        return np.maximum(hv, 0.0), _hinge_err(hv, st.e_m(examples)) * SAFETY

    # -------------------------------------------------------------- updates
    def chunk(self, idx, p, visits=None, m=None, nx2=None) -> dict:
        """The env of updates with examples idx and predictions p, and of the states before
        them (state j of the chunk is the state before its update j).

        m, nx2: fl(<w_star, x>) and fl(||x||^2) of those examples, if the caller computed them
        (any summation order: the bounds hold for every order); otherwise the data's statistics.
        State j of the chunk is the state before its update j.  Advances the running state.
        """
        st = self.stats
        L = idx.size
        yv = self.y[idx].astype(float)
        if m is None:
            m = st.m[idx]
        if nx2 is None:
            nx2 = st.nx2[idx]
        out, ends = chunk_rows(yv, np.asarray(p, dtype=float), np.asarray(m, dtype=float),
                               np.asarray(nx2, dtype=float), float(self.k), self.a, self.e_a,
                               self.q, self.e_q, self.D, self.N, st._cn, st._ce, st._ge,
                               gam(self.d), eta=self.eta)
        js = out[_JS]
        env = {"k": (js, None), "M": (js, None), "y": (yv, None),
               "<w_star, w[k]>": (out[_A0], out[_EA0]), "<w[k], w[k]>": (out[_Q0], out[_EQ0]),
               "<w_star, x>": (out[_M], out[_EM]), "<x, x>": (out[_NX2], out[_ENX2]),
               "<w_star, w[k+1]>": (out[_A1], out[_EA1]),
               "<w[k+1], w[k+1]>": (out[_Q1], out[_EQ1]),
               "<x, w[k]>": (out[_P], out[_EP]), "d": self.hinge(idx),
               "<x, w[k+1]>": (out[_PN], out[_EPN]),
               "<w[k], w[k+1]>": (out[_CROSS], out[_ECROSS]), **self.constants()}
        if self.need_td and visits is not None:
            td0, e_td0 = self.td(visits)
            h, e_h = self.hinge(idx)
            td1 = td0 + h
            env["TD[k]"] = (td0, e_td0)
            env["TD[k+1]"] = (td1, None if self.zero_loss else
                              (e_td0 + e_h + U * np.abs(td1)) * SAFETY)
        # advance
        self.k += L
        if L:
            self.a, self.e_a, self.q, self.e_q, self.D, self.N = (float(v) for v in ends)
        return env

    def final_state(self, total_visits=None):
        """The state env after the last update (one point)."""
        env = final_slots(self.k, self.a, self.e_a, self.q, self.e_q)
        env.update(self.constants())
        if self.need_td and total_visits is not None:
            v, e = self.td(np.array([total_visits]))
            env["TD[k]"] = (v, e)
        return env

    def constants(self) -> dict:
        st = self.stats
        return {**constant_slots(self.gamma, st.R, st.s, st.e_s), **self.start}

    def examples(self) -> dict:
        st = self.stats
        env = self.constants()
        env.update({"y": (self.y.astype(float), None), "<w_star, x>": (st.m, st.e_m()),
                    "<x, x>": (st.nx2, st.e_nx2()), "d": self.hinge(np.arange(self.n))})
        return env


# ------------------------------------------------------------------ the bookkeeping of a chunk
# Rows of the array that _chunk_rows fills, one column per update j of
# the chunk (state j: before update j).  Error rows already carry the SAFETY factor.
(_JS, _A0, _EA0, _Q0, _EQ0, _M, _EM, _NX2, _ENX2, _A1, _EA1, _Q1, _EQ1, _P, _EP, _PN, _EPN,
 _CROSS, _ECROSS) = range(19)
_NROWS = 19


# The bookkeeping is one loop (every quantity at update j depends on the updates up to j),
# written once: numba compiles it when installed, and Python runs the same source otherwise (the
# same IEEE operations, so the same floats; tests/data/bookkeeping_golden.npz pins them).
# Compiled, it is 1.1-1.2x faster on the 10k x 20 benchmark runs (bench_runtime.py), where the
# monitored run's time against streaming X is near its target of 3.
_compiled = _jit.jit(cache=True)
_COMPILE_FROM = 512  # updates in a chunk from which numba's start-up is worth paying


@_compiled
def _sqrt(v):
    """sqrt, NaN for a negative or NaN argument (as np.sqrt; math.sqrt would raise)."""
    return math.sqrt(v) if v >= 0.0 else math.nan


@_compiled
def _nanmin(x, z):
    """np.minimum of two floats (NaN when either is NaN)."""
    if x != x or z != z:
        return math.nan
    return z if z < x else x


@_compiled
def _q_step(j, g, W0, D0, nxu, e_nx2, c, Sq, q1, e_q, Cq, eta, r_c):
    """The prediction's error e_p and the running bound of ||w||^2 at update j: (e_p, the
    carried sum, e_q1).  c = fl(eta*(2*y*p + eta*||x||^2)); r_c bounds the roundings inside
    the parenthesis (0 for eta = 1, where c = fl(2*y*p + ||x||^2) rounds once)."""
    u = U
    e_p = g * W0 * nxu + D0 * nxu
    if eta == 1.0:
        e_c = 2.0 * e_p + e_nx2 + u * abs(c)
    else:
        e_c = eta * (2.0 * e_p + eta * e_nx2 + r_c) + (u * abs(c) + TINY)
    t = e_c + u * abs(Sq)
    Cq = t if j == 0 else Cq + t
    return e_p, Cq, e_q + Cq + u * abs(q1)


@_compiled
def _a_step(j, rate, eta, y_, m_, e_m, Sa, Ca, a, e_a):
    """<w_star, w> after update j: (Sa, Ca, a1, e_a1).  The increments eta*y*m are exact up to
    eta*e_m (and the product's rounding when eta != 1); a1 = fl(a + fl(partial sum)): each
    partial sum rounds by u*|partial sum|, and adding the carried value a once more."""
    u = U
    if rate:
        t = eta * (y_ * m_)
        Sa = t if j == 0 else Sa + t
        a1 = a + Sa
        t = eta * e_m + (u * abs(t) + TINY) + u * abs(Sa)
    else:
        t = y_ * m_
        Sa = t if j == 0 else Sa + t
        a1 = a + Sa
        t = e_m + u * abs(Sa)
    Ca = t if j == 0 else Ca + t
    return Sa, Ca, a1, e_a + Ca + u * abs(a1)


@_compiled
def _increment(j, rate, eta, y_, p_, q_, nxu, dtiny, CE):
    """The increment of ||w||^2 at update j: (eta*||x||^2, c, r_c, eta*||x|| bound, CE), CE the
    running sum of the steps' own roundings (eta != 1)."""
    if not rate:
        return q_, 2.0 * y_ * p_ + q_, 0.0, nxu, CE
    eq_ = eta * q_
    inner = 2.0 * y_ * p_ + eq_
    nxs = eta * nxu
    step = U * nxs + dtiny
    return (eq_, eta * inner, U * (abs(eq_) + abs(inner)) + TINY, nxs,
            step if j == 0 else CE + step)


@_compiled
def _refined(W, q, e_q, D):
    """||w~|| <= sqrt(q + e_q) + D where that is below the a priori bound W."""
    v = q + e_q
    if v < 0.0:
        v = 0.0
    return _nanmin(W, _sqrt(v) * (1 + 2 * U) + D)


@_compiled
def _store_products(out, j, rate, eta, y_, p_, eq_, q0, e_pr, e_q0r, e_nx2):
    """<x, w[k+1]> = p + eta*y*||x||^2 and <w[k], w[k+1]> = ||w[k]||^2 + eta*y*p of update j,
    with their error bounds."""
    u, S = U, SAFETY
    if rate:
        pn = p_ + y_ * eq_
        out[_EPN, j] = (e_pr + eta * e_nx2 + (u * abs(eq_) + TINY) + u * abs(pn)) * S
        ep_ = eta * p_
        cross = q0 + y_ * ep_
        out[_ECROSS, j] = (e_q0r + eta * e_pr + (u * abs(ep_) + TINY) + u * abs(cross)) * S
    else:
        pn = p_ + y_ * eq_
        out[_EPN, j] = (e_pr + e_nx2 + u * abs(pn)) * S
        cross = q0 + y_ * p_
        out[_ECROSS, j] = (e_q0r + e_pr + u * abs(cross)) * S
    out[_PN, j], out[_CROSS, j] = pn, cross


@_compiled
def _chunk_rows(yv, p, m, nx2, k, a, e_a, q, e_q, D, N, cn, ce, ge, g, out, ends, eta=1.0):
    """The chunk's values and error bounds (the rows above, one column per update) and the
    running state after it (ends: a, e_a, q, e_q, D, N), for the step eta*y*x.

    ||w||^2: q1 = q0 + eta*(2*y*p + eta*||x||^2); the prediction's error needs ||w~|| and D,
    which in turn depend on the error of q: bound them a priori first, then refine once.
    With eta = 1 every product by eta is skipped (exact), so the floats are those of the classic
    bookkeeping (tests/data/bookkeeping_golden.npz).
    """
    u, rate = U, eta != 1.0
    # A priori growth of ||w~||: (1+u) per update for the exact step y*x, (1+u)^2 when the
    # step eta*y*x rounds too; d 2^-1074 (g / u >= d): the underflow of one step's d products.
    grow = 2 * U if not rate else 4 * U
    dtiny = (g / u) * TINY if rate else 0.0
    # running sums: the partial sums of <w_star, w> and ||w||^2 and their error terms, the
    # ||x|| bounds (times eta), W1 a priori and refined, the steps' roundings
    Sa = Ca = Sq = CN = CW1 = CW1r = CE = Cq = Cqr = 0.0
    a0, e_a0, q0, N0, D0, D0r, e_q0, e_q0r = a, e_a, q, N, D, D, e_q, e_q
    a1 = e_a1 = q1 = e_q1r = D1r = N1 = 0.0
    for j in range(len(yv)):
        y_, p_, m_, q_ = yv[j], p[j], m[j], nx2[j]
        nxu = _sqrt(q_) * cn
        e_m, e_nx2 = nxu * ce, q_ * ge
        Sa, Ca, a1, e_a1 = _a_step(j, rate, eta, y_, m_, e_m, Sa, Ca, a, e_a)
        eq_, c, r_c, nxs, CE = _increment(j, rate, eta, y_, p_, q_, nxu, dtiny, CE)
        Sq = c if j == 0 else Sq + c
        q1 = q + Sq
        CN = nxs if j == 0 else CN + nxs
        N1 = N + CN
        js = j + k
        # a priori: ||w~[j]|| <= (1 + u)^j * N_j (triangle inequality, coordinatewise rounding)
        W0 = N0 * (1.0 + grow * (js + 1.0)) + dtiny * (js + 1.0)
        W1 = N1 * (1.0 + grow * (js + 2.0)) + dtiny * (js + 2.0)
        CW1 = W1 if j == 0 else CW1 + W1
        D1 = D + u * CW1 + CE
        e_p, Cq, e_q1 = _q_step(j, g, W0, D0, nxu, e_nx2, c, Sq, q1, e_q, Cq, eta, r_c)
        W1r = _refined(W1, q1, e_q1, D1)
        CW1r = W1r if j == 0 else CW1r + W1r
        D1r = D + u * CW1r + CE
        e_pr, Cqr, e_q1r = _q_step(j, g, _refined(W0, q0, e_q0, D0), D0r, nxu, e_nx2, c, Sq,
                                   q1, e_q, Cqr, eta, r_c)
        S = SAFETY
        out[_JS, j], out[_A0, j], out[_EA0, j], out[_Q0, j] = js, a0, e_a0 * S, q0
        out[_EQ0, j], out[_M, j], out[_EM, j], out[_NX2, j] = e_q0r * S, m_, e_m, q_
        out[_ENX2, j], out[_A1, j], out[_EA1, j], out[_Q1, j] = e_nx2, a1, e_a1 * S, q1
        out[_EQ1, j], out[_P, j], out[_EP, j] = e_q1r * S, p_, e_pr * S
        _store_products(out, j, rate, eta, y_, p_, eq_, q0, e_pr, e_q0r, e_nx2)
        # state j + 1 (before update j + 1)
        a0, e_a0, q0, N0, D0, D0r = a1, e_a1, q1, N1, D1, D1r
        e_q0, e_q0r = e_q1, e_q1r
    if len(yv):
        ends[0], ends[1], ends[2], ends[3], ends[4], ends[5] = a1, e_a1, q1, e_q1r, D1r, N1


def chunk_rows(yv, p, m, nx2, *state_and_factors, eta=1.0):
    """_chunk_rows into new arrays (out, ends); Python reads lists faster than arrays."""
    out, ends = np.empty((_NROWS, len(yv))), np.empty(6)
    if _jit.worth_compiling(len(yv), _COMPILE_FROM):
        _jit.compiled(_chunk_rows)(yv, p, m, nx2, *state_and_factors, out, ends, float(eta))
    else:
        _chunk_rows(yv.tolist(), p.tolist(), m.tolist(), nx2.tolist(), *state_and_factors, out,
                    ends, float(eta))
    return out, ends


def norm_up(v, d: int) -> float:
    """A certified upper bound of ||v|| for the float vector v."""
    with np.errstate(under="ignore"):
        q = float(v @ v)
    return math.sqrt(q + d * TINY) * (1.0 + gam(d)) * (1.0 + 4 * U)
