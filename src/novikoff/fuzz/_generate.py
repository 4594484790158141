"""What is fuzzed: the dataset strategy of each family of runs, and the runs of a learner on
them (an ordering, an adaptive adversary or the norm-shrinking one)."""

from __future__ import annotations

import functools

import numpy as np
from hypothesis import strategies as st

from .. import strategies as ns
from ._mutants import trace

__all__ = ["datasets_for", "runs", "HADAMARD_M"]

HADAMARD_M = 64  # the largest Hadamard construction fuzzed (adversaries cost O(n^2 d) a visit)


@functools.lru_cache(maxsize=64)
def datasets_for(family: str, *, max_n: int = 50, max_dim: int = 8):
    """The dataset strategy a family of runs is fuzzed with.

    Built once per (family, max_n, max_dim): ``runs`` draws from it on every example, and a
    strategy built afresh is validated afresh by Hypothesis on its first draw (a strategy is a
    description; drawing from the same object or from an equal new one is the same draw).
    """
    if family == "separable":
        return ns.separable_datasets(max_n=max_n, max_dim=max_dim)
    if family == "unit":
        # The margin perceptron's test scales with ||w||.  Two of the three branches are mirrored
        # rows (nearly opposite pairs of one class, small or near-degenerate margins): an update
        # on such a pair shrinks ||w|| below 1, the regime where norm_step_root's 1/(2||w||)
        # term matters and where a test that forgets the ||w|| factor differs from the right
        # one.
        mirrored = dict(min_n=min(8, max_n), max_n=max_n, min_dim=2, max_dim=max_dim,
                        unit_rows=True, mirrored_rows=True)
        return st.one_of(
            ns.planted_datasets(min_margin=1e-3, max_margin=0.2, **mirrored),
            ns.planted_datasets(min_margin=1e-9, max_margin=1e-3, **mirrored),
            st.one_of(ns.separable_datasets(max_n=max_n, max_dim=max_dim, unit_rows=True,
                                            kinds=("planted", "near_degenerate", "duplicates",
                                                   "high_dimension", "orthonormal",
                                                   "mirrored")),
                      ns.planted_datasets(max_n=max_n, min_dim=2, max_dim=max_dim,
                                          min_margin=0.05, max_margin=0.5, unit_rows=True)))
    if family == "fine":
        # Long accumulations where the lemmas are equalities: the tight construction in a
        # Hadamard basis (m updates add the same c/sqrt(m) to one coordinate; c has as many
        # significand bits as keeps float64 exact, so float32 rounds after 2^(24 - b) of them);
        # the axis-aligned one at a scale c float32 may not represent; any separable data.
        return st.one_of(ns.hadamard_datasets(min_m=16, max_m=HADAMARD_M, scaled=True,
                                               min_bits=53),
                         ns.orthonormal_datasets(max_m=max_n, scaled=True),
                         ns.separable_datasets(max_n=max_n, max_dim=max_dim))
    if family == "nonseparable":
        return ns.nonseparable_datasets(max_n=max_n, max_dim=max_dim)
    if family == "kernel":
        # data fitted to a kernel (XOR-like, circles, planted); small: the audit computes the
        # Gram matrix twice (its own and its reference run's)
        return ns.kernel_datasets(max_n=min(max_n, 24), max_dim=min(max(max_dim, 2), 4))
    raise ValueError(f"family={family!r}")


_HOW = st.integers(0, 2)  # ordering, adversary, norm-shrinking adversary


def _fires(variant):
    return ns.margin_fires if variant == "margin" else ns.classic_fires


@st.composite
def runs(draw, family: str, variant: str, learner, producer=None, *, td=None, max_n=50,
         max_dim=8):
    """(dataset, order, W, reported td or None): a dataset, then an ordering, an adaptive
    adversary, or the norm-shrinking adversary (one of three branches); the adversaries probe the
    update test's boundary.  ``td``: the learner's TD reporter (``_mutants``), called on the
    order presented with (ds.w_star, the gamma judged with)."""
    ds = draw(datasets_for(family, max_n=max_n, max_dim=max_dim))
    gamma = float(ds.gamma)  # rounded down: the gamma the audit certifies and judges with
    how = draw(_HOW)
    if how:
        adv = draw(ns.adversaries(probing=True) if how == 1 else ns.probing_adversaries())
        order, W = ns.adversarial_run(ds, adv, learner=learner, fires=_fires(variant),
                                      max_visits=min(20 * ds.n + 200, 2000))
        if len(order) == 0:
            order = np.arange(ds.n)
            W = (producer or _trace)(learner, ds.X, ds.y, order, gamma=gamma)
    else:
        order = draw(ns.orderings(n=ds.n, max_epochs=4))
        W = (producer or _trace)(learner, ds.X, ds.y, order, gamma=gamma)
    reported = None if td is None else td(ds.X, ds.y, order, w_star=ds.w_star, gamma=gamma)
    return ds, order, W, reported


def _trace(learner, X, y, order, *, gamma=None):
    return trace(learner, X, y, order, gamma=gamma)
