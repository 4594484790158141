"""Audit a perceptron run made by any implementation, from its trace.

Data: X (n, d), y (n,) in {-1, +1}.  Trace: ``order`` (T,) the example visited at each step,
``w`` (T, d) the weights after each visit (w before the first visit is 0).  A visit where the
weights change is an *update*; k counts updates.

Findings:

* ``rule``: the visit does not follow the variant's update rule (an update where the rule says
  none, a missed update, or a step that is not y*x).  A step may differ from fl(w + y*x) by the
  rounding of a correct implementation.  The decision is judged against the exact value of
  y<w, x> (less the margin rule's threshold): where the rounding-error bound of the prediction
  is zero (every float evaluation of <w, x> is exact: w = 0, integer or small dyadic data and
  weights), ``<= 0`` is decided exactly, so a skipped update at a tie y<w, x> = 0 is a violation;
  elsewhere a decision is a violation only when no correct float evaluation could take it.
* ``undetermined`` (not a violation; ``undetermined`` counts them, ``undetermined_visits`` lists
  the first ones with a message): the trace's decision differs from the rule in exact
  arithmetic, but the exact value lies within the rounding bound of a float evaluation, so a
  correct implementation may have decided as the trace did.  ``ok`` and the exit code ignore
  them (exit 0 when nothing else is found).
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
from fractions import Fraction

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
    undetermined: int = 0  # visits whose rule decision rounding may explain: not violations
    undetermined_visits: list = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.violations

    def as_dict(self) -> dict:
        return {"violations": self.violations, "visits": self.visits, "updates": self.updates,
                "rule_violations": self.rule_violations,
                "lemma_violations": self.lemma_violations,
                "td_violations": self.td_violations,
                "undetermined": self.undetermined,
                "undetermined_visits": self.undetermined_visits, "checks": self.checks,
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
    A visit whose rule decision differs from the exact rule only within the rounding of a
    correct float implementation is counted in ``undetermined`` (and listed, up to max_rule, in
    ``undetermined_visits``), not among the violations: it alone leaves ``ok`` true.
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
    changed = (W != Wb).any(axis=1)
    # ---------------------------------------------------------------- the update rule
    rule, undetermined = _rule_findings(Wb, W, Xv, yv, changed, variant, gamma, g,
                                         max_rule)
    ks = np.cumsum(changed) - changed  # updates before each visit
    findings = []
    for what, t, msg in rule[:max_rule]:
        findings.append({"kind": "rule", "lemma": None, "visit": t, "k": int(ks[t]),
                         "example": int(order[t]),
                         "message": f"visit {t} (example {int(order[t])}): {msg}"})
    unsure = [{"kind": "undetermined", "lemma": None, "visit": t, "k": int(ks[t]),
               "example": int(order[t]),
               "message": f"visit {t} (example {int(order[t])}): {msg}"}
              for t, msg in undetermined[:max_rule]]
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
                       td_violations=len(td_found), separable=bool(separable),
                       undetermined=len(undetermined), undetermined_visits=unsure)


_TINY = 2.0 ** -1074  # the smallest subnormal: an underflowing product or sum rounds by < this
_CHUNK = 1 << 15  # rows per block of the exactness test


def _rule_findings(Wb, W, Xv, yv, changed, variant: str, gamma, g, limit: int):
    """The visits that break the variant's update rule, and those the audit cannot decide.

    Returns (rule, undetermined): ``rule`` a list of (what, visit, message), what in "missed",
    "spurious", "step"; ``undetermined`` a list of (visit, message); both in visit order (the
    rule messages after the first ``limit`` are None: they are counted, not shown).

    s = y<w, x> - thr (thr = 0 for classic, (gamma/2)||w|| for margin); the rule updates when
    the exact s is <= 0.  E bounds the distance between the exact s and any correct float
    evaluation of it (any summation order, with or without FMA; the audit's own included), so
    |s| > 2E decides the rule in floating point.  Within 2E:

    * classic, when every float evaluation of <w, x> is exact (``_exact_rows``: the rounding-error
      bound of the prediction is zero, e.g. w = 0, or integer data with integer weights), the
      computed s is the exact value and decides ``<= 0`` exactly: a skipped update at s = 0 is a
      violation;
    * otherwise the exact s (rational arithmetic, the margin rule's square root decided by
      squaring) decides whether the trace follows the rule.  If it does not, the visit is a
      violation when no correct float evaluation (within E of the exact s) could have taken the
      trace's decision, and *undetermined* when one could: never accepted silently, never called
      a violation.
    """
    T, d = Wb.shape
    p = _rowdot(Wb, Xv)
    E = g * _rowdot(np.abs(Wb), np.abs(Xv)) + d * _TINY
    nonzero = Wb.any(axis=1)
    if variant == "classic":
        thr = np.zeros(T)
        cond = "y<w,x> <= 0"
    else:
        nb2 = _rowdot(Wb, Wb)
        nb = np.sqrt(nb2)
        thr = gamma / 2 * nb
        E = E + gamma / 2 * (np.sqrt(nb2 * (1 + g)) - np.sqrt(nb2 * (1 - g))) + 4 * U * thr
        cond = "w = 0 or y<w,x> <= (gamma/2)||w||"
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
        ex = np.concatenate([_exact_rows(Wb[rows[i:i + _CHUNK]], Xv[rows[i:i + _CHUNK]])
                             for i in range(0, rows.size, _CHUNK)])
        er = rows[ex]
        exact[er] = True
        must[er] = s[er] <= 0
        must_not[er] = s[er] > 0
        rows = rows[~ex]
    unsure = {}  # visit -> message
    value = {}  # visit -> the exact value, as the message shows it
    half_g2 = (Fraction(gamma) / 2) ** 2 if variant == "margin" else None
    for t in rows.tolist():
        a = _exact_dot(Wb[t], Xv[t]) * int(yv[t])
        b = half_g2 * _exact_dot(Wb[t], Wb[t]) if half_g2 is not None else Fraction(0)
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
        else:  # updated: possible iff s - E <= 0
            if not _le_sqrt(a - e, b):
                must_not[t] = True
                value[t] = f"{shown} {where}"
            else:
                unsure[t] = (f"w changed, but the rule does not update (y<w,x> = "
                             f"{shown} {where}): a correct float implementation may update")
    for t in np.flatnonzero(exact & (must & ~changed | must_not & changed)).tolist():
        value[t] = f"{_show(s[t])}, exact: the rounding-error bound of <w, x> is 0 here"
    ref = Wb + yv[:, None] * Xv
    dev = np.abs(W - ref)
    wrong = changed & (dev > 2 * U * np.abs(ref)).any(axis=1)
    rule = [("missed", t) for t in np.flatnonzero(must & ~changed).tolist()]
    rule += [("spurious", t) for t in np.flatnonzero(must_not & changed).tolist()]
    rule += [("step", t) for t in np.flatnonzero(wrong & ~must_not).tolist()]
    rule.sort(key=lambda r: r[1])
    out = []
    for what, t in rule:
        if len(out) >= limit:
            out.append((what, t, None))
            continue
        shown = value.get(t, repr(float(yv[t] * p[t])))
        if what == "missed":
            msg = f"the rule updates ({cond}: y<w,x> = {shown}) but w did not change"
        elif what == "spurious":
            msg = f"w changed but the rule does not update (y<w,x> = {shown})"
        else:
            j = int(np.argmax(dev[t]))
            msg = (f"the step w[t] - w[t-1] is not y*x (coordinate {j}: {float(W[t, j])!r} "
                   f"instead of {float(ref[t, j])!r})")
        out.append((what, t, msg))
    return out, sorted(unsure.items())


def _exact_rows(A, B) -> np.ndarray:
    """Rows i where every float64 evaluation of <A[i], B[i]> is exact: any summation order, with
    or without FMA or extended precision (so a correct implementation computes the exact value).

    Each nonzero product a_j b_j is a multiple of 2^lo (lo: the least, over j, of the sum of the
    exponents of the lowest set bits of a_j and b_j), so is every partial sum over any subset of
    the products, and each of those is at most S = sum_j |a_j b_j| in magnitude: all of them are
    floats (53-bit multiples of 2^lo) when S < 2^(lo + 53), lo >= -1074 (no underflow) and
    lo <= 971 (no overflow).  S is bounded above from its float value (relative gamma_{d+1},
    absolute d 2^-1073 for underflowing products).  A row without a nonzero product (w = 0) is
    exact.
    """
    d = A.shape[1]
    la, _ = _bit_range(A)
    lb, _ = _bit_range(B)
    nz = (A != 0) & (B != 0)
    lo = np.where(nz, la + lb, 1 << 20).min(axis=1)
    S = (_rowdot(np.abs(A), np.abs(B)) * (1 + 2 * gam(d + 1)) + d * 2.0 ** -1073) * SAFETY
    ok = (lo >= -1074) & (lo <= 971)
    with np.errstate(over="ignore"):
        top = np.ldexp(1.0, np.clip(lo + 53, -1021, 1024))
    return ~nz.any(axis=1) | (ok & (S < top))


def _bit_range(V):
    """(lo, hi) per entry: v = (odd integer) * 2^lo and |v| < 2^hi (for v != 0)."""
    mant, hi = np.frexp(V)
    M = (np.abs(mant) * 2.0 ** 53).astype(np.int64)  # an integer: mant has 53 bits
    tz = np.frexp((M & -M).astype(np.float64))[1] - 1  # trailing zeros of M
    return hi - 53 + tz, hi


def _exact_dot(a, b) -> Fraction:
    """<a, b> of two float vectors in exact rational arithmetic."""
    terms = []
    for u, v in zip(a.tolist(), b.tolist()):
        if u and v:
            nu, du = u.as_integer_ratio()
            nv, dv = v.as_integer_ratio()
            terms.append((nu * nv, (du * dv).bit_length() - 1))  # nu nv / 2^k
    if not terms:
        return Fraction(0)
    K = max(k for _, k in terms)
    return Fraction(sum(n << (K - k) for n, k in terms), 1 << K)


def _le_sqrt(v: Fraction, b: Fraction) -> bool:
    """v <= sqrt(b) (b >= 0), exactly."""
    return v <= 0 or v * v <= b


def _show(v) -> str:
    """An exact value as a float repr, marked when the float is rounded."""
    f = float(v)
    return repr(f) if Fraction(f) == v else f"{f!r} (rounded)"


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
