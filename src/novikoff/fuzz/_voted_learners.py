"""The voted perceptron's learners for the fuzzer: the textbook one and its mutants.

Plain implementations, independent of the runtime's engine (``runtime._voted_run``).  A learner
is ``make(X, y, *, gamma=None) -> step``, where ``step(i)`` visits example i and returns the
weights after the visit (a fresh array), and ``step.vote()`` returns the vote it keeps:
``(vectors (K+1, d), counts (K+1,))``.  ``voted_trace(learner, X, y, order)`` turns it into the
trace ``novikoff audit --variant voted`` reads (``runtime.audit_voted``): ``order``, ``w`` (T, d)
and the final vote's ``vectors`` and ``counts``.

The vote's counts are the in-use counts (the audit's default convention): each vector counts
the visits at which it was the weights in use, the visit that replaced it included, so the
counts add up to the visits.  Every learner trains the textbook perceptron (its ``w`` trace is
correct); the mutants get the vote wrong:

* ``vote_every_visit``: a vector is appended at every visit, not at each mistake;
* ``vote_count_not_reset``: the new vector's count starts at its predecessor's, not at 0;
* ``vote_survivals_only``: a vector counts only the visits it predicted correctly (off by one
  for each replaced vector: the mistake that replaced it is not counted);
* ``vote_aliased``: the vote appends the weight buffer itself, which the learner then updates
  in place (``vectors.append(w)``, then ``w += y*x``): every vector is the final weights.
"""

from __future__ import annotations

import numpy as np

__all__ = ["voted", "voted_trace", "VOTED_MUTANTS", "vote_every_visit", "vote_count_not_reset",
           "vote_survivals_only", "vote_aliased"]


def voted_trace(learner, X, y, order, *, gamma=None) -> dict:
    """The trace of ``learner`` over ``order``: order (T,), w (T, d) the weights after each
    visit, and the final vote, vectors (K+1, d) and counts (K+1,)."""
    step = learner(X, y, gamma=gamma)
    order = np.asarray(order, dtype=np.int64)
    W = np.empty((order.size, X.shape[1]))
    for t, i in enumerate(order):
        W[t] = step(int(i))
    vectors, counts = step.vote()
    return {"order": order, "w": W, "vectors": vectors, "counts": counts}


def _voted_like(bug: str | None = None):
    """The voted perceptron keeping its vote with one bug (None: the textbook vote)."""

    def make(X, y, *, gamma=None):
        w = np.zeros(X.shape[1])
        vectors = [w.copy()]
        counts = [0]

        def step(i):
            nonlocal w
            mistake = y[i] * (w @ X[i]) <= 0
            if bug != "survivals_only" or not mistake:
                counts[-1] += 1  # w predicted at this visit
            if mistake:
                if bug == "aliased":
                    if len(vectors) == 1:
                        vectors[0] = w  # the buffer, not a copy
                    w += y[i] * X[i]  # in place: every vector appended is this buffer
                    vectors.append(w)
                else:
                    w = w + y[i] * X[i]
                    vectors.append(w.copy())
                counts.append(counts[-1] if bug == "count_not_reset" else 0)
            elif bug == "every_visit":
                vectors.append(w.copy())
                counts.append(0)
            return w.copy()

        def vote():
            return np.array(vectors).reshape(len(vectors), X.shape[1]), np.array(counts,
                                                                                  np.int64)

        step.vote = vote
        return step

    make.__name__ = "voted" if bug is None else f"vote_{bug}"
    make.convention = "in-use"  # how its vote counts (the audit's option)
    return make


voted = _voted_like()
voted.__doc__ = ("The textbook voted perceptron: the classic run from 0, keeping each weight "
                 "vector with the visits at which it was in use.")
vote_every_visit = _voted_like("every_visit")
vote_count_not_reset = _voted_like("count_not_reset")
vote_survivals_only = _voted_like("survivals_only")
vote_aliased = _voted_like("aliased")

# name -> (learner, what the bug is)
VOTED_MUTANTS = {
    "vote_every_visit": (vote_every_visit, "a vector is appended to the vote at every visit, "
                                           "not at each mistake"),
    "vote_count_not_reset": (vote_count_not_reset, "the new vector's count starts at its "
                                                   "predecessor's, not at 0"),
    "vote_survivals_only": (vote_survivals_only, "a vector counts only the visits it predicted "
                                                 "correctly, not the mistake that replaced it"),
    "vote_aliased": (vote_aliased, "the vote appends the weight buffer, updated in place "
                                   "afterwards, instead of a copy"),
}
