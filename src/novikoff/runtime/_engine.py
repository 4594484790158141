"""Monitored perceptron engines: classic (online or cyclic), margin, non-separable runs.

The loop itself (``_kernels``) only logs, per update, the example, the visit and the prediction;
the monitor evaluates every compiled lemma vectorised over each chunk of that log, with the
incremental bookkeeping of ``_bounds`` (O(1) per update).  Every update is checked; the first
violation (in run order) is the one reported.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

import numpy as np

from ..errors import InvalidArgument
from ._bounds import (Bookkeeper, DataStats, certify_margin, check_rows, data_stats,
                      margin_error_per_norm)
from ._kernels import (BAD, BUDGET, CONVERGED, END, FLOOR, FULL, K, NCAND, NLOG, QMAX, T, YMIN,
                       check_backend, data_pass, new_state, run_visits, scan_norms)
from ._lemmas import load_lemmas
from ._monitor import Monitor
from ._scratch import borrowed
from ._separator import hinge_candidates, max_margin_separator, soft_margin_separator
from ._validate import (check_choice, check_data, check_gamma, check_order, check_positive_int,
                        check_w_star)

__all__ = ["RunResult", "run", "VARIANTS", "make_monitor"]

VARIANTS = ("classic", "margin")
_LOG = 1 << 16


@dataclass
class RunResult:
    """What a monitored run did and what its monitor checked."""

    variant: str
    cyclic: bool
    n: int
    d: int
    mistakes: int
    epochs: int
    visits: int
    converged: bool
    w: np.ndarray
    w_star: np.ndarray | None
    gamma: float | None
    R: float | None
    separable: bool
    exact: bool
    checks: int
    monitor: dict | None
    bounds: dict = field(default_factory=dict)  # lemma -> value of its bound on k at the end
    updates: np.ndarray | None = None  # example index of each update (when checks are on)
    td: float | None = None
    seconds: float = 0.0

    @property
    def bound(self) -> float | None:
        """The tightest mistake bound among the monitored lemmas of the form k <= ..."""
        vals = [v for v in self.bounds.values() if v is not None and np.isfinite(v)]
        return min(vals) if vals else None

    @property
    def ratio(self) -> float | None:
        b = self.bound
        return self.mistakes / b if b else None

    def as_dict(self) -> dict:
        return {"variant": self.variant, "cyclic": self.cyclic, "n": self.n, "d": self.d,
                "mistakes": self.mistakes, "epochs": self.epochs, "visits": self.visits,
                "converged": self.converged, "gamma": self.gamma, "R": self.R,
                "separable": self.separable, "exact": self.exact, "bound": self.bound,
                "bounds": self.bounds, "ratio": self.ratio, "checks": self.checks,
                "td": self.td, "seconds": self.seconds, "monitor": self.monitor}


def make_monitor(lemmas=None, *, proofs=None, include_unverified=False,
                 on_violation="raise") -> Monitor:
    """A Monitor of the given lemma objects, or of the lemmas of the given/bundled .proof files."""
    if lemmas is None:
        lemmas = load_lemmas(proofs)
    lemmas = list(lemmas)
    # Compiling is cached per lemma; the monitor's skeleton is cached per list of lemmas.
    key = (tuple(id(lem) for lem in lemmas), bool(include_unverified))
    hit = _TEMPLATES.get(key)
    if hit is None or any(a is not b for a, b in zip(hit[0], lemmas)):
        template = Monitor.from_lemmas(lemmas, include_unverified=include_unverified)
        if len(_TEMPLATES) > 64:
            _TEMPLATES.clear()
        _TEMPLATES[key] = hit = (lemmas, template)
    return hit[1].fresh(on_violation=on_violation)


_TEMPLATES: dict = {}


def _bound_lemmas(monitor: Monitor):
    """Monitored state lemmas that bound the number of updates: k <= e (or M <= e, k < e)."""
    key = ("bound lemmas", tuple(id(inv.check) for inv in monitor.invariants))
    which = monitor.shared.get(key)
    if which is None:
        import sympy as sp

        from ..kernel.formulas import Implication, Relation
        which = []
        for j, inv in enumerate(monitor.invariants):
            st = inv.check.formula  # in the run vocabulary (novikoff.quantities)
            if isinstance(st, Implication):  # `given gamma > 0`: a bound where that holds
                st = st.conclusion
            if inv.where == "state" and isinstance(st, Relation) and st.rel in ("<=", "<") \
                    and isinstance(st.lhs, sp.Symbol) and st.lhs.name in ("k", "M"):
                which.append(j)
        monitor.shared[key] = which
    return [monitor.invariants[j] for j in which]


def choose_hinge_gamma(monitor: Monitor, stats: DataStats, y, order, n, d) -> float:
    """The gamma minimising a monitored hinge bound k <= f(gamma, TD, ...) over one pass."""
    hinge = [inv for inv in _bound_lemmas(monitor) if "TD[k]" in inv.check.slots]
    if not hinge:
        raise InvalidArgument("gamma=None: no monitored hinge-loss lemma (k <= ... TD[k] ...) "
                              "to choose gamma from; give gamma")
    inv = hinge[0]
    counts = np.bincount(order, minlength=n).astype(float)
    margins = y * stats.m
    cand, td = hinge_candidates(margins, counts)
    const = {"R": (np.array([stats.R]), None), "<w_star, w_star>": (np.array([stats.s]), None),
             "d": (np.array([float(d)]), None), "n": (np.array([float(n)]), None)}
    best, best_val = None, np.inf
    for _ in range(4):  # evaluate the lemma's right side, then refine around its minimum
        C = cand.size
        env = dict(const, gamma=(cand, None), **{"TD[k]": (td, None)})
        for key in ("k", "M", "<w_star, w[k]>", "<w[k], w[k]>"):
            env[key] = (np.zeros(C), None)
        rhs = inv.check.evaluate(env, (C,)).rhs
        rhs = np.where(np.isfinite(rhs), rhs, np.inf)
        j = int(np.argmin(rhs))
        if rhs[j] < best_val:
            best, best_val = float(cand[j]), float(rhs[j])
        grid = np.linspace(cand[max(j - 1, 0)], cand[min(j + 1, C - 1)], 257)
        cand = np.unique(np.concatenate([grid[grid > 0], [best]]))
        td = _td_at(margins, counts, cand)
    if best is None:
        raise InvalidArgument(f"gamma=None: the hinge bound of {inv.name} is nowhere finite")
    return best


def _td_at(margins, counts, gammas):
    order = np.argsort(margins)
    sm, sc = margins[order], counts[order]
    C = np.concatenate(([0.0], np.cumsum(sc)))
    S = np.concatenate(([0.0], np.cumsum(sc * sm)))
    j = np.searchsorted(sm, gammas, side="left")
    return np.maximum(gammas * C[j] - S[j], 0.0)


def _prepare(X, y, w_star, gamma, variant, order, cyclic, max_epochs, separable, backend,
             rows=True):
    X, y = check_data(X, y, rows=rows)
    n, d = X.shape
    variant = check_choice("variant", variant, VARIANTS)
    check_backend(backend)
    order = np.arange(n, dtype=np.int64) if order is None else check_order(order, n)
    gamma = check_gamma(gamma)
    max_epochs = check_positive_int("max_epochs", max_epochs)
    if w_star is not None:
        w_star = check_w_star(w_star, d)
    return X, y, n, d, variant, order, gamma, max_epochs, w_star


class _StatsThread:
    """data_pass in a daemon thread; result() joins it and re-raises what it raised."""

    def __init__(self, X, y, ws, st, qw, *arrays_and_params):
        self.st, self.qw, self.error = st, qw, None
        *arrays, backend = arrays_and_params

        def work():
            try:
                data_pass(X, y, ws, st, qw, *arrays, backend=backend)
            except BaseException as exc:  # handed to the caller by result()
                self.error = exc

        self.thread = threading.Thread(target=work, name="novikoff-stats", daemon=True)
        self.thread.start()

    def result(self):
        self.thread.join()
        if self.error is not None:
            raise self.error
        return self.st, self.qw


def _unvisited(order, n: int, default: bool) -> np.ndarray:
    """The examples that the order never visits."""
    if default:
        return np.zeros(0, np.int64)
    seen = np.zeros(n, np.bool_)
    seen[order] = True
    return np.flatnonzero(~seen)


def run(X, y, *, w_star=None, gamma=None, variant: str = "classic", order=None,
        cyclic: bool = True, max_epochs: int | None = None, lemmas=None, proofs=None,
        include_unverified: bool = False, separable: bool = True, checks: bool = True,
        exact: bool = False, on_violation: str = "raise", progress=None,
        all_examples: bool = False, validate: bool = True, backend: str = "auto",
        chunk_visits: int = 1 << 22, stats_thread: bool | None = None) -> RunResult:
    """Run a perceptron on (X, y), checking every monitored lemma at every update.

    variant: 'classic' (update when y<w,x> <= 0) or 'margin' (update when w = 0 or
    y<w,x> <= (gamma/2)||w||).  cyclic: repeat passes over ``order`` until a pass makes no update
    (or max_epochs passes); otherwise one pass over ``order`` (an index sequence, repeats
    allowed).  w_star/gamma: given, or a max-margin separator certified by min y<w*,x> = gamma > 0.
    separable=False: non-separable data, monitored by the hinge-loss lemmas with TD for (w*, gamma)
    (gamma chosen to minimise the hinge bound when not given).  lemmas: objects of load_lemmas (or
    runtime.Lemma); by default the verified lemmas of ``proofs`` or of the bundled library.
    Lemmas about one example (x, y) are checked on the example of every update, or on every
    example of the data with all_examples=True (O(n) more work).
    Raises LemmaViolation at the first violated lemma (on_violation='raise'), InvalidArgument on
    bad input.  validate=False skips checking the entries of X when checks are off (the
    benchmark's bare engine); with checks on they are always checked.
    stats_thread: compute the data's statistics for the trusted checks (gamma, R) in a helper
    thread alongside the first pass (True), or fused into the first pass (False or None; the
    faster on the sizes measured).
    """
    with borrowed() as scratch:
        return _run(X, y, scratch, w_star, gamma, variant, order, cyclic, max_epochs, lemmas,
                    proofs, include_unverified, separable, checks, exact, on_violation,
                    progress, all_examples, validate, backend, chunk_visits, stats_thread)


def _run(X, y, scratch, w_star, gamma, variant, order, cyclic, max_epochs, lemmas, proofs,
         include_unverified, separable, checks, exact, on_violation, progress, all_examples,
         validate, backend, chunk_visits, stats_thread) -> RunResult:
    t_start = time.perf_counter()
    # With checks on, the entries of X are validated by the squared norms the first pass
    # computes anyway (check_rows), unless something needs valid data before the run.
    later = (checks and not exact and w_star is not None and separable and
             not (variant == "margin" and gamma is None))
    default_order = order is None
    X, y, n, d, variant, order, gamma, max_epochs, w_star = _prepare(
        X, y, w_star, gamma, variant, order, cyclic, max_epochs, separable, backend,
        rows=validate and not later)
    monitor = make_monitor(lemmas, proofs=proofs, include_unverified=include_unverified,
                           on_violation=on_violation) if checks else None
    if monitor is not None:
        monitor.example_scope = "all" if all_examples else "updates"
        monitor.scratch = scratch
    need_wstar = checks or (variant == "margin" and gamma is None) or not separable
    precomputed = False
    stats = None
    if need_wstar and w_star is None:
        w_star = (max_margin_separator(X, y, progress=getattr(progress, "phase", None))
                  if separable else soft_margin_separator(X, y))
    if exact:
        from ._exact import run_exact
        if not separable and gamma is None:
            gamma = choose_hinge_gamma(monitor, data_stats(X, y, w_star), y, order, n, d) \
                if monitor else None
            if gamma is None:
                raise InvalidArgument("gamma=None: give gamma for a non-separable run")
        return run_exact(X, y, w_star=w_star, gamma=gamma, variant=variant, order=order,
                         cyclic=cyclic, max_epochs=max_epochs, monitor=monitor,
                         separable=separable, progress=progress, t_start=t_start)
    if need_wstar and (variant == "margin" and gamma is None or not separable):
        stats = data_stats(X, y, w_star)
        precomputed = True
        if separable:
            gamma = certify_margin(X, y, w_star, stats, gamma)
        elif gamma is None:
            gamma = choose_hinge_gamma(monitor, stats, y, order, n, d) if monitor else None
            if gamma is None:
                raise InvalidArgument("gamma=None: give gamma for a non-separable run")
        stats.gamma = gamma
    if variant == "margin" and gamma is None:
        raise InvalidArgument("gamma=None: the margin perceptron needs gamma")
    L = order.shape[0]
    if cyclic:
        if max_epochs is None and not separable:
            max_epochs = 100
        t_end = max_epochs * L if max_epochs else np.iinfo(np.int64).max // 2
    else:
        t_end = L
    w = np.zeros(d)
    ws = w_star if w_star is not None else np.zeros(d)
    cap = _LOG if checks else 0
    log_i = scratch.array("log.i", cap, np.int64)
    log_t = scratch.array("log.t", cap, np.int64)
    log_p = scratch.array("log.p", cap)
    log_m = scratch.array("log.m", cap)  # <w_star, x> and ||x||^2 of each update's example
    log_q = scratch.array("log.q", cap)
    fused = checks and not precomputed
    # <w_star, x_i> and ||x_i||^2 of every example are kept only when every example is checked;
    # otherwise the first pass keeps their extremes (gamma, R) and the candidates for the
    # minimum margin, and the update log brings the updates' own.
    keep_all = fused and all_examples
    stat_m = np.empty(n if keep_all else 0)
    stat_q = np.empty(n if keep_all else 0)
    # Room for every example (pages that are never written cost nothing).
    cand_i = np.empty(n if fused else 0, np.int64)
    cand_y = np.empty(n if fused else 0)
    # Keep the examples within twice the certification's tolerance of the running minimum (or
    # of gamma): with the headroom, the certification seldom has to read the data again.
    cand_gamma = np.nan if gamma is None else float(gamma)
    ws_sq = float(ws @ ws)
    cand_coef = (2.0 if gamma is None else 1.0) * 2.0 * margin_error_per_norm(ws_sq, d)
    helper = None
    # Only on request: since the fused first pass keeps its candidates behind one comparison per
    # row, it measured faster than the helper thread at every size on the 2-core VM (the two
    # threads compete for memory bandwidth; docs/runtime.md, Speed).
    if fused and stats_thread:
        # The statistics of every example, on the second CPU: the first pass then costs what
        # a plain one does.  Its own state arrays: the kernel writes back its state at the end.
        sst, sqw = new_state()
        helper = _StatsThread(X, y, ws, sst, sqw, stat_m, stat_q, cand_i, cand_y, cand_gamma,
                              cand_coef, backend)
    st, qw = new_state()
    half_gamma = (gamma / 2.0) if gamma is not None else 0.0
    keeper = None
    updates = []
    last_visit = [None]

    def start_monitoring():
        nonlocal keeper, stats, gamma
        if stats is None:
            sst_, sqw_ = (st, qw) if helper is None else helper.result()
            bad, qmax, ymin = int(sst_[BAD]), float(sqw_[QMAX]), float(sqw_[YMIN])
            nc = int(sst_[NCAND])
            cand = (cand_i[:nc], cand_y[:nc], float(sqw_[FLOOR]))
            # the helper reads every example; the fused pass those the order visits
            missing = _unvisited(order, n, default_order or helper is not None)
            if missing.size:  # examples the order never visited: all of them are candidates
                mm = X[missing] @ ws
                mq = np.einsum("ij,ij->i", X[missing], X[missing])
                if keep_all:
                    stat_m[missing], stat_q[missing] = mm, mq
                mbad, mmax = scan_norms(mq)
                if mbad >= 0 and (bad < 0 or missing[mbad] < bad):
                    bad = int(missing[mbad])
                qmax = max(qmax, mmax) if mbad < 0 else qmax
                ym = y[missing] * mm
                ymin = min(ymin, float(ym.min()))
                cand = (np.concatenate([cand[0], missing]), np.concatenate([cand[1], ym]),
                        cand[2])
            check_rows(X, stat_q if keep_all else None, scan=(bad, qmax))
            stats = DataStats(stat_m if keep_all else None, stat_q if keep_all else None,
                              ws_sq, d, qmax, ymin, candidates=cand)
            gamma = certify_margin(X, y, ws, stats, gamma)
        keeper = Bookkeeper(stats, y, d, order=order, gamma=gamma, n=n,
                            need_td=monitor.needs("TD[k]", "TD[k+1]"), zero_loss=separable,
                            scratch=scratch)
        monitor.check_constants(keeper.constants())
        if monitor.example_scope == "all" and any(inv.where == "example"
                                                  for inv in monitor.invariants):
            monitor.check_examples(keeper.examples(), n)

    def flush():
        nlog = int(st[NLOG])
        if nlog == 0:
            return
        # The log is the run's scratch memory, reused by the next chunk: the keeper copies the
        # predictions and statistics into the chunk's rows; idx, kept for the result, is copied.
        idx, vis = log_i[:nlog].copy(), log_t[:nlog]
        j0 = keeper.k
        env_u, env_s = keeper.chunk(idx, log_p[:nlog], vis, m=log_m[:nlog], nx2=log_q[:nlog])
        updates.append(idx)
        last_visit[0] = int(vis[-1])
        st[NLOG] = 0
        monitor.check_chunk(env_u, env_s, j0, nlog, examples=idx, visits=vis)

    if checks and precomputed:
        start_monitoring()
    status = None
    while True:
        budget = int(chunk_visits)
        if checks and keeper is None:  # return at the end of the first pass: bad data is
            budget = max(1, min(budget, L - int(st[T])))  # reported, monitoring starts
        status = run_visits(X, y, order, w, ws, st, qw, half_gamma, t_end, cyclic,
                            variant == "margin", log_i, log_t, log_p, log_m, log_q, stat_m,
                            stat_q, cand_i, cand_y, cand_gamma, cand_coef,
                            bool(fused and keeper is None and helper is None), budget,
                            backend=backend, identity=default_order)
        done = status in (CONVERGED, END)
        # stopped only because the first pass ended: the log is judged with the next chunk
        first_pass_ended = status == BUDGET and budget < chunk_visits
        if checks:
            if keeper is None and (int(st[T]) >= L or done):
                start_monitoring()
            if keeper is not None and not first_pass_ended:
                flush()
            elif status == FULL:  # first pass not finished: grow the log
                log_i = np.concatenate([log_i, np.empty_like(log_i)])
                log_t = np.concatenate([log_t, np.empty_like(log_t)])
                log_p = np.concatenate([log_p, np.empty_like(log_p)])
                log_m = np.concatenate([log_m, np.empty_like(log_m)])
                log_q = np.concatenate([log_q, np.empty_like(log_q)])
        if progress is not None:
            progress(int(st[T]), int(st[K]), -(-int(st[T]) // L))
        if done:
            break
        assert status in (FULL, BUDGET)
    visits = int(st[T])
    td_total = None
    bounds = {}
    if checks:
        final = keeper.final_state(visits)
        monitor.check_final_state(final, keeper.k, visit=last_visit[0])
        if "TD[k]" in final:
            td_total = float(final["TD[k]"][0][0])
        for inv in _bound_lemmas(monitor):
            verdict = monitor._eval(inv.check, final, (1,))
            if inv.inapplicable is None and verdict.in_force[0]:
                bounds[inv.name] = float(verdict.rhs[0])
    return RunResult(
        variant=variant, cyclic=cyclic, n=n, d=d, mistakes=int(st[K]),
        epochs=-(-visits // L), visits=visits, converged=status == CONVERGED, w=w,
        w_star=w_star, gamma=gamma, R=stats.R if stats is not None else None,
        separable=separable, exact=False, checks=monitor.checks if monitor else 0,
        monitor=monitor.summary() if monitor else None, bounds=bounds,
        updates=np.concatenate(updates) if updates else (np.zeros(0, np.int64) if checks
                                                         else None),
        td=td_total, seconds=time.perf_counter() - t_start)
