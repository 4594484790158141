"""The kernel perceptron, monitored: the lemmas of proofs/kernel.proof (and the classic ones, which
hold in any inner-product space) checked at every update, with inner products through a kernel.

How its floats are bounded: docs/runtime-bounds.md, "The kernel perceptron".
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ..errors import InvalidArgument, NovikoffError
from ._bounds import (SAFETY, SMALLEST_NORMAL, TINY, U, constant_slots, final_slots, gam,
                      start_slots)
from ._config import visits_allowed
from ._engine import make_monitor
from ._result import RunResult
from ._validate import check_data, check_gamma, check_order, finite_float64, \
    check_positive_int, numeric_array

__all__ = ["Kernel", "parse_kernel", "run_kernel", "gram", "MAX_N", "EXP_ULPS"]

MAX_N = 17_000  # the Gram matrix and its error bounds, both float64: 16*n^2 = 4.6 GB at the cap
EXP_ULPS = 4  # assumed: |np.exp(z) - exp(z)| <= EXP_ULPS ulps of exp(z) (+ subnormal spacing)
_EXP_REL = EXP_ULPS * 2.0 ** -52  # an ulp is at most 2^-52 relative
# |K_rbf - K_exact| never exceeds this: both lie in [0, 1], the computed one up to EXP_ULPS ulps
_RBF_CAP = 1.0 + 2 * _EXP_REL
# a computed G*(s - e_s) above this puts the exact exponent below -745 (the test's own two
# roundings cost far less than 1), and exp(-745) < 2^-1074 (1074*ln 2 = 744.4): the exact K is
# below the smallest subnormal
_RBF_FAR = 746.0
_EIGH_MAX = 20_000  # the default separator tries a max-margin one up to this n
_BLOCK_BYTES = 1 << 25


# ------------------------------------------------------------------ kernels

@dataclass(frozen=True)
class Kernel:
    """linear: <a, b>; poly: (<a, b> + c)^degree; rbf: exp(-g*||a - b||^2)."""

    kind: str
    degree: int = 1
    c: float = 0.0
    g: float = 0.0

    def __str__(self) -> str:
        if self.kind == "linear":
            return "linear"
        if self.kind == "poly":
            return f"poly:{self.degree}" + ("" if self.c == 1.0 else f":{self.c!r}")
        return f"rbf:{self.g!r}"

    @property
    def rational(self) -> bool:
        return self.kind in ("linear", "poly")


_KERNEL_HELP = "linear, poly:DEGREE[:C] or rbf:G"


def parse_kernel(spec) -> Kernel:
    """A Kernel from 'linear', 'poly:D[:C]' (D a positive integer, C >= 0, default 1) or
    'rbf:G' (G > 0); InvalidArgument naming the spec otherwise."""
    if isinstance(spec, Kernel):
        return spec
    if not isinstance(spec, str):
        raise InvalidArgument(f"kernel={spec!r} is not a kernel spec ({_KERNEL_HELP})")
    parts = spec.strip().split(":")
    name = parts[0].strip().lower()

    def bad(why):
        return InvalidArgument(f"kernel={spec!r}: {why} ({_KERNEL_HELP})")

    def number(text, what):
        try:
            v = float(text)
        except ValueError:
            raise bad(f"{what} {text!r} is not a number") from None
        if not math.isfinite(v):
            raise bad(f"{what} {text!r} is not finite")
        return v

    if name == "linear":
        if len(parts) != 1:
            raise bad("linear takes no parameter")
        return Kernel("linear", 1, 0.0)
    if name == "poly":
        if len(parts) not in (2, 3) or not parts[1].strip():
            raise bad("poly needs a degree")
        text = parts[1].strip()
        if not text.isdigit() or int(text) < 1:
            raise bad(f"the degree {text!r} is not a positive integer")
        degree = int(text)
        if degree > 64:
            raise bad(f"the degree {degree} is above 64")
        c = number(parts[2].strip(), "the offset C") if len(parts) == 3 else 1.0
        if c < 0:
            raise bad(f"the offset C = {c!r} is negative ((<a, b> + C)^D is then not a kernel: "
                      f"no feature space)")
        return Kernel("poly", degree, c)
    if name == "rbf":
        if len(parts) != 2 or not parts[1].strip():
            raise bad("rbf needs a width G")
        g = number(parts[1].strip(), "the width G")
        if g <= 0:
            raise bad(f"the width G = {g!r} is not positive")
        return Kernel("rbf", 1, 0.0, g)
    raise bad(f"unknown kernel {name!r}")


def _blocks(n: int, width: int):
    rows = max(1, min(n, _BLOCK_BYTES // (8 * max(width, 1))))
    for s in range(0, n, rows):
        yield s, min(n, s + rows)


def gram(X, kern: Kernel):
    """(K, E, nx2): the Gram matrix (float64, symmetric), bounds E >= |K - K_exact| (float64)
    and the rows' squared norms.  Computed by blocks of rows, upper triangle first,
    mirrored (each pair (K_ij, E_ij) then equals (K_ji, E_ji): a valid pair, K being symmetric)."""
    n, d = X.shape
    nx2 = np.einsum("ij,ij->i", X, X)
    gd = gam(d)
    # ||x_i|| <= nu_i: fl(||x||^2) within gamma_d of ||x||^2, sqrt and products rounded
    nu = np.sqrt(nx2 * (1.0 + gd * (1.0 + 2 * gd))) * (1.0 + 4 * U)
    K = np.empty((n, n))
    E = np.empty((n, n))
    # in the subnormal range a rounding errs by up to 2^-1075 absolutely: d for the dot product's
    # products, 3 more for the bound's own operations (gd*nu_i*nu_j + ...)
    under = (d + 3) * TINY
    for s, e in _blocks(n, n):
        G = X[s:e] @ X[s:].T
        eG = gd * np.outer(nu[s:e], nu[s:]) + under
        w = e - s
        if w > 1:  # the diagonal block: its upper triangle, mirrored
            up = np.triu(G[:, :w])
            G[:, :w] = up + np.triu(up, 1).T
            up = np.triu(eG[:, :w])
            eG[:, :w] = up + np.triu(up, 1).T
        if kern.kind == "linear":
            Kb, Eb = G, eG
        elif kern.kind == "poly":
            D = kern.degree
            t = G + kern.c
            et = eG + U * np.abs(t)
            with np.errstate(over="ignore", under="ignore"):  # overflow: refused below
                Kb = t.copy()
                for _ in range(D - 1):
                    Kb *= t
                at = np.abs(t)
                Eb = gam(max(D - 1, 0)) * np.abs(Kb) * (1 + 2 * gam(D))
                if D > 1:
                    Eb = Eb + D * et * (at + et) ** (D - 1)
                else:
                    Eb = Eb + et
                # the power's D - 1 products and the bound's own ~D + 4 operations, each
                # within 2^-1075 absolutely where it underflows
                Eb = Eb + (2 * D + 4) * TINY
        else:
            g = kern.g
            # a wide G or far points overflow -G*sq or expm1(ez) (or A, B, es): K is then 0 and
            # its bound inf (never nan: Kb + SMALLEST_NORMAL > 0); the caps below make the
            # bounds finite
            with np.errstate(under="ignore", over="ignore", invalid="ignore"):
                A = nx2[s:e, None] + nx2[None, s:]
                B = A - 2.0 * G
                es = gd * (nu[s:e, None] + nu[None, s:]) ** 2 + 2 * gd * under + \
                    U * (np.abs(A) + np.abs(B))
                sq = np.maximum(B, 0.0)  # the exact squared distance is >= 0
                z = -g * sq
                ez = g * es + U * np.abs(z)
                Kb = np.exp(z)
                Eb = ((Kb + SMALLEST_NORMAL) / (1.0 - _EXP_REL) * (_EXP_REL + np.expm1(ez))
                      + SMALLEST_NORMAL)
                Eb = np.fmin(Eb, _RBF_CAP)
                # the exact squared distance is >= B - es: G*(B - es) > _RBF_FAR (computed, so
                # within 2u) puts the exact exponent below -745, where exp is below 2^-1074
                far = g * (B - es) > _RBF_FAR
                Eb[far] = np.fmin(Eb[far], Kb[far] + SMALLEST_NORMAL)
            r = np.arange(s, e)
            Kb[r - s, r - s + 0] = 1.0  # exp(-G*0) = 1 exactly
            Eb[r - s, r - s] = 0.0
        with np.errstate(over="ignore"):
            Eb = Eb * SAFETY
        for what, M in (("K", Kb), ("the rounding-error bound of K", Eb)):
            if not np.all(np.isfinite(M)):
                i, j = (int(v) for v in np.argwhere(~np.isfinite(M))[0])
                raise InvalidArgument(f"kernel={str(kern)!r}: {what}(X[{s + i}], X[{s + j}]) "
                                      f"overflows; rescale the data")
        K[s:e, s:] = Kb
        K[s:, s:e] = Kb.T
        E[s:e, s:] = Eb
        E[s:, s:e] = Eb.T
    _check_diagonal(K, kern)
    return K, E, nx2


def _check_diagonal(K, kern: Kernel) -> None:
    """Refuse an example whose K(x, x) is below the smallest normal float (linear and poly;
    rbf has K(x, x) = 1): there rounding is no longer relative, and such a row (e.g. x = 0 for
    the linear kernel) can never be separated with a margin."""
    if kern.kind == "rbf":
        return
    diag = np.diagonal(K)
    low = np.flatnonzero(diag < SMALLEST_NORMAL)
    if low.size:
        i = int(low[0])
        raise InvalidArgument(f"X[{i}]: K(X[{i}], X[{i}]) = {float(diag[i])!r} under "
                              f"kernel={str(kern)!r} is below the smallest normal float "
                              f"{SMALLEST_NORMAL!r}, where rounding is no longer relative; "
                              f"rescale the data")


def _matvec(M, v, absolute: bool = False):
    """M @ v (or |M| @ v) by blocks of rows, in float64."""
    out = np.empty(M.shape[0])
    for s, e in _blocks(M.shape[0], M.shape[1]):
        B = M[s:e].astype(np.float64, copy=False)
        out[s:e] = (np.abs(B) if absolute else B) @ v
    return out


# ------------------------------------------------------------------ the separator

@dataclass
class _Separator:
    beta: np.ndarray
    m: np.ndarray  # fl(<w_star, phi(x_j)>)
    e_m: np.ndarray
    s: float  # fl(||w_star||^2)
    e_s: float
    gamma: float  # certified
    R: float  # certified upper bound of max sqrt(K(x, x))


def _check_beta(beta, n: int) -> np.ndarray:
    b = numeric_array("w_star", beta)
    if b.ndim != 1 or b.shape[0] != n:
        raise InvalidArgument(
            f"w_star: shape {b.shape} does not match the number of examples n={n} (the kernel "
            f"variant takes w_star as dual coefficients beta, w_star = sum_j beta_j*phi(x_j))")
    b = finite_float64("w_star", b)
    if not b.any():
        raise InvalidArgument("w_star is the zero vector")
    return b


def _certify(K, E, y, beta, gamma, kern: Kernel, *,
             beta_given: bool | None = None) -> _Separator:
    """The trusted check in feature space: gamma <= y_j*<w_star, phi(x_j)> for every j, with
    rounding-error bounds (a certified lower bound when gamma is not given).  beta_given: whether
    the user gave beta as w_star (what an overflow asks to rescale; None: unknown)."""
    n = K.shape[0]
    ab = np.abs(beta)
    with np.errstate(over="ignore", invalid="ignore"):
        m = _matvec(K, beta)
        e_m = (gam(n) * _matvec(K, ab, absolute=kern.kind != "rbf") + _matvec(E, ab)) * SAFETY
        ym = y * m
        low = ym - e_m
        s = float(beta @ m)
        e_s = float((gam(n) * (ab @ np.abs(m)) + ab @ e_m) * SAFETY)
    if not (np.all(np.isfinite(low)) and math.isfinite(s) and math.isfinite(e_s)):
        fix = {True: "rescale the given w_star (dual coefficients beta) or the data",
               False: "rescale the data (w_star was not given: the default separator's)",
               None: "rescale the data, or w_star if given"}[beta_given]
        raise InvalidArgument(f"w_star: <w_star, phi(x)>, ||w_star||^2 or an error bound "
                              f"overflows under kernel={str(kern)!r}; {fix}")
    i = int(np.argmin(low))
    if gamma is None:
        if low[i] <= 0:
            j = int(np.argmin(ym))
            if ym[j] + e_m[j] <= 0:
                raise InvalidArgument(
                    f"w_star does not separate the data in the feature space of "
                    f"kernel={str(kern)!r}: y[{j}]*<w_star, phi(X[{j}])> = {float(ym[j])!r} <= 0 "
                    f"(w_star: dual coefficients beta)")
            raise InvalidArgument(
                f"w_star: the margin y[{i}]*<w_star, phi(X[{i}])> = {float(ym[i])!r} is within "
                f"its rounding-error bound {float(e_m[i]):.3g} of 0: it cannot be certified "
                f"positive")
        gamma = float(np.nextafter(low[i], -np.inf))
    elif gamma > low[i]:
        j = int(np.argmin(ym + e_m))
        if ym[j] + e_m[j] < gamma:
            what = "does not separate the data" if ym[j] <= 0 else \
                "has a smaller margin than gamma"
            raise InvalidArgument(f"w_star {what}: y[{j}]*<w_star, phi(X[{j}])> = "
                                  f"{float(ym[j])!r} < gamma={gamma!r}")
        raise InvalidArgument(
            f"gamma={gamma!r}: y[{i}]*<w_star, phi(X[{i}])> = {float(ym[i])!r} is within its "
            f"rounding-error bound {float(e_m[i]):.3g} of gamma: gamma cannot be certified")
    diag = np.diagonal(K)
    r2 = float(np.max(diag + np.diagonal(E)))
    R = math.sqrt(r2)
    if Fraction(R) ** 2 < Fraction(r2):
        R = float(np.nextafter(R, np.inf))
    if not math.isfinite(R) or R <= 0:
        raise InvalidArgument(f"kernel={str(kern)!r}: max K(x, x) = {r2!r} is not a positive "
                              f"finite number")
    return _Separator(beta, m, e_m, s, e_s, float(gamma), R)


def _default_beta(K, y, kern: Kernel, progress=None) -> np.ndarray:
    """Dual coefficients of a separator (untrusted: the caller certifies them).

    Two candidates, the one with the larger margin y*<w_star, phi>/||w_star|| wins: the
    kernel perceptron's own final coefficients alpha*y after an unmonitored run to convergence,
    and (n <= _EIGH_MAX) an approximate max-margin separator in feature space
    (_max_margin_beta, on the Gram matrix directly: no factorisation, no intercept).
    """
    n = K.shape[0]
    found = []
    loop = _Loop(K, y, np.arange(n, dtype=np.int64), True, 1000 * n, log=False)
    loop.run(None, 1 << 30, None)
    if loop.converged:
        found.append(loop.alpha * y)
    if n <= _EIGH_MAX:
        found.append(_max_margin_beta(K, y, progress))
    best, best_margin, best_s = None, 0.0, 0.0
    for beta in found:
        m = K @ beta
        s = float(beta @ m)
        margin = float(np.min(y * m)) / math.sqrt(s) if s > 0 else 0.0
        if margin > best_margin:
            best, best_margin, best_s = beta, margin, s
    if best is None:
        raise InvalidArgument(f"w_star=None: no separator found in the feature space of "
                              f"kernel={str(kern)!r} (the kernel perceptron did not converge in "
                              f"1000 epochs): the data may not be separable there; give w_star")
    # ||w_star|| brought into [1/2, 1) by a power of two (exact), as the classic engine's default
    # separator is a unit vector: then <w_star, phi(x)> ~ ||phi(x)||, and for data at 1e-80 the
    # monitor's (y*<w_star, x>)^2 does not underflow (it would with beta ~ 1: ~(1e-160)^2)
    return np.ldexp(best, -math.frexp(math.sqrt(best_s))[1])


def _max_margin_beta(K, y, progress=None, iterations=None, tol=1e-6) -> np.ndarray:
    """The max-margin separator in feature space, approximately: the point of the convex hull
    of the y_i*phi(x_i) nearest to 0, by the Mitchell-Demyanov-Malozemov algorithm on the Gram
    matrix (each step moves weight from the support example of largest y_i*<p, phi_i> to the
    example of smallest, with an exact line search; O(n) per step).  Returns beta = u*y."""
    n = K.shape[0]
    iterations = iterations or 50 * n
    i0 = int(np.argmin(np.diagonal(K)))
    u = np.zeros(n)
    u[i0] = 1.0
    g = y * y[i0] * K[i0]  # (Q u)_i, Q = y y^T * K
    diag = np.diagonal(K)
    for it in range(iterations):
        lo = int(np.argmin(g))
        sup = np.flatnonzero(u > 0)
        hi = int(sup[np.argmax(g[sup])])
        gap = g[hi] - g[lo]
        val = float(u @ g)
        if gap <= tol * abs(val) or hi == lo:
            break
        q_lh = y[lo] * y[hi] * K[lo, hi]
        curv = diag[lo] + diag[hi] - 2.0 * q_lh
        t = u[hi] if curv <= 0 else min(u[hi], gap / curv)
        u[lo] += t
        u[hi] -= t
        if u[hi] < 1e-300:
            u[hi] = 0.0
        g += t * (y[lo] * y * K[lo] - y[hi] * y * K[hi])
        if progress is not None and it % 1000 == 0 and hasattr(progress, "phase"):
            progress.phase("separator", min(it / iterations, 1.0))
    return u * y


# ------------------------------------------------------------------ the loop

class _Loop:
    """The kernel perceptron: predictions f (every example's), dual counts alpha; per update
    the log of (example, visit, prediction, step sign)."""

    def __init__(self, K, y, order, cyclic, t_end, *, log):
        self.K, self.y, self.order, self.cyclic, self.t_end = K, y, order, cyclic, t_end
        self.n, self.L = K.shape[0], order.shape[0]
        self.f = np.zeros(self.n)
        self.alpha = np.zeros(self.n)
        self.yo = y[order]
        self.t = 0
        self.k = 0
        self.pass_updates = 0
        self.converged = False
        self.log = log
        self._log = ([], [], [], [])

    def run(self, watch, chunk: int, progress) -> None:
        K, f, y, order, yo, L = self.K, self.f, self.y, self.order, self.yo, self.L
        block = 64
        ex, vis, ps, ss = self._log
        while True:
            t = self.t
            r = t % L
            if t > 0 and r == 0 and self._pass_end_seen != t:
                self._pass_end_seen = t
                if self.cyclic and self.pass_updates == 0:
                    self.converged = True
                    break
                self.pass_updates = 0
                if progress is not None:
                    progress(t, self.k, t // L)
            if t >= self.t_end:
                break
            end = min(L, r + block, r + (self.t_end - t))
            seg = order[r:end]
            hits = np.flatnonzero(yo[r:end] * f[seg] <= 0)
            if hits.size == 0:
                self.t = t + (end - r)
                block = min(block * 2, 1 << 14)
                continue
            hit = int(hits[0])
            block = 64
            t += hit
            i = int(order[r + hit])
            s = float(y[i])
            if self.log:
                ex.append(i)
                vis.append(t)
                ps.append(f[i])
                ss.append(s)
            f += s * K[i]
            self.alpha[i] += 1.0
            self.k += 1
            self.pass_updates += 1
            self.t = t + 1
            if watch is not None and len(ex) >= chunk:
                watch.flush(self.take_log())
                ex, vis, ps, ss = self._log
        if watch is not None and ex:
            watch.flush(self.take_log())

    _pass_end_seen = 0

    def take_log(self):
        ex, vis, ps, ss = self._log
        out = (np.array(ex, np.int64), np.array(vis, np.int64), np.array(ps, float),
               np.array(ss, float))
        self._log = ([], [], [], [])
        return out


class _Watch:
    """The bookkeeping of a monitored kernel run: the env of every chunk of updates."""

    def __init__(self, monitor, K, E, y, sep: _Separator, kern: Kernel):
        self.monitor, self.K, self.E, self.y, self.sep = monitor, K, E, y, sep
        self.absK = kern.kind != "rbf"
        n = K.shape[0]
        self.n = n
        self.diag = np.ascontiguousarray(np.diagonal(K))
        self.ediag = np.diagonal(E) * SAFETY
        self.alpha = np.zeros(n)  # counts before the next chunk
        self.k = 0
        self.a = self.e_a = self.q = self.e_q = 0.0
        self.chunks = []
        self.visit_chunks = []  # the visit of each update, for the trace (audit)
        self.last_visit = None
        self.const = constant_slots(sep.gamma, sep.R, sep.s, sep.e_s)
        start = start_slots()  # from w0 = 0 (alpha = 0) with the step y*phi (eta = 1)
        self.start_env = start
        missing = monitor.slots - set(self._names()) - set(start)
        if missing:
            raise NovikoffError(f"the kernel run cannot supply the slots {sorted(missing)} that "
                                f"the monitored lemmas need")
        monitor.check_constants({**self.const, **start})

    @staticmethod
    def _names():
        return ("k", "M", "y", "gamma", "R", "<w_star, w_star>", "<w_star, w[k]>",
                "<w[k], w[k]>", "<w_star, x>", "<x, x>", "<w_star, w[k+1]>",
                "<w[k+1], w[k+1]>", "<x, w[k]>", "<x, w[k+1]>", "<w[k], w[k+1]>", "d", "TD[k]",
                "TD[k+1]")

    def prediction_errors(self, idx):
        """Bounds on |f - <w[k], phi(x)>| at the chunk's updates (examples idx, in order)."""
        L = idx.size
        Krows = self.K[idx]
        Erows = self.E[idx]
        A = (np.abs(Krows) if self.absK else Krows) @ self.alpha
        B = Erows @ self.alpha
        # the chunk's own earlier updates: sum over u < t of |K[i_u, i_t]|, E[i_u, i_t]
        sub = Krows[:, idx]
        if self.absK:
            sub = np.abs(sub)
        low = np.tril(np.ones((L, L)), -1)
        A += (low * sub).sum(axis=1)
        B += (low * Erows[:, idx]).sum(axis=1)
        ks = self.k + np.arange(L)
        return (ks * U / (1.0 - ks * U) * A + B) * SAFETY  # gamma_k: k terms

    def flush(self, log) -> None:
        idx, visits, p, s = log
        L = idx.size
        if L == 0:
            return
        sep, u = self.sep, U
        e_p = self.prediction_errors(idx)
        yv = self.y[idx].astype(float)
        m, e_m = sep.m[idx], sep.e_m[idx]
        kd, e_kd = self.diag[idx], self.ediag[idx]
        # <w_star, w>: exact increments s*m up to e_m
        Sa = np.cumsum(s * m)
        a1 = self.a + Sa
        e_a1 = (self.e_a + np.cumsum(e_m + u * np.abs(Sa)) + u * np.abs(a1)) * SAFETY
        # ||w||^2: increments c = 2*s*f + K(x, x)
        c = 2.0 * s * p + kd
        Sq = np.cumsum(c)
        q1 = self.q + Sq
        e_q1 = (self.e_q + np.cumsum(2 * e_p + e_kd + u * np.abs(c) + u * np.abs(Sq)) +
                u * np.abs(q1)) * SAFETY
        a0 = np.concatenate(([self.a], a1[:-1]))
        e_a0 = np.concatenate(([self.e_a], e_a1[:-1]))
        q0 = np.concatenate(([self.q], q1[:-1]))
        e_q0 = np.concatenate(([self.e_q], e_q1[:-1]))
        pn = p + s * kd
        cross = q0 + s * p
        js = self.k + np.arange(L, dtype=float)
        zero = (np.zeros(L), None)
        env = {"k": (js, None), "M": (js, None), "y": (yv, None),
               "<w_star, w[k]>": (a0, e_a0), "<w[k], w[k]>": (q0, e_q0),
               "<w_star, x>": (m, e_m), "<x, x>": (kd, e_kd),
               "<w_star, w[k+1]>": (a1, e_a1), "<w[k+1], w[k+1]>": (q1, e_q1),
               "<x, w[k]>": (p, e_p), "<x, w[k+1]>": (pn, (e_p + e_kd + u * np.abs(pn)) * SAFETY),
               "<w[k], w[k+1]>": (cross, (e_q0 + e_p + u * np.abs(cross)) * SAFETY),
               "d": zero, "TD[k]": zero, "TD[k+1]": zero, **self.const, **self.start_env}
        j0 = self.k
        self.k += L
        self.a, self.e_a, self.q, self.e_q = float(a1[-1]), float(e_a1[-1]), float(q1[-1]), \
            float(e_q1[-1])
        np.add.at(self.alpha, idx, 1.0)
        self.chunks.append(idx)
        self.visit_chunks.append(visits)
        self.last_visit = int(visits[-1])
        self.monitor.check_chunk(env, j0, L, examples=idx, visits=visits)

    def finish(self) -> None:
        env = {**final_slots(self.k, self.a, self.e_a, self.q, self.e_q),
               "TD[k]": (np.zeros(1), None), **self.const, **self.start_env}
        self.monitor.check_final_state(env, self.k, visit=self.last_visit)

    def updates(self) -> np.ndarray:
        return np.concatenate(self.chunks) if self.chunks else np.zeros(0, np.int64)


# ------------------------------------------------------------------ run

def check_kernel_data(X, y):
    """(X, y) checked for a kernel perceptron: finite, few enough examples for the n x n Gram
    matrix and its error bounds, and squared norms that do not overflow."""
    X, y = check_data(X, y, rows=False)
    if not np.all(np.isfinite(X)):
        i, j = (int(v) for v in np.argwhere(~np.isfinite(X))[0])
        raise InvalidArgument(f"X[{i}, {j}]={X[i, j].item()!r} is not finite")
    n = X.shape[0]
    if n > MAX_N:
        raise InvalidArgument(f"X: n={n} examples: a kernel perceptron's Gram matrix and its "
                              f"error bounds are n x n float64, refused above n={MAX_N} "
                              f"(16*n^2 bytes: {16 * n * n / 1e9:.1f} GB)")
    with np.errstate(over="ignore"):
        if not np.all(np.isfinite(np.einsum("ij,ij->i", X, X))):
            raise InvalidArgument("X: a squared norm ||X[i]||^2 overflows; rescale the data")
    return X, y


def run_kernel(X, y, *, kernel="linear", w_star=None, gamma=None, order=None,
               cyclic: bool = True, max_epochs: int | None = None, lemmas=None, proofs=None,
               include_unverified: bool = False, checks: bool = True,
               on_violation: str = "raise", progress=None, exact: bool = False,
               chunk_updates: int | None = None):
    """The kernel perceptron on (X, y), every monitored lemma checked at every update.

    kernel: 'linear', 'poly:D[:C]' or 'rbf:G' (or a Kernel).  w_star: dual coefficients beta
    (length n, w_star = sum_j beta_j*phi(x_j)); by default the better of a max-margin separator
    in feature space (n <= _EIGH_MAX) and the kernel perceptron's own coefficients, scaled to
    ||w_star|| in [1/2, 1), certified either way.
    Returns a RunResult whose ``w`` is the final weights' dual coefficients alpha*y and whose
    ``w_star`` is beta.
    """
    t_start = time.perf_counter()
    kern = parse_kernel(kernel)
    if exact:
        raise InvalidArgument(f"exact=True: the kernel variant has no exact mode (kernel="
                              f"{str(kern)!r}); run it in floating point, whose every check "
                              f"carries rounding-error bounds")
    X, y = check_kernel_data(X, y)
    n, d = X.shape
    default_order = order is None
    order = np.arange(n, dtype=np.int64) if default_order else check_order(order, n)
    gamma = check_gamma(gamma)
    max_epochs = check_positive_int("max_epochs", max_epochs)
    beta = None if w_star is None else _check_beta(w_star, n)
    K, E, _ = gram(X, kern)
    monitor = sep = watch = None
    if checks:
        monitor = make_monitor(lemmas, proofs=proofs, include_unverified=include_unverified,
                               on_violation=on_violation)
        monitor.example_scope = "updates"
        if beta is None:
            beta = _default_beta(K, y, kern, progress)
        sep = _certify(K, E, y, beta, gamma, kern, beta_given=w_star is not None)
    L = order.shape[0]
    t_end = visits_allowed(order, cyclic, max_epochs, True)
    loop = _Loop(K, y, order, cyclic, t_end, log=checks)
    if checks:
        watch = _Watch(monitor, K, E, y, sep, kern)
    chunk = chunk_updates or max(64, min(4096, (1 << 23) // n))
    loop.run(watch, chunk, progress)
    bounds = {}
    if watch is not None:
        watch.finish()
        bounds = monitor.bounds()
    summary = None
    if monitor is not None:
        summary = monitor.summary()
        summary["kernel"] = str(kern)
    return RunResult(
        variant="kernel", cyclic=cyclic, n=n, d=d, mistakes=loop.k,
        epochs=-(-loop.t // L), visits=loop.t, converged=loop.converged,
        w=loop.alpha * y, w_star=beta, gamma=sep.gamma if sep else gamma,
        R=sep.R if sep else None, separable=True, exact=False,
        checks=monitor.checks if monitor else 0, monitor=summary, bounds=bounds,
        updates=watch.updates() if watch else None, td=None,
        seconds=time.perf_counter() - t_start,
        update_visits=(np.concatenate(watch.visit_chunks) if watch and watch.visit_chunks
                       else np.zeros(0, np.int64)) if watch else None)
