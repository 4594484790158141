"""Audit a perceptron run made by any implementation, from its trace.

Data: X (n, d), y (n,) in {-1, +1}.  Trace: ``order`` (T,) the example visited at each step,
``w`` (T, d) the weights after each visit (w before the first visit is 0).  A visit where the
weights change is an *update*; k counts updates.

Two kinds of findings:

* ``rule``: the visit does not follow the variant's update rule (an update where the rule says
  none, a missed update, or a step that is not y*x).  Decisions within the rounding bound of
  the prediction are accepted either way, and a step may differ from fl(w + y*x) by the rounding
  of a correct implementation.
* ``lemma``: a lemma statement evaluated on the trace's own weights is certainly false.  Lemmas
  are checked whatever the rule findings: a variant that legitimately differs from the textbook
  rule still has its invariants checked, as long as its setting's assumptions hold.
* ``td`` (when the trace reports ``td`` (T,), the implementation's TD after each visit): the
  reported value is certainly not the sum of max(0, gamma - y<w_star, x>) over the examples
  presented so far.  The first such visit is reported; td_violations counts them all.

Separable data (the default): w_star (given, or a max-margin separator) is certified to separate
the data with margin gamma.  separable=False: no margin is certified; the hinge-loss lemmas judge
the trace, with TD for (w_star, gamma) over the examples presented; w_star is given or a
soft-margin separator, gamma given or the one minimising a monitored hinge bound (as ``run``).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from ..errors import InvalidArgument
from ._bounds import SAFETY, U, Bookkeeper, certify_margin, data_stats, gam
from ._compile import Unbindable, compile_formula
from ._engine import VARIANTS, make_monitor, run
from ._lemmas import load_lemmas
from ._monitor import as_lemma
from ._separator import max_margin_separator, soft_margin_separator
from ._validate import check_choice, check_data, check_gamma, check_order, check_w_star

__all__ = ["AuditReport", "audit", "audit_files"]


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

    @property
    def ok(self) -> bool:
        return not self.violations

    def as_dict(self) -> dict:
        return {"violations": self.violations, "visits": self.visits, "updates": self.updates,
                "rule_violations": self.rule_violations,
                "lemma_violations": self.lemma_violations,
                "td_violations": self.td_violations, "checks": self.checks,
                "separable": self.separable,
                "gamma": self.gamma, "R": self.R,
                "monitored": (self.monitor or {}).get("monitored", []),
                "not_monitorable": (self.monitor or {}).get("not_monitorable", [])}


def _rowdot(A, B):
    return np.einsum("ij,ij->i", A, B)


def audit(X, y, order, w, *, w_star=None, gamma=None, variant: str = "classic",
          separable: bool = True, td=None, lemmas=None, proofs=None,
          include_unverified: bool = False, max_rule: int = 100) -> AuditReport:
    """Check an external trace against the update rule and every monitored lemma.

    td: the implementation's TD after each visit (T,), checked against its definition.
    """
    X, y = check_data(X, y)
    n, d = X.shape
    variant = check_choice("variant", variant, VARIANTS)
    order = check_order(order, n, "order")
    W = np.asarray(w)
    if W.ndim != 2 or W.shape != (order.shape[0], d) or W.dtype.kind not in "biuf":
        raise InvalidArgument(f"w: shape {W.shape} does not match order: shape {order.shape} "
                              f"and X: shape {X.shape} (expected ({order.shape[0]}, {d}))")
    W = np.ascontiguousarray(W, dtype=np.float64)
    if not np.isfinite(W).all():
        t, j = (int(v) for v in np.argwhere(~np.isfinite(W))[0])
        raise InvalidArgument(f"w[{t}, {j}]={W[t, j].item()!r} is not finite")
    gamma = check_gamma(gamma)
    T = order.shape[0]
    if td is not None:
        td = _check_td(td, T)
    if separable:
        ws = max_margin_separator(X, y) if w_star is None else check_w_star(w_star, d)
        stats = data_stats(X, y, ws)
        gamma = certify_margin(X, y, ws, stats, gamma)
    else:
        ws = soft_margin_separator(X, y) if w_star is None else check_w_star(w_star, d)
        stats = data_stats(X, y, ws)
    # the lemmas that judge the trace (and, without separability, the gamma of the hinge bound)
    judged, gamma = _judging_lemmas(X, y, order, variant, ws, gamma, separable, lemmas,
                                    proofs, include_unverified)
    stats.gamma = gamma
    Wb = np.vstack([np.zeros((1, d)), W[:-1]])
    Xv, yv = X[order], y[order]
    g = gam(d) * SAFETY
    p = _rowdot(Wb, Xv)
    e_p = g * _rowdot(np.abs(Wb), np.abs(Xv))
    changed = (W != Wb).any(axis=1)
    findings = []
    # ---------------------------------------------------------------- the update rule
    if variant == "classic":
        thr, e_thr = np.zeros(T), np.zeros(T)
    else:
        nb2 = _rowdot(Wb, Wb)
        nb = np.sqrt(nb2)
        thr = gamma / 2 * nb
        e_thr = gamma / 2 * (np.sqrt(nb2 * (1 + g)) - np.sqrt(nb2 * (1 - g))) + 4 * U * thr
    s = yv * p - thr
    must = s < -(e_p + e_thr)
    must_not = s > (e_p + e_thr)
    if variant == "margin":
        must |= ~Wb.any(axis=1)
        must_not &= Wb.any(axis=1)
    ref = Wb + yv[:, None] * Xv
    dev = np.abs(W - ref)
    wrong = changed & (dev > 2 * U * np.abs(ref)).any(axis=1)
    rule = [("missed", t) for t in np.flatnonzero(must & ~changed)]
    rule += [("spurious", t) for t in np.flatnonzero(must_not & changed)]
    rule += [("step", t) for t in np.flatnonzero(wrong & ~must_not)]
    rule.sort(key=lambda r: r[1])
    ks = np.cumsum(changed) - changed  # updates before each visit
    cond = "y<w,x> <= 0" if variant == "classic" else "w = 0 or y<w,x> <= (gamma/2)||w||"
    for what, t in rule[:max_rule]:
        i = int(order[t])
        if what == "missed":
            msg = (f"visit {t} (example {i}): the rule updates ({cond}: y<w,x> = "
                   f"{float(yv[t] * p[t])!r}) but w did not change")
        elif what == "spurious":
            msg = (f"visit {t} (example {i}): w changed but the rule does not update "
                   f"(y<w,x> = {float(yv[t] * p[t])!r})")
        else:
            j = int(np.argmax(dev[t]))
            msg = (f"visit {t} (example {i}): the step w[t] - w[t-1] is not y*x (coordinate "
                   f"{j}: {float(W[t, j])!r} instead of {float(ref[t, j])!r})")
        findings.append({"kind": "rule", "lemma": None, "visit": int(t), "k": int(ks[t]),
                         "example": i, "message": msg})
    # ---------------------------------------------------------------- the lemmas
    monitor = make_monitor(judged, include_unverified=include_unverified,
                           on_violation="collect")
    keeper = Bookkeeper(stats, y, d, order=order, gamma=gamma, n=n,
                        need_td=monitor.needs("TD[k]", "TD[k+1]"))
    monitor.check_constants(keeper.constants())
    monitor.check_examples(keeper.examples(), n)
    up = np.flatnonzero(changed)
    K = up.size
    A, B, x, yy = Wb[up], W[up], Xv[up], yv[up]
    idx = order[up]
    # Drift a correct float implementation may have: D_k = u * sum_{t<=k} ||w~[t]||.
    nB = np.sqrt(_rowdot(B, B)) * (1 + 4 * U)
    D1 = U * np.cumsum(nB) * SAFETY
    D0 = np.concatenate(([0.0], D1[:-1]))
    nA = np.concatenate(([0.0], nB[:-1]))
    nx = stats.nx_up(idx)
    ws_n = np.sqrt(stats.s + stats.e_s) * (1 + 4 * U)

    def slot(U_, V_, extra):
        v = _rowdot(U_, V_)
        return v, (g * _rowdot(np.abs(U_), np.abs(V_)) + extra) * SAFETY + U * np.abs(v)

    ks_u = np.arange(K, dtype=float)
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
    env_s = {key: env_u[key] for key in ("k", "M", "<w_star, w[k]>", "<w[k], w[k]>")}
    env_s.update(keeper.constants())
    if keeper.need_td or td is not None:
        # TD before each visit t: P[t], within eP[t] of the exact sum
        h, e_h = keeper.hinge(order)
        P = np.concatenate(([0.0], np.cumsum(h)))
        eP = np.concatenate(([0.0], np.cumsum(e_h) + U * np.cumsum(np.abs(P[1:])))) * SAFETY
    td_found = _td_findings(td, P, eP, order, ks) if td is not None else []
    if keeper.need_td:
        env_u["TD[k]"] = env_s["TD[k]"] = (P[up], eP[up])
        env_u["TD[k+1]"] = (P[up + 1], eP[up + 1])
    monitor.check_chunk(env_u, env_s, 0, K, examples=idx, visits=up)
    wf = W[-1]
    Df = float(D1[-1]) if K else 0.0
    nf = float(np.sqrt(wf @ wf))
    final = dict(keeper.constants())
    kk = np.array([float(K)])
    final.update({"k": (kk, None), "M": (kk, None),
                  "<w_star, w[k]>": (np.array([wf @ ws]), np.array(
                      [(g * np.abs(wf) @ np.abs(ws) + ws_n * Df) * SAFETY])),
                  "<w[k], w[k]>": (np.array([wf @ wf]), np.array(
                      [(g * wf @ wf + Df * (2 * nf + Df)) * SAFETY]))})
    if keeper.need_td:
        final["TD[k]"] = (np.array([P[-1]]), np.array([eP[-1]]))
    monitor.check_final_state(final, K, visit=int(up[-1]) if K else None)
    lemma_found = []
    for v in monitor.violations:
        lemma_found.append({"kind": "lemma", "lemma": v.lemma, "visit": v.visit, "k": v.k,
                            "example": v.example, "message": v.message()})
    findings = sorted(findings + lemma_found + td_found[:1],
                      key=lambda f: (f["visit"] if f["visit"] is not None else -1))
    return AuditReport(visits=T, updates=K, gamma=gamma, R=stats.R, checks=monitor.checks,
                       rule_violations=len(rule), lemma_violations=len(lemma_found),
                       violations=findings, monitor=monitor.summary(),
                       td_violations=len(td_found), separable=bool(separable))


def _check_td(td, T: int) -> np.ndarray:
    arr = np.asarray(td)
    if arr.ndim != 1 or arr.shape[0] != T or arr.dtype.kind not in "biuf":
        raise InvalidArgument(f"td: shape {arr.shape} does not match order: expected ({T},) "
                              f"numbers, the implementation's TD after each visit")
    arr = np.ascontiguousarray(arr, dtype=np.float64)
    bad = np.flatnonzero(~np.isfinite(arr))
    if bad.size:
        raise InvalidArgument(f"td[{int(bad[0])}]={arr[bad[0]].item()!r} is not finite")
    return arr


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


def _load_arrays(path, what: str):
    """The arrays of an .npz file (a dict), or the array of an .npy file."""
    from pathlib import Path

    path = Path(path)
    try:
        if path.suffix == ".npy":
            return np.load(path, allow_pickle=False)
        with np.load(path, allow_pickle=False) as f:
            return {k: f[k] for k in f.files}
    except (OSError, ValueError) as err:
        raise InvalidArgument(f"{what}={str(path)!r} is not readable ({err})") from None


def _array(arrays, key: str, path, what: str):
    """arrays[key] of a file _load_arrays read (an .npy file's array stands for any key)."""
    if not isinstance(arrays, dict):
        return arrays
    if key not in arrays:
        raise InvalidArgument(f"{what}={str(path)!r} has no array {key!r} "
                              f"(it has {sorted(arrays)})")
    return arrays[key]


def _judging_lemmas(X, y, order, variant, ws, gamma, separable, lemmas, proofs,
                    include_unverified):
    """(The lemmas a trace is judged by, each gated by its assumptions about the data only;
    gamma: as given, or as the reference run chose it).

    Which lemmas: those that the textbook rule of ``variant`` satisfies on this data and order,
    as a reference run of the correct engine decides (a margin-perceptron trace is not judged by
    lemmas that assume the classic mistake condition).  Gated by data only: the learner's own
    assumptions (start, update, update condition) are what the audit tests, reported as kind
    'rule'; a variant that differs from the textbook rule still gets its invariants checked.
    """
    base = list(load_lemmas(proofs) if lemmas is None else lemmas)
    reference = run(X, y, w_star=ws, gamma=gamma, variant=variant, order=order, cyclic=False,
                    lemmas=base, include_unverified=include_unverified, separable=separable,
                    on_violation="collect")
    applies = {(s["lemma"], s["source"]) for s in reference.monitor["monitored"]
               if s["applies"]}
    judged = []
    for obj in base:
        gated = _data_gated(obj)
        if (gated.name, gated.where) in applies:
            judged.append(gated)
    return judged, (reference.gamma if gamma is None else gamma)


_GATED: dict = {}  # id(lemma object) -> (the object, its data-gated Lemma)


def _data_gated(obj):
    """The lemma gated by its data assumptions only; one object per lemma, so that compiled
    monitors are reused across audits."""
    hit = _GATED.get(id(obj))
    if hit is not None and hit[0] is obj:
        return hit[1]
    lem = as_lemma(obj)
    data = tuple((name, f) for name, f in lem.hypotheses if _about_data(f, lem.kinds))
    gated = replace(lem, hypotheses=data)
    if len(_GATED) > 4096:
        _GATED.clear()
    _GATED[id(obj)] = (obj, gated)
    return gated


def _about_data(formula, kinds) -> bool:
    """An assumption about constants or examples, not about the learner's weights.

    One the compiler cannot bind on its own (a definition such as z0 = ...) is kept, for the
    monitor to use as it would in a run.
    """
    try:
        return compile_formula(formula, kinds).where in ("constant", "example")
    except Unbindable:
        return True


def audit_files(data, trace, *, w_star=None, **kwargs) -> AuditReport:
    """audit() on files: data .npz (X, y), trace .npz (order, w, optionally td), optional
    w_star .npy/.npz."""
    arrays = _load_arrays(data, "data")
    X = _array(arrays, "X", data, "data")
    y = _array(arrays, "y", data, "data")
    arrays = _load_arrays(trace, "trace")
    order = _array(arrays, "order", trace, "trace")
    w = _array(arrays, "w", trace, "trace")
    if "td" not in kwargs and isinstance(arrays, dict):
        kwargs["td"] = arrays.get("td")
    ws = None
    if w_star is not None:
        ws = _load_arrays(w_star, "w_star")
        if isinstance(ws, dict):
            if len(ws) != 1:
                raise InvalidArgument(f"w_star={str(w_star)!r} holds {sorted(ws)}: expected one "
                                      f"array")
            ws = next(iter(ws.values()))
    return audit(X, y, order, w, w_star=ws, **kwargs)
