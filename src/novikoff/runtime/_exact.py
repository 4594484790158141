"""The perceptron in exact rational arithmetic (fractions.Fraction): for small data and replays.

Every float of the data is a rational number, so the run below is the mathematical perceptron on
exactly the given data (and the exact values of the floats eta and w0: w[0] = w0, an update adds
eta*y*x): decisions are exact (the margin rule's square root is decided by squaring)
and every lemma is decided exactly (square roots as shrinking rational intervals, ties by SymPy).
"""

from __future__ import annotations

import math
import operator
import time
from fractions import Fraction

import numpy as np

from ..errors import InvalidArgument
from ._bounds import start_slots
from ._checks import _isqrt_interval
from ._config import visits_allowed
from ._monitor import Monitor
from ._result import RunResult

__all__ = ["run_exact", "exact_sqrt"]

_JUDGED_AT_ONCE = 256  # updates per call of the monitor (progress is shown between calls)


def exact_sqrt(q: Fraction):
    """sqrt(q) as a Fraction when q is a perfect square, else the marker ('sqrt', q)."""
    lo, hi = _isqrt_interval(q, 0)
    return lo if lo == hi else ("sqrt", q)


def _common_denominator(values) -> int:
    """The least common multiple of the denominators of the Fractions (1 for none)."""
    return math.lcm(1, *{v.denominator for v in values})


def _dot(a, b) -> Fraction:
    return sum((u * v for u, v in zip(a, b) if u and v), Fraction(0))


def run_exact(X, y, *, w_star, gamma, variant, order, cyclic, max_epochs, monitor: Monitor | None,
              separable, progress=None, t_start=None, eta=1.0, w0=None):
    """The exact twin of runtime.run (same arguments, already validated); returns a RunResult."""
    t_start = time.perf_counter() if t_start is None else t_start
    n, d = X.shape
    Xf = [[Fraction(float(v)) for v in row] for row in X]
    yi = [int(v) for v in y]
    ws = [Fraction(float(v)) for v in w_star] if w_star is not None else None
    nx2 = [_dot(row, row) for row in Xf]
    m = [_dot(ws, row) for row in Xf] if ws is not None else None
    g = Fraction(gamma) if gamma is not None else None
    if ws is not None and separable:
        g = _certified_margin(yi, m, g)
    if variant == "margin" and g is None:
        raise InvalidArgument("gamma=None: the margin perceptron needs gamma")
    L = len(order)
    t_end = visits_allowed(order, cyclic, max_epochs, separable)
    hinge = ([max(Fraction(0), g - yi[i] * m[i]) for i in range(n)]
             if monitor is not None and g is not None and m is not None else None)
    run = _ExactRun(Xf, yi, nx2, m, ws, w0, Fraction(float(eta)), hinge)
    status = run.visit(order, variant, g, cyclic, t_end, progress)
    R = exact_sqrt(max(nx2))
    bounds = {}
    if monitor is not None:
        run.judge(monitor, {"gamma": g, "R": R, "<w_star, w_star>": _dot(ws, ws),
                            **start_slots(w0, w_star, eta, exact=True)}, progress)
        bounds = monitor.bounds()
    R_float = float(R) if isinstance(R, Fraction) else math.sqrt(R[1])
    t, k = run.t, run.k
    return RunResult(
        variant=variant, cyclic=cyclic, n=n, d=d, mistakes=k, epochs=-(-t // L), visits=t,
        converged=status == "converged", w=np.array([float(v) for v in run.w]),
        w_star=w_star, gamma=float(g) if g is not None else None, R=R_float,
        separable=separable, exact=True, checks=monitor.checks if monitor else 0,
        monitor=monitor.summary() if monitor else None, bounds=bounds,
        updates=np.array([e[0] for e in run.log], dtype=np.int64),
        td=float(run.td) if hinge is not None else None,
        seconds=time.perf_counter() - t_start, eta=float(eta), w0=w0)


def _certified_margin(yi, m, g):
    """gamma = min y<w*, x> > 0 (or g <= it when given), decided exactly."""
    margins = [yi[i] * m[i] for i in range(len(yi))]
    i_min = min(range(len(yi)), key=margins.__getitem__)
    if margins[i_min] <= 0:
        raise InvalidArgument(f"w_star does not separate the data: y[{i_min}]*<w_star, "
                              f"X[{i_min}]> = {float(margins[i_min])!r} <= 0 (exactly)")
    if g is None:
        return margins[i_min]
    if g > margins[i_min]:
        raise InvalidArgument(f"w_star has a smaller margin than gamma: y[{i_min}]*"
                              f"<w_star, X[{i_min}]> = {float(margins[i_min])!r} < "
                              f"gamma={float(g)!r} (exactly)")
    return g


class _ExactRun:
    """The perceptron in rational arithmetic: w, ||w||^2, <w_star, w> and TD, and the log of
    every update (example, visit, p, k, a, q, td before)."""

    def __init__(self, Xf, yi, nx2, m, ws, w0, rate, hinge):
        self.Xf, self.yi, self.nx2, self.m, self.rate, self.hinge = Xf, yi, nx2, m, rate, hinge
        d = len(Xf[0]) if Xf else 0
        self.w = [Fraction(0)] * d if w0 is None else [Fraction(float(v)) for v in w0]
        self.q = _dot(self.w, self.w)  # ||w||^2
        self.a = _dot(ws, self.w) if ws is not None else Fraction(0)  # <w_star, w>
        self.td = Fraction(0)
        self.log = []
        self.t = self.k = 0

    def visit(self, order, variant, g, cyclic, t_end, progress) -> str:
        """Visit to the end: 'end' or 'converged' (the state in locals: a Python loop).

        Floats are dyadic rationals: the visits run on integers, X times one common
        denominator sx and w times sw (a multiple of sx / rate's denominator), so that a
        prediction is one integer dot product; the Fractions that the lemmas read (p, q, a,
        TD) are made at the updates only."""
        L, em, rate, Xf, yi, nx2, m = len(order), 0, self.rate, self.Xf, self.yi, self.nx2, self.m
        hinge, log = self.hinge, self.log
        sx = _common_denominator(v for row in Xf for v in row)
        sw = math.lcm(_common_denominator(self.w), sx * rate.denominator)
        Xi = [[int(v * sx) for v in row] for row in Xf]
        wi = [int(v * sw) for v in self.w]
        step_scale = rate.numerator * (sw // (sx * rate.denominator))  # eta*x_j*sw = this*Xi
        p_scale = sw * sx
        sh = _common_denominator(hinge) if hinge is not None else 1
        hi = [int(h * sh) for h in hinge] if hinge is not None else None
        q, a, t, k = self.q, self.a, self.t, self.k
        tdi = int(self.td * sh)
        half_g2 = (g / 2) ** 2 if g is not None else None
        status = None
        while status is None:
            if t >= t_end:
                status = "end"
                break
            r = t % L
            if r == 0:
                em = 0
            i = int(order[r])
            lab = yi[i]
            pi = sum(map(operator.mul, wi, Xi[i]))  # p * sw * sx
            if variant == "margin":
                ypi = lab * pi
                fire = q == 0 or ypi <= 0 or Fraction(ypi * ypi, p_scale * p_scale) <= half_g2 * q
            else:
                fire = lab * pi <= 0
            if fire:
                p = Fraction(pi, p_scale)
                log.append((i, t, p, k, a, q, Fraction(tdi, sh)))
                step = lab * rate
                s = lab * step_scale
                wi = [wj + s * xj for wj, xj in zip(wi, Xi[i])]
                q = q + 2 * step * p + rate * rate * nx2[i]
                if m is not None:
                    a = a + step * m[i]
                k += 1
                em += 1
            if hi is not None:
                tdi += hi[i]
            t += 1
            if progress is not None and t % 4096 == 0:
                progress(t, k, -(-t // L))
            if cyclic and r == L - 1 and em == 0:
                status = "converged"
        self.w = [Fraction(v, sw) for v in wi]
        self.q, self.a, self.td, self.t, self.k = q, a, Fraction(tdi, sh), t, k
        return status

    def judge(self, monitor, const: dict, progress=None) -> None:
        """Check every monitored lemma on the constants, the examples, every update and the
        final state, exactly."""
        monitor.exact = True
        yi, m, nx2, hinge, rate, log = self.yi, self.m, self.nx2, self.hinge, self.rate, self.log
        loss = hinge if hinge is not None else [Fraction(0)] * len(yi)
        monitor.check_constants(const)
        ex = dict(const)
        ex.update({"y": [Fraction(v) for v in yi], "<w_star, x>": m, "<x, x>": nx2, "d": loss})
        monitor.check_examples(ex, len(yi))
        if log:
            idx = [e[0] for e in log]
            cols = list(zip(*log))
            ks = [Fraction(v) for v in cols[3]]
            ys = [Fraction(yi[i]) for i in idx]
            ps, a0, q0, td0 = list(cols[2]), list(cols[4]), list(cols[5]), list(cols[6])
            env_u = dict(const, k=ks, M=ks, y=ys)
            env_u.update({
                "<w_star, x>": [m[i] for i in idx], "<x, x>": [nx2[i] for i in idx],
                "<w_star, w[k]>": a0, "<w_star, w[k+1]>": a0[1:] + [self.a],
                "<w[k], w[k]>": q0, "<w[k+1], w[k+1]>": q0[1:] + [self.q], "<x, w[k]>": ps,
                "<x, w[k+1]>": [p + rate * yy * nx2[i] for p, yy, i in zip(ps, ys, idx)],
                "<w[k], w[k+1]>": [qq + rate * yy * p for qq, yy, p in zip(q0, ys, ps)],
                "d": [loss[i] for i in idx]})
            if hinge is not None:
                env_u["TD[k]"] = td0
                env_u["TD[k+1]"] = [v + hinge[i] for v, i in zip(td0, idx)]
            examples, visits = np.array(idx), np.array(cols[1])
            phase = getattr(progress, "phase", None)
            for s in range(0, len(log), _JUDGED_AT_ONCE):  # a chunk at a time, for progress
                e = min(len(log), s + _JUDGED_AT_ONCE)
                monitor.check_chunk({k: v[s:e] if isinstance(v, list) else v
                                     for k, v in env_u.items()}, s, e - s,
                                    examples=examples[s:e], visits=visits[s:e])
                if phase is not None:
                    phase("exact checks", e / len(log))
        final = dict(const, k=Fraction(self.k), M=Fraction(self.k))
        final.update({"<w_star, w[k]>": self.a, "<w[k], w[k]>": self.q, "TD[k]": self.td})
        monitor.check_final_state(final, self.k, visit=log[-1][1] if log else None)
