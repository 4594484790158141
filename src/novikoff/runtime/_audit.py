"""Audit a perceptron run made by any implementation, from its trace.

What it reports, and how it bounds the floats it reads: docs/runtime-bounds.md,
"Auditing a trace".
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from ..errors import InvalidArgument
from ._bounds import (SAFETY, U, Bookkeeper, certify_margin, data_stats, exact_dot, final_slots,
                      gam, rowdot, start_slots)
from ._config import RunConfig
from ._engine import make_monitor, run_online
from ._library import declared_rule_breaks, library, monitored
from ._likely_bugs import constant_trace, likely_bugs
from ._checks import SameObjects
from ._separator import max_margin_separator, soft_margin_separator
from ._threads import one_blas_thread
from ._trace_lemmas import data_gated
from ._validate import (check_choice, check_data, check_gamma, check_order, check_positive,
                        check_vector, check_w_star, finite_float64)

__all__ = ["AuditReport", "audit"]


@dataclass
class AuditReport:
    visits: int
    updates: int
    gamma: float | None
    R: float | None
    checks: int
    rule_violations: int
    lemma_violations: int
    violations: list = field(default_factory=list)
    monitor: dict | None = None
    td_violations: int = 0
    separable: bool = True
    undetermined: int = 0  # visits whose rule decision rounding may explain: not violations
    undetermined_visits: list = field(default_factory=list)
    # what the many rule findings have in common, with the option that would explain them
    patterns: list = field(default_factory=list)
    notes: list = field(default_factory=list)  # accepted inputs worth a word (a rounded gamma)
    rule: dict = field(default_factory=dict)  # the rule audited: w0, eta, bias, arithmetic

    @property
    def ok(self) -> bool:
        return not self.violations

    def as_dict(self) -> dict:
        return {"violations": self.violations, "visits": self.visits, "updates": self.updates,
                "rule_violations": self.rule_violations,
                "lemma_violations": self.lemma_violations,
                "td_violations": self.td_violations,
                "undetermined": self.undetermined,
                "undetermined_visits": self.undetermined_visits,
                "patterns": self.patterns, "notes": self.notes, "rule": self.rule,
                "checks": self.checks,
                "separable": self.separable,
                "gamma": self.gamma, "R": self.R,
                "monitored": (self.monitor or {}).get("monitored", []),
                "not_monitorable": (self.monitor or {}).get("not_monitorable", [])}


def by_visit(findings) -> list:
    """Findings in visit order, those at no visit (the run's constants) first."""
    return sorted(findings, key=lambda f: f["visit"] if f["visit"] is not None else -1)


@dataclass(frozen=True)
class _Arith:
    """The floating-point format of the audited implementation's arithmetic."""

    name: str
    u: float  # unit roundoff
    tiny: float  # the smallest subnormal: an underflowing product rounds by less
    bits: int  # significand bits
    lo_min: int  # the exponent of the smallest subnormal
    hi_max: int  # every finite value is below 2^hi_max
    dtype: type

    def gam(self, n: int) -> float:
        return n * self.u / (1.0 - n * self.u)


_F64 = _Arith("float64", 2.0 ** -53, 2.0 ** -1074, 53, -1074, 1024, np.float64)
_F32 = _Arith("float32", 2.0 ** -24, 2.0 ** -149, 24, -149, 128, np.float32)


def check_weights(w, T: int, n: int, d: int, bias: bool = False) -> np.ndarray:
    """A trace's weights: (T, d) finite numbers, d + 1 columns with a bias column."""
    dims = f"{d + 1} (d + 1: the bias column)" if bias else f"{d}"
    W = np.asarray(w)
    if W.ndim != 2 or W.shape != (T, d + bias) or W.dtype.kind not in "biuf":
        hint = ("; a bias column? audit with --bias (bias=True)" if not bias and W.ndim == 2
                and W.shape == (T, d + 1) else "")
        raise InvalidArgument(f"w: shape {W.shape} does not match order: shape {(T,)} and X: "
                              f"shape {(n, d)} (expected ({T}, {dims})){hint}")
    return finite_float64("w", W)


@one_blas_thread
def audit(X, y, order, w, *, w_star=None, gamma=None, variant: str = "classic",
          separable: bool = True, td=None, lemmas=None, proofs=None,
          include_unverified: bool = False, max_rule: int = 100, w0=None, eta=1.0,
          bias: bool = False, float32: bool = False) -> AuditReport:
    """Check an external trace against the update rule and every monitored lemma.

    td: the implementation's TD after each visit (T,), checked against its definition.
    A visit whose rule decision differs from the exact rule only within the rounding of a
    correct float implementation is counted in ``undetermined`` (and listed, up to max_rule, in
    ``undetermined_visits``), not among the violations: it alone leaves ``ok`` true.

    The rule the trace claims: w[0] = w0 (default 0), w <- w + eta*y*x on an update, with x
    augmented by a constant 1 when ``bias`` (w, w0 and w_star then have d + 1 entries), in
    float32 arithmetic when ``float32`` (unit roundoff 2^-24 in every bound of the
    implementation's arithmetic).  Lemmas that assume w[0] = 0 (w0 != 0) or the step y*x
    (eta != 1) are reported not applicable; the rule checks run.
    """
    X, y, variant, order, ar, eta, declared_eta, w0, W, td = _checked_trace(
        X, y, order, w, variant, eta, w0, td, bias, float32)
    d, T = X.shape[1], order.shape[0]
    ws, stats, gamma, notes = _separator_of(X, y, w_star, check_gamma(gamma), separable, ar)
    # the lemmas that judge the trace (and, without separability, the gamma of the hinge bound)
    nonzero_start = w0 is not None and bool(w0.any())
    judged, gamma, skipped = _judging_lemmas(X, y, order, variant, ws, gamma, separable, lemmas,
                                             proofs, include_unverified,
                                             w0 if nonzero_start else None, eta)
    stats.gamma = gamma
    # The implementation starts from w0 in its own format.
    start = np.zeros(d) if w0 is None else w0.astype(ar.dtype).astype(np.float64)
    Wb = np.vstack([start[None, :], W[:-1]])
    Xv, yv = X[order], y[order]
    changed = (W != Wb).any(axis=1)
    rule, undetermined = _rule_findings(Wb, W, Xv, yv, changed, variant, gamma, ar, eta,
                                        max_rule)
    patterns = _patterns(Wb, W, Xv, yv, changed, variant, gamma, ar, eta, rule, w0, bias)
    ks = np.cumsum(changed) - changed  # updates before each visit
    findings = [_visit_finding("rule", t, ks, order, m) for _, t, m in rule[:max_rule]]
    unsure = [_visit_finding("undetermined", t, ks, order, m) for t, m in undetermined[:max_rule]]
    monitor = make_monitor(judged, include_unverified=include_unverified,
                           on_violation="collect")
    need_td = monitor.needs("TD[k]", "TD[k+1]")
    keeper = _trace_keeper(monitor, stats, y, order, gamma, need_td or td is not None,
                           w0 if nonzero_start else None, ws, eta)
    up = np.flatnonzero(changed)
    K = up.size
    drift = _Drift(Wb[up], W[up], stats.nx_up(order[up]), start, w0, eta, ar, d)
    env_u = _update_env(keeper, stats, ws, drift, Xv[up], yv[up], order[up], d)
    P, eP = keeper.P, keeper.eP
    td_found = [] if td is None else _td_findings(td, P, eP * (1 + _td_scale(ar, d)) / 2,
                                                   order, ks)
    if need_td:
        env_u["TD[k]"] = (P[up], eP[up])
        env_u["TD[k+1]"] = (P[up + 1], eP[up + 1])
    monitor.check_chunk(env_u, 0, K, examples=order[up], visits=up)
    final = _final_env(keeper, stats, ws, W[-1], drift.final, d, K, need_td)
    monitor.check_final_state(final, K, visit=int(up[-1]) if K else None)
    lemma_found = _lemma_findings(monitor.violations)
    findings = by_visit(findings + lemma_found + td_found[:1])
    summary = monitor.summary()
    summary["monitored"] = summary["monitored"] + skipped
    return AuditReport(visits=T, updates=K, gamma=gamma, R=stats.R, checks=monitor.checks,
                       rule_violations=len(rule), lemma_violations=len(lemma_found),
                       violations=findings, monitor=summary,
                       td_violations=len(td_found), separable=bool(separable),
                       undetermined=len(undetermined), undetermined_visits=unsure,
                       patterns=patterns, notes=notes,
                       rule={"w0": None if w0 is None else w0.tolist(), "eta": declared_eta,
                             "bias": bool(bias), "arithmetic": ar.name})


def _checked_trace(X, y, order, w, variant, eta, w0, td, bias: bool, float32: bool):
    """audit's arguments validated: X with its bias column and as the implementation holds it,
    the arithmetic, eta as held and as declared, the start, the weights and td."""
    X, y = check_data(X, y)
    if bias:
        X = np.hstack([X, np.ones((X.shape[0], 1))])
    variant = check_choice("variant", variant, ("classic", "margin"))
    order = check_order(order, X.shape[0], "order")
    declared_eta = eta = check_positive(eta, "eta")
    if float32:
        X, eta = _held_in_float32(X, eta)
    w0 = None if w0 is None else _checked_start(w0, X.shape[1], bias)
    W = check_weights(w, order.shape[0], X.shape[0], X.shape[1] - bias, bias)
    td = None if td is None else _check_td(td, order.shape[0])
    return X, y, variant, order, _F32 if float32 else _F64, eta, declared_eta, w0, W, td


def _held_in_float32(X, eta: float):
    """(X, eta) as a float32 implementation holds them: every entry and the learning rate
    rounded to the nearest float32 (so ``--eta 0.1`` is the float32 0.1, 0.100000001...).

    The trace is then judged on the data the implementation sees (docs/runtime-howto.md,
    ``--float32``): judging it on the float64 data would charge the cast to the learner.
    """
    with np.errstate(over="ignore"):
        X32 = X.astype(np.float32)
        eta32 = float(np.float32(eta))
    big = np.flatnonzero(~np.isfinite(X32).all(axis=1))
    if big.size:
        i = int(big[0])
        j = int(np.flatnonzero(~np.isfinite(X32[i]))[0])
        raise InvalidArgument(f"X[{i}, {j}]={X[i, j].item()!r} is not a finite float32 "
                              f"(float32 stops at 3.4e38): a float32 implementation cannot "
                              f"hold it (audit without --float32)")
    if not eta32 > 0 or not np.isfinite(eta32):
        raise InvalidArgument(f"eta={eta!r} is not a positive finite float32 (it rounds to "
                              f"{eta32!r}): a float32 implementation cannot hold it")
    return X32.astype(np.float64), eta32


def _separator_of(X, y, w_star, gamma, separable: bool, ar: _Arith):
    """(w*, its data statistics, gamma, notes): w* given or computed (max-margin, or soft-margin
    on data not separable), gamma certified on separable data."""
    d = X.shape[1]
    notes = []
    if not separable:
        ws = soft_margin_separator(X, y) if w_star is None else check_w_star(w_star, d)
        return ws, data_stats(X, y, ws), gamma, notes
    ws = max_margin_separator(X, y) if w_star is None else check_w_star(w_star, d)
    stats = data_stats(X, y, ws)
    gamma, note = _certify_gamma(X, y, ws, stats, gamma, ar)
    if note:
        notes.append(note)
    return ws, stats, gamma, notes


def _visit_finding(kind: str, t: int, ks, order, msg) -> dict:
    return {"kind": kind, "lemma": None, "visit": t, "k": int(ks[t]),
            "example": int(order[t]), "message": f"visit {t} (example {int(order[t])}): {msg}"}


def _td_scale(ar, d: int) -> float:
    """A correct implementation's TD is within the same bound in its own arithmetic: every term
    of eP is linear in u (gamma_d <= d u / (1 - d u), one more for casting w_star)."""
    return 1.0 if ar is _F64 else (ar.u / U) * (d + 2) / d / (1 - (d + 2) * ar.u)


class _Drift:
    """The drift a correct implementation may have from the mathematical run w[k] = w0 +
    eta*sum y*x, at the updates (weights A before, B after): D_k = u * sum_{t<=k} ||w~[t]||
    (the rounding of each sum), plus, when eta*y*x itself rounds (eta != 1, or x cast to
    float32), 2u*eta*||x|| per update; a float32 start rounds w0 by u||w0||."""

    def __init__(self, A, B, nx, start, w0, eta, ar, d):
        self.A, self.B, self.nx = A, B, nx
        self.nB = np.sqrt(rowdot(B, B)) * (1 + 4 * U)
        inc = ar.u * self.nB
        if eta != 1.0 or ar is not _F64:
            inc = inc + (2 * ar.u * eta * nx + 2 * d * ar.tiny) * (1 + 4 * ar.u)
        D_init = 0.0 if w0 is None or ar is _F64 else \
            ar.u * float(np.sqrt(w0 @ w0)) * (1 + 4 * U)
        self.D1 = (D_init + np.cumsum(inc)) * SAFETY
        self.D0 = np.concatenate(([D_init * SAFETY], self.D1[:-1]))
        self.nA = np.concatenate(([float(np.sqrt(start @ start)) * (1 + 4 * U)], self.nB[:-1]))
        self.final = float(self.D1[-1]) if A.shape[0] else D_init * SAFETY


def _update_env(keeper, stats, ws, drift, x, yy, idx, d) -> dict:
    """The slots of every update of the trace, each within its rounding and drift bounds."""
    g = gam(d) * SAFETY
    A, B, nx, D0, D1, nA, nB = drift.A, drift.B, drift.nx, drift.D0, drift.D1, drift.nA, drift.nB
    ws_n = np.sqrt(stats.s + stats.e_s) * (1 + 4 * U)

    def slot(U_, V_, extra):
        v = rowdot(U_, V_)
        return v, (g * rowdot(np.abs(U_), np.abs(V_)) + extra) * SAFETY + U * np.abs(v)

    ks_u = np.arange(A.shape[0], dtype=float)
    env_u = dict(keeper.constants())
    env_u.update({
        "k": (ks_u, None), "M": (ks_u, None), "y": (yy, None),
        "<w_star, x>": (stats.m[idx], stats.e_m(idx)), "<x, x>": (stats.nx2[idx],
                                                                 stats.e_nx2(idx)),
        "<w_star, w[k]>": slot(A, np.broadcast_to(ws, A.shape), ws_n * D0),
        "<w_star, w[k+1]>": slot(B, np.broadcast_to(ws, B.shape), ws_n * D1),
        "<w[k], w[k]>": slot(A, A, D0 * (2 * nA + D0)),
        "<w[k+1], w[k+1]>": slot(B, B, D1 * (2 * nB + D1)),
        "<x, w[k]>": slot(A, x, nx * D0), "<x, w[k+1]>": slot(B, x, nx * D1),
        "<w[k], w[k+1]>": slot(A, B, D0 * nB + D1 * nA + D0 * D1),
        "d": keeper.hinge(idx),
    })
    return env_u


def _trace_keeper(monitor, stats, y, order, gamma, need_td: bool, w0, ws, eta) -> Bookkeeper:
    """The bookkeeping of a trace (TD before each visit t: P[t], within eP[t] of the sum), its
    constants and examples judged."""
    n, d = y.shape[0], stats.d
    keeper = Bookkeeper(stats, y, d, order=order, gamma=gamma, n=n, need_td=need_td,
                        start=start_slots(w0, ws, eta))
    monitor.check_constants(keeper.constants())
    monitor.check_examples(keeper.examples(), n)
    return keeper


def _final_env(keeper, stats, ws, wf, Df: float, d: int, K: int, need_td: bool) -> dict:
    """The slots of the trace's final state (weights wf within Df of the mathematical ones)."""
    g = gam(d) * SAFETY
    ws_n = np.sqrt(stats.s + stats.e_s) * (1 + 4 * U)
    nf = float(np.sqrt(wf @ wf))
    final = dict(keeper.constants())
    final.update(final_slots(K, wf @ ws, g * np.abs(wf) @ np.abs(ws) + ws_n * Df,
                             wf @ wf, g * wf @ wf + Df * (2 * nf + Df)))
    if need_td:
        final["TD[k]"] = (np.array([keeper.P[-1]]), np.array([keeper.eP[-1]]))
    return final


def _checked_start(w0, d: int, bias: bool):
    if np.ndim(w0) == 1 and np.shape(w0)[0] == d:
        return check_vector("w0", w0, d, nonzero=False)
    dims = f"{d} (d + 1: the bias column)" if bias else f"{d}"
    raise InvalidArgument(f"w0: shape {np.shape(w0)} does not match the trace's weights: "
                          f"expected ({dims},)")


def _certify_gamma(X, y, ws, stats, gamma, ar):
    """(certified gamma, a note or None).  A given gamma above the exact margin only by the
    rounding of a float evaluation of min_i y_i<w_star, x_i> (numpy's, in the implementation's
    arithmetic) is accepted with a note, and the exact margin (rounded down) is used."""
    if gamma is None:
        return certify_margin(X, y, ws, stats, None), None
    try:
        return certify_margin(X, y, ws, stats, gamma), None
    except InvalidArgument as err:
        refused = err
    n, d = X.shape
    # gamma = min_i f_i with |f_i - e_i| <= B_i (e_i exact) requires gamma <= e_i + B_i for
    # every i.  The audit's own float margins are within b_i of e_i.
    S = np.abs(X) @ np.abs(ws)
    B = (ar.gam(d + 1) * S + (d + 1) * ar.tiny) * SAFETY * (1 + 4 * U)
    b = (gam(d) * S + d * _F64.tiny) * SAFETY * (1 + 4 * U)
    ym = y * (X @ ws)
    rows = np.flatnonzero(ym - b < gamma + B)
    if not rows.size or rows.size * d > 2_000_000:
        raise refused
    g = Fraction(gamma)
    worst = None
    for i in rows.tolist():
        e = int(y[i]) * exact_dot(X[i], ws)
        if g > e + Fraction(float(B[i])):
            raise refused
        if worst is None or e < worst[0]:
            worst = (e, i)
    exact = data_stats(X, y, ws)
    used = certify_margin(X, y, ws, exact, None)
    stats.gamma, stats.gamma_exact = exact.gamma, exact.gamma_exact
    e, i = worst
    return used, (f"gamma={gamma!r} exceeds the exact margin min y<w_star, x> = "
                  f"{_show(e)} (example {i}) by {float(g - e):.3g}, within the rounding of a "
                  f"{ar.name} dot product ({float(B[i]):.3g}): accepted; the lemmas use the "
                  f"exact margin{'' if Fraction(used) == e else ' rounded down'}, {used!r}")


def _lemma_findings(violations) -> list:
    """One finding per fact: a lemma proved in several files (progress, norm_growth) is
    reported once, at its first violation, naming every file whose statement it violates; and
    lemmas whose first violations are the same inequality (the same point, lhs and rhs: one
    statement under several names, as kernel_progress restates progress) are one finding that
    names them all (``also``), not one finding per name."""
    groups: dict = {}
    for v in violations:
        groups.setdefault(v.lemma, []).append(v)
    facts: dict = {}  # (point, lhs, rhs) -> [(name, first violation, sources)]
    for name, vs in groups.items():
        first = min(vs, key=lambda v: (v.visit if v.visit is not None else -1,
                                       v.k if v.k is not None else -1))
        key = (first.where, first.k, first.visit, first.example, first.lhs, first.rhs)
        facts.setdefault(key, []).append((name, first, [v.source for v in vs]))
    out = []
    for same in facts.values():
        name, first, sources = same[0]
        msg = first.message()
        others = [s for s in sources if s != first.source]
        if others:
            msg += f" (also violated as proved in {', '.join(others)})"
        also = [n for n, _, _ in same[1:]]
        if also:
            shown = ", ".join(f"{n} ({f.source})" for n, f, _ in same[1:])
            msg += f"; the same inequality is stated as {shown}: one fact, reported once"
        out.append({"kind": "lemma", "lemma": name, "visit": first.visit, "k": first.k,
                    "example": first.example, "sources": sources, "also": also,
                    "message": msg})
    return out


def _patterns(Wb, W, Xv, yv, changed, variant, gamma, ar: _Arith, eta: float, rule, w0,
              bias: bool = False):
    """What the rule findings have in common, each with the option that would explain it.

    Each candidate explanation is tested by auditing the rule again under it: it is reported
    when it leaves at most a tenth of the flagged visits (and fewer than now).
    """
    nrule = len(rule)
    if not nrule:
        return []
    T, d = W.shape
    out = []
    if T >= 2 and (W == W[-1]).all() and W[-1].any():
        return [constant_trace(W, Wb[0], Xv, yv, eta, nrule)]

    def flagged(Wb_=Wb, eta_=eta, ar_=ar, W_=W, Xv_=Xv, yv_=yv):
        ch = (W_ != Wb_).any(axis=1)
        return len(_rule_findings(Wb_, W_, Xv_, yv_, ch, variant, gamma, ar_, eta_, 0)[0])

    def explains(left):
        return left < nrule and left <= nrule // 10

    eta_c, r, ups = _rate_guess(Wb, W, Xv, yv, changed, eta)
    etas = [eta] + ([eta_c] if eta_c is not None else [])
    ars = [ar] + ([_F32] if ar is _F64 else [])
    best = (nrule, eta, ar)
    for e in etas:
        for a in ars:
            if (e, a) != (eta, ar):
                left = flagged(eta_=e, ar_=a)
                if left < best[0]:
                    best = (left, e, a)
    left, e, a = best
    if explains(left):
        both = e != eta and a is not ar
        opts = " ".join(o for o in (f"--eta {e!r}" if e != eta else "",
                                    "--float32" if a is not ar else "") if o)
        rest = (f"with {opts} the rule holds on every visit" if not left else
                f"with {opts}, {left} of the {nrule} visit(s) remain flagged")
        if e != eta:
            out.append({"pattern": "learning_rate", "suggest": opts if both else f"--eta {e!r}",
                        "explains": nrule - left,
                        "message": f"the steps w[t] - w[t-1] are {e!r} * y*x (median ratio to "
                                   f"y*x over {ups} update(s): {r:.6g}): a learning rate of "
                                   f"{e!r}? audit with --eta {e!r}"
                                   f"{' --float32' if both else ''} ({rest})"})
        if a is not ar:
            rel = _float32_size(Wb, W, Xv, yv, changed, e)
            out.append({"pattern": "float32", "suggest": opts if both else "--float32",
                        "explains": nrule - left,
                        "message": f"the rule findings are differences of float32 size (the "
                                   f"steps differ from w + {_STEP(e)} by at most {rel:.2g} "
                                   f"relative; float32's unit roundoff is 2^-24 = 6e-08): "
                                   f"float32 arithmetic? audit with --float32"
                                   f"{f' --eta {e!r}' if both else ''} ({rest})"})
        eta, ar, nrule = e, a, left
        if not left:
            return out
    # a non-zero start: visit 0 alone breaks the rule, the trace follows it from there
    first = min(t for _, t, _ in rule) if rule else None
    if first == 0 and W[0].any():
        for c in (W[0], W[0] - eta * yv[0] * Xv[0]):  # visit 0 no update / an update
            Wb_ = Wb.copy()
            Wb_[0] = c
            left = flagged(Wb_=Wb_, eta_=eta, ar_=ar)
            if explains(left):
                out.append(_start_pattern(c, d, w0, nrule - left))
                break
    if out:
        return out
    return likely_bugs(Wb, W, Xv, yv, changed, eta,
                       lambda W_, ref, step: _step_tolerance(W_, ref, step, ar, eta),
                       bias, nrule,
                       lambda Wb_, W_, Xv_, yv_: flagged(Wb_=Wb_, W_=W_, Xv_=Xv_, yv_=yv_))


def _rate_guess(Wb, W, Xv, yv, changed, eta: float):
    """(a learning rate other than eta that the steps suggest, or None; the median ratio of
    the steps to y*x; the updates it is taken over): visit 0 aside, the start."""
    up = np.flatnonzero(changed)
    up = up[up > 0] if up.size > 1 else up
    if not up.size:
        return None, float("nan"), 0
    V = yv[up, None] * Xv[up]
    S = W[up] - Wb[up]
    r = float(np.median(rowdot(S, V) / rowdot(V, V)))
    if np.isfinite(r) and r > 0 and abs(r / eta - 1) > 1e-6:
        for digits in range(1, 18):
            c = float(f"{r:.{digits}g}")
            if abs(c - r) <= 1e-4 * r:
                return c, r, up.size
    return None, r, up.size


def _start_pattern(c, d: int, w0, explained: int) -> dict:
    """The finding that the trace starts from c, not from the declared start."""
    shown = (f"w0 = {np.array2string(c, precision=6, threshold=6)}" if d <= 6
             else f"a w0 of norm {float(np.linalg.norm(c)):.6g}")
    declared = "0" if w0 is None else "the declared w0"
    return {"pattern": "start", "suggest": "--w0 W0.npy", "w0": c.tolist(),
            "explains": explained,
            "message": f"the trace does not start from {declared}: visit 0 breaks the rule and "
                       f"the rest of the trace follows it from {shown}; a non-zero start? save "
                       f"the initial weights as W0.npy and audit with --w0 W0.npy"}


def _float32_size(Wb, W, Xv, yv, changed, eta) -> float:
    """The largest relative deviation of an update's step from w + eta*y*x."""
    up = np.flatnonzero(changed)
    if not up.size:
        return 0.0
    ref = Wb[up] + (eta * yv[up])[:, None] * Xv[up]
    scale = np.abs(ref) + np.abs(eta * Xv[up])
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.where(scale > 0, np.abs(W[up] - ref) / scale, 0.0)
    return float(rel.max())


_CHUNK = 1 << 15  # rows per block of the exactness test


def _rule_findings(Wb, W, Xv, yv, changed, variant: str, gamma, ar: _Arith, eta: float,
                   limit: int):
    """The visits that break the variant's update rule, and those the audit cannot decide.

    Returns (rule, undetermined): ``rule`` a list of (what, visit, message), what in "missed",
    "spurious", "step"; ``undetermined`` a list of (visit, message); both in visit order (the
    rule messages after the first ``limit`` are None: they are counted, not shown).

    s = y<w, x> - thr (thr = 0 for classic, (gamma/2)||w|| for margin): |s| > 2E decides the
    rule in floats (E: the distance of any correct float evaluation from the exact s); within
    2E, the exact s decides (docs/runtime-bounds.md, "How the rule is decided").
    """
    T = Wb.shape[0]
    p, E, thr, nb = _decision_bound(Wb, Xv, variant, gamma, ar)
    cond = "y<w,x> <= 0" if variant == "classic" else "w = 0 or y<w,x> <= (gamma/2)||w||"
    nonzero = Wb.any(axis=1)
    s = yv * p - thr
    must = s < -2 * E  # every correct evaluation updates
    must_not = s > 2 * E  # none does
    band = ~(must | must_not)
    if variant == "margin":
        must |= ~nonzero
        must_not &= nonzero
        band &= nonzero
    rows = np.flatnonzero(band)
    exact = np.zeros(T, dtype=bool)
    if variant == "classic" and rows.size:
        ex = np.concatenate([_exact_rows(Wb[rows[i:i + _CHUNK]], Xv[rows[i:i + _CHUNK]], ar)
                             for i in range(0, rows.size, _CHUNK)])
        er = rows[ex]
        exact[er] = True
        must[er] = s[er] <= 0
        must_not[er] = s[er] > 0
        rows = rows[~ex]
    unsure, value = _decide_in_band(rows, Wb, Xv, yv, changed, variant, gamma, E, nb, cond,
                                    must, must_not)
    for t in np.flatnonzero(exact & (must & ~changed | must_not & changed)).tolist():
        value[t] = f"{_show(s[t])}, exact: the rounding-error bound of <w, x> is 0 here"
    step = yv[:, None] * Xv if eta == 1.0 else (eta * yv)[:, None] * Xv
    ref = Wb + step
    dev = np.abs(W - ref)
    tol = _step_tolerance(W, ref, step, ar, eta)
    wrong = changed & (dev > tol).any(axis=1)
    rule = [("missed", t) for t in np.flatnonzero(must & ~changed).tolist()]
    rule += [("spurious", t) for t in np.flatnonzero(must_not & changed).tolist()]
    rule += [("step", t) for t in np.flatnonzero(wrong & ~must_not).tolist()]
    rule.sort(key=lambda r: r[1])
    out = []
    for what, t in rule:
        if len(out) >= limit:
            out.append((what, t, None))
            continue
        shown = value.get(t, repr(float(yv[t] * p[t]) + 0.0))
        out.append((what, t, _rule_message(what, cond, shown, eta, W[t], ref[t], dev[t],
                                           tol[t])))
    return out, sorted(unsure.items())


def _decide_in_band(rows, Wb, Xv, yv, changed, variant, gamma, E, nb, cond, must, must_not):
    """Decide the visits `rows` within 2E of the rule's boundary in exact arithmetic, marking
    `must`/`must_not` where no correct float evaluation takes the trace's decision: (unsure,
    value), the messages of the undecidable visits and the exact values of the decided ones."""
    unsure = {}  # visit -> message
    value = {}  # visit -> the exact value, as the message shows it
    half_g2 = (Fraction(gamma) / 2) ** 2 if variant == "margin" else None
    for t in rows.tolist():
        a = exact_dot(Wb[t], Xv[t]) * int(yv[t])
        b = half_g2 * exact_dot(Wb[t], Wb[t]) if half_g2 is not None else Fraction(0)
        updates = _le_sqrt(a, b)
        if updates == bool(changed[t]):
            continue  # the trace follows the rule in exact arithmetic
        e = Fraction(float(E[t]))
        shown = _show(a) if half_g2 is None else (
            f"{_show(a)}, (gamma/2)||w|| = {float(gamma / 2 * nb[t])!r}")
        where = (f"in exact arithmetic; the rounding bound of a float evaluation is "
                 f"{float(E[t]):.3g}")
        if updates:  # skipped: possible for a correct implementation iff s + E > 0
            if _le_sqrt(a + e, b):
                must[t] = True
                value[t] = f"{shown} {where}"
            else:
                unsure[t] = (f"w did not change, but the rule updates ({cond}: "
                             f"y<w,x> = {shown} {where}): a correct float implementation may "
                             f"skip it")
        elif not _le_sqrt(a - e, b):  # updated: possible iff s - E <= 0
            must_not[t] = True
            value[t] = f"{shown} {where}"
        else:
            unsure[t] = (f"w changed, but the rule does not update (y<w,x> = "
                         f"{shown} {where}): a correct float implementation may update")
    return unsure, value


def _decision_bound(Wb, Xv, variant: str, gamma, ar: _Arith):
    """(p, E, thr, ||w||): the predictions <w, x>, the bound E on the distance between the exact
    s = y<w, x> - thr and any correct float evaluation of it, and the margin rule's threshold
    thr = (gamma/2)||w|| (0 for classic; ||w|| None then)."""
    T, d = Wb.shape
    p = rowdot(Wb, Xv)
    if ar is _F64:
        g = gam(d) * SAFETY
        E = g * rowdot(np.abs(Wb), np.abs(Xv)) + d * _F64.tiny
    else:  # x cast to the implementation's format, then d products and sums in it
        g = ar.gam(d + 1) * SAFETY
        E = ((g * rowdot(np.abs(Wb), np.abs(Xv)) + ar.tiny * (d + np.abs(Wb).sum(axis=1)))
             * (1 + 4 * U))
    if variant == "classic":
        return p, E, np.zeros(T), None
    nb2 = rowdot(Wb, Wb)
    nb = np.sqrt(nb2)
    thr = gamma / 2 * nb
    E = (E + gamma / 2 * (np.sqrt(nb2 * (1 + g)) - np.sqrt(nb2 * (1 - g)))
         + (4 * U if ar is _F64 else 6 * ar.u) * thr)
    return p, E, thr, nb


def _rule_message(what: str, cond: str, shown: str, eta: float, w, ref, dev, tol) -> str:
    """What a rule finding says: a missed or spurious update, or a wrong step (at the
    coordinate furthest over its tolerance: the largest deviation may be within its own)."""
    if what == "missed":
        return f"the rule updates ({cond}: y<w,x> = {shown}) but w did not change"
    if what == "spurious":
        return f"w changed but the rule does not update (y<w,x> = {shown})"
    with np.errstate(divide="ignore", invalid="ignore"):
        over = np.where(dev > tol, dev / np.maximum(tol, np.finfo(float).tiny), -1.0)
    j = int(np.argmax(over))
    return (f"the step w[t] - w[t-1] is not {_STEP(eta)} (coordinate {j}: "
            f"{float(w[j])!r} instead of {float(ref[j])!r}, off by {float(dev[j]):.3g} where "
            f"rounding allows {float(tol[j]):.3g})")


def _STEP(eta: float) -> str:
    return "y*x" if eta == 1.0 else f"eta*y*x (eta = {eta!r})"


def _step_tolerance(W, ref, step, ar: _Arith, eta: float):
    """How far a correct implementation's w + eta*y*x may be from the audit's float64 ref.

    eta = 1 in float64: both are fl(w + y*x) (y*x is exact), up to the rounding mode: 2u|ref|.
    Otherwise the implementation rounds eta*y*x (and casts x to its format: 2u|eta x|) and the
    sum (u|W|), the audit rounds its own ref (2^-53 (|ref| + |eta x|)), and products may
    underflow.
    """
    if eta == 1.0 and ar is _F64:
        return 2 * U * np.abs(ref)
    ex = np.abs(step)
    return ((ar.u * (np.abs(W) + np.abs(ref)) + 2 * ar.u * ex + U * (np.abs(ref) + ex))
            * (1 + 4 * ar.u) + 4 * ar.tiny) * SAFETY


def _exact_rows(A, B, ar: _Arith = None) -> np.ndarray:
    """Rows i where every float64 evaluation of <A[i], B[i]> is exact: any summation order, with
    or without FMA or extended precision (so a correct implementation computes the exact value).
    ar=_F32: every float32 evaluation (53 -> 24 bits, exponents -149 .. 128, A and B float32).
    Exact when S = sum_j |a_j b_j| < 2^(lo + bits), lo the lowest set bit of the products, with
    no underflow or overflow (docs/runtime-bounds.md, "How the rule is decided").
    """
    ar = _F64 if ar is None else ar
    d = A.shape[1]
    la, _ = _bit_range(A)
    lb, _ = _bit_range(B)
    nz = (A != 0) & (B != 0)
    lo = np.where(nz, la + lb, 1 << 20).min(axis=1)
    S = (rowdot(np.abs(A), np.abs(B)) * (1 + 2 * gam(d + 1)) + d * 2.0 ** -1073) * SAFETY
    ok = (lo >= ar.lo_min) & (lo <= ar.hi_max - ar.bits)
    if ar is not _F64:  # and the implementation holds A and B exactly (no cast rounds them)
        with np.errstate(over="ignore", under="ignore"):
            ok &= ((A.astype(ar.dtype) == A) & (B.astype(ar.dtype) == B)).all(axis=1)
    with np.errstate(over="ignore"):
        top = np.ldexp(1.0, np.clip(lo + ar.bits, -1021, 1024))
    return ~nz.any(axis=1) | (ok & (S < top))


def _bit_range(V):
    """(lo, hi) per entry: v = (odd integer) * 2^lo and |v| < 2^hi (for v != 0)."""
    mant, hi = np.frexp(V)
    M = (np.abs(mant) * 2.0 ** 53).astype(np.int64)  # an integer: mant has 53 bits
    tz = np.frexp((M & -M).astype(np.float64))[1] - 1  # trailing zeros of M
    return hi - 53 + tz, hi


def _le_sqrt(v: Fraction, b: Fraction) -> bool:
    """v <= sqrt(b) (b >= 0), exactly."""
    return v <= 0 or v * v <= b


def _show(v) -> str:
    """An exact value as a float repr, marked when the float is rounded."""
    f = float(v) + 0.0  # -0.0 is 0
    return repr(f) if Fraction(f) == v else f"{f!r} (rounded)"


def _check_td(td, T: int) -> np.ndarray:
    arr = np.asarray(td)
    if arr.ndim != 1 or arr.shape[0] != T or arr.dtype.kind not in "biuf":
        raise InvalidArgument(f"td: shape {arr.shape} does not match order: expected ({T},) "
                              f"numbers, the implementation's TD after each visit")
    return finite_float64("td", arr)


def _td_findings(td, P, eP, order, ks) -> list:
    """Visits whose reported TD is certainly not the sum of the hinge losses presented so far.

    P[t+1] is within eP[t+1] of that sum, and so is a correct implementation's own float sum
    (the same bound holds for any summation order): they may differ by 2 eP[t+1].
    """
    exact, err = P[1:], eP[1:]
    bad = np.flatnonzero(np.abs(td - exact) > 2 * err)
    out = []
    for t in bad:
        t = int(t)
        out.append({"kind": "td", "lemma": None, "visit": t, "k": int(ks[t]),
                    "example": int(order[t]),
                    "message": f"visit {t} (example {int(order[t])}): the trace reports "
                               f"TD = {float(td[t])!r}, but the hinge losses max(0, gamma - "
                               f"y<w_star, x>) of the examples presented so far sum to "
                               f"{float(exact[t])!r} (+- {float(2 * err[t]):.3g})"})
    return out


def _judging_lemmas(X, y, order, variant, ws, gamma, separable, lemmas, proofs,
                    include_unverified, w0=None, eta: float = 1.0):
    """(The lemmas a trace is judged by, each gated by its assumptions about the data only;
    gamma: as given, or as the reference run chose it; the status entries of the lemmas that do
    not apply to the declared rule).

    Which lemmas: those that the textbook rule of ``variant`` from the declared start w0 with
    the declared step eta*y*x satisfies on this data and order, as a reference run of the
    correct engine decides (a margin-perceptron trace is not judged by lemmas that assume the
    classic mistake condition).  Gated by data only: the learner's own assumptions (update,
    update condition) are what the audit tests, reported as kind 'rule'; a variant that differs
    from the textbook rule still gets its invariants checked.  Except where the trace declares
    a rule they do not describe: a lemma assuming w[0] = 0 does not apply to a trace with a
    non-zero w0, one assuming the step y*x not to eta != 1 (and one assuming eta*y*x applies
    to every eta); these are listed with the reason.
    """
    base = list(library(proofs) if lemmas is None else lemmas)
    reference = run_online(X, y, RunConfig(
        w_star=ws, gamma=gamma, variant=variant, order=order, cyclic=False, lemmas=base,
        include_unverified=include_unverified, separable=separable, on_violation="collect",
        eta=eta, w0=w0))
    applies = {(s["lemma"], s["source"]) for s in reference.monitor["monitored"]
               if s["applies"]}
    judged, skipped = [], []
    reasons = _declared_rule_reasons(base, w0 is not None, eta)
    for gated, why in zip(data_gated(base), reasons):
        if why is not None:
            skipped.append({"lemma": gated.name, "statement": gated.shown,
                            "source": gated.where, "where": None, "checks": 0,
                            "undetermined": 0, "violations": 0, "applies": False,
                            "inapplicable": why, "loose_assumptions": []})
        elif (gated.name, gated.where) in applies:
            judged.append(gated)
    return judged, (reference.gamma if gamma is None else gamma), skipped


_REASONS: dict = {}  # (SameObjects(lemmas), non-zero start, eta) -> declared_rule_breaks each


def _declared_rule_reasons(lemmas, nonzero_start: bool, eta: float) -> tuple:
    """Why each lemma's assumptions about the learner's start or step do not describe the
    declared rule (None when they do), kept per list of lemma objects and declared rule (the
    fuzzer audits thousands of traces with the same lemmas and rule).  The textbook rule's are
    in each record; another rule's are decided on the lemmas' formulas."""
    key = (SameObjects(lemmas), nonzero_start, eta)
    out = _REASONS.get(key)
    if out is None:
        records = monitored(key[0].objects)
        if not nonzero_start and eta == 1.0:
            out = tuple(rec.default_rule for rec in records)
        else:
            out = tuple(declared_rule_breaks(rec, nonzero_start, eta) for rec in records)
        if len(_REASONS) > 64:
            _REASONS.clear()
        _REASONS[key] = out
    return out

