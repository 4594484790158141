"""The catalogue of buggy perceptrons: realistic mutants, each a trace producer.

A learner is ``make(X, y, *, gamma) -> step``, where ``step(i)`` visits example i and returns the
weights after the visit (a fresh array).  ``trace(learner, X, y, order)`` turns it into the
(T, d) weight trace that ``novikoff.runtime``'s audit checks, exactly as it would check a trace
written by someone else's implementation in any language.

A learner that also reports its TD (the hinge-loss bookkeeping of a non-separable run) has a TD
reporter: ``report(X, y, order, *, w_star, gamma) -> (T,)``, the TD it reports after each visit
of ``order`` for (w_star, gamma).  The audit checks it against TD's definition, the sum of
max(0, gamma - y_i<w_star, x_i>) over the visits so far (kind ``td``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

__all__ = ["Mutant", "MUTANTS", "CORRECT", "CORRECT_TD", "trace", "classic", "margin",
           "presented_td", "distinct_td", "mutant_named"]


def trace(learner, X, y, order, *, gamma=None) -> np.ndarray:
    """The (T, d) weights after each visit of ``order``."""
    step = learner(X, y, gamma=gamma)
    out = np.empty((len(order), X.shape[1]))
    for t, i in enumerate(order):
        out[t] = step(int(i))
    return out


# --- the correct learners --------------------------------------------------------------------

def classic(X, y, *, gamma=None):
    """The textbook perceptron: on y<w, x> <= 0, w <- w + y x; w_0 = 0."""
    w = np.zeros(X.shape[1])

    def step(i):
        nonlocal w
        if y[i] * (w @ X[i]) <= 0:
            w = w + y[i] * X[i]
        return w.copy()

    return step


def margin(X, y, *, gamma):
    """The margin perceptron: update when w = 0 or y<w, x> <= (gamma/2)||w||."""
    w = np.zeros(X.shape[1])

    def step(i):
        nonlocal w
        nw = np.sqrt(w @ w)
        if nw == 0 or y[i] * (w @ X[i]) <= (gamma / 2) * nw:
            w = w + y[i] * X[i]
        return w.copy()

    return step


# --- TD reporters (the hinge-loss bookkeeping) ------------------------------------------------

def _hinge_losses(X, y, order, w_star, gamma) -> np.ndarray:
    """max(0, gamma - y_i<w_star, x_i>) of the example visited at each step of ``order``."""
    order = np.asarray(order, dtype=np.int64)
    return np.maximum(0.0, gamma - y[order] * (X[order] @ np.asarray(w_star, dtype=np.float64)))


def presented_td(X, y, order, *, w_star, gamma) -> np.ndarray:
    """The correct TD after each visit: the hinge losses of the examples presented so far,
    repeats included (TD_gamma over the sequence of presentations)."""
    return np.cumsum(_hinge_losses(X, y, order, w_star, gamma))


def distinct_td(X, y, order, *, w_star, gamma) -> np.ndarray:
    """The bug of ``td_over_dataset``: TD_gamma as the textbook sum over the dataset, each
    example's hinge loss counted once (when it is first presented), not once per presentation.

    Within the first pass over distinct examples it agrees with the correct TD; from then on it
    stays at most the dataset's TD_gamma, while the correct TD keeps growing with every repeated
    presentation of an example inside the margin.
    """
    order = np.asarray(order, dtype=np.int64)
    h = _hinge_losses(X, y, order, w_star, gamma)
    first = np.zeros(len(order), dtype=bool)
    if len(order):
        first[np.unique(order, return_index=True)[1]] = True
    return np.cumsum(np.where(first, h, 0.0))


# --- mutants of the classic perceptron -------------------------------------------------------

def _classic_like(update=None, fires=None, start=None, post=None):
    """A classic perceptron with one piece swapped for a buggy one."""

    def make(X, y, *, gamma=None):
        d = X.shape[1]
        w = np.zeros(d) if start is None else start(d)
        prev = [0]

        def step(i):
            nonlocal w
            hit = (fires(w, X[i], y[i]) if fires is not None else y[i] * (w @ X[i]) <= 0)
            if hit:
                w = update(w, X, y, i, prev[0]) if update is not None else w + y[i] * X[i]
                if post is not None:
                    w = post(w)
            prev[0] = i
            return np.array(w, dtype=np.float64)

        return step

    return make


def _ignore_label(w, X, y, i, p):
    return w + X[i]


def _subtract(w, X, y, i, p):
    return w - y[i] * X[i]


def _rate(eta):
    return lambda w, X, y, i, p: w + eta * y[i] * X[i]


def _previous_x(w, X, y, i, p):
    return w + y[i] * X[p]


def _previous_y(w, X, y, i, p):
    return w + y[p] * X[i]


def _decay(w, X, y, i, p):
    return 0.9 * w + y[i] * X[i]


def _normalise(w):
    n = np.sqrt(w @ w)
    return w / n if n > 0 else w


def _random_start(d):
    return np.random.default_rng(d).normal(scale=0.1, size=d)


def _float32(X, y, *, gamma=None):
    w = np.zeros(X.shape[1], dtype=np.float32)

    def step(i):
        nonlocal w
        if y[i] * float(w @ X[i].astype(np.float32)) <= 0:
            w = w + (y[i] * X[i]).astype(np.float32)  # stays float32: the accumulation rounds
        return w.astype(np.float64)

    return step


def _logs_before_update(X, y, *, gamma=None):
    w = np.zeros(X.shape[1])

    def step(i):
        nonlocal w
        logged = w.copy()  # the bug: logged before the update, not after
        if y[i] * (w @ X[i]) <= 0:
            w = w + y[i] * X[i]
        return logged

    return step


def _int_weights(X, y, *, gamma=None):
    w = np.zeros(X.shape[1], dtype=np.int64)

    def step(i):
        if y[i] * (w @ X[i]) <= 0:
            w[:] = w + y[i] * X[i]  # assignment into an int array truncates
        return w.astype(np.float64)

    return step


def _averaged(X, y, *, gamma=None):
    w = np.zeros(X.shape[1])
    total = np.zeros(X.shape[1])
    t = [0]

    def step(i):
        nonlocal w
        if y[i] * (w @ X[i]) <= 0:
            w = w + y[i] * X[i]
        total[:] += w
        t[0] += 1
        return total / t[0]  # reports the running average instead of w

    return step


def _aliased(X, y, *, gamma=None):
    w = np.zeros(X.shape[1])

    def step(i):
        if y[i] * (w @ X[i]) <= 0:
            np.add(w, y[i] * X[i], out=w)
        return w  # no copy: every row of the trace is the same array

    return step


def aliased_trace(learner, X, y, order, *, gamma=None):
    step = learner(X, y, gamma=gamma)
    rows = [step(int(i)) for i in order]  # the bug: appending a reference, not a copy
    return np.array(rows) if rows else np.zeros((0, X.shape[1]))


# --- mutants of the margin perceptron --------------------------------------------------------

def _margin_like(threshold):
    def make(X, y, *, gamma):
        w = np.zeros(X.shape[1])

        def step(i):
            nonlocal w
            nw = np.sqrt(w @ w)
            if nw == 0 or y[i] * (w @ X[i]) <= threshold(gamma, nw):
                w = w + y[i] * X[i]
            return w.copy()

        return step

    return make


@dataclass(frozen=True)
class Mutant:
    """A buggy perceptron: how it is built and which invariants should catch it.

    ``variant`` is the algorithm it claims to be (classic, margin, hinge: the classic perceptron
    on non-separable data; batch, kernel, or any variant of the table in ``_variants``, which
    says what its ``learner`` is and which audit judges its trace); ``data`` the strategy family
    it is fuzzed with; ``td`` its TD
    reporter (``report(X, y, order, *, w_star, gamma) -> (T,)``, see the module docstring), for
    a mutant that reports the TD of its hinge-loss bookkeeping along with its weights (None: it
    reports no TD); ``equivalent`` the reason why no invariant can fail, for a mutant that is not
    a bug as far as the lemmas, judged on its weight trace (and reported TD), can tell.
    """

    name: str
    description: str
    learner: Callable
    variant: str = "classic"
    data: str = "separable"
    producer: Callable = trace
    equivalent: str | None = None
    td: Callable | None = None


MUTANTS: tuple = (
    Mutant("ignore_label", "w += x: the update ignores the label",
           _classic_like(update=_ignore_label)),
    Mutant("update_always", "updates on correct predictions too",
           _classic_like(fires=lambda w, x, y: True)),
    # The next three keep every lemma true (w stays 0, or the trace lags one visit behind a
    # correct run): only the audit's rule check catches them.
    Mutant("strict_mistake_test", "mistake test y<w, x> < 0 instead of <= 0 (from w_0 = 0 it "
           "never fires)", _classic_like(fires=lambda w, x, y: y * (w @ x) < 0)),
    Mutant("never_learns", "the update is never applied (w stays 0)",
           _classic_like(fires=lambda w, x, y: False)),
    Mutant("logs_before_update", "appends the weights before the visit's update to the trace",
           _logs_before_update),
    Mutant("nonzero_start", "random initial weights w_0 != 0",
           _classic_like(start=_random_start)),
    Mutant("learning_rate_2", "w += 2 y x, with bounds that assume a rate of 1",
           _classic_like(update=_rate(2.0))),
    Mutant("learning_rate_half", "w += y x / 2, with bounds that assume a rate of 1",
           _classic_like(update=_rate(0.5))),
    Mutant("normalise_weights", "w <- w / ||w|| after each update",
           _classic_like(post=_normalise)),
    Mutant("subtract_update", "w -= y x: the sign of the update is flipped",
           _classic_like(update=_subtract)),
    Mutant("previous_x", "off by one: w += y_t x_(t-1), the previous example's x",
           _classic_like(update=_previous_x)),
    Mutant("previous_y", "off by one: w += y_(t-1) x_t, the previous example's label",
           _classic_like(update=_previous_y)),
    Mutant("weight_decay", "w <- 0.9 w + y x: a decay left in from another model",
           _classic_like(update=_decay)),
    Mutant("averaged_weights", "reports the running average of w (averaged perceptron) as w",
           _averaged),
    Mutant("aliased_trace", "appends w itself, not a copy, to the trace (in-place update)",
           _aliased, producer=aliased_trace),
    Mutant("float32_accumulation", "accumulates w in float32", _float32, data="fine"),
    Mutant("int_weights", "w = np.zeros(d, dtype=int): updates truncated to integers",
           _int_weights),
    Mutant("margin_threshold_gamma", "margin perceptron updating when y<w, x> <= gamma ||w||",
           _margin_like(lambda g, nw: g * nw), variant="margin", data="unit"),
    Mutant("margin_no_norm", "margin perceptron updating when y<w, x> <= gamma/2 (no ||w||)",
           _margin_like(lambda g, nw: g / 2), variant="margin", data="unit"),
    # Not equivalent: where ||w|| < 1 it updates with y<w, x> up to gamma/2 > (gamma/2)||w||,
    # which breaks norm_step.  Reaching ||w|| < 1 takes an update on a nearly opposite example
    # (mirrored rows) and a test of the boundary (the probing norm-shrinking adversary).
    # The learner is the classic perceptron; the bug is in the TD it reports (``distinct_td``:
    # each example's hinge loss counted once, as in the textbook sum over the dataset), which
    # differs from the correct TD once an example inside the margin is presented again.
    Mutant("td_over_dataset", "hinge bound with TD_gamma summed over the dataset once, not over "
           "the examples presented", classic, variant="hinge", data="nonseparable",
           td=distinct_td),
)

CORRECT = {"classic": classic, "margin": margin, "hinge": classic}
# The TD a correct implementation reports, by variant (only the hinge runs report one).
CORRECT_TD = {"hinge": presented_td}


def mutant_named(name: str) -> Mutant:
    for m in MUTANTS:
        if m.name == name:
            return m
    raise KeyError(name)
