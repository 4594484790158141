"""The batch perceptron, monitored: the lemmas of proofs/batch.proof (setting batch_run) checked
at every batch step.

How its floats are bounded: docs/runtime-bounds.md, "The batch perceptron".
"""

from __future__ import annotations

import math
import time
from fractions import Fraction

import numpy as np

from ..errors import InvalidArgument, NovikoffError
from ._bounds import (SAFETY, SMALLEST_NORMAL, TINY, U, certify_margin, constant_slots,
                      data_stats, final_slots, gam, norm_up, one_slot, start_slots)
from ._engine import make_monitor
from ._result import RunResult
from ._separator import max_margin_separator
from ._validate import check_data, check_gamma, check_positive, check_positive_int, check_w_star

__all__ = ["run_batch"]

_EXACT_BUDGET = 4_000_000  # n*d entries converted to integers for an exact <u, w[k]>
_CHUNK = 256  # steps judged at once


def _dot_err(d: int, na: float, ea: float, nb: float, eb: float) -> float:
    """|fl(<a~, b~>) - <a, b>| for ||a~|| <= na, ||a~ - a|| <= ea (and b alike)."""
    return (gam(d) * na * nb + d * TINY + ea * nb + eb * na + ea * eb) * SAFETY


class _Exact:
    """Exact <u, w[k]> of the mathematical run, on demand: X as integers times 2^low."""

    def __init__(self, X, y, eta):
        self.X, self.y, self.eta = X, y, Fraction(eta)
        self.rows = None

    def _integers(self):
        mant, ex = np.frexp(self.X)
        low = int(ex[mant != 0].min()) - 53 if np.any(mant != 0) else 0
        ints = (mant * 2.0 ** 53).astype(np.int64)
        shift = np.where(mant != 0, ex - 53 - low, 0).astype(np.int64)
        n, d = self.X.shape
        self.rows = [[int(ints[i, j]) << int(shift[i, j]) for j in range(d)] for i in range(n)]
        self.low = low

    def inner(self, alpha, Y) -> Fraction:
        """eta * <sum_i alpha_i*y_i*x_i, sum_{t in Y} y_t*x_t>, exactly."""
        if self.rows is None:
            self._integers()
        d = self.X.shape[1]
        A = [0] * d
        for i in np.flatnonzero(alpha):
            c = int(alpha[i]) * int(self.y[i])
            A = [a + c * v for a, v in zip(A, self.rows[i])]
        B = [0] * d
        for t in Y:
            c = int(self.y[t])
            B = [b + c * v for b, v in zip(B, self.rows[t])]
        total = sum(a * b for a, b in zip(A, B))
        return self.eta * Fraction(total) * Fraction(2) ** (2 * self.low)


def step_slots(w_star, ws_up: float, state, before, after, step, uw, m: float, C: float,
               Q: float) -> dict:
    """The slots batch_run's lemmas read at step k (w[k] -> w[k+1] = w[k] + eta*u), each a
    float and its error bound (the engine's and the audit's alike).  before, after: (the
    vector held, a bound of its norm, its distance to the exact run) for w[k] and w[k+1]; step:
    (u~, a bound of ||u~||, ||u~ - u||); state: <w_star, w[k]> and ||w[k]||^2 with their
    bounds, carried from the previous step; uw: <u, w[k]> with its bound, as the caller decided
    it (exactly at a tie); m, C, Q: the corrections and their running totals (exact)."""
    (w, W0, D), (w1, W1, D1), (u, nu, e_U) = before, after, step
    d = w.shape[0]
    a, e_a, q, e_q = state
    return {"<w_star, w[k]>": (a, e_a), "<w[k], w[k]>": (q, e_q),
            "<w_star, w[k+1]>": (float(w_star @ w1), _dot_err(d, ws_up, 0.0, W1, D1)),
            "<w[k+1], w[k+1]>": (float(w1 @ w1), _dot_err(d, W1, D1, W1, D1)),
            "<w[k], w[k+1]>": (float(w @ w1), _dot_err(d, W0, D, W1, D1)),
            "<w_star, u>": (float(w_star @ u), _dot_err(d, ws_up, 0.0, nu, e_U)),
            "<u, u>": (float(u @ u), _dot_err(d, nu, e_U, nu, e_U)),
            "<u, w[k]>": uw,
            "<u, w[k+1]>": (float(u @ w1), _dot_err(d, nu, e_U, W1, D1)),
            "m[k]": (m, 0.0), "C[k]": (C, 0.0), "C[k+1]": (C + m, 0.0),
            "Q[k]": (Q, 0.0), "Q[k+1]": (Q + m * m, 0.0)}


def _exact_slot(v: Fraction, eta: float):
    """(float, error bound) of an exact value, the bound rounded up.  Refused below the normal
    range: there a float and an error bound cannot carry the value's sign (1e-458 is 0.0 with
    error 2^-1074), and the sign is what the exact value is computed for."""
    f = float(v)
    if v != 0 and abs(f) < SMALLEST_NORMAL:
        raise InvalidArgument(f"eta={eta!r}: on this data the run reaches <u, w[k]> = {f:.3g}, "
                              f"below the smallest normal float, where its sign cannot be "
                              f"bounded; rescale the data or eta")
    err = abs(Fraction(f) - v)
    return f, (0.0 if err == 0 else math.nextafter(float(err), math.inf) * 2.0)


def _finite_step(w_new, slots: dict, eta: float, k: int) -> None:
    """Refuse a step whose weights or inner products overflow: their checks would mean nothing,
    and an unmonitored run would go on with infinite weights."""
    if not np.isfinite(w_new).all() or not all(math.isfinite(v) and math.isfinite(e)
                                                for v, e in slots.values()):
        raise InvalidArgument(f"eta={eta!r}: on this data the weights or their inner products "
                              f"overflow at step {k}; rescale the data or eta")


class _Watch:
    """The slots of every step, gathered per chunk and judged by the monitor."""

    NAMES = ("k", "M", "gamma", "R", "n", "<w_star, w_star>", "<w_star, w[k]>", "<w[k], w[k]>",
             "<w_star, w[k+1]>", "<w[k+1], w[k+1]>", "<w[k], w[k+1]>", "<w_star, u>", "<u, u>",
             "<u, w[k]>", "<u, w[k+1]>", "m[k]", "C[k]", "C[k+1]", "Q[k]", "Q[k+1]")
    ROWS = NAMES[5:]  # per-step (value, error) rows, "<w_star, w_star>" excluded below

    def __init__(self, monitor, n, d, w_star, gamma, R, eta, stats):
        self.monitor, self.n, self.d, self.eta = monitor, n, d, eta
        self.const = {**constant_slots(gamma, R, stats.s, stats.e_s), "n": one_slot(n),
                      **start_slots(None, None, eta)}
        missing = monitor.slots - set(self.NAMES) - set(self.const)
        if missing:
            raise NovikoffError(f"the batch run cannot supply the slots {sorted(missing)} that "
                                f"the monitored lemmas need")
        self.rows = {name: ([], []) for name in self.ROWS[1:]}
        self.j0 = 0
        self.k = 0
        self.nxu, self.ws_up, self.w_star = stats.nx_up(), stats.ws_up, w_star  # ||x_t|| <= nxu[t]
        self.exact = None  # an _Exact twin when the data are small enough to decide ties
        self.alpha = np.zeros(n)  # corrections of each example so far (the mathematical w[k])
        self.C = self.Q = 0.0
        self.D = 0.0  # ||w~[k] - w[k]||
        # state k's <w_star, w[k]>, ||w[k]||^2 with bounds: (a, e_a, q, e_q)
        self.state = (0.0, 0.0, 0.0, 0.0)
        monitor.check_constants(self.const)

    def step(self, w, w_new, u, Y, K: int) -> None:
        """Judge the step w -> w_new = w + eta*u made on the misclassified examples Y."""
        d, eta, mk = self.d, self.eta, Y.size
        W0, W1, nu = norm_up(w, d), norm_up(w_new, d), norm_up(u, d)
        e_U = gam(mk) * float(self.nxu[Y].sum()) * (1.0 + 4 * U) * SAFETY
        step_r = 0.0 if eta == 1.0 else U * eta * nu + d * TINY
        D1 = (self.D + eta * e_U + step_r + 2 * U * W1) * SAFETY
        uw = self.inner_u_w(w, u, Y, K, (nu, e_U), W0)
        slots = step_slots(self.w_star, self.ws_up, self.state, (w, W0, self.D),
                           (w_new, W1, D1), (u, nu, e_U), uw, float(mk), self.C, self.Q)
        self.refuse_overflow(w_new, slots, K)
        self.add(slots)
        self.state = (*slots["<w_star, w[k+1]>"], *slots["<w[k+1], w[k+1]>"])
        self.D = D1
        self.alpha[Y] += 1.0
        self.C += mk
        self.Q += float(mk) * mk

    def inner_u_w(self, w, u, Y, K: int, u_bounds, W0: float):
        """<u, w[k]> with its error bound (u_bounds: ||u~|| and ||u~ - u||), exactly at a tie:
        from the mathematical run's counts (alpha)."""
        if K == 0:  # w[0] = 0 exactly (D = 0): <u, w[0]> = 0, no tie to decide exactly
            return 0.0, 0.0
        uw, e_uw = float(u @ w), _dot_err(self.d, *u_bounds, W0, self.D)
        if uw + e_uw > 0 and self.exact is not None:  # a tie: decide <u, w[k]> exactly
            return _exact_slot(self.exact.inner(self.alpha, Y), self.eta)
        return uw, e_uw

    def refuse_overflow(self, w_new, slots: dict, K: int) -> None:
        _finite_step(w_new, slots, self.eta, K)

    def add(self, slots: dict) -> None:
        for name, (v, e) in slots.items():
            self.rows[name][0].append(v)
            self.rows[name][1].append(e)
        self.k += 1
        if self.k - self.j0 >= _CHUNK:
            self.flush()

    def flush(self) -> None:
        L = self.k - self.j0
        if L == 0:
            return
        js = np.arange(self.j0, self.k, dtype=float)
        env = {"k": (js, None), "M": (js, None), **self.const}
        for name, (v, e) in self.rows.items():
            env[name] = (np.array(v), np.array(e) * SAFETY)
            v.clear()
            e.clear()
        j0, self.j0 = self.j0, self.k
        self.monitor.check_chunk(env, j0, L, visits=None)

    def finish(self, a, C, Q) -> None:
        self.flush()
        env = {**final_slots(self.k, *a), **self.const, "C[k]": one_slot(C), "Q[k]": one_slot(Q)}
        self.monitor.check_final_state(env, self.k)


@np.errstate(over="ignore", invalid="ignore")  # an overflow is refused (_finite_step)
def run_batch(X, y, *, eta: float = 1.0, w_star=None, gamma=None, max_epochs=None,
              lemmas=None, proofs=None, include_unverified: bool = False, checks: bool = True,
              on_violation: str = "raise", progress=None, keep_trace: bool = False):
    """The batch perceptron with the constant step eta on (X, y), every monitored lemma checked
    at every step (see the module docstring for the error bounds).

    max_epochs: the number of batch steps allowed (None: until a step finds no mistake).
    The result's ``mistakes`` is the number of steps K (what the bound of batch_step_bound
    bounds); ``monitor['corrections']`` is the total sum m[k]; ``updates`` is m[k] per step.
    keep_trace: keep the weights after each step in the result's ``steps`` (K, d), the trace
    ``novikoff audit --variant batch`` reads (``_audit_batch.batch_trace``).
    """
    t_start = time.perf_counter()
    X, y = check_data(X, y)
    n, d = X.shape
    eta = check_positive(eta, "eta")
    gamma = check_gamma(gamma)
    max_epochs = check_positive_int("max_epochs", max_epochs)
    if w_star is not None:
        w_star = check_w_star(w_star, d)
    monitor = watch = None
    if checks:
        monitor = make_monitor(lemmas, proofs=proofs, include_unverified=include_unverified,
                               on_violation=on_violation, engine="batch")
        monitor.example_scope = "updates"
        if w_star is None:
            w_star = max_margin_separator(X, y, progress=getattr(progress, "phase", None))
        stats = data_stats(X, y, w_star)
        gamma = certify_margin(X, y, w_star, stats, gamma)
        watch = _Watch(monitor, n, d, w_star, gamma, stats.R, eta, stats)
        watch.exact = _Exact(X, y, eta) if n * d <= _EXACT_BUDGET else None
    w, K, counts, steps, converged = _steps(X, y, eta, max_epochs, watch, progress, keep_trace)
    bounds = {}
    summary = None
    if watch is not None:
        watch.finish(watch.state, watch.C, watch.Q)
        # k <= C[k] bounds k by the run itself: report only bounds in the data's terms
        run_made = {inv.name for inv in monitor.invariants
                    if inv.check.slots & {"C[k]", "Q[k]"}}
        bounds = {k: v for k, v in monitor.bounds().items() if k not in run_made}
        summary = monitor.summary()
        summary["corrections"] = int(sum(counts))
    epochs = K + (1 if converged else 0)
    return RunResult(
        variant="batch", cyclic=True, n=n, d=d, mistakes=K, epochs=epochs,
        visits=epochs * n, converged=converged, w=w, w_star=w_star, gamma=gamma,
        R=watch.const["R"][0][0].item() if watch else None, separable=True, exact=False,
        checks=monitor.checks if monitor else 0, monitor=summary, bounds=bounds,
        updates=np.array(counts, np.int64) if checks else None, td=None,
        seconds=time.perf_counter() - t_start, eta=eta,
        steps=None if steps is None else np.array(steps).reshape(len(steps), d))


def _steps(X, y, eta, max_epochs, watch, progress, keep_trace):
    """The batch steps until one finds no mistake (or max_epochs of them), each judged by
    `watch` (if any): (w, K, m[k] per step, the weights after each step or None, converged)."""
    n, d = X.shape
    w = np.zeros(d)
    counts = []
    steps = [] if keep_trace else None
    K = 0
    while True:
        mis = y * (X @ w) <= 0
        Y = np.flatnonzero(mis)
        if Y.size == 0:
            return w, K, counts, steps, True
        if max_epochs is not None and K >= max_epochs:
            return w, K, counts, steps, False
        u = y[Y] @ X[Y]
        w_new = w + eta * u
        _finite_step(w_new, {}, eta, K)
        if watch is not None:
            watch.step(w, w_new, u, Y, K)
        counts.append(Y.size)
        w = w_new
        if steps is not None:
            steps.append(w)
        K += 1
        if progress is not None and K % 64 == 0:
            progress((K + 1) * n, K, K + 1)
