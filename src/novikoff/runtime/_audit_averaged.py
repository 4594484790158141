"""Audit a trace of an averaged perceptron: its weights, its averages, and averaged.proof.

What it reports, and how it bounds the floats it reads: docs/runtime-bounds.md,
"Auditing an averaged trace".
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import InvalidArgument
from ._audit import _F64, AuditReport, _Drift, _lemma_findings, audit, by_visit
from ._averaged_run import VisitSlots, as_visit_violations, merged_summary, run_averaged
from ._bounds import SAFETY, U, certify_margin, data_stats, gam
from ._engine import make_monitor
from ._library import library
from ._separator import max_margin_separator
from ._threads import one_blas_thread
from ._trace_lemmas import judged_like_a_trace
from ._validate import check_choice, check_data, check_order, check_w_star, finite_float64

__all__ = ["AveragedAuditReport", "audit_averaged", "CONVENTIONS",
           "AVERAGE_ROUNDINGS"]

CONVENTIONS = ("after", "in-use")
AVERAGE_ROUNDINGS = 32  # u-sized roundings a correct implementation may make per visit

def _said(convention: str, t: int) -> str:
    """The vectors whose mean the average after visit t is, in words."""
    if convention == "after":
        return (f"the weights after visits 0..{t} (convention 'after', scikit-learn's "
                f"SGDClassifier(average=True))")
    used = "0, the start" if t == 0 else f"0 and w[0..{t - 1}]"
    return f"the weights in use at visits 0..{t}, {used} (convention 'in-use', seed 003's)"


@dataclass
class AveragedAuditReport(AuditReport):
    average_violations: int = 0  # visits whose average is certainly not the declared mean
    convention: str = "after"

    def as_dict(self) -> dict:
        out = super().as_dict()
        out.update({"average_violations": self.average_violations,
                    "convention": self.convention})
        return out


def _check_average(average, T: int, d: int) -> np.ndarray:
    A = np.asarray(average)
    if A.ndim != 2 or A.shape != (T, d) or A.dtype.kind not in "biuf":
        raise InvalidArgument(f"average: shape {A.shape} (dtype {A.dtype}) does not match the "
                              f"trace's w: expected ({T}, {d}), the average after each visit")
    return finite_float64("average", A)


def _convention_rows(W, convention: str):
    """(V, kt_offset): the weights of the convention at each visit (V[t]: in use at visit t,
    or after it) and whether they include the visit's own update."""
    if convention == "after":
        return W, True
    return np.vstack([np.zeros((1, W.shape[1])), W[:-1]]), False


def _means(V):
    """(S~ the running sums of V's rows, M~ = S~[t]/(t+1), bound of M~ - the exact mean per
    coordinate, the allowance of a correct implementation per coordinate)."""
    T = V.shape[0]
    S = np.cumsum(V, axis=0)
    cnt = np.arange(1, T + 1, dtype=float)[:, None]
    M = S / cnt
    absS = np.cumsum(np.abs(S), axis=0)
    mine = (2 * U * absS / cnt + 2 * U * np.abs(M)) * SAFETY
    growth = 1.0 + 8 * U * cnt / (1.0 - 8 * U * cnt)  # 1 + gamma_{8(t+1)}
    allowed = AVERAGE_ROUNDINGS * U * (absS + np.cumsum(np.abs(V), axis=0)) / cnt * growth
    return S, M, mine, allowed * SAFETY


def _average_findings(A, W, order, ks, convention: str):
    """The first visit whose reported average is certainly not the convention's mean (as the
    classic audit reports td), the number of such visits, and a pattern when the other
    convention explains them all."""
    V, _ = _convention_rows(W, convention)
    _, M, mine, allowed = _means(V)
    bad_rows = (np.abs(A - M) > mine + allowed).any(axis=1)
    bad = np.flatnonzero(bad_rows)
    findings, patterns = [], []
    for t in bad[:1]:
        t = int(t)
        j = int(np.argmax(np.abs(A[t] - M[t]) - mine[t] - allowed[t]))
        said = _said(convention, t)
        findings.append({
            "kind": "average", "lemma": None, "visit": t, "k": int(ks[t]),
            "example": int(order[t]),
            "message": f"visit {t} (example {int(order[t])}): average[{t}, {j}] = "
                       f"{float(A[t, j])!r}, but the mean of {said} is {float(M[t, j])!r} "
                       f"(a correct float64 implementation is within "
                       f"{float(mine[t, j] + allowed[t, j]):.3g})"})
    if bad.size:
        other = "in-use" if convention == "after" else "after"
        V2, _ = _convention_rows(W, other)
        _, M2, mine2, allowed2 = _means(V2)
        if not (np.abs(A - M2) > mine2 + allowed2).any():
            patterns.append({"pattern": "average_convention", "option": other,
                             "message": f"every average is the mean of the convention "
                                        f"{other!r} instead: audit with convention={other!r} "
                                        f"(--average-convention {other})"})
    return findings, int(bad.size), patterns


def _drifts(W):
    """(changed, D): the visits that update, and D[k], the drift a correct implementation's
    weights after k updates may have from the mathematical run (the classic audit's _Drift)."""
    d = W.shape[1]
    Wb = np.vstack([np.zeros((1, d)), W[:-1]])
    changed = (W != Wb).any(axis=1)
    drift = _Drift(Wb[changed], W[changed], None, np.zeros(d), None, 1.0, _F64, d)
    return changed, np.concatenate(([0.0], drift.D1))


@one_blas_thread
def audit_averaged(X, y, order, w, average, *, convention: str = "after", w_star=None,
                   gamma=None, lemmas=None, proofs=None, include_unverified: bool = False,
                   max_rule: int = 100) -> AveragedAuditReport:
    """Check a trace of an averaged perceptron (module docstring): the weights by the classic
    audit, the averages against the mean of the declared ``convention`` ('after': the weights
    after each visit, scikit-learn's; 'in-use': the weights in use at each visit, seed 003's),
    and averaged.proof's lemmas on the trace.  max_rule: the classic audit's (rule findings
    listed); the first average that is certainly wrong is listed, ``average_violations`` counts
    them all."""
    convention = check_choice("convention", convention, CONVENTIONS)
    X, y = check_data(X, y)
    n, d = X.shape
    order = check_order(order, n, "order")
    base = list(library(proofs) if lemmas is None else lemmas)
    ws = max_margin_separator(X, y) if w_star is None else check_w_star(w_star, d)
    # the weights: rule and classic lemmas (validates w against order and X)
    classic = audit(X, y, order, w, w_star=ws, gamma=gamma, lemmas=base,
                    include_unverified=include_unverified, max_rule=max_rule)
    W = np.ascontiguousarray(np.asarray(w), dtype=np.float64)
    T = order.shape[0]
    A = _check_average(average, T, d)
    changed, D = _drifts(W)
    ks = np.cumsum(changed) - changed  # updates before each visit
    avg_found, avg_count, patterns = _average_findings(A, W, order, ks, convention)
    # ---------------------------------------------------------------- averaged.proof
    stats = data_stats(X, y, ws)
    gamma = certify_margin(X, y, ws, stats, classic.gamma)  # sets stats.gamma
    ref = run_averaged(X, y, w_star=ws, gamma=gamma, order=order, cyclic=False, lemmas=base,
                       include_unverified=include_unverified, on_violation="collect")
    judged = judged_like_a_trace(base, ref)
    visits = make_monitor(judged, include_unverified=include_unverified,
                          on_violation="collect", engine="averaged")
    slots = VisitSlots(visits, d, ws, stats, gamma)
    V, includes_visit = _convention_rows(W, convention)
    kt = ks + changed if includes_visit else ks
    Dv = D[kt]
    S, M, mine, allowed = _means(V)
    S = np.vstack([np.zeros((1, d)), S])  # s[0] = 0, s[t+1] = V[0] + ... + V[t]
    nS = np.sqrt(np.einsum("ij,ij->i", S, S)) * (1 + gam(d)) * (1 + 4 * U)
    ES = np.concatenate(([0.0], np.cumsum(Dv + 2 * U * nS[1:]))) * SAFETY
    cnt = np.arange(1, T + 1, dtype=float)
    allow_rows = np.sqrt(np.einsum("ij,ij->i", allowed, allowed)) * (1 + 4 * U)
    EA = (allow_rows + np.cumsum(Dv) / cnt) * SAFETY  # the trace's own average, allowed
    r = np.sqrt(kt.astype(float))
    RT = np.concatenate(([0.0], np.cumsum(r)))
    eRT = np.concatenate(([0.0], np.cumsum(2 * U * r + 2 * U * RT[1:]))) * SAFETY
    KT = np.concatenate(([0.0], np.cumsum(kt.astype(float))))
    for t0 in range(0, T, 1 << 13):
        t1 = min(T, t0 + (1 << 13))
        env = slots.env(t0, V[t0:t1], Dv[t0:t1], S[t0:t1 + 1], ES[t0:t1 + 1], A[t0:t1],
                        EA[t0:t1], kt[t0:t1], KT[t0:t1 + 1], RT[t0:t1 + 1], eRT[t0:t1 + 1])
        visits.check_chunk(env, t0, t1 - t0, examples=order[t0:t1],
                           visits=np.arange(t0, t1, dtype=np.int64))
    K = int(changed.sum())
    visits.check_final_state(slots.final(T, W[-1], float(D[K]), K, S[-1], float(ES[-1]),
                                         float(KT[-1]), float(RT[-1]), float(eRT[-1])),
                             T, visit=T - 1)
    as_visit_violations(visits)
    lemma_found = _lemma_findings(visits.violations)
    # the classic audit's report, with the averages' and the visits' findings
    summary = merged_summary({"monitored": classic.monitor.get("monitored", []),
                              "not_monitorable": classic.monitor.get("not_monitorable", []),
                              "checks": classic.checks, "violations": []}, visits.summary())
    findings = by_visit(classic.violations + avg_found + lemma_found)
    return AveragedAuditReport(**{
        **vars(classic), "checks": classic.checks + visits.checks,
        "lemma_violations": classic.lemma_violations + len(lemma_found), "violations": findings,
        "monitor": summary, "patterns": classic.patterns + patterns,
        "rule": dict(classic.rule, average_convention=convention)},
        average_violations=avg_count, convention=convention)
