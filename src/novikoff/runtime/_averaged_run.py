"""The averaged perceptron, monitored: the classic run, returning the average of the weights in
use at every visit (seed 003), with proofs/averaged.proof's setting ``averaged_run`` checked at
every visit and the classic lemmas at every update of the training run.

The run.  The classic perceptron (update when y<w, x> <= 0, w <- w + y*x from 0), cyclic over
``order`` until a pass makes no update (or ``max_epochs`` passes), or one pass (``cyclic=False``).
At every visit t the engine adds the weights in use, wv[t] (those before the visit's update), to
its running sum, s[t+1] = s[t] + wv[t], and its average after t+1 visits is a[t+1] = s[t+1]/(t+1);
the result's ``w`` is the average after the last visit.  Plain numpy: a Python loop decides the
updates (one dot product per visit), the sums and averages of a chunk of visits are then one
``np.cumsum`` (sequential additions, the same floats as adding visit by visit) and one division.

Two monitors.  The training run is the classic run, so the classic lemmas (novikoff.proof, ...)
are checked as ``run`` checks them, at every update with the incremental bookkeeping of
``_bounds.Bookkeeper`` (same drift and prediction bounds; the prediction is ``X[i] @ w``, a dot
product of length d).  The averaged lemmas are indexed by visits: a second monitor
(``engine='averaged'``) judges them at every visit t = 0..T-1 (state t and the visit t -> t+1)
and in the final state t = T, with the run quantities ``t``, ``wv``, ``s``, ``a``, ``kt``
(updates before visit t), ``KT`` and ``RT`` (their running totals sum kt and sum sqrt(kt)).
Every visit is checked, not only the updates: the sum's lemmas are linear/convex in the visits
between two updates, so updates would suffice for a correct run, but an average's bug (a divisor
off by one) shows between updates too.

Honest floats (u = 2^-53, gamma_n = n*u/(1 - n*u), ``_bounds.gam``; every bound is inflated by
``SAFETY``).  The *mathematical run* makes the same updates in exact arithmetic; of it:

* the weights: D_0 = 0, D_{k+1} = D_k + 2u*||w~[k+1]|| (each coordinate of fl(w~ + y*x) rounds
  once; y*x is exact), so the weights in use at visit t are within Dv[t] = D_{kt[t]};
* the sum: s~[t+1] = fl(s~[t] + wv~[t]) is within E[t+1] = E[t] + Dv[t] + 2u*||s~[t+1]|| of the
  exact sum of the exact weights in use;
* the average a~[t] = fl(s~[t]/t): within E[t]/t + 2u*||a~[t]|| (t is exact);
* RT~[t+1] = fl(RT~[t] + fl(sqrt(kt[t]))): within e[t+1] = e[t] + 2u*sqrt(kt[t]) + 2u*RT~[t+1]
  (sqrt is correctly rounded); t, kt, KT are integers, exact in floats;
* norms ||v|| <= sqrt(fl(<v, v>) + d*2^-1074)*(1 + gamma_d)*(1 + 4u), and an inner product of
  vectors held within e_a, e_b of the exact ones within gamma_d*||a~||*||b~|| + d*2^-1074 +
  e_a*||b~|| + e_b*||a~|| + e_a*e_b (``_batch_run._dot_err``): nothing accumulates but D, E, e.

Testing hook ``average_rule``: 'textbook', or a bug the monitor must catch: 'after_visit' (the
sum adds the weights *after* the visit's update), 'updates_only' (the sum adds the weights in
use only at updates), 'off_by_one' (the average after t visits divides by t - 1, by 1 at t = 1).
The training run is the textbook one in every case; a bug's run is judged as the audit judges
a trace (the lemmas that apply to the textbook run on the same data and order, gated by their
assumptions about the data only: the definitions the bug breaks, such as ``accumulate`` or
``mean``, do not excuse it).  On iris every bug is a violation within a few visits
(``averaged_run_norm`` at t = 1 for 'after_visit', ``average_run_norm`` at t = 2 for
'off_by_one', ``averaged_run_progress`` when the run has converged for 'updates_only').
"""

from __future__ import annotations

import time
from dataclasses import fields

import numpy as np

from ..errors import NovikoffError
from ._batch_run import _norm_up
from ._bounds import SAFETY, TINY, U, Bookkeeper, certify_margin, data_stats, gam, start_slots
from ._engine import visits_allowed
from ._monitor import AVERAGED_ONLY, LemmaViolation, Violation
from ._validate import check_choice, check_data, check_gamma, check_order, check_positive_int, \
    check_w_star

__all__ = ["run_averaged", "AVERAGE_RULES", "VisitSlots"]

AVERAGE_RULES = ("textbook", "after_visit", "updates_only", "off_by_one")
_CHUNK = 1 << 13  # visits judged at once


def _rowdot(A, B):
    return np.einsum("ij,ij->i", A, B)


def norms_up(rows, d: int) -> np.ndarray:
    """Certified upper bounds of the rows' norms."""
    with np.errstate(under="ignore", over="ignore"):  # an overflow is inf: undetermined
        q = _rowdot(rows, rows)
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
        self.const = {"gamma": (np.array([gamma]), None), "R": (np.array([stats.R]), None),
                      "<w_star, w_star>": (np.array([stats.s]), np.array([stats.e_s])),
                      "<s[0], s[0]>": (np.array([0.0]), None),
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

    def _inner(self, rows: dict, L: int) -> dict:
        with np.errstate(over="ignore", invalid="ignore", under="ignore"):
            return self._inner_products(rows, L)  # inf or nan: undetermined, never decided

    def _inner_products(self, rows: dict, L: int) -> dict:
        out = {}
        for slot, (p, q) in self.pairs.items():
            P, nP, eP = rows[p]
            Q, nQ, eQ = rows[q]
            P = np.broadcast_to(P, (L, self.d))
            Q = np.broadcast_to(Q, (L, self.d))
            out[slot] = (_rowdot(P, Q), (gam(self.d) * nP * nQ + self.d * TINY + eP * nQ +
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
        env.update(self._inner(rows, L))
        return env

    def final(self, T: int, w, Dw, K: int, s, Es, KT: float, RT: float, eRT: float) -> dict:
        """The state after the last visit (t = T): the weights in use next, w within Dw."""
        one = lambda v: np.array([float(v)])  # noqa: E731
        rows = {"w_star": (self.ws, self.ws_up, one(0.0)),
                "wv[t]": (w[None, :], norms_up(w[None, :], self.d), one(Dw)),
                "s[t]": (s[None, :], norms_up(s[None, :], self.d), one(Es))}
        env = {"t": (one(T), None), "kt[t]": (one(K), None), "KT[t]": (one(KT), None),
               "RT[t]": (one(RT), one(eRT * SAFETY)), **self.const}
        state_pairs = {k: v for k, v in self.pairs.items() if set(v) <= set(rows)}
        saved, self.pairs = self.pairs, state_pairs
        try:
            env.update(self._inner(rows, 1))
        finally:
            self.pairs = saved
        return env


def merged_summary(classic, visits) -> dict:
    """One summary of the two monitors: every lemma monitored by either is listed once."""
    a, b = classic.summary(), visits.summary()
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
                 checks: bool = True, on_violation: str = "raise", progress=None,
                 average_rule: str = "textbook"):
    """The averaged perceptron on (X, y), the classic lemmas checked at every update and
    averaged.proof's averaged_run lemmas at every visit (see the module docstring).

    Returns a RunResult whose ``w`` is the average after the last visit (the averaged
    perceptron's answer); ``monitor['weights']`` holds the last weights, ``mistakes`` the
    updates, ``visits`` the visits T averaged over.  average_rule: a testing hook (module
    docstring).  Raises LemmaViolation at the first violation in visit order
    (on_violation='raise'), InvalidArgument on bad input.
    """
    from ._audit import judged_like_a_trace
    from ._engine import RunResult, make_monitor
    from ._lemmas import load_lemmas
    from ._separator import max_margin_separator

    t_start = time.perf_counter()
    check_choice("average_rule", average_rule, AVERAGE_RULES)
    check_choice("on_violation", on_violation, ("raise", "collect"))
    X, y = check_data(X, y)
    n, d = X.shape
    order = np.arange(n, dtype=np.int64) if order is None else check_order(order, n)
    gamma = check_gamma(gamma)
    max_epochs = check_positive_int("max_epochs", max_epochs)
    if w_star is not None:
        w_star = check_w_star(w_star, d)
    classic = visits = keeper = slots = None
    if checks:
        if average_rule != "textbook":
            ref = run_averaged(X, y, w_star=w_star, gamma=gamma, order=order, cyclic=cyclic,
                               max_epochs=max_epochs, lemmas=lemmas, proofs=proofs,
                               include_unverified=include_unverified, on_violation="collect")
            lemmas = judged_like_a_trace(load_lemmas(proofs) if lemmas is None else lemmas,
                                         ref)
            w_star = ref.w_star
        classic = make_monitor(lemmas, proofs=proofs, include_unverified=include_unverified,
                               on_violation="collect")
        classic.example_scope = "updates"
        visits = make_monitor(lemmas, proofs=proofs, include_unverified=include_unverified,
                              on_violation="collect", engine="averaged")
        if w_star is None:
            w_star = max_margin_separator(X, y, progress=getattr(progress, "phase", None))
        stats = data_stats(X, y, w_star)
        gamma = certify_margin(X, y, w_star, stats, gamma)
        stats.gamma = gamma
        keeper = Bookkeeper(stats, y, d, order=order, gamma=gamma, n=n, zero_loss=True,
                            need_td=classic.needs("TD[k]", "TD[k+1]"),
                            start=start_slots(None, w_star, 1.0))
        classic.check_constants(keeper.constants())
        slots = VisitSlots(visits, d, w_star, stats, gamma)
    L_order = order.shape[0]
    t_end = visits_allowed(order, cyclic, max_epochs, separable=True)
    rows = [X[i] for i in range(n)]
    labels = [float(v) for v in y]
    w = np.zeros(d)
    s = np.zeros(d)
    D = 0.0  # ||w~ - w|| of the weights held
    Es = 0.0  # ||s~ - s|| of the sum held
    RT, eRT = 0.0, 0.0
    K = 0
    KT = 0.0
    T = 0
    converged = False
    clean = True  # no update so far in this pass
    update_examples = []
    last_update_visit = None
    a = np.zeros(d)
    seen = 0
    V = np.empty((_CHUNK, d))
    Wafter = np.empty((_CHUNK, d)) if average_rule == "after_visit" else None
    while T < t_end and not converged:
        L = int(min(_CHUNK, t_end - T))
        kt = np.empty(L, np.int64)
        Dv = np.empty(L)
        Dafter = np.empty(L) if Wafter is not None else None
        upd = np.zeros(L, bool)
        idx, ps, vis = [], [], []
        j = 0
        while j < L:
            t = T + j
            pos = t % L_order
            if pos == 0 and t > 0 and cyclic:
                if clean:
                    converged = True
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
                D = (D + 2 * U * _norm_up(w, d)) * SAFETY
                upd[j] = True
                clean = False
                idx.append(i)
                ps.append(p)
                vis.append(t)
            if Wafter is not None:
                Wafter[j] = w
                Dafter[j] = D
            j += 1
        L = j
        if L == 0:
            break
        update_examples += idx
        if vis:
            last_update_visit = vis[-1]
        # the engine's running sum and averages over the chunk
        if average_rule == "after_visit":
            adds, e_adds = Wafter[:L], Dafter[:L]
        elif average_rule == "updates_only":
            adds = np.where(upd[:L, None], V[:L], 0.0)
            e_adds = np.where(upd[:L], Dv[:L], 0.0)
        else:
            adds, e_adds = V[:L], Dv[:L]
        S = np.cumsum(np.vstack([s[None, :], adds]), axis=0)
        tt = np.arange(T + 1, T + L + 1, dtype=float)
        div = np.maximum(tt - 1.0, 1.0) if average_rule == "off_by_one" else tt
        A = S[1:] / div[:, None]
        r = np.sqrt(kt[:L].astype(float))
        RTs = np.cumsum(np.concatenate(([RT], r)))
        KTs = np.cumsum(np.concatenate(([KT], kt[:L].astype(float))))
        if checks:
            nS = norms_up(S, d)
            ES = np.concatenate(([Es], Es + np.cumsum(e_adds + 2 * U * nS[1:]))) * SAFETY
            EA = (ES[1:] / div + 2 * U * norms_up(A, d)) * SAFETY
            eR = np.concatenate(([eRT], eRT + np.cumsum(2 * U * r + 2 * U * RTs[1:]))) * SAFETY
            if idx:
                ii = np.array(idx, np.int64)
                env = keeper.chunk(ii, np.array(ps), np.array(vis, np.int64))
                classic.check_chunk(env, K - len(idx), len(idx), examples=ii,
                                    visits=np.array(vis, np.int64))
            env = slots.env(T, V[:L], Dv[:L], S, ES, A, EA, kt[:L], KTs, RTs, eR)
            visits.check_chunk(env, T, L, examples=order[np.arange(T, T + L) % L_order],
                               visits=np.arange(T, T + L, dtype=np.int64))
            as_visit_violations(visits)
            if on_violation == "raise":
                seen = _raise_first(classic, visits, seen)
            Es, eRT = float(ES[-1]), float(eR[-1])
        s = S[-1].copy()
        a = A[-1].copy()
        RT, KT = float(RTs[-1]), float(KTs[-1])
        T += L
        if progress is not None:
            progress(T, K, -(-T // L_order))
    if cyclic and not converged and clean and T % L_order == 0 and T > 0:
        converged = True  # the last pass allowed was clean
    if not cyclic:
        converged = clean
    bounds = {}
    summary = None
    if checks:
        classic.check_final_state(keeper.final_state(T), K, visit=last_update_visit)
        visits.check_final_state(slots.final(T, w, D, K, s, Es, KT, RT, eRT), T,
                                 visit=T - 1)
        as_visit_violations(visits)
        if on_violation == "raise":
            _raise_first(classic, visits, seen)
        bounds = classic.bounds()
        summary = merged_summary(classic, visits)
        summary["average_rule"] = average_rule
        summary["weights"] = w.tolist()
    return RunResult(
        variant="averaged", cyclic=cyclic, n=n, d=d, mistakes=K,
        epochs=-(-T // L_order), visits=T, converged=converged, w=a, w_star=w_star,
        gamma=gamma, R=slots.const["R"][0][0].item() if slots else None, separable=True,
        exact=False, checks=(classic.checks + visits.checks) if checks else 0,
        monitor=summary, bounds=bounds,
        updates=np.array(update_examples, np.int64) if checks else None,
        seconds=time.perf_counter() - t_start)
