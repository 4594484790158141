"""Monitored perceptron engines: classic (online or cyclic), margin, non-separable runs.

The loop itself (``_loops``) only logs, per update, the example, the visit and the prediction;
the monitor evaluates every compiled lemma vectorised over each chunk of that log, with the
incremental bookkeeping of ``_bounds`` (O(1) per update).  Every update is checked; the first
violation (in run order) is the one reported.
"""

from __future__ import annotations

import time
import numpy as np

from ..errors import InvalidArgument
from ._bounds import Bookkeeper, DataStats, certify_margin, check_rows, data_stats, start_slots
from ._config import RunConfig, visits_allowed
from ._exact import run_exact
from ._loops import (BAD, BUDGET, CONVERGED, END, FULL, IMIN, K, NLOG, QMAX, SMALLEST_NORMAL,
                       T, YMIN, YMIN2, check_backend, new_state, run_visits)
from ._library import library
from ._monitor import Monitor, monitor_of
from ._result import RunResult
from ._separator import hinge_candidates, max_margin_separator, soft_margin_separator, td_at
from ._validate import (check_choice, check_data, check_gamma, check_order, check_positive,
                        check_positive_int, check_vector, check_w_star)

__all__ = ["RunResult", "run_online", "ONLINE", "make_monitor"]

ONLINE = ("classic", "margin")  # the update rules of the shared loop
_LOG = 1 << 16
_PROGRESS_EVERY = 0.5  # seconds: a chunk of visits, when progress is shown (docs promise 2 s)


def make_monitor(lemmas=None, *, proofs=None, include_unverified=False,
                 on_violation="raise", engine="single", exact=False) -> Monitor:
    """A Monitor of the given lemma objects, or of the lemmas of the given/bundled .proof files
    (engine: 'single' for runs with one example per update, 'batch' for batch steps; exact:
    compiled from their formulas, which decide irrational ties)."""
    return monitor_of(library(proofs, formulas=exact) if lemmas is None else lemmas,
                      include_unverified=include_unverified, on_violation=on_violation,
                      engine=engine)


def choose_hinge_gamma(monitor: Monitor, stats: DataStats, y, order, n, d) -> float:
    """The gamma minimising a monitored hinge bound k <= f(gamma, TD, ...) over one pass."""
    hinge = [inv for inv in monitor.bound_invariants() if "TD[k]" in inv.check.slots]
    if not hinge:
        raise InvalidArgument("gamma=None: no monitored hinge-loss lemma (k <= ... TD[k] ...) "
                              "to choose gamma from; give gamma")
    inv = hinge[0]
    counts = np.bincount(order, minlength=n).astype(float)
    margins = y * stats.m
    cand = hinge_candidates(margins)
    td = td_at(margins, counts, cand)
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
        td = td_at(margins, counts, cand)
    if best is None:
        raise InvalidArgument(f"gamma=None: the hinge bound of {inv.name} is nowhere finite")
    return best


def _prepare(X, y, w_star, gamma, variant, order, max_epochs, backend, rows=True):
    """The arguments every engine of the shared loop checks, checked: (X, y, n, d, variant,
    order, gamma, max_epochs, w_star)."""
    X, y = check_data(X, y, rows=rows)
    n, d = X.shape
    variant = check_choice("variant", variant, ONLINE)
    check_backend(backend)
    order = np.arange(n, dtype=np.int64) if order is None else check_order(order, n)
    gamma = check_gamma(gamma)
    max_epochs = check_positive_int("max_epochs", max_epochs)
    if w_star is not None:
        w_star = check_w_star(w_star, d)
    return X, y, n, d, variant, order, gamma, max_epochs, w_star


def check_rate_and_start(eta, w0, d: int):
    """(eta as a positive finite float, w0 as a finite float vector of length d, or None for
    the zero vector: a run from 0 takes the default path)."""
    eta = check_positive(eta, "eta")
    if w0 is not None:
        w0 = check_vector("w0", w0, d, nonzero=False)
        with np.errstate(over="ignore"):
            if not np.isfinite(w0 @ w0):
                raise InvalidArgument(f"w0: ||w0||^2 overflows (entries up to "
                                      f"{float(np.abs(w0).max())!r}); rescale it")
        if not w0.any():
            w0 = None
    return eta, w0


def _unvisited(order, n: int, default: bool) -> np.ndarray:
    """The examples that the order never visits."""
    if default:
        return np.zeros(0, np.int64)
    seen = np.zeros(n, np.bool_)
    seen[order] = True
    return np.flatnonzero(~seen)


def run_online(X, y, config: RunConfig = RunConfig()) -> RunResult:
    """Run the classic or margin perceptron on (X, y), checking every monitored lemma at every
    update (the shared loop; ``runtime.run`` reaches it through the table of variants).

    config.variant: 'classic' (update when y<w,x> <= 0) or 'margin' (update when w = 0 or
    y<w,x> <= (gamma/2)||w||).  The other options are RunConfig's; lemmas about one example
    (x, y) are checked on the example of every update, or on every example with all_examples
    (O(n) more work); validate=False skips checking the entries of X when checks are off (the
    benchmark's bare engine); chunk_visits: the visits between two looks at the update log (and
    progress reports).  Raises LemmaViolation at the first violated lemma
    (on_violation='raise'), InvalidArgument on bad input.
    """
    t_start = time.perf_counter()
    c = config
    # With checks on, the entries of X are validated by the squared norms that the first pass
    # computes anyway (check_rows), unless something needs valid data before the run.
    later = (c.checks and not c.exact and c.w_star is not None and c.separable and
             not (c.variant == "margin" and c.gamma is None))
    X, y, n, d, variant, order, gamma, max_epochs, w_star = _prepare(
        X, y, c.w_star, c.gamma, c.variant, c.order, c.max_epochs, c.backend,
        rows=c.validate and not later)
    eta, w0 = check_rate_and_start(c.eta, c.w0, d)
    monitor = None
    if c.checks:
        monitor = make_monitor(c.lemmas, proofs=c.proofs, include_unverified=c.include_unverified,
                               on_violation=c.on_violation, exact=c.exact)
        monitor.example_scope = "all" if c.all_examples else "updates"
    if w_star is None and (c.checks or (variant == "margin" and gamma is None) or
                           not c.separable):
        w_star = (max_margin_separator(X, y, progress=getattr(c.progress, "phase", None))
                  if c.separable else soft_margin_separator(X, y))
    if c.exact:
        if not c.separable and gamma is None:
            gamma = _hinge_gamma(monitor, data_stats(X, y, w_star), y, order, n, d)
        return run_exact(X, y, w_star=w_star, gamma=gamma, variant=variant, order=order,
                         cyclic=c.cyclic, max_epochs=max_epochs, monitor=monitor,
                         separable=c.separable, progress=c.progress, t_start=t_start, eta=eta,
                         w0=w0)
    stats = None
    if w_star is not None and (variant == "margin" and gamma is None or not c.separable):
        # gamma is needed before the run: the data's statistics first
        stats = data_stats(X, y, w_star)
        gamma = (certify_margin(X, y, w_star, stats, gamma) if c.separable else
                 gamma if gamma is not None else _hinge_gamma(monitor, stats, y, order, n, d))
        stats.gamma = gamma
    if variant == "margin" and gamma is None:
        raise InvalidArgument("gamma=None: the margin perceptron needs gamma")
    t_end = visits_allowed(order, c.cyclic, max_epochs, c.separable)
    loop = _Loop(X, y, order, w_star, gamma, variant, t_end, c.cyclic, c.backend,
                 c.order is None, log=c.checks, first_pass_stats=c.checks and stats is None,
                 keep_all=c.checks and stats is None and c.all_examples, eta=eta, w0=w0)
    watch = _Watch(monitor, loop, stats, c.separable) if c.checks else None
    status = loop.run(watch, c.chunk_visits, c.progress)
    return _result(loop, watch, monitor, status, stats, gamma, c.separable, t_start)


def _result(loop, watch, monitor, status, stats, gamma, separable, t_start) -> RunResult:
    td_total = watch.finish() if watch is not None else None
    visits = loop.visits
    return RunResult(
        variant="margin" if loop.margin else "classic", cyclic=loop.cyclic, n=loop.n,
        d=loop.X.shape[1], mistakes=loop.mistakes, epochs=-(-visits // loop.L), visits=visits,
        converged=status == CONVERGED, w=loop.w, w_star=loop.w_star,
        gamma=watch.gamma if watch else gamma,
        R=(watch.stats.R if watch else stats.R if stats is not None else None),
        separable=separable, exact=False, checks=monitor.checks if monitor else 0,
        monitor=monitor.summary() if monitor else None,
        bounds=monitor.bounds() if watch is not None else {},
        updates=watch.updates() if watch else None, td=td_total,
        seconds=time.perf_counter() - t_start, eta=loop.eta, w0=loop.w0)


def _hinge_gamma(monitor, stats, y, order, n, d) -> float:
    if monitor is None:
        raise InvalidArgument("gamma=None: give gamma for a non-separable run")
    return choose_hinge_gamma(monitor, stats, y, order, n, d)


class _Loop:
    """The perceptron's loop (``_loops.run_visits``) and its state, run a chunk at a time.

    With ``log``, every update's example, visit, prediction, <w_star, x> and ||x||^2 go to the
    update log, which the monitor takes when the loop returns.  With ``first_pass_stats``, the
    first pass also computes the data's statistics for the trusted checks (gamma, R), fused with
    the predictions so that X is read once (``first_pass_statistics``).
    """

    def __init__(self, X, y, order, w_star, gamma, variant, t_end, cyclic, backend,
                 default_order, *, log, first_pass_stats, keep_all, eta=1.0, w0=None):
        n, d = X.shape
        self.X, self.y, self.order, self.n = X, y, order, n
        self.L = order.shape[0]
        self.eta, self.w0 = eta, w0
        self.w = np.zeros(d) if w0 is None else w0.copy()
        self.w_star = w_star
        self.ws = w_star if w_star is not None else np.zeros(d)
        self.half_gamma = gamma / 2.0 if gamma is not None else 0.0
        self.margin = variant == "margin"
        self.t_end, self.cyclic, self.backend = t_end, cyclic, backend
        # The default order is the identity, which the compiled loop then does not read: a
        # monitored run is 1.1-1.4x faster so on the benchmark's sizes (bench_runtime.py).
        self.identity = default_order
        self.st, self.qw = new_state(w0)
        cap = _LOG if log else 0
        self.log = [np.empty(cap, np.int64), np.empty(cap, np.int64), np.empty(cap),
                    np.empty(cap), np.empty(cap)]  # example, visit, p, <w_star, x>, ||x||^2
        self.first_pass_stats = first_pass_stats
        self.gamma = gamma
        # ||x_i||^2 of every example is kept only when every example is checked; otherwise the
        # first pass keeps its maximum (R), and the update log brings the updates' own.
        # <w_star, x_i> is kept whenever the first pass computes the statistics: certifying
        # gamma needs every y*m near the smallest, and a separator with many support vectors
        # at one margin (a max-margin w*) puts more than the loop's two smallest there, where
        # recomputing X @ w_star read all of X again (a fifth of the monitor's overhead at
        # 100k x 100).  Writing n floats in the loop costs next to nothing.
        self.stat_m = np.empty(n if keep_all or first_pass_stats else 0)
        self.stat_q = np.empty(n if keep_all else 0)

    @property
    def visits(self) -> int:
        return int(self.st[T])

    @property
    def mistakes(self) -> int:
        return int(self.st[K])

    def step(self, budget: int, first_pass_stats: bool) -> int:
        """Run up to `budget` visits; the loop's status (CONVERGED, END, FULL or BUDGET)."""
        return run_visits(self.X, self.y, self.order, self.w, self.ws, self.st, self.qw,
                          self.half_gamma, self.t_end, self.cyclic, self.margin, *self.log,
                          self.stat_m, self.stat_q, first_pass_stats, budget,
                          backend=self.backend, identity=self.identity, eta=self.eta)

    def run(self, watch, chunk_visits: int, progress) -> int:
        """Run to the end, handing each chunk of the update log to `watch` (if any).  With
        progress, chunks start small and grow while one takes under _PROGRESS_EVERY / 4."""
        most = chunk_visits
        if progress is not None:
            chunk_visits = min(most, 1 << 13)
        while True:
            budget = chunk_visits
            in_first_pass = watch is not None and not watch.started
            if in_first_pass:  # stop at the end of the first pass: monitoring starts there
                budget = max(1, min(budget, self.L - self.visits))
            started = time.perf_counter()
            status = self.step(budget, in_first_pass and self.first_pass_stats)
            done = status in (CONVERGED, END)
            if in_first_pass and (self.visits >= self.L or done):
                watch.start()
            if watch is not None and watch.started:
                # stopped only because the first pass ended: its log goes with the next chunk
                if not (in_first_pass and status == BUDGET and budget < chunk_visits):
                    watch.flush(self.take_log())
            elif status == FULL:  # first pass not finished, nothing judged yet: grow the log
                self.log = [np.concatenate([a, np.empty_like(a)]) for a in self.log]
            if progress is not None:
                progress(self.visits, self.mistakes, -(-self.visits // self.L))
                if status == BUDGET and budget == chunk_visits:
                    took = time.perf_counter() - started
                    chunk_visits = (max(1024, chunk_visits // 2) if took > _PROGRESS_EVERY else
                                    min(most, chunk_visits * 2) if took < _PROGRESS_EVERY / 4
                                    else chunk_visits)
            if done:
                return status

    def take_log(self):
        """(examples, visits, predictions, <w_star, x>, ||x||^2) of the updates logged since
        the last take (the loop overwrites the log next)."""
        nlog = int(self.st[NLOG])
        self.st[NLOG] = 0
        return tuple(a[:nlog].copy() for a in self.log)

    def first_pass_statistics(self) -> DataStats:
        """The data's statistics from the first pass, completed with the examples the order
        never visited; raises InvalidArgument for a bad row."""
        X, y, ws, st, qw = self.X, self.y, self.ws, self.st, self.qw
        keep_all = self.stat_q.shape[0] > 0
        keep_m = self.stat_m.shape[0] > 0
        bad, qmax, ymin, imin = int(st[BAD]), float(qw[QMAX]), float(qw[YMIN]), int(st[IMIN])
        # Every example visited whose y*m is below the second smallest is the smallest's.
        idx, ym = np.array([imin] if imin >= 0 else [], np.int64), np.array([ymin] if imin >= 0 else [])
        missing = _unvisited(self.order, self.n, self.identity)
        if missing.size:  # examples the order never visited: all of them are candidates
            mm = X[missing] @ ws
            mq = np.einsum("ij,ij->i", X[missing], X[missing])
            if keep_m:
                self.stat_m[missing] = mm
            if keep_all:
                self.stat_q[missing] = mq
            ok = (mq >= SMALLEST_NORMAL) & (mq < np.inf)
            if not ok.all():
                bad = bad if bad >= 0 else int(missing[np.argmin(ok)])
            qmax = max(qmax, float(mq.max()))
            ym_missing = y[missing] * mm
            ymin = min(ymin, float(ym_missing.min()))
            idx, ym = np.concatenate([idx, missing]), np.concatenate([ym, ym_missing])
        check_rows(X, bad)
        return DataStats(self.stat_m if keep_m else None, self.stat_q if keep_all else None,
                         float(self.ws @ self.ws), X.shape[1], qmax, ymin,
                         candidates=(idx, ym, float(qw[YMIN2])))


class _Watch:
    """The monitoring of a run: it starts when the first pass ends (the data's statistics are
    then known and gamma certified), then judges every chunk of the update log."""

    def __init__(self, monitor: Monitor, loop: _Loop, stats, separable: bool):
        self.monitor, self.loop, self.stats, self.separable = monitor, loop, stats, separable
        self.gamma = stats.gamma if stats is not None else loop.gamma
        self.keeper = None
        self.chunks = []  # the example of each update, chunk by chunk
        self.last_visit = None
        if stats is not None:  # computed before the run
            self.start()

    @property
    def started(self) -> bool:
        return self.keeper is not None

    def start_values(self) -> dict:
        """The slots known before the first update (a subclass's engine may add its own)."""
        return start_slots(self.loop.w0, self.loop.ws, self.loop.eta)

    def start(self) -> None:
        loop, monitor = self.loop, self.monitor
        if self.stats is None:
            self.stats = loop.first_pass_statistics()
            self.gamma = certify_margin(loop.X, loop.y, loop.ws, self.stats, self.gamma)
        self.keeper = Bookkeeper(self.stats, loop.y, loop.X.shape[1], order=loop.order,
                                 gamma=self.gamma, n=loop.n,
                                 need_td=monitor.needs("TD[k]", "TD[k+1]"),
                                 zero_loss=self.separable,
                                 start=self.start_values())
        monitor.check_constants(self.keeper.constants())
        if monitor.example_scope == "all":
            monitor.check_examples(self.keeper.examples(), loop.n)

    def chunk_env(self, idx, visits, p, m, nx2) -> dict:
        """The slots of a chunk of updates (a subclass's engine may add its own)."""
        return self.keeper.chunk(idx, p, visits, m=m, nx2=nx2)

    def flush(self, log) -> None:
        idx, visits, p, m, nx2 = log
        if idx.size == 0:
            return
        j0 = self.keeper.k
        env = self.chunk_env(idx, visits, p, m, nx2)
        self.chunks.append(idx)
        self.last_visit = int(visits[-1])
        self.monitor.check_chunk(env, j0, idx.size, examples=idx, visits=visits)

    def finish(self):
        """Judge the final state; TD over the whole run (None when not monitored)."""
        final = self.keeper.final_state(self.loop.visits)
        self.monitor.check_final_state(final, self.keeper.k, visit=self.last_visit)
        return float(final["TD[k]"][0][0]) if "TD[k]" in final else None

    def updates(self) -> np.ndarray:
        return np.concatenate(self.chunks) if self.chunks else np.zeros(0, np.int64)
