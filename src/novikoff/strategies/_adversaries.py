"""Adaptive adversaries: choose the next example from the learner's current weights.

An adversary presents examples on which the update test of the algorithm under test fires (a
mistake for the classic perceptron), so every visit should cost the learner an update; the run
stops when no such example is left.  The number of updates divided by (R/gamma)^2 is the
*tightness* of the run: 1.0 means Novikoff's bound is attained.

A *probing* adversary also tests the other side of the update test's boundary: once at each new
weight vector it presents the example on which the test does not fire that lies nearest its
threshold.  A correct learner leaves w unchanged there; a learner whose test is too loose
updates, and the lemma invariants judge that update.  An example the learner declined (no
update) is not presented again until the weights change.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

__all__ = ["Adversary", "GreedyMarginAdversary", "NormGrowthAdversary", "NormShrinkAdversary",
           "MostMistakesAdversary", "FirstMistakeAdversary", "RandomMistakeAdversary", "adversaries",
           "probing_adversaries", "adversarial_run", "cyclic_run", "tightness",
           "textbook_learner", "classic_fires", "margin_fires"]


def textbook_learner(X, y, *, gamma=None) -> Callable[[int], np.ndarray]:
    """The classic perceptron as a step function i -> weights after visiting example i."""
    w = np.zeros(X.shape[1])

    def step(i: int) -> np.ndarray:
        if y[i] * (w @ X[i]) <= 0:
            w[:] = w + y[i] * X[i]
        return w.copy()

    return step


def classic_fires(W, X, y, gamma=None) -> np.ndarray:
    """Mask of the examples on which the classic update test y<w, x> <= 0 fires at w."""
    return y * (X @ W) <= 0


def margin_fires(W, X, y, gamma) -> np.ndarray:
    """Mask of the examples on which the margin perceptron's test fires at w."""
    nw = float(np.sqrt(W @ W))
    if nw == 0:
        return np.ones(len(y), dtype=bool)
    return y * (X @ W) <= (gamma / 2) * nw


@dataclass(frozen=True)
class Adversary:
    """Choose the next example among the candidates (examples on which the update test fires)."""

    name: str = "adversary"
    #: Also present, once at each new w, the example nearest above the update test's threshold.
    probing: bool = False

    def choose(self, w, X, y, w_star, candidates: np.ndarray) -> int:
        raise NotImplementedError

    def probe(self, w, X, y, w_star, outside: np.ndarray) -> int | None:
        """Return the example of ``outside`` (the test does not fire) of smallest y<w, x>.

        Every update test of the perceptron family fires below a threshold on y<w, x>, so this
        is the example a test that is too loose would fire on first.
        """
        if not self.probing or outside.size == 0:
            return None
        m = y[outside] * (X[outside] @ w)
        return int(outside[int(np.argmin(m))])


@dataclass(frozen=True)
class GreedyMarginAdversary(Adversary):
    """Present the candidate of smallest margin y<w*, x>: the least progress per update."""

    name: str = "greedy_margin"

    def choose(self, w, X, y, w_star, candidates):
        m = y[candidates] * (X[candidates] @ w_star)
        return int(candidates[int(np.argmin(m))])


@dataclass(frozen=True)
class NormGrowthAdversary(Adversary):
    """Present the candidate that makes ||w||^2 grow most: 2y<w, x> + ||x||^2 largest."""

    name: str = "norm_growth"

    def choose(self, w, X, y, w_star, candidates):
        Xc = X[candidates]
        g = 2 * y[candidates] * (Xc @ w) + np.einsum("ij,ij->i", Xc, Xc)
        return int(candidates[int(np.argmax(g))])


_SIGNED: list = []  # [(X, y, Z, sq)]: the last dataset's signed rows (X, y held, so ids stay)


def _signed_rows(X, y):
    """Z = y x row-wise and ||z_i||^2, computed once per dataset (an adversary's choose runs at
    every visit of a run on the same X, y); the same arrays as computing them each time."""
    if _SIGNED and _SIGNED[0][0] is X and _SIGNED[0][1] is y and not X.flags.writeable \
            and not y.flags.writeable:
        return _SIGNED[0][2], _SIGNED[0][3]
    Z = y[:, None] * X
    sq = np.einsum("ij,ij->i", Z, Z)
    _SIGNED[:] = [(X, y, Z, sq)]
    return Z, sq


@dataclass(frozen=True)
class NormShrinkAdversary(Adversary):
    """Keep ||w|| small: present the candidate through which ||w||^2 gets smallest soonest.

    A candidate i is scored by the smallest ||w||^2 reachable through it in one or two updates,
    min(||w + z_i||^2, min_j ||w + z_i + z_j||^2) with z = y x (j any example), then by
    ||w + z_i||^2: from w = 0 it starts with the most nearly opposite pair of one class, and
    it takes an update that shrinks ||w|| (2y<w, x> + ||x||^2 < 0) unless another leads lower.
    The margin perceptron's test y<w, x> <= (gamma/2)||w|| scales with ||w||, so where
    ||w|| < 1 a test that forgets the factor fires on examples the correct one declines.  With
    ``probing`` (the default) the adversary also presents, once at each new w, the example
    nearest above the update test's threshold (smallest y<w, x> among those on which it does
    not fire).
    """

    name: str = "norm_shrink"
    probing: bool = True

    def choose(self, w, X, y, w_star, candidates):
        Z, sq = _signed_rows(X, y)
        zw = Z @ w
        Zc = Z[candidates]
        one = w @ w + 2 * zw[candidates] + sq[candidates]          # ||w + z_i||^2
        two = (one[:, None] + 2 * (Zc @ Z.T) + 2 * zw[None, :] + sq[None, :])
        # The smallest ||w||^2 reachable through i in one or two updates.
        score = np.minimum(one, np.min(two, axis=1))
        return int(candidates[np.lexsort((one, score))[0]])


@dataclass(frozen=True)
class MostMistakesAdversary(Adversary):
    """Present the candidate after which the most examples are still mistakes.

    Novikoff's bound caps the number of updates; to come near it the learner must stay wrong
    for long, so the adversary keeps as many examples as it can on the wrong side of w.  Ties
    are broken by the smallest margin under w* (the least progress), or, with a ``seed``, at
    random (seeded, so runs replay): several seeds give several runs of the same adversary.
    """

    name: str = "most_mistakes"
    seed: int | None = None
    _rng: list = field(default_factory=list, compare=False, repr=False)

    def choose(self, w, X, y, w_star, candidates):
        Z = y[:, None] * X
        after = w[None, :] + Z[candidates]
        left = np.sum(after @ Z.T <= 0, axis=1)
        if self.seed is None:
            return int(candidates[np.lexsort((Z[candidates] @ w_star, -left))[0]])
        if not self._rng:
            self._rng.append(np.random.default_rng(self.seed))
        top = np.flatnonzero(left == left.max())
        return int(candidates[top[int(self._rng[0].integers(len(top)))]])


@dataclass(frozen=True)
class FirstMistakeAdversary(Adversary):
    """Present the lowest-index candidate (a cyclic pass that skips correct examples)."""

    name: str = "first_mistake"

    def choose(self, w, X, y, w_star, candidates):
        return int(candidates[0])


@dataclass(frozen=True)
class RandomMistakeAdversary(Adversary):
    """Present a candidate chosen at random (seeded, so runs replay)."""

    name: str = "random_mistake"
    seed: int = 0
    _rng: list = field(default_factory=list, compare=False, repr=False)

    def choose(self, w, X, y, w_star, candidates):
        if not self._rng:
            self._rng.append(np.random.default_rng(self.seed))
        return int(candidates[int(self._rng[0].integers(len(candidates)))])


def adversaries(*, probing: bool = False) -> st.SearchStrategy[Adversary]:
    """Any of the adaptive adversaries (random ones with a drawn seed).

    They present only examples on which the update test fires; with ``probing``, they also
    probe the test's boundary (see ``Adversary.probe``).
    """
    if not isinstance(probing, bool):
        raise InvalidArgument(f"probing={probing!r} must be a bool")
    return _adversaries(probing)


@functools.lru_cache(maxsize=None)
def _adversaries(probing: bool) -> st.SearchStrategy[Adversary]:
    # Built once per flag (a fresh strategy is validated afresh on its first draw).  The
    # sampled instances are stateless (MostMistakesAdversary without a seed keeps no
    # generator), so sharing them across draws is the same as building them per draw; the
    # seeded random adversary is still built per draw.
    return st.one_of(
        st.sampled_from([GreedyMarginAdversary(probing=probing),
                         NormGrowthAdversary(probing=probing),
                         NormShrinkAdversary(probing=probing),
                         MostMistakesAdversary(probing=probing),
                         FirstMistakeAdversary(probing=probing)]),
        st.integers(0, 2 ** 32 - 1).map(
            lambda s: RandomMistakeAdversary(probing=probing, seed=s)))


def probing_adversaries() -> st.SearchStrategy[Adversary]:
    """The adversary that tests an update test from both sides: ``NormShrinkAdversary``.

    It drives ||w|| down (where a test scaled by ||w||, like the margin perceptron's, differs
    most from one that is not) and probes the test's boundary at each new w.
    """
    return _PROBING


_PROBING = st.just(NormShrinkAdversary(probing=True))  # stateless: one instance serves all draws


def adversarial_run(dataset, adversary: Adversary, *, learner=None, fires=classic_fires,
                    max_visits: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Drive a learner with an adversary; return (order (T,), weights after each visit (T, d)).

    ``learner(X, y, gamma=...)`` returns a step function i -> weights (default: the textbook
    classic perceptron); ``fires(w, X, y, gamma)`` is the update test the adversary targets.
    """
    if not isinstance(adversary, Adversary):
        raise InvalidArgument(f"adversary={adversary!r} must be an Adversary")
    if max_visits is None:
        max_visits = int(min(20 * dataset.n + 4 * dataset.bound, 20_000))
    if isinstance(max_visits, bool) or not isinstance(max_visits, int) or max_visits < 0:
        raise InvalidArgument(f"max_visits={max_visits!r} must be an integer >= 0")
    X, y, ws = dataset.X, dataset.y, dataset.w_star
    step = (learner or textbook_learner)(X, y, gamma=dataset.gamma)
    w = np.zeros(dataset.d)
    order, W = [], []
    declined = np.zeros(dataset.n, dtype=bool)  # presented at the current w, no update
    for _ in range(max_visits):
        fired = fires(w, X, y, dataset.gamma)
        i = None
        if adversary.probing and not declined.any():
            i = adversary.probe(w, X, y, ws, np.flatnonzero(~fired))
        if i is None:
            cand = np.flatnonzero(fired & ~declined)
            if cand.size == 0:
                break
            i = adversary.choose(w, X, y, ws, cand)
        w2 = step(i)
        if np.array_equal(w2, w):
            declined[i] = True
        else:
            declined[:] = False
        w = w2
        order.append(i)
        W.append(w)
    W = np.array(W) if W else np.zeros((0, dataset.d))
    return np.array(order, dtype=np.int64), W


def cyclic_run(dataset, order: np.ndarray, *, max_epochs: int = 100, learner=None):
    """Cycle through ``order`` until a pass without updates; return (order, weights) visited."""
    step = (learner or textbook_learner)(dataset.X, dataset.y, gamma=dataset.gamma)
    full, W = [], []
    w = np.zeros(dataset.d)
    for _ in range(max_epochs):
        changed = False
        for i in order:
            w2 = step(int(i))
            changed |= not np.array_equal(w2, w)
            w = w2
            full.append(int(i))
            W.append(w)
        if not changed:
            break
    W = np.array(W) if W else np.zeros((0, dataset.d))
    return np.array(full, dtype=np.int64), W


def tightness(dataset, updates: int) -> float:
    """updates / (R^2 ||w*||^2 / gamma^2): the fraction of Novikoff's bound used."""
    return float(updates / dataset.bound_exact)
