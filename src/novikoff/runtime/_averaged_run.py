"""The averaged perceptron, monitored: the classic run, returning the average of the weights in
use at every visit (seed 003), with proofs/averaged.proof's setting ``averaged_run`` checked at
every visit and the classic lemmas at every update of the training run.

How its floats are bounded: docs/runtime-bounds.md, "The averaged perceptron".
"""

from __future__ import annotations

import time
from dataclasses import fields

import numpy as np

from ..errors import NovikoffError
from ._bounds import (SAFETY, TINY, U, Bookkeeper, certify_margin, constant_slots, data_stats,
                      gam, norm_up, one_slot, rowdot, start_slots)
from ._config import visits_allowed
from ._engine import _prepare, make_monitor
from ._checks import AVERAGED_ONLY
from ._monitor import LemmaViolation, Violation
from ._result import RunResult
from ._separator import max_margin_separator
from ._validate import check_choice

__all__ = ["run_averaged", "VisitSlots"]

_CHUNK = 1 << 13  # visits judged at once


def norms_up(rows, d: int) -> np.ndarray:
    """Certified upper bounds of the rows' norms."""
    with np.errstate(under="ignore", over="ignore"):  # an overflow is inf: undetermined
        q = rowdot(rows, rows)
        return np.sqrt(q + d * TINY) * (1.0 + gam(d)) * (1.0 + 4 * U)


class VisitViolation(Violation):
    """A violation of a lemma about visits: k is the number of visits t."""

    def place(self) -> str:
        ex = f" (example {self.example})" if self.example is not None else ""
        return {"update": f"at visit t={self.k}{ex}", "state": f"after t={self.k} visit(s)",
                "constant": "for the run's constants", "example": "on an example"}[self.where]


def as_visit_violations(monitor) -> None:
    """Make the visits monitor's violations speak of visits (t) rather than updates (k)."""
    def conv(v):
        if isinstance(v, VisitViolation):
            return v
        return VisitViolation(**{f.name: getattr(v, f.name) for f in fields(v)})
    monitor.violations[:] = [conv(v) for v in monitor.violations]
    for inv in monitor.invariants:
        if inv.first_violation is not None:
            inv.first_violation = conv(inv.first_violation)


class VisitSlots:
    """The slots of averaged_run at a chunk of visits, from rows of vectors and their bounds.

    The visits monitor reads inner products of w_star, wv[t], s[t], s[t+1], a[t+1] (``<s[0],
    s[0]>`` = 0 is a constant) and t, kt[t], KT[t], KT[t+1], RT[t], RT[t+1].
    """

    def __init__(self, monitor, d: int, w_star, stats, gamma: float):
        self.monitor, self.d, self.ws = monitor, d, w_star
        self.const = {**constant_slots(gamma, stats.R, stats.s, stats.e_s),
                      "<s[0], s[0]>": one_slot(0.0),
                      **start_slots(None, None, 1.0)}
        self.ws_up = stats.ws_up
        known = {"t", "kt[t]", "KT[t]", "KT[t+1]", "RT[t]", "RT[t+1]"} | set(self.const)
        atoms = ("w_star", "wv[t]", "s[t]", "s[t+1]", "a[t+1]")
        self.pairs = {}
        for slot in monitor.slots - known:
            parts = slot[1:-1].split(", ") if slot.startswith("<") else []
            if len(parts) != 2 or not set(parts) <= set(atoms):
                raise NovikoffError(f"the averaged run cannot supply the slot {slot!r} that "
                                    f"the monitored lemmas need")
            self.pairs[slot] = parts
        monitor.check_constants(self.const)

    def _inner(self, rows: dict, L: int, pairs: dict) -> dict:
        """The slots of `pairs` at L points, from `rows`: an inf or nan is undetermined, never
        decided."""
        out = {}
        with np.errstate(over="ignore", invalid="ignore", under="ignore"):
            for slot, (p, q) in pairs.items():
                P, nP, eP = rows[p]
                Q, nQ, eQ = rows[q]
                P = np.broadcast_to(P, (L, self.d))
                Q = np.broadcast_to(Q, (L, self.d))
                out[slot] = (rowdot(P, Q), (gam(self.d) * nP * nQ + self.d * TINY + eP * nQ +
                                             eQ * nP + eP * eQ) * SAFETY)
        return out

    def env(self, t0: int, V, Dv, S, ES, A, EA, kt, KT, RT, eRT) -> dict:
        """The env of visits t0..t0+L-1: V (L, d) the weights in use within Dv, S (L+1, d) the
        sums before each visit and after the last within ES, A (L, d) the averages after each
        visit within EA, kt (L,), KT and RT (L+1,) before each visit and after the last (RT
        within eRT)."""
        L = V.shape[0]
        nS = norms_up(S, self.d)
        zero = np.zeros(L)
        rows = {"w_star": (self.ws, self.ws_up, zero), "wv[t]": (V, norms_up(V, self.d), Dv),
                "s[t]": (S[:-1], nS[:-1], ES[:-1]), "s[t+1]": (S[1:], nS[1:], ES[1:]),
                "a[t+1]": (A, norms_up(A, self.d), EA)}
        ts = np.arange(t0, t0 + L, dtype=float)
        env = {"t": (ts, None), "kt[t]": (kt.astype(float), None), "KT[t]": (KT[:-1], None),
               "KT[t+1]": (KT[1:], None), "RT[t]": (RT[:-1], eRT[:-1] * SAFETY),
               "RT[t+1]": (RT[1:], eRT[1:] * SAFETY), **self.const}
        env.update(self._inner(rows, L, self.pairs))
        return env

    def final(self, T: int, w, Dw, K: int, s, Es, KT: float, RT: float, eRT: float) -> dict:
        """The state after the last visit (t = T): the weights in use next, w within Dw."""
        one = lambda v: np.array([float(v)])  # noqa: E731
        rows = {"w_star": (self.ws, self.ws_up, one(0.0)),
                "wv[t]": (w[None, :], norms_up(w[None, :], self.d), one(Dw)),
                "s[t]": (s[None, :], norms_up(s[None, :], self.d), one(Es))}
        env = {"t": (one(T), None), "kt[t]": (one(K), None), "KT[t]": (one(KT), None),
               "RT[t]": (one(RT), one(eRT * SAFETY)), **self.const}
        # the state's slots: the pairs of vectors known after the last visit
        env.update(self._inner(rows, 1, {slot: pair for slot, pair in self.pairs.items()
                                         if set(pair) <= set(rows)}))
        return env


def merged_summary(a: dict, b: dict) -> dict:
    """One summary of the two monitors' summaries (a: the classic lemmas', b: the visits'):
    every lemma monitored by either is listed once."""
    at_visits = {m["lemma"] for m in b["monitored"]}
    b_reasons = {}
    for e in b["not_monitorable"]:
        b_reasons.setdefault(e["lemma"], e["reason"])
    not_mon = []
    for e in a["not_monitorable"]:
        if e["reason"].startswith(AVERAGED_ONLY):
            if e["lemma"] in at_visits:
                continue
            e = {"lemma": e["lemma"], "reason": b_reasons.get(e["lemma"], e["reason"])}
        not_mon.append(e)
    violations = sorted(a["violations"] + b["violations"],
                        key=lambda v: v["visit"] if v["visit"] is not None else -1)
    return {"monitored": a["monitored"] + b["monitored"], "not_monitorable": not_mon,
            "checks": a["checks"] + b["checks"], "violations": violations}


def _raise_first(classic, visits, seen: int) -> int:
    """Raise the earliest violation found since the first `seen` (on_violation='raise')."""
    found = classic.violations + visits.violations
    if len(found) > seen:
        first = min(found, key=lambda v: v.visit if v.visit is not None else -1)
        raise LemmaViolation(first)
    return len(found)


def run_averaged(X, y, *, w_star=None, gamma=None, order=None, cyclic: bool = True,
                 max_epochs=None, lemmas=None, proofs=None, include_unverified: bool = False,
                 checks: bool = True, on_violation: str = "raise", progress=None):
    """The averaged perceptron on (X, y), the classic lemmas checked at every update and
    averaged.proof's averaged_run lemmas at every visit (see the module docstring).

    Returns a RunResult whose ``w`` is the average after the last visit (the averaged
    perceptron's answer); ``monitor['weights']`` holds the last weights, ``mistakes`` the
    updates, ``visits`` the visits T averaged over.  Raises LemmaViolation at the first
    violation in visit order (on_violation='raise'), InvalidArgument on bad input.
    """
    t_start = time.perf_counter()
    check_choice("on_violation", on_violation, ("raise", "collect"))
    X, y, n, d, _, order, gamma, max_epochs, w_star = _prepare(
        X, y, w_star, gamma, "classic", order, max_epochs, "auto")
    watch = None
    if checks:
        watch = _AveragedWatch(X, y, order, w_star, gamma, lemmas, proofs, include_unverified,
                               on_violation, progress)
        w_star, gamma = watch.w_star, watch.gamma
    state = _Averaging(X, y, order, cyclic, visits_allowed(order, cyclic, max_epochs, True))
    state.run(watch, progress)
    bounds = {}
    summary = None
    if watch is not None:
        watch.finish(state)
        bounds = watch.classic.bounds()
        summary = merged_summary(watch.classic.summary(), watch.visits.summary())
        summary["weights"] = state.w.tolist()
    T, L_order = state.T, order.shape[0]
    return RunResult(
        variant="averaged", cyclic=cyclic, n=n, d=d, mistakes=state.K,
        epochs=-(-T // L_order), visits=T, converged=state.converged, w=state.a,
        w_star=w_star, gamma=gamma,
        R=watch.slots.const["R"][0][0].item() if watch else None, separable=True,
        exact=False, checks=(watch.classic.checks + watch.visits.checks) if watch else 0,
        monitor=summary, bounds=bounds,
        updates=np.array(state.update_examples, np.int64) if watch else None,
        seconds=time.perf_counter() - t_start)


class _AveragedWatch:
    """The two monitors of an averaged run: the classic lemmas at its updates, averaged.proof's
    at every visit; each chunk of visits judged as it ends."""

    def __init__(self, X, y, order, w_star, gamma, lemmas, proofs, include_unverified,
                 on_violation, progress):
        n, d = X.shape
        self.d, self.order, self.on_violation = d, order, on_violation
        self.classic = make_monitor(lemmas, proofs=proofs,
                                    include_unverified=include_unverified,
                                    on_violation="collect")
        self.classic.example_scope = "updates"
        self.visits = make_monitor(lemmas, proofs=proofs, include_unverified=include_unverified,
                                   on_violation="collect", engine="averaged")
        if w_star is None:
            w_star = max_margin_separator(X, y, progress=getattr(progress, "phase", None))
        stats = data_stats(X, y, w_star)
        gamma = certify_margin(X, y, w_star, stats, gamma)  # sets stats.gamma
        self.w_star, self.gamma = w_star, gamma
        self.keeper = Bookkeeper(stats, y, d, order=order, gamma=gamma, n=n, zero_loss=True,
                                 need_td=self.classic.needs("TD[k]", "TD[k+1]"),
                                 start=start_slots(None, w_star, 1.0))
        self.classic.check_constants(self.keeper.constants())
        self.slots = VisitSlots(self.visits, d, w_star, stats, gamma)
        self.seen = 0
        self.Es = self.eRT = 0.0  # ||s~ - s|| of the sum held, and the error of RT~

    def chunk(self, st, L, V, Dv, kt, S, A, tt, r, RTs, KTs, idx, ps, vis) -> None:
        """Judge the chunk of L visits from visit st.T (before the state moves past it)."""
        d, T, L_order = self.d, st.T, self.order.shape[0]
        nS = norms_up(S, d)
        ES = np.concatenate(([self.Es], self.Es + np.cumsum(Dv + 2 * U * nS[1:]))) * SAFETY
        EA = (ES[1:] / tt + 2 * U * norms_up(A, d)) * SAFETY
        eR = np.concatenate(([self.eRT], self.eRT + np.cumsum(2 * U * r + 2 * U * RTs[1:])))
        eR = eR * SAFETY
        if idx:
            ii = np.array(idx, np.int64)
            env = self.keeper.chunk(ii, np.array(ps), np.array(vis, np.int64))
            self.classic.check_chunk(env, st.K - len(idx), len(idx), examples=ii,
                                     visits=np.array(vis, np.int64))
        env = self.slots.env(T, V, Dv, S, ES, A, EA, kt, KTs, RTs, eR)
        self.visits.check_chunk(env, T, L, examples=self.order[np.arange(T, T + L) % L_order],
                                visits=np.arange(T, T + L, dtype=np.int64))
        as_visit_violations(self.visits)
        if self.on_violation == "raise":
            self.seen = _raise_first(self.classic, self.visits, self.seen)
        self.Es, self.eRT = float(ES[-1]), float(eR[-1])

    def finish(self, st) -> None:
        """Judge the final state of the run."""
        self.classic.check_final_state(self.keeper.final_state(st.T), st.K,
                                       visit=st.last_update_visit)
        self.visits.check_final_state(
            self.slots.final(st.T, st.w, st.D, st.K, st.s, self.Es, st.KT, st.RT, self.eRT),
            st.T, visit=st.T - 1)
        as_visit_violations(self.visits)
        if self.on_violation == "raise":
            _raise_first(self.classic, self.visits, self.seen)


class _Averaging:
    """The averaged perceptron's state: the classic run, its running sum and average."""

    def __init__(self, X, y, order, cyclic: bool, t_end: int):
        n, d = X.shape
        self.rows, self.labels = [X[i] for i in range(n)], [float(v) for v in y]
        self.order, self.cyclic, self.t_end, self.d = order, cyclic, t_end, d
        self.w, self.s, self.a = np.zeros(d), np.zeros(d), np.zeros(d)
        self.D = 0.0  # ||w~ - w|| of the weights held
        self.RT = self.KT = 0.0
        self.K = self.T = 0
        self.converged = False
        self.clean = True  # no update so far in this pass
        self.update_examples = []
        self.last_update_visit = None
        self.V = np.empty((_CHUNK, d))  # the weights in use at each visit of a chunk

    def visit_chunk(self, L: int):
        """Up to L visits from T (fewer when a clean pass ends the run): (visits made, the
        weights' error bound and update count at each, the updates' examples, predictions
        and visits).  The state is in locals in the loop (a Python loop over the visits)."""
        order, rows, labels, V = self.order, self.rows, self.labels, self.V
        L_order, d, cyclic = order.shape[0], self.d, self.cyclic
        w, K, D, clean, T = self.w, self.K, self.D, self.clean, self.T
        kt, Dv = np.empty(L, np.int64), np.empty(L)
        idx, ps, vis = [], [], []
        j = 0
        while j < L:
            t = T + j
            pos = t % L_order
            if pos == 0 and t > 0 and cyclic:
                if clean:
                    self.converged = True
                    break
                clean = True
            i = int(order[pos])
            V[j] = w
            kt[j] = K
            Dv[j] = D
            p = float(rows[i] @ w)
            if labels[i] * p <= 0:
                w = w + labels[i] * rows[i]
                K += 1
                D = (D + 2 * U * norm_up(w, d)) * SAFETY
                clean = False
                idx.append(i)
                ps.append(p)
                vis.append(t)
            j += 1
        self.w, self.K, self.D, self.clean = w, K, D, clean
        return j, kt[:j], Dv[:j], idx, ps, vis

    def run(self, watch, progress) -> None:
        """Visit to the end, each chunk's sums and averages judged by `watch` (if any)."""
        L_order = self.order.shape[0]
        while self.T < self.t_end and not self.converged:
            L, kt, Dv, idx, ps, vis = self.visit_chunk(int(min(_CHUNK, self.t_end - self.T)))
            if L == 0:
                break
            self.update_examples += idx
            if vis:
                self.last_update_visit = vis[-1]
            S = np.cumsum(np.vstack([self.s[None, :], self.V[:L]]), axis=0)
            tt = np.arange(self.T + 1, self.T + L + 1, dtype=float)
            A = S[1:] / tt[:, None]
            r = np.sqrt(kt.astype(float))
            RTs = np.cumsum(np.concatenate(([self.RT], r)))
            KTs = np.cumsum(np.concatenate(([self.KT], kt.astype(float))))
            if watch is not None:
                watch.chunk(self, L, self.V[:L], Dv, kt, S, A, tt, r, RTs, KTs, idx, ps, vis)
            self.s, self.a = S[-1].copy(), A[-1].copy()
            self.RT, self.KT = float(RTs[-1]), float(KTs[-1])
            self.T += L
            if progress is not None:
                progress(self.T, self.K, -(-self.T // L_order))
        T = self.T
        if self.cyclic and not self.converged and self.clean and T % L_order == 0 and T > 0:
            self.converged = True  # the last pass allowed was clean
        if not self.cyclic:
            self.converged = self.clean
