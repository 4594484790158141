"""The averaged perceptron's learners for the fuzzer: correct ones and realistic mutants.

Plain implementations, independent of the runtime's engine (``_averaged_run``): a learner is
``make(X, y, *, gamma=None) -> step``, where ``step(i)`` visits example i (the classic update
when y<w, x> <= 0) and returns ``(w, average)``: the weights after the visit and the learner's
average after it, fresh arrays.  Each learner declares the averaging convention it implements
(``CONVENTION``): 'after', the mean of the weights after every visit so far (scikit-learn's
``SGDClassifier(average=True)``), or 'in-use', the mean of the weights in use at every visit so
far (seed 003).  ``averaged_trace`` turns a learner and an order into the trace ``novikoff audit
--variant averaged`` reads: w (T, d) and average (T, d).

The mutants are bugs seen in averaged perceptrons: the mean divided by one visit too few
(``average_off_by_one``), not divided at all (``average_undivided``), or taken over the
weights of the updates only (``average_of_updates``: the sum is added to inside the mistake
branch).  Each keeps the textbook training run: only its average is wrong.
"""

from __future__ import annotations

import numpy as np

__all__ = ["averaged_after", "averaged_in_use", "averaged_running_mean", "average_off_by_one",
           "average_undivided", "average_of_updates", "averaged_trace", "AVERAGED_LEARNERS",
           "AVERAGED_MUTANTS", "CONVENTION"]


def _averaged(*, in_use=False, divisor=lambda visits: visits, only_updates=False):
    """An averaged perceptron keeping a running sum: of the weights after each visit (or in
    use at it, ``in_use``), divided by ``divisor(visits)``; ``only_updates`` adds to the sum at
    the updates only (the mutant)."""

    def make(X, y, *, gamma=None):
        d = X.shape[1]
        w = np.zeros(d)
        total = np.zeros(d)
        visits = 0

        def step(i: int):
            nonlocal w, total, visits
            before = w
            mistake = y[i] * (w @ X[i]) <= 0
            if mistake:
                w = w + y[i] * X[i]
            if mistake or not only_updates:
                total = total + (before if in_use else w)
            visits += 1
            return w.copy(), total / divisor(visits)

        return step

    return make


averaged_after = _averaged()
averaged_after.__doc__ = ("The averaged perceptron, the mean of the weights after each visit "
                          "(scikit-learn's convention), by a running sum.")
averaged_in_use = _averaged(in_use=True)
averaged_in_use.__doc__ = ("The averaged perceptron, the mean of the weights in use at each "
                           "visit (seed 003's convention), by a running sum.")


def averaged_running_mean(X, y, *, gamma=None):
    """The 'after' mean by a running mean a <- a + (w - a)/t, as many implementations (and
    scikit-learn, with its scaled coefficients) compute it: other roundings than a sum."""
    d = X.shape[1]
    w = np.zeros(d)
    a = np.zeros(d)
    t = 0

    def step(i: int):
        nonlocal w, a, t
        if y[i] * (w @ X[i]) <= 0:
            w = w + y[i] * X[i]
        t += 1
        a = a + (w - a) / t
        return w.copy(), a.copy()

    return step


# the bug: the visit counter is incremented after the mean is taken (1 at the first visit)
average_off_by_one = _averaged(divisor=lambda visits: max(visits - 1, 1))
average_off_by_one.__doc__ = "Mutant: the mean divided by the visits minus one."
average_undivided = _averaged(divisor=lambda visits: 1)
average_undivided.__doc__ = "Mutant: the running sum returned as the average."
average_of_updates = _averaged(only_updates=True)
average_of_updates.__doc__ = "Mutant: the sum added to only at updates, divided by the visits."

# name -> (make, the convention it implements (the audit's option))
AVERAGED_LEARNERS = {"averaged_after": (averaged_after, "after"),
                     "averaged_in_use": (averaged_in_use, "in-use"),
                     "averaged_running_mean": (averaged_running_mean, "after")}
AVERAGED_MUTANTS = {"average_off_by_one": (average_off_by_one, "after"),
                    "average_undivided": (average_undivided, "after"),
                    "average_of_updates": (average_of_updates, "after")}
CONVENTION = {name: conv for name, (_, conv) in {**AVERAGED_LEARNERS, **AVERAGED_MUTANTS}.items()}
# each learner carries its convention too: the fuzzer's judge audits a run in the convention the
# learner that made it declares
for _make, _convention in (*AVERAGED_LEARNERS.values(), *AVERAGED_MUTANTS.values()):
    _make.convention = _convention


def averaged_trace(learner, X, y, order, *, gamma=None):
    """(W (T, d), A (T, d)): the weights and the average after each visit of ``order``."""
    step = learner(X, y, gamma=gamma)
    d = X.shape[1]
    W = np.empty((len(order), d))
    A = np.empty((len(order), d))
    for t, i in enumerate(order):
        W[t], A[t] = step(int(i))
    return W, A
