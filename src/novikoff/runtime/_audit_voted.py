"""Audit a voted perceptron's trace: the classic audit of its weights, its vote against the
vote's definition, and the lemmas of voted.proof on the vote.

What it reports, and how it bounds the floats it reads: docs/runtime-bounds.md,
"Auditing a voted trace".
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import InvalidArgument
from ._audit import _F32, _F64, AuditReport, _Drift, _lemma_findings, audit, by_visit
from ._bounds import U, constant_slots, data_stats, one_slot, rowdot, start_slots
from ._checks import VOTED_NAMES, slot_names
from ._library import library
from ._monitor import monitor_of
from ._separator import max_margin_separator
from ._threads import one_blas_thread
from ._trace_lemmas import judged_like_a_trace
from ._validate import check_choice, check_data, check_order, check_w_star, finite_float64
from ._voted_run import run_voted

__all__ = ["VotedAuditReport", "audit_voted", "COUNTS"]

COUNTS = ("in-use", "freund-schapire")


@dataclass
class VotedAuditReport(AuditReport):
    """The classic audit's report, with the vote's findings."""

    vote_violations: int = 0
    vote: dict | None = None  # what the vote holds: vectors, counts, convention

    def as_dict(self) -> dict:
        out = super().as_dict()
        out["vote_violations"] = self.vote_violations
        out["vote"] = self.vote
        return out


def _check_vote(vectors, counts, d: int):
    """(vectors (K'+1, d) float, counts (K'+1,) int64) or None; InvalidArgument when bad."""
    if (vectors is None) != (counts is None):
        missing = "counts" if counts is None else "vectors"
        raise InvalidArgument(f"{missing}: missing (a vote is vectors (K+1, d) and counts "
                              f"(K+1,), or neither)")
    if vectors is None:
        return None
    V = np.asarray(vectors)
    c = np.asarray(counts)
    if V.ndim != 2 or V.shape[1] != d or V.shape[0] == 0 or V.dtype.kind not in "biuf":
        raise InvalidArgument(f"vectors: shape {V.shape} (dtype {V.dtype}) is not (K+1, {d}), "
                              f"K + 1 >= 1 numeric rows of the weights' length")
    if c.shape != (V.shape[0],) or c.dtype.kind not in "biuf":
        raise InvalidArgument(f"counts: shape {c.shape} (dtype {c.dtype}) does not match "
                              f"vectors: shape {V.shape} (one count per vector)")
    V = finite_float64("vectors", V)
    cf = c.astype(np.float64)
    bad = ~np.isfinite(cf) | (cf != np.round(cf)) | (cf < 0) | (cf >= 2.0 ** 53)
    if bad.any():
        k = int(np.argmax(bad))
        raise InvalidArgument(f"counts[{k}]={c[k].item()!r} is not a count (a whole number "
                              f">= 0)")
    return V, cf.astype(np.int64)


def vote_definition(W, order_len: int, start, counts: str = "in-use"):
    """The vote the trace's weights define: (vectors (K+1, d), counts (K+1,), update visits)."""
    Wb = np.vstack([start[None, :], W[:-1]]) if order_len else start[None, :]
    up = np.flatnonzero((W != Wb).any(axis=1)) if order_len else np.zeros(0, np.int64)
    vectors = np.vstack([start[None, :], W[up]])
    c = np.diff(np.concatenate(([0], up + 1, [order_len]))).astype(np.int64)
    if counts == "freund-schapire" and up.size:
        c[0] -= 1
        c[-1] += 1
    return vectors, c, up


@one_blas_thread
def audit_voted(X, y, order, w, *, vectors=None, counts=None, convention: str = "in-use",
                w_star=None, gamma=None, lemmas=None, proofs=None,
                include_unverified: bool = False, max_rule: int = 100, w0=None, eta=1.0,
                bias: bool = False, float32: bool = False, td=None) -> VotedAuditReport:
    """The classic audit of (order, w), the vote (vectors, counts) against its definition, and
    voted.proof's lemmas on the vote (see the module docstring).  convention: 'in-use' (the
    default) or 'freund-schapire', how the implementation counts the visit of an update."""
    convention = check_choice("convention", convention, COUNTS)
    Xc, yc = check_data(X, y)
    if bias:
        Xc = np.hstack([Xc, np.ones((Xc.shape[0], 1))])
    n, d = Xc.shape
    order = check_order(order, n, "order")
    vote = _check_vote(vectors, counts, d)
    ws = max_margin_separator(Xc, yc) if w_star is None else check_w_star(w_star, d)
    base = list(library(proofs) if lemmas is None else lemmas)
    report = audit(X, y, order, w, w_star=ws, gamma=gamma, variant="classic", td=td,
                   lemmas=base, include_unverified=include_unverified, max_rule=max_rule,
                   w0=w0, eta=eta, bias=bias, float32=float32)
    W = np.ascontiguousarray(np.asarray(w), dtype=np.float64)
    T = order.shape[0]
    start = np.zeros(d) if w0 is None else np.asarray(w0, dtype=np.float64)
    if float32:
        start = start.astype(np.float32).astype(np.float64)
    E, c_def, up = vote_definition(W, T, start, convention)
    K = up.size
    findings, vote_bad, checks = [], 0, 0
    info = {"convention": convention, "updates": K, "expected_vectors": K + 1}
    summary_extra, not_mon_voted = [], set()
    if vote is not None:
        V, c = vote
        info.update({"vectors": int(V.shape[0]), "counts": c.tolist()})
        vote_found, vote_bad, checks = _vote_findings(V, c, E, c_def, up, order, Xc, float32,
                                                      eta, convention)
        findings += vote_found
        # the lemmas about the vote, on its in-use counts
        c_use = c.copy()
        if convention == "freund-schapire" and c_use.size > 1:
            c_use[0] += 1
            c_use[-1] -= 1
        ref = run_voted(Xc, yc, w_star=ws, gamma=report.gamma, order=order, cyclic=False,
                        lemmas=base, include_unverified=include_unverified,
                        on_violation="collect", eta=eta,
                        w0=None if w0 is None or not np.any(start) else start)
        judged = judged_like_a_trace(base, ref)
        lemma_found, mon_checks, summary_extra, not_mon_voted = _vote_lemmas(
            judged, report, data_stats(Xc, yc, ws),
            start_slots(start if np.any(start) else None, ws, eta), c_use, up, order)
        findings += lemma_found
        checks += mon_checks
    violations = by_visit(report.violations + findings)
    monitor = dict(report.monitor or {})
    monitor["monitored"] = list(monitor.get("monitored", [])) + summary_extra
    monitor["not_monitorable"] = [m for m in monitor.get("not_monitorable", [])
                                  if m["lemma"] not in not_mon_voted]
    lemma_names = {f["lemma"] for f in report.violations if f["kind"] == "lemma"}
    lemma_names |= {f["lemma"] for f in findings if f["kind"] == "lemma"}
    return VotedAuditReport(**{**vars(report), "checks": report.checks + checks,
                               "lemma_violations": len(lemma_names), "violations": violations,
                               "monitor": monitor}, vote_violations=vote_bad, vote=info)


def _vote_findings(V, c, E, c_def, up, order, X, float32: bool, eta: float, convention: str):
    """(findings, how many entries are wrong, checks made): the vote against its definition."""
    K, K2 = up.size, V.shape[0] - 1
    out, bad = [], 0

    def finding(k, msg):
        visit = int(up[k - 1]) if k is not None and 0 < k <= K else None
        return {"kind": "vote", "lemma": None, "visit": visit, "k": k,
                "example": int(order[visit]) if visit is not None else None,
                "message": msg}

    if K2 != K:
        bad += 1
        out.append(finding(None, f"the vote holds {K2 + 1} vectors, but the trace made {K} "
                                 f"update(s): w[0], ..., w[{K}] are {K + 1} vectors"))
    m = min(K, K2) + 1
    # D_k: how far a correct implementation's w[k] may be from the exact one (the classic
    # audit's _Drift, from the start w[0] = E[0]); two such computations differ by at most 2*D_k.
    x = X[order[up[:m - 1]]]
    drift = _Drift(E[:m - 1], E[1:m], np.sqrt(rowdot(x, x)) * (1 + 4 * U), E[0], None, eta,
                   _F32 if float32 else _F64, E.shape[1])
    D = np.concatenate(([0.0], drift.D1))
    diff = V[:m] - E[:m]
    dist = np.sqrt(np.einsum("ij,ij->i", diff, diff)) * (1 - 4 * U)  # rounded down: honest
    wrong = np.flatnonzero(dist > 2 * D)
    bad += wrong.size
    if wrong.size:
        k = int(wrong[0])
        what = "the start" if k == 0 else f"the weights after update {k - 1}"
        out.append(finding(k, f"vectors[{k}] is not w[{k}] ({what}): ||vectors[{k}] - w[{k}]||"
                              f" = {float(dist[k]):.6g} > {float(2 * D[k]):.3g}, the rounding "
                              f"of a correct implementation ({wrong.size} such vector(s))"))
    wrong_c = np.flatnonzero(c[:m] != c_def[:m])
    bad += wrong_c.size
    if wrong_c.size:
        k = int(wrong_c[0])
        other = "freund-schapire" if convention == "in-use" else "in-use"
        hint = ""
        alt = c_def.copy()
        if alt.size > 1:
            shift = 1 if convention == "in-use" else -1
            alt[0] -= shift
            alt[-1] += shift
            if K2 == K and np.array_equal(c, alt):
                hint = (f"; these are the {other} counts (audit with --vote-counts {other}, "
                        f"convention={other!r})")
        first = 0 if k == 0 else int(up[k - 1]) + 1
        last = int(up[k]) if k < K else len(order) - 1
        span = f"visits {first}..{last}" if first <= last else "no visit: it came last"
        out.append(finding(k, f"counts[{k}] = {int(c[k])}, but w[{k}] was the weights in use "
                              f"at {int(c_def[k])} visit(s) ({span}, {convention} counts); "
                              f"{wrong_c.size} count(s) differ{hint}"))
    return out, bad, 2 * m


def _vote_lemmas(judged, report, stats, start: dict, c, up, order):
    """voted.proof's lemmas on the vote's in-use counts c: at the updates whose vector the
    vote holds, and in the final state; (findings, checks, status entries, names monitored)."""
    voted = []
    for lem in judged:
        mon = monitor_of([lem], engine="voted", on_violation="collect")
        if not mon.invariants:
            continue
        inv = mon.invariants[0]
        names = slot_names(inv.check.slots).union(*(slot_names(h.slots)
                                                    for _, h in inv.hypotheses))
        if names & VOTED_NAMES:
            voted.append((mon, "votes" in names))
    K, K2 = up.size, c.size - 1
    L = min(K, K2)
    const = {**constant_slots(report.gamma, report.R, stats.s, stats.e_s),
             "votes[0]": one_slot(1.0), **start}
    T1 = (up[:L] + 1).astype(float)
    T0 = np.concatenate(([0.0], T1[:-1]))
    Vt = np.concatenate(([0.0], np.cumsum(c[:-1]).astype(float)))  # counts before vector k
    ks = np.arange(L, dtype=float)
    env = {"k": (ks, None), "M": (ks, None), "vote_counts[k]": (c[:L].astype(float), None),
           "vote_counts_total[k]": (Vt[:L], None), "vote_counts_total[k+1]": (Vt[1:L + 1], None),
           "visits_before[k]": (T0, None), "visits_before[k+1]": (T1, None)}
    kk = np.array([float(K)])
    final = {"k": (kk, None), "M": (kk, None), "votes[k]": (np.array([float(c.size)]), None),
             "vote_counts_total[k]": (np.array([float(c[:-1].sum())]), None),
             "visits_before[k]": (np.array([float(up[-1] + 1) if K else 0.0]), None)}
    findings, checks, status, names = [], 0, [], set()
    for mon, about_size in voted:
        const_all = dict(const)
        mon.example_scope = "updates"
        mon.check_constants(const_all)
        if not about_size and L:
            mon.check_chunk(dict(env, **const_all), 0, L, examples=order[up[:L]],
                            visits=up[:L])
        mon.check_final_state(dict(final, **const_all), K,
                              visit=int(up[-1]) if K else None)
        findings += _lemma_findings(mon.violations)
        checks += mon.checks
        status += mon.summary()["monitored"]
        names |= {inv.name for inv in mon.invariants}
    return findings, checks, status, names
