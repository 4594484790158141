"""The voted perceptron (Freund and Schapire), monitored: the classic run keeping every weight
vector w[0], ..., w[K] with its count, the lemmas of proofs/voted.proof and the classic ones
checked at every update.

How its floats are bounded: docs/runtime-bounds.md, "The voted perceptron".
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ..errors import InvalidArgument, NovikoffError
from ._bounds import data_stats
from ._config import visits_allowed
from ._engine import (CONVERGED, _hinge_gamma, _Loop, _prepare, _Watch, check_rate_and_start,
                      make_monitor)
from ._result import RunResult
from ._separator import max_margin_separator, soft_margin_separator

__all__ = ["run_voted", "Vote", "VotedResult", "vote_of_run"]

# The vote keeps every weight vector: refuse to hold more than this many floats (2 GB), rather
# than run out of memory on a run that makes millions of updates.
VOTE_BUDGET = 1 << 28


@dataclass
class Vote:
    """The voted perceptron's classifier: vectors (K+1, d) and their counts (K+1,)."""

    vectors: np.ndarray
    counts: np.ndarray

    def __len__(self) -> int:
        return int(self.counts.shape[0])

    def scores(self, X) -> np.ndarray:
        """sum_k c[k]*sign(<w[k], x>) for every row x of X."""
        X = np.asarray(X, dtype=float)
        if X.ndim != 2 or X.shape[1] != self.vectors.shape[1]:
            raise InvalidArgument(f"X: shape {X.shape} does not match the vote's vectors "
                                  f"(d = {self.vectors.shape[1]})")
        return np.sign(X @ self.vectors.T) @ self.counts.astype(float)

    def predict(self, X) -> np.ndarray:
        """The vote's labels sign(sum_k c[k]*sign(<w[k], x>)), +1 on a tie."""
        return np.where(self.scores(X) >= 0, 1.0, -1.0)


@dataclass
class VotedResult(RunResult):
    """A run's result (RunResult) with its vote."""

    vote: Vote | None = None

    def predict(self, X) -> np.ndarray:
        """The vote's labels for the rows of X."""
        return self.vote.predict(X)

    def as_dict(self) -> dict:
        out = super().as_dict()
        out["vote"] = {"vectors": len(self.vote), "counts": self.vote.counts.tolist()}
        return out


# --------------------------------------------------------------------------- the vote

class _Vote:
    """The vote of the textbook rule, built a chunk of the update log at a time (vectorised):
    the new vectors from the logged examples, the counts from the logged visits."""

    def __init__(self, start, X, y, eta):
        self.X, self.y, self.eta = X, y, eta
        self.rows = 1
        self.blocks = [start[None, :].copy()]
        self.w = start.copy()
        self.k = 0  # updates so far
        self.T = 0  # visits made before the vector in use came into use
        self.V = 0.0  # the counts of the vectors before it, added up
        self.starts = [np.zeros(1, np.int64)]  # visits_before of every vector, per chunk

    def vectors(self, idx) -> np.ndarray:
        """The weights after each of these updates, as the loop computed them."""
        self.rows += idx.size
        if self.rows * self.w.size > VOTE_BUDGET:
            raise NovikoffError(f"the vote would hold {self.rows:,} vectors of {self.w.size} "
                                f"floats, over the budget of {VOTE_BUDGET:,} floats: bound the "
                                f"run with max_epochs (--max-epochs)")
        rows = (self.eta * self.y[idx])[:, None] * self.X[idx]  # fl((eta*y)*x)
        W = np.cumsum(np.vstack([self.w[None, :], rows]), axis=0)[1:]  # fl(w + step), in turn
        self.blocks.append(W)
        self.w = W[-1].copy()
        return W

    def add(self, idx, visits) -> dict:
        """The voted slots of these updates and of the states before them: the vote's size
        and its counts' running total as the vote holds them (one vector per update, the counts
        from the logged visits)."""
        held = float(self.rows)  # vectors held before these updates
        self.vectors(idx)
        L = idx.size
        T1 = visits.astype(np.int64) + 1
        T0 = np.concatenate(([self.T], T1[:-1]))
        self.starts.append(T1)
        counts = (T1 - T0).astype(float)  # the replaced vectors' counts
        V1 = self.V + np.cumsum(counts)
        V0 = np.concatenate(([self.V], V1[:-1]))
        self.k += L
        self.T = int(T1[-1])
        self.V = float(V1[-1])
        size0 = held + np.arange(L, dtype=float)
        return {"votes[k]": size0, "votes[k+1]": size0 + 1.0, "vote_counts[k]": counts,
                "vote_counts_total[k]": V0, "vote_counts_total[k+1]": V1}

    def final(self, visits: int):
        """The vote after `visits` visits, and its size and counts total in the final state."""
        starts = np.concatenate(self.starts + [np.array([visits], np.int64)])
        vote = Vote(np.vstack(self.blocks), np.diff(starts))
        return vote, float(self.rows), self.V


# --------------------------------------------------------------------------- the monitoring

class _VotedWatch(_Watch):
    """The classic engine's watch, with the vote's slots added to every chunk and state."""

    def __init__(self, monitor, loop, stats, separable, vote):
        self.vote = vote
        super().__init__(monitor, loop, stats, separable)

    def start_values(self) -> dict:  # the vote's constant votes[0] = 1 too
        return {**super().start_values(), "votes[0]": (np.array([1.0]), None)}

    def chunk_env(self, idx, visits, p, m, nx2) -> dict:
        T0 = float(self.vote.T)
        env = super().chunk_env(idx, visits, p, m, nx2)
        for name, v in self.vote.add(idx, visits).items():
            env[name] = (v, None)
        T1 = visits.astype(float) + 1.0  # from the loop's log, not from the vote
        env["visits_before[k]"] = (np.concatenate(([T0], T1[:-1])), None)
        env["visits_before[k+1]"] = (T1, None)
        return env

    def finish(self):
        self.result = self.vote.final(self.loop.visits)
        vote, size, total = self.result
        final = self.keeper.final_state(self.loop.visits)
        final.update({"votes[k]": (np.array([size]), None),
                      "vote_counts_total[k]": (np.array([total]), None),
                      "visits_before[k]": (np.array([float(self.vote.T)]), None)})
        self.monitor.check_final_state(final, self.keeper.k, visit=self.last_visit)
        return float(final["TD[k]"][0][0]) if "TD[k]" in final else None


class _VoteOnly:
    """The update log's reader of an unmonitored run: it builds the vote, nothing else."""

    started = True

    def __init__(self, vote):
        self.vote = vote

    def flush(self, log) -> None:
        if log[0].size:
            self.vote.add(log[0], log[1])


def run_voted(X, y, *, w_star=None, gamma=None, order=None, cyclic: bool = True,
              max_epochs=None, lemmas=None, proofs=None, include_unverified: bool = False,
              separable: bool = True, checks: bool = True, on_violation: str = "raise",
              progress=None, backend: str = "auto", chunk_visits: int = 1 << 22,
              eta: float = 1.0, w0=None) -> VotedResult:
    """The voted perceptron on (X, y): the classic run (``run``'s arguments), keeping every
    weight vector with its count; the lemmas of voted.proof and the classic ones checked at
    every update (see the module docstring).  The result is the run's, with ``vote`` (a Vote:
    ``vectors``, ``counts``, ``predict``); ``mistakes`` is K, the vote holds K + 1 vectors.
    """
    t_start = time.perf_counter()
    default_order = order is None
    X, y, n, d, _, order, gamma, max_epochs, w_star = _prepare(
        X, y, w_star, gamma, "classic", order, max_epochs, backend)
    eta, w0 = check_rate_and_start(eta, w0, d)
    monitor = None
    if checks:
        monitor = make_monitor(lemmas, proofs=proofs, include_unverified=include_unverified,
                               on_violation=on_violation, engine="voted")
        monitor.example_scope = "updates"
    if w_star is None and (checks or not separable):
        w_star = (max_margin_separator(X, y, progress=getattr(progress, "phase", None))
                  if separable else soft_margin_separator(X, y))
    stats = None
    if w_star is not None and not separable:  # gamma is needed before the run
        stats = data_stats(X, y, w_star)
        stats.gamma = gamma = (gamma if gamma is not None else
                               _hinge_gamma(monitor, stats, y, order, n, d))
    t_end = visits_allowed(order, cyclic, max_epochs, separable)
    # The update log is the vote's source: kept with checks off too.
    loop = _Loop(X, y, order, w_star, gamma, "classic", t_end, cyclic, backend, default_order,
                 log=True, first_pass_stats=checks and stats is None, keep_all=False, eta=eta,
                 w0=w0)
    start = np.zeros(d) if w0 is None else w0
    vote = _Vote(start, X, y, eta)
    watch = _VotedWatch(monitor, loop, stats, separable, vote) if checks else _VoteOnly(vote)
    status = loop.run(watch, chunk_visits, progress)
    bounds, td_total = {}, None
    if checks:
        td_total = watch.finish()
        bounds = monitor.bounds()
        the_vote = watch.result[0]
    else:
        the_vote = vote.final(loop.visits)[0]
    if not np.array_equal(the_vote.vectors[-1], loop.w):
        raise NovikoffError("the vote's last vector is not the loop's final weights")
    visits = loop.visits
    summary = monitor.summary() if monitor else None
    if summary is not None:
        summary["votes"] = len(the_vote)
    return VotedResult(
        variant="voted", cyclic=cyclic, n=n, d=d, mistakes=loop.mistakes,
        epochs=-(-visits // order.shape[0]), visits=visits, converged=status == CONVERGED,
        w=loop.w, w_star=w_star, gamma=watch.gamma if checks else gamma,
        R=(watch.stats.R if checks else stats.R if stats is not None else None),
        separable=separable, exact=False, checks=monitor.checks if monitor else 0,
        monitor=summary, bounds=bounds,
        updates=watch.updates() if checks else None, td=td_total,
        seconds=time.perf_counter() - t_start, eta=eta, w0=w0, vote=the_vote)


def vote_of_run(X, y, **kwargs) -> Vote:
    """The vote of an unmonitored voted run (``run_voted(..., checks=False).vote``)."""
    return run_voted(X, y, checks=False, **kwargs).vote
