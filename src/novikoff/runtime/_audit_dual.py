"""Audit a kernel perceptron's trace, made by any implementation.

What it reports, and how it bounds the floats it reads: docs/runtime-bounds.md,
"Auditing a kernel trace".
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from ..errors import InvalidArgument
from ._audit import AuditReport, _lemma_findings, _show, _visit_finding, by_visit
from ._bounds import SAFETY, TINY, U, constant_slots, exact_dot, final_slots, gam, start_slots
from ._engine import make_monitor
from ._dual_run import (_certify, check_kernel_data, _check_beta, _default_beta, gram,
                          parse_kernel, run_kernel)
from ._library import library
from ._threads import one_blas_thread
from ._trace_lemmas import judged_like_a_trace
from ._validate import check_gamma, check_order, finite_float64, numeric_array

__all__ = ["audit_kernel", "kernel_trace", "ALPHA_CONVENTION"]

ALPHA_CONVENTION = ("alpha_i counts the updates on example i (integers >= 0; the prediction is "
                    "f(x) = sum_i alpha_i*y_i*K(x_i, x)); signed coefficients alpha_i*y_i: pass "
                    "alpha*y")
_EXACT_BUDGET = 200_000  # support size * d Fraction products for an exact f at a tie
_CHUNK = 2048  # visits per block of the predictions (a block holds T x n floats)


@one_blas_thread
def audit_kernel(X, y, order, alpha, *, kernel="linear", w_star=None, gamma=None,
                 lemmas=None, proofs=None, include_unverified: bool = False,
                 max_rule: int = 100) -> AuditReport:
    """Check a kernel perceptron's trace against the kernel rule and the lemmas of kernel.proof.

    order: (T,) the example of each visit; alpha: (T, n) the dual counts after each visit
    (``ALPHA_CONVENTION``); kernel: 'linear', 'poly:D[:C]', 'rbf:G'; w_star: dual coefficients
    beta of a separator (default: found and certified as ``run_kernel`` does).
    """
    kern = parse_kernel(kernel)
    X, y = check_kernel_data(X, y)
    n, d = X.shape
    order = check_order(order, n, "order")
    A = _check_alpha(alpha, order.shape[0], n, y)
    gamma = check_gamma(gamma)
    beta = None if w_star is None else _check_beta(w_star, n)
    K, E, _ = gram(X, kern)
    if beta is None:
        beta = _default_beta(K, y, kern)
    sep = _certify(K, E, y, beta, gamma, kern, beta_given=w_star is not None)
    T = order.shape[0]
    Ab = np.vstack([np.zeros((1, n)), A[:-1]]) if T else np.zeros((0, n))
    f, e_f, allow = _predictions(K, E, y, order, Ab)
    rule, unsure = _rule(X, y, order, A, Ab, f, e_f, allow, kern, max_rule)
    changed = (A != Ab).any(axis=1)
    ks = np.cumsum(changed) - changed
    findings = [_visit_finding("rule", t, ks, order, msg) for t, msg in rule[:max_rule]]
    undetermined = [_visit_finding("undetermined", t, ks, order, msg)
                    for t, msg in unsure[:max_rule]]
    # ---------------------------------------------------------------- the lemmas
    base = list(library(proofs) if lemmas is None else lemmas)
    reference = run_kernel(X, y, kernel=kern, w_star=beta, gamma=gamma, order=order,
                           cyclic=False, lemmas=base, include_unverified=include_unverified,
                           on_violation="collect")
    judged = judged_like_a_trace(base, reference)
    monitor = make_monitor(judged, include_unverified=include_unverified,
                           on_violation="collect")
    monitor.example_scope = "updates"
    _lemma_checks(monitor, K, E, y, order, A, Ab, f, e_f, changed, sep)
    lemma_found = _lemma_findings(monitor.violations)
    violations = by_visit(findings + lemma_found)
    return AuditReport(visits=T, updates=int(changed.sum()), gamma=sep.gamma, R=sep.R,
                       checks=monitor.checks, rule_violations=len(rule),
                       lemma_violations=len(lemma_found), violations=violations,
                       monitor=monitor.summary(), undetermined=len(unsure),
                       undetermined_visits=undetermined,
                       rule={"variant": "kernel", "kernel": str(kern),
                             "alpha": "counts (f(x) = sum_i alpha_i*y_i*K(x_i, x))"})


def _check_alpha(alpha, T: int, n: int, y) -> np.ndarray:
    A = numeric_array("alpha", alpha, ALPHA_CONVENTION)
    if A.ndim != 2 or A.shape != (T, n):
        raise InvalidArgument(f"alpha: shape {A.shape} does not match order: shape ({T},) and "
                              f"X: {n} examples (expected ({T}, {n}): the dual coefficients "
                              f"after each visit)")
    A = finite_float64("alpha", A)
    frac = np.argwhere(A != np.floor(A))
    if frac.size:
        t, i = (int(v) for v in frac[0])
        raise InvalidArgument(f"alpha[{t}, {i}]={A[t, i].item()!r} is not an integer "
                              f"({ALPHA_CONVENTION})")
    if (A > 2.0 ** 52).any():
        t, i = (int(v) for v in np.argwhere(A > 2.0 ** 52)[0])
        raise InvalidArgument(f"alpha[{t}, {i}]={A[t, i].item()!r} is too large to be a count")
    neg = np.argwhere(A < 0)
    if neg.size:
        t, i = (int(v) for v in neg[0])
        if (A * y >= 0).all():
            raise InvalidArgument(
                f"alpha[{t}, {i}]={A[t, i].item()!r} is negative, and alpha is negative exactly "
                f"where y = -1: these look like signed coefficients alpha_i*y_i (f(x) = "
                f"sum_i alpha_i*K(x_i, x)); the audit reads unsigned counts: pass alpha*y")
        raise InvalidArgument(f"alpha[{t}, {i}]={A[t, i].item()!r} is negative "
                              f"({ALPHA_CONVENTION})")
    return A


def _predictions(K, E, y, order, Ab):
    """(f, e_f, allow) at each visit: the audit's fl(sum_i alpha_i*y_i*K(x_i, x)) of the visited
    example, its distance to the exact value, and the distance any correct implementation's own
    evaluation may have from the exact value (kernel evaluated within 2E, summed in any order)."""
    T, n = Ab.shape
    f, e_f, allow = np.zeros(T), np.zeros(T), np.zeros(T)
    for s in range(0, T, _CHUNK):
        e = min(T, s + _CHUNK)
        rows = order[s:e]
        V = Ab[s:e] * y
        Kr = K[rows]
        Er = E[rows]
        f[s:e] = np.einsum("tj,tj->t", V, Kr)
        S = np.einsum("tj,tj->t", np.abs(V), np.abs(Kr))
        B = np.einsum("tj,tj->t", Ab[s:e], Er)
        terms = np.maximum(Ab[s:e].sum(axis=1), n) + 1
        # products that underflow: one per term of the support (none at alpha = 0, where f = 0
        # exactly and the first visit must update)
        under = (Ab[s:e] != 0).sum(axis=1) * TINY
        e_f[s:e] = (gam(n) * S + B + under) * SAFETY
        allow[s:e] = ((terms * U / (1 - terms * U)) * S + 2 * B + under) * SAFETY
    return f, e_f, allow


def _rule(X, y, order, A, Ab, f, e_f, allow, kern, limit):
    """(rule, undetermined): the visits that break the kernel rule, and those the audit cannot
    decide, each as (visit, message), in visit order."""
    T = order.shape[0]
    idx = np.arange(T)
    delta = A - Ab
    changed = (delta != 0).any(axis=1)
    s = y[order] * f
    E2 = e_f + allow
    must = s + E2 <= 0  # every correct implementation updates
    must_not = s - E2 > 0  # none does
    band = np.flatnonzero(~(must | must_not))
    unsure = []
    shown = {}
    for t in band.tolist():
        exact = _exact_f(X, y, Ab[t], int(order[t]), kern)
        if exact is None:  # rbf, or too large: a decision within rounding is accepted
            continue
        a = int(y[order[t]]) * exact
        updates = a <= 0
        if updates == bool(changed[t]):
            continue
        e = Fraction(float(allow[t]))
        where = (f"y*f(x) = {_show(a)} in exact arithmetic; the rounding bound of a float "
                 f"evaluation is {float(allow[t]):.3g}")
        if updates and a + e <= 0 or not updates and a - e > 0:
            (must if updates else must_not)[t] = True
            shown[t] = where
        else:
            what = ("alpha did not change, but the rule updates" if updates else
                    "alpha changed, but the rule does not update")
            unsure.append((t, f"{what} ({where}): a correct float implementation may decide "
                              f"as the trace did"))
    valid = changed & (delta[idx, order] == 1) & ((delta != 0).sum(axis=1) == 1)
    out = []
    for t in np.flatnonzero(must & ~changed | must_not & changed | changed & ~valid).tolist():
        if limit and len(out) >= limit:
            out.append((t, None))
            continue
        value = shown.get(t, f"y*f(x) = {float(s[t])!r} (+- {float(E2[t]):.3g})")
        if must[t] and not changed[t]:
            msg = f"the rule updates (y*f(x) <= 0: {value}) but alpha did not change"
        elif valid[t]:
            msg = f"alpha changed but the rule does not update (y*f(x) > 0: {value})"
        else:  # not the change of an update: say what changed (and whether one was due)
            msg = _bad_change(delta[t], int(order[t]), int(order[t - 1]) if t else None)
            if must_not[t]:
                msg += f"; and the rule does not update here (y*f(x) > 0: {value})"
        out.append((t, msg))
    return out, unsure


def _bad_change(delta, i: int, previous) -> str:
    """Why a change of alpha at a visit of example i is not +1 on alpha_i."""
    nz = np.flatnonzero(delta)
    parts = [f"alpha[{j}] {'+' if delta[j] > 0 else ''}{delta[j]:g}" for j in nz[:4]]
    msg = (f"an update adds 1 to alpha[{i}] (the visited example) and changes nothing else; "
           f"the trace changes {', '.join(parts)}{', ...' if nz.size > 4 else ''}")
    if nz.size == 1 and nz[0] != i and delta[nz[0]] == 1 and previous is not None and \
            nz[0] == previous:
        msg += " (the previous visit's example: off by one?)"
    return msg


def _exact_f(X, y, alpha, i: int, kern):
    """sum_j alpha_j*y_j*K(x_j, x_i) exactly (linear and poly kernels; None for rbf or when the
    support is too large)."""
    if not kern.rational:
        return None
    sup = np.flatnonzero(alpha)
    if sup.size * X.shape[1] > _EXACT_BUDGET:
        return None
    total = Fraction(0)
    c = Fraction(kern.c)
    for j in sup.tolist():
        dot = exact_dot(X[j], X[i])
        value = dot if kern.kind == "linear" else (dot + c) ** kern.degree
        total += int(alpha[j]) * int(y[j]) * value
    return total


def _lemma_checks(monitor, K, E, y, order, A, Ab, f, e_f, changed, sep) -> None:
    """Feed the monitor the slots of every update, from the trace's dual counts: w[k] and w[k+1]
    are exact (integers alpha), every inner product a sum of Gram entries within their bounds."""
    n = K.shape[0]
    const = constant_slots(sep.gamma, sep.R, sep.s, sep.e_s)
    start = start_slots()  # from w0 = 0 (alpha = 0) with the step y*phi (eta = 1)
    monitor.check_constants({**const, **start})
    up = np.flatnonzero(changed)
    L = up.size
    g = gam(n)
    m, e_m = sep.m, sep.e_m
    names = ("<w_star, w[k]>", "<w[k], w[k]>", "<w_star, w[k+1]>", "<w[k+1], w[k+1]>",
             "<x, w[k+1]>", "<w[k], w[k+1]>")
    cols = {name: (np.zeros(L), np.zeros(L)) for name in names}
    q = e_q = 0.0  # ||w[k]||^2 of the current state, kept by recursion

    def dot_m(a):
        v = a * y
        return float(v @ m), (g * float(np.abs(v) @ np.abs(m)) + float(a @ e_m)) * SAFETY

    for j, t in enumerate(up.tolist()):
        i = int(order[t])
        v0, v1 = Ab[t] * y, A[t] * y
        dv = v1 - v0
        J = np.flatnonzero(dv)
        KJ = K[J]
        gJ = KJ @ v0  # <phi(x_j), w[k]> for j in J
        e_gJ = g * (np.abs(KJ) @ np.abs(v0)) + E[J] @ np.abs(v0)
        dJ = dv[J]
        t1 = float(dJ @ gJ)
        e_t1 = float(np.abs(dJ) @ e_gJ) + gam(J.size) * float(np.abs(dJ) @ np.abs(gJ))
        KJJ = K[np.ix_(J, J)]
        t2 = float(dJ @ KJJ @ dJ)
        e_t2 = (2 * gam(J.size + 1) * float(np.abs(dJ) @ np.abs(KJJ) @ np.abs(dJ)) +
                float(np.abs(dJ) @ E[np.ix_(J, J)] @ np.abs(dJ)))
        q1 = q + 2 * t1 + t2
        e_q1 = (e_q + 2 * e_t1 + e_t2 + 2 * U * (abs(q + 2 * t1) + abs(q1))) * SAFETY
        cross = q + t1
        e_cross = (e_q + e_t1 + U * abs(cross)) * SAFETY
        Ki = K[i]
        p1 = float(Ki @ v1)
        e_p1 = (g * float(np.abs(Ki) @ np.abs(v1)) + float(E[i] @ A[t]) +
                np.count_nonzero(v1) * TINY) * SAFETY
        for name, (v, e) in (("<w_star, w[k]>", dot_m(Ab[t])), ("<w[k], w[k]>", (q, e_q)),
                             ("<w_star, w[k+1]>", dot_m(A[t])), ("<w[k+1], w[k+1]>", (q1, e_q1)),
                             ("<x, w[k+1]>", (p1, e_p1)), ("<w[k], w[k+1]>", (cross, e_cross))):
            cols[name][0][j] = v
            cols[name][1][j] = e
        q, e_q = q1, e_q1
    if L:
        idx = order[up]
        diag = np.diagonal(K)[idx]
        e_diag = np.diagonal(E)[idx] * SAFETY
        js = np.arange(L, dtype=float)
        zero = (np.zeros(L), None)
        env = {"k": (js, None), "M": (js, None), "y": (y[idx], None),
               "<w_star, x>": (m[idx], e_m[idx]), "<x, x>": (diag, e_diag),
               "<x, w[k]>": (f[up], e_f[up]), "d": zero, "TD[k]": zero, "TD[k+1]": zero,
               **{name: (v, e * SAFETY) for name, (v, e) in cols.items()}, **const, **start}
        monitor.check_chunk(env, 0, L, examples=idx, visits=up)
    last = A[-1] if A.shape[0] else np.zeros(n)
    a, e_a = dot_m(last)
    monitor.check_final_state({**final_slots(L, a, e_a, q, e_q), "TD[k]": (np.zeros(1), None),
                               **const, **start}, L,
                              visit=int(up[-1]) if L else None)


# -------------------------------------------------------------------- engine runs


def kernel_trace(result, order=None) -> dict:
    """The trace of a ``run_kernel`` result (checks on), as ``audit_kernel`` reads it (and
    ``np.savez(path, **kernel_trace(result, order))`` writes it): order (T,) the example of each
    visit, alpha (T, n) the counts after each.  order: the order the run was given (default
    0..n-1; a cyclic run repeats it)."""
    if getattr(result, "update_visits", None) is None or result.updates is None:
        raise InvalidArgument("result: no updates recorded (run_kernel with checks=True)")
    n = result.n
    base = np.arange(n, dtype=np.int64) if order is None else check_order(order, n)
    T = int(result.visits)
    visits = base[np.arange(T) % base.shape[0]] if T else np.zeros(0, np.int64)
    alpha = np.zeros((T, n))
    np.add.at(alpha, (np.asarray(result.update_visits), np.asarray(result.updates)), 1.0)
    return {"order": visits, "alpha": np.cumsum(alpha, axis=0)}
