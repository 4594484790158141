"""The batch perceptron's learners for the fuzzer: the textbook one and its mutants.

Plain implementations, independent of the runtime's engine (``_batch_run``): a learner is
``make(X, y, *, eta) -> step``, where ``step()`` makes one batch step and returns the weights
after it (a fresh array), or None when it finds no misclassified example (it stops: converged).
``batch_trace`` turns it into the trace ``novikoff audit --variant batch`` reads: w (K, d), the
weights after each step, and whether the learner stopped on its own.
"""

from __future__ import annotations

import numpy as np

__all__ = ["batch", "batch_trace", "BATCH_MUTANTS", "MAX_STEPS"]

MAX_STEPS = 200  # a fuzzed run stops here if the learner has not converged


def batch_trace(learner, X, y, *, eta: float = 1.0, max_steps: int = MAX_STEPS):
    """(W (K, d), converged): the weights after each step, and whether the learner stopped
    because it found no mistake (not because max_steps ran out)."""
    step = learner(X, y, eta=eta)
    rows = []
    while len(rows) < max_steps:
        w = step()
        if w is None:
            return np.array(rows).reshape(len(rows), X.shape[1]), True
        rows.append(w)
    return np.array(rows).reshape(len(rows), X.shape[1]), False


def _batch_like(mistakes=None, update=None):
    """A batch perceptron with one piece swapped: ``mistakes(y*p)`` the misclassified mask,
    ``update(w, u, state)`` the new weights from the step's sum u."""

    def make(X, y, *, eta=1.0):
        n, d = X.shape
        w = np.zeros(d)
        state = {"acc": np.zeros(d), "n": n}

        def step():
            nonlocal w
            s = y * (X @ w)
            mis = mistakes(s) if mistakes is not None else s <= 0
            if not mis.any():
                return None
            u = y[mis] @ X[mis]
            state["m"] = int(mis.sum())
            state["first"] = int(np.flatnonzero(mis)[0])
            w = update(w, u, eta, state, X, y) if update is not None else w + eta * u
            return w.copy()

        return step

    return make


batch = _batch_like()
batch.__doc__ = "The textbook batch perceptron: w <- w + eta*sum(y*x over the mistakes) from 0."


def _accumulate(w, u, eta, state, X, y):
    state["acc"] = state["acc"] + u  # the bug: the sum is never reset between steps
    return w + eta * state["acc"]


def _twice(w, u, eta, state, X, y):
    w = w + eta * u
    return w + eta * u  # the bug: the step is applied a second time


def _mean_twice(w, u, eta, state, X, y):
    return w + eta * (u / state["n"]) / state["m"]  # the bug: averaged over n and over m


def _first_only(w, u, eta, state, X, y):
    i = state["first"]  # the bug: an online update on the first mistake, not the batch sum
    return w + eta * y[i] * X[i]


def _mutants():
    from ._mutants import Mutant
    return (
        Mutant("batch_accumulate", "batch: the step's sum is not reset between steps",
               _batch_like(update=_accumulate), variant="batch"),
        Mutant("batch_twice", "batch: the step eta*u is added twice",
               _batch_like(update=_twice), variant="batch"),
        Mutant("batch_mean_twice", "batch: the step's sum is divided by n and again by m",
               _batch_like(update=_mean_twice), variant="batch"),
        Mutant("batch_strict", "batch: an example counts as a mistake only if y<w, x> < 0 "
               "(from w = 0 every example is a tie: it stops at once)",
               _batch_like(mistakes=lambda s: s < 0), variant="batch"),
        Mutant("batch_first_only", "batch: each step adds the first mistake's y*x only",
               _batch_like(update=_first_only), variant="batch"),
    )


BATCH_MUTANTS = _mutants()
