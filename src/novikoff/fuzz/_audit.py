"""Check a weight trace against the lemma statements of ``proofs/``, through the runtime monitor.

The statements are compiled by ``novikoff.runtime``'s monitor (one statement, three uses: no
inequality is restated here).  This module only binds a trace to the monitor's slots: which
visits are updates (the weights changed), w[k] and w[k+1] around each update, the example of
each update, TD over the presentations, and a rounding-error bound for every computed inner
product (|fl(<u, v>) - <u, v>| <= gamma_d * sum |u_i v_i|, gamma_d = d*u / (1 - d*u)).

A lemma is gated only by its setting's assumptions about the *data* (margin, radius, unit
rows): the assumptions about the learner (start, update, mistake test) are the claim under
test, so a learner that breaks them is judged by the statements, not excused by them.
"""

from __future__ import annotations

import glob
import math
import os
from functools import lru_cache

import numpy as np

__all__ = ["bundled_lemmas", "lemma_violations", "engine_learner", "SETTINGS", "proofs_dir"]

SETTINGS = {"classic": "perceptron", "margin": "margin_perceptron", "hinge": "hinge"}
_U = 2.0 ** -53


def proofs_dir() -> str:
    """The bundled lemma library: $NOVIKOFF_PROOFS, else proofs/ beside the source tree."""
    env = os.environ.get("NOVIKOFF_PROOFS")
    if env:
        return env
    here = os.path.dirname(os.path.abspath(__file__))
    for up in (os.path.join(here, "..", "proofs"), os.path.join(here, "..", "..", "..", "proofs")):
        if os.path.isdir(up):
            return os.path.normpath(up)
    return "proofs"


@lru_cache(maxsize=4)
def _load(paths: tuple) -> tuple:
    from ..language import load_lemmas
    return tuple(load_lemmas(list(paths)))


def bundled_lemmas() -> tuple:
    """The lemmas of the top-level .proof files of the library (not the seeds' proofs)."""
    files = tuple(sorted(glob.glob(os.path.join(proofs_dir(), "*.proof"))))
    return _load(files)


def _setting(lemma) -> str | None:
    s = getattr(lemma, "setting", None)
    return getattr(s, "name", None)


_COMPILED: dict = {}


def _compiled(lemmas, variant: str):
    """Compiled invariants of the variant's setting, gated by data assumptions only."""
    key = (id(lemmas), variant)
    hit = _COMPILED.get(key)
    if hit is not None and hit[0] is lemmas:
        return hit[1]
    from ..runtime._monitor import Monitor
    want = SETTINGS[variant]
    chosen = [lem for lem in lemmas if _setting(lem) in (want, None)]
    mon = Monitor.from_lemmas(chosen, on_violation="collect")
    for inv in mon.invariants:
        inv.hypotheses = [(n, h) for n, h in inv.hypotheses if h.where in ("constant", "example")]
    _COMPILED[key] = (lemmas, mon)
    return mon


def _fresh(mon):
    from ..runtime._monitor import Invariant, Monitor
    return Monitor(invariants=[Invariant(i.lemma, i.check, list(i.hypotheses))
                               for i in mon.invariants], on_violation="collect")


def _dot(A, B, d):
    """Row-wise inner products and their rounding-error bounds."""
    g = d * _U / (1 - d * _U)
    v = np.einsum("ij,ij->i", A, B)
    e = g * np.einsum("ij,ij->i", np.abs(A), np.abs(B)) + 1e-300
    return v, e


def _scalar(value, exact=True):
    return (np.float64(value), None if exact else abs(math.ulp(value)))


def lemma_violations(ds, order, W, variant: str, lemmas, *, td: str = "presented") -> list:
    """The lemma violations (runtime ``Violation`` objects, earliest first) of a trace.

    ``td="dataset"`` binds TD to the sum over the dataset (once per example) instead of over
    the examples presented: the bookkeeping bug of the ``td_over_dataset`` mutant.
    """
    mon = _fresh(_compiled(lemmas, variant))
    if not mon.invariants:
        return []
    X, y = np.asarray(ds.X, np.float64), np.asarray(ds.y, np.float64)
    order = np.asarray(order, dtype=np.int64)
    W = np.asarray(W, dtype=np.float64).reshape(len(order), X.shape[1])
    T, d = W.shape
    n = X.shape[0]
    ws = np.asarray(ds.w_star, np.float64)
    gamma = float(ds.gamma)
    from fractions import Fraction
    const = {
        "gamma": _scalar(gamma, Fraction(gamma) == ds.gamma_exact),
        "R": _scalar(float(ds.R)),
        "d": _scalar(float(d)), "n": _scalar(float(n)),
        "<w_star, w_star>": (np.float64(ws @ ws),
                             d * _U / (1 - d * _U) * float(np.abs(ws) @ np.abs(ws)) + 1e-300),
    }
    mon.check_constants(const)

    # Examples: every row of the data.
    vx, ex_ = _dot(X, np.broadcast_to(ws, X.shape), d)
    xx, exx = _dot(X, X, d)
    env_e = dict(const)
    env_e.update({"y": (y, None), "<w_star, x>": (vx, ex_), "<x, x>": (xx, exx)})
    mon.check_examples(env_e, n)

    prev = np.vstack([np.zeros((1, d)), W[:-1]]) if T else np.zeros((0, d))
    upd = np.flatnonzero(np.any(W != prev, axis=1))
    K = len(upd)
    devs = ds.deviations if getattr(ds, "deviations_exact", ()) else np.zeros(n)
    if td == "dataset":
        total = float(np.sum(devs))
        cum = np.full(T + 1, total)
    else:
        cum = np.concatenate([[0.0], np.cumsum(devs[order])]) if T else np.zeros(1)
    cum_err = (T + 2) * 2 * _U * np.abs(cum) + 1e-300

    Wk, Wk1 = prev[upd], W[upd]
    ex = order[upd]
    Xu, yu = X[ex], y[ex]
    wsK = np.broadcast_to(ws, Wk.shape)
    ks = np.arange(K, dtype=np.float64)

    # A correct float implementation drifts from exact arithmetic by D_k <= u * sum_t ||w_t||
    # after k updates (the runtime audit's allowance): statements are judged up to that drift.
    nB = np.sqrt(np.einsum("ij,ij->i", Wk1, Wk1)) * (1 + 4 * _U)
    D1 = 2 * _U * np.cumsum(nB)
    D0 = np.concatenate(([0.0], D1[:-1]))
    nA = np.concatenate(([0.0], nB[:-1]))
    nx = np.sqrt(np.einsum("ij,ij->i", Xu, Xu))
    nws = float(np.sqrt(ws @ ws)) * (1 + 4 * _U)

    def pair(A, B, extra=0.0):
        v, e = _dot(A, B, d)
        return v, 2 * (e + extra) + _U * np.abs(v)

    env_s = dict(const)
    env_s.update({"k": (ks, None), "M": (ks, None),
                  "TD[k]": (cum[upd], cum_err[upd]),
                  "<w_star, w[k]>": pair(wsK, Wk, nws * D0),
                  "<w[k], w[k]>": pair(Wk, Wk, D0 * (2 * nA + D0))})
    env_u = dict(env_s)
    env_u.update({
        "y": (yu, None), "TD[k+1]": (cum[upd + 1], cum_err[upd + 1]),
        "<w_star, x>": pair(wsK, Xu), "<x, x>": pair(Xu, Xu),
        "<w_star, w[k+1]>": pair(wsK, Wk1, nws * D1), "<x, w[k]>": pair(Xu, Wk, nx * D0),
        "<x, w[k+1]>": pair(Xu, Wk1, nx * D1),
        "<w[k], w[k+1]>": pair(Wk, Wk1, D0 * nB + D1 * nA + D0 * D1),
        "<w[k+1], w[k+1]>": pair(Wk1, Wk1, D1 * (2 * nB + D1)),
    })
    mon.check_chunk(env_u, env_s, 0, K, examples=ex, visits=upd)

    wK = W[-1:] if T else np.zeros((1, d))
    Df = float(D1[-1]) if K else 0.0
    nf = float(np.sqrt(wK[0] @ wK[0]))
    env_f = dict(const)
    env_f.update({"k": (np.array([float(K)]), None), "M": (np.array([float(K)]), None),
                  "TD[k]": (cum[-1:], cum_err[-1:]),
                  "<w_star, w[k]>": pair(ws[None, :], wK, nws * Df),
                  "<w[k], w[k]>": pair(wK, wK, Df * (2 * nf + Df))})
    mon.check_final_state(env_f, K, visit=T - 1 if T else None)
    return list(mon.violations)


def engine_learner(variant: str):
    """The runtime's engine for a variant as a learner, when the runtime provides one."""
    return None


def data_gated(lemmas, variant: str) -> list:
    """``runtime.Lemma`` objects of the variant's setting, gated by data assumptions only.

    Passed to ``novikoff.runtime.audit``, they make the audit judge a learner by the lemma
    statements even where it breaks the update rule (the runtime's default excuses it).
    """
    from ..runtime import Lemma, compile_formula
    from ..runtime._monitor import as_lemma
    out = []
    for obj in lemmas:
        if _setting(obj) not in (SETTINGS[variant], None):
            continue
        lem = as_lemma(obj)
        hyps = tuple((n, f) for n, f in lem.hypotheses
                     if compile_formula(f, lem.kinds).where in ("constant", "example"))
        out.append(Lemma(lem.name, lem.statement, hyps, lem.kinds, lem.verified, lem.file,
                         lem.line))
    return out
