"""Audit a batch perceptron's trace, made by any implementation.

What it reports, and how it bounds the floats it reads: docs/runtime-bounds.md,
"Auditing a batch trace".
"""

from __future__ import annotations

from fractions import Fraction
from itertools import product

import numpy as np

from ..errors import InvalidArgument
from ._audit import AuditReport, _exact_rows, _lemma_findings, _show, by_visit
from ._batch_run import _dot_err, _exact_slot, _Watch, run_batch
from ._bounds import SAFETY, TINY, U, certify_margin, data_stats, exact_dot, gam
from ._engine import make_monitor
from ._library import library
from ._separator import max_margin_separator
from ._threads import one_blas_thread
from ._trace_lemmas import judged_like_a_trace
from ._validate import check_data, check_gamma, check_positive, check_w_star, finite_float64, \
    numeric_array

__all__ = ["audit_batch", "batch_trace"]

_FLEXIBLE = 10  # examples within rounding of 0 in one step: every set of them is tried
_EXACT_TIE_BUDGET = 200_000  # |Y|*d Fraction products for an exact <u, w[k]> at a tie


@one_blas_thread
def audit_batch(X, y, w, *, eta: float = 1.0, w_star=None, gamma=None,
                converged: bool = False, lemmas=None, proofs=None,
                include_unverified: bool = False, max_rule: int = 100) -> AuditReport:
    """Check a batch perceptron's trace against the batch rule and the batch_run lemmas.

    w: (K, d) the weights after each step (from w = 0).  converged: the implementation
    stopped because w[K] misclassifies nothing (checked).  The report counts steps in
    ``visits`` and ``updates`` (each step is an update), the corrections sum m[k] in
    ``rule['corrections']``; each finding's ``visit`` and ``k`` are the step.
    """
    X, y = check_data(X, y)
    n, d = X.shape
    eta = check_positive(eta, "eta")
    W = _check_steps(w, d)
    gamma = check_gamma(gamma)
    if not isinstance(converged, (bool, np.bool_)):
        raise InvalidArgument(f"converged={converged!r} is not a boolean")
    ws = max_margin_separator(X, y) if w_star is None else check_w_star(w_star, d)
    stats = data_stats(X, y, ws)
    gamma = certify_margin(X, y, ws, stats, gamma)
    K = W.shape[0]
    Wb = np.vstack([np.zeros((1, d)), W[:-1]])
    sets, findings, unsure = _rule(X, y, Wb, W, eta, max_rule)
    if converged:
        end = _convergence(X, y, W[-1] if K else np.zeros(d), K)
        if end is not None:
            (findings if end[0] == "rule" else unsure).append(end[1])
    rule_count = len(findings)
    findings = findings[:max_rule]
    # ---------------------------------------------------------------- the lemmas
    base = list(library(proofs) if lemmas is None else lemmas)
    reference = run_batch(X, y, eta=eta, w_star=ws, gamma=gamma, max_epochs=max(K, 1),
                          lemmas=base, include_unverified=include_unverified,
                          on_violation="collect")
    judged = judged_like_a_trace(base, reference)
    monitor = make_monitor(judged, include_unverified=include_unverified,
                           on_violation="collect", engine="batch")
    monitor.example_scope = "updates"
    C = _lemma_checks(monitor, X, y, Wb, W, sets, eta, ws, gamma, stats)
    lemma_found = _lemma_findings(monitor.violations)
    for f in lemma_found:  # a batch monitor counts steps, not visits
        f["visit"] = f["k"]
    violations = by_visit(findings + lemma_found)
    return AuditReport(visits=K, updates=K, gamma=gamma, R=stats.R, checks=monitor.checks,
                       rule_violations=rule_count, lemma_violations=len(lemma_found),
                       violations=violations, monitor=monitor.summary(),
                       undetermined=len(unsure), undetermined_visits=unsure[:max_rule],
                       rule={"variant": "batch", "eta": eta, "steps": K, "corrections": C,
                             "converged": bool(converged)})


def _check_steps(w, d: int) -> np.ndarray:
    W = numeric_array("w", w, f"the weights after each batch step, shape (K, {d})")
    if W.ndim != 2 or W.shape[1] != d:
        raise InvalidArgument(f"w: shape {W.shape} does not match X: expected (K, {d}), the "
                              f"weights after each of the K batch steps")
    return finite_float64("w", W)


# -------------------------------------------------------------------- the rule


def _decisions(X, y, w):
    """(forced, possible, rule, values): the examples every correct implementation counts as
    misclassified by w, those some correct implementation may count, those the exact rule
    counts, and an exact value (Fraction) of y<w, x> for the examples near 0."""
    n, d = X.shape
    p = X @ w
    s = y * p
    E = (gam(d) * SAFETY * (np.abs(X) @ np.abs(w)) + d * TINY) * SAFETY
    forced = s <= -2 * E
    possible = s <= 2 * E
    rule = forced.copy()
    values = {}
    band = np.flatnonzero(possible & ~forced)
    if band.size:
        exact = _exact_rows(np.broadcast_to(w, (band.size, d)), X[band])
        for i, ex in zip(band.tolist(), exact.tolist()):
            if ex:  # every float evaluation is the exact value: a tie is a tie
                forced[i] = possible[i] = rule[i] = s[i] <= 0
                values[i] = Fraction(float(s[i]))
                continue
            a = int(y[i]) * exact_dot(w, X[i])
            e = Fraction(float(E[i]))
            values[i] = a
            rule[i] = a <= 0
            forced[i] = a + e <= 0
            possible[i] = a - e <= 0
    return forced, possible, rule, values


def _step_tolerance(Wb, Wa, ref, XY, u, eta):
    """How far a correct implementation's w + fl(eta*fl(sum y*x)) may be from the audit's own
    float ref, per coordinate: both sum m terms in some order (gamma_m of sum |x|, plus the
    scaling by eta), round the product and the sum."""
    m = XY.shape[0]
    A = np.abs(XY).sum(axis=0)
    return ((2 * eta * gam(m + 1) * A + 2 * U * eta * np.abs(u)
             + U * (np.abs(Wa) + np.abs(ref)) + 4 * TINY) * (1 + 4 * U) * SAFETY)


def _within_every_sum(X, y, Wb, Wa, forced, flexible, eta) -> bool:
    """Whether the step could be the sum over the forced examples and some set of the flexible
    ones: each coordinate within the range such sums span (a necessary condition, checked when
    there are too many flexible examples to try every set)."""
    base = y[forced] @ X[forced]
    contrib = y[flexible][:, None] * X[flexible]
    lo = Wb + eta * (base + np.minimum(contrib, 0).sum(axis=0))
    hi = Wb + eta * (base + np.maximum(contrib, 0).sum(axis=0))
    everything = np.flatnonzero(forced | np.isin(np.arange(X.shape[0]), flexible))
    tol = _step_tolerance(Wb, Wa, np.maximum(np.abs(lo), np.abs(hi)), X[everything],
                          np.abs(base) + np.abs(contrib).sum(axis=0), eta)
    return bool(((Wa >= lo - tol) & (Wa <= hi + tol)).all())


def _matches(X, y, Wb, Wa, Y, eta):
    if Y.size == 0:
        return False, None
    XY = X[Y]
    u = y[Y] @ XY
    ref = Wb + eta * u
    dev = np.abs(Wa - ref)
    tol = _step_tolerance(Wb, Wa, ref, XY, u, eta)
    return bool((dev <= tol).all()), (dev - tol, ref)


def _rule(X, y, Wb, W, eta, limit):
    """(sets, rule findings, undetermined findings): the set Y_k that explains each step (the
    exact rule's set where none does)."""
    K = W.shape[0]
    sets, found, unsure = [], [], []
    acc = np.zeros(X.shape[1])  # the running sum of the u's, for the 'not reset' hint
    for k in range(K):
        forced, possible, rule, values = _decisions(X, y, Wb[k])
        Y_rule = np.flatnonzero(rule)
        flexible = np.flatnonzero(possible & ~forced)
        step = W[k] - Wb[k]
        ok, info = _matches(X, y, Wb[k], W[k], Y_rule, eta)
        if Y_rule.size:
            acc = acc + y[Y_rule] @ X[Y_rule]
        if ok:
            sets.append(Y_rule)
            continue
        if flexible.size > _FLEXIBLE and _within_every_sum(X, y, Wb[k], W[k], forced,
                                                           flexible, eta):
            sets.append(Y_rule)
            unsure.append(_finding("undetermined", k, (
                f"{flexible.size} examples have y<w,x> within the rounding bound of 0: "
                f"the audit does not try every set of them (at most {_FLEXIBLE}), and the "
                f"step lies within the sums such sets could make")))
            continue
        chosen = None
        base = np.flatnonzero(forced)
        for pick in (product((False, True), repeat=flexible.size)
                     if flexible.size <= _FLEXIBLE else ()):
            Y = np.sort(np.concatenate([base, flexible[np.array(pick, dtype=bool)]]))
            if _matches(X, y, Wb[k], W[k], Y, eta)[0]:
                chosen = Y
                break
        if chosen is not None:
            sets.append(chosen)
            differ = sorted(set(chosen.tolist()) ^ set(Y_rule.tolist()))
            shown = ", ".join(f"example {i}: y<w,x> = {_show(values[i])}" for i in differ[:5])
            unsure.append(_finding("undetermined", k, (
                f"the step is w[k] + {_eta(eta)}sum(y*x) over a set that differs from the exact "
                f"rule's at examples within the rounding bound of 0 ({shown}): a correct float "
                f"implementation may count them either way"), example=differ[0]))
            continue
        sets.append(Y_rule)
        if limit and len(found) >= limit:
            found.append(_finding("rule", k, None))
            continue
        if not Y_rule.size and not flexible.size:
            msg = (f"no example is misclassified by w[k] (every y<w,x> > 0): the batch "
                   f"perceptron stops here, but the trace takes step {k}"
                   + ("" if step.any() else " (w does not change)"))
        else:
            (excess, ref) = info if info is not None else (None, Wb[k])
            j = int(np.argmax(excess)) if excess is not None else int(np.argmax(np.abs(step)))
            shown = _members(Y_rule)
            msg = (f"w[k+1] - w[k] is not {_eta(eta)}sum(y*x) over the misclassified examples "
                   f"(m = {Y_rule.size}: {shown}): coordinate {j} is {float(W[k, j])!r} instead "
                   f"of {float(ref[j])!r}")
            hint = _hint(step, X, y, Y_rule, eta, acc, X.shape[0])
            if hint:
                msg += f"; {hint}"
        found.append(_finding("rule", k, msg))
    return sets, found, unsure


def _hint(step, X, y, Y, eta, acc, n) -> str | None:
    """What the step is instead, when it is a recognisable mistake (a multiple of the right
    step, or the sums of all steps so far)."""
    if not Y.size:
        return None
    u = eta * (y[Y] @ X[Y])
    m = Y.size
    for what, v in (("twice the step: added two times?", 2 * u),
                    (f"the step divided by m = {m}: a mean over the mistakes?", u / m),
                    (f"the step divided by n = {n}: a mean over the examples?", u / n),
                    (f"the step divided by n*m = {n * m}: averaged twice?", u / (n * m)),
                    ("the sum of every step's sum so far: u not reset between steps?",
                     eta * acc)):
        scale = np.abs(v).max()
        if scale > 0 and np.abs(step - v).max() <= 1e-9 * scale and \
                np.abs(v - u).max() > 1e-9 * scale:
            return f"it is {what}"
    return None


def _convergence(X, y, w, K):
    """A trace that says it converged: w[K] must misclassify no example."""
    forced, possible, rule, values = _decisions(X, y, w)
    wrong = np.flatnonzero(forced)
    if wrong.size:
        i = int(wrong[0])
        value = _show(values[i]) if i in values else repr(float(y[i] * (X[i] @ w)))
        return "rule", _finding("rule", K, (
            f"the trace stops as converged, but w[{K}] misclassifies {wrong.size} example(s) "
            f"({_members(wrong)}; example {i}: y<w,x> = {value}): the batch perceptron stops "
            f"only when no example is misclassified"), example=i)
    near = np.flatnonzero(rule)
    if near.size:
        i = int(near[0])
        return "undetermined", _finding("undetermined", K, (
            f"the trace stops as converged; w[{K}] misclassifies example {i} in exact "
            f"arithmetic (y<w,x> = {_show(values[i])}) within the rounding bound of 0: a correct "
            f"float implementation may stop"), example=i)
    return None


def _members(Y) -> str:
    shown = ", ".join(str(int(i)) for i in Y[:8])
    return f"examples {shown}{', ...' if Y.size > 8 else ''}" if Y.size else "none"


def _eta(eta: float) -> str:
    return "" if eta == 1.0 else f"{eta!r}*"


def _finding(kind, k, msg, example=None) -> dict:
    return {"kind": kind, "lemma": None, "visit": k, "k": k, "example": example,
            "message": None if msg is None else f"step {k}: {msg}"}


# -------------------------------------------------------------------- the lemmas


class _TraceSteps(_Watch):
    """The batch engine's watch fed from a trace's steps: at a tie, <u, w~[k]> exactly from the
    trace's own weights plus their drift (the trace has no mathematical twin); an overflowing
    slot is not refused, its infinite bound decides nothing."""

    def __init__(self, monitor, X, y, eta, ws, gamma, stats):
        super().__init__(monitor, X.shape[0], X.shape[1], ws, gamma, stats.R, eta, stats)
        self.X, self.y = X, y

    def inner_u_w(self, w, u, Y, K: int, u_bounds, W0: float):
        nu, e_U = u_bounds
        uw, e_uw = float(u @ w), _dot_err(self.d, nu, e_U, W0, self.D)
        if uw + e_uw > 0 and Y.size * self.d <= _EXACT_TIE_BUDGET:
            # obtuse at a tie (always at w = 0): <u, w~[k]> exactly, plus the drift of w~[k]
            exact = sum((int(self.y[t]) * exact_dot(self.X[t], w) for t in Y.tolist()),
                        Fraction(0))
            uw, e_x = _exact_slot(exact, self.eta)
            e_uw = e_x + (nu + e_U) * self.D * SAFETY
        return uw, e_uw

    def refuse_overflow(self, w_new, slots: dict, K: int) -> None:
        pass


def _lemma_checks(monitor, X, y, Wb, W, sets, eta, ws, gamma, stats) -> int:
    """Feed the monitor the slots of every step, as the engine's watch does, from the trace's
    weights with the drift of a correct implementation; the total m."""
    watch = _TraceSteps(monitor, X, y, eta, ws, gamma, stats)
    for k, Y in enumerate(sets):
        u = y[Y] @ X[Y] if Y.size else np.zeros(X.shape[1])
        watch.step(Wb[k], W[k], u, Y, k)
    watch.finish(watch.state, watch.C, watch.Q)
    return int(watch.C)


# -------------------------------------------------------------------- engine runs


def batch_trace(result) -> dict:
    """The trace of a ``run_batch(..., keep_trace=True)`` result, as ``audit_batch`` reads it
    (and ``np.savez(path, **batch_trace(result))`` writes it): w (K, d), converged."""
    steps = getattr(result, "steps", None)
    if steps is None:
        raise InvalidArgument("result: no step weights recorded (run_batch(..., "
                              "keep_trace=True))")
    return {"w": np.asarray(steps, dtype=np.float64), "converged": np.array(result.converged)}
