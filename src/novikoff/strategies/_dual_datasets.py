"""Strategies for the kernel perceptron: data fitted to a kernel, with a certified separator in
its feature space.

Three constructions, each drawn with a kernel under which it is separable:

* ``xor``: points near the four corners (+-1, +-1) of a square (coordinates +-(1 + j/8), j in
  0..8, extra coordinates small), labelled by the sign of x1*x2: no linear separator exists, the
  feature x1*x2 of poly:2 separates with margin, and so does any rbf kernel (distinct points);
* ``circles``: integer points of the plane (over 4) inside radius 1/2 (label +1) or outside
  radius 3/4 (label -1), none in between: separable by poly:2 (the feature ||x||^2), rbf too;
* ``linear``: planted separable data, for the linear kernel or poly:2.

Every entry is a small dyadic number, so the linear and poly Gram entries are exact in float64.
The separator is certified as the runtime certifies one (``novikoff.runtime`` ``_certify``:
gamma <= y_j*<w_star, phi(x_j)> with rounding-error bounds), from dual coefficients beta found by
the runtime's default search; ``gamma`` and ``R`` are the certified floats.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

from ._datasets import _check_int, _generator, planted_datasets

__all__ = ["KernelDataset", "kernel_dataset", "kernel_datasets", "KERNEL_DATASET_KINDS"]

KERNEL_DATASET_KINDS = ("xor", "circles", "linear")


@dataclass(frozen=True)
class KernelDataset:
    """Data, the kernel it is fuzzed with, a separator in feature space (dual coefficients
    beta: w_star = sum_j beta_j*phi(x_j)) and its certified margin gamma and radius R."""

    X: np.ndarray
    y: np.ndarray
    kernel: str
    beta: np.ndarray
    gamma: float
    R: float
    kind: str = ""

    @property
    def n(self) -> int:
        return self.X.shape[0]

    @property
    def d(self) -> int:
        return self.X.shape[1]

    @property
    def w_star(self) -> np.ndarray:  # the separator, as the audit takes it (dual coefficients)
        return self.beta


def kernel_dataset(X, y, kernel: str, beta=None, *, kind: str = "") -> KernelDataset:
    """Certify (X, y) under ``kernel``: beta given, or found as ``run_kernel`` finds one; raises
    ``novikoff.errors.InvalidArgument`` when no separator can be certified."""
    from ..runtime._dual_run import _certify, _check_beta, _default_beta, gram, parse_kernel

    kern = parse_kernel(kernel)
    X = np.ascontiguousarray(X, dtype=np.float64)
    y = np.ascontiguousarray(y, dtype=np.float64)
    K, E, _ = gram(X, kern)
    beta = _default_beta(K, y, kern) if beta is None else _check_beta(beta, X.shape[0])
    sep = _certify(K, E, y, beta, None, kern)
    return KernelDataset(X, y, str(kern), sep.beta, sep.gamma, sep.R, kind)


def _xor(rng, n, d):
    signs = rng.choice((-1.0, 1.0), size=(n, 2))
    mag = 1.0 + rng.integers(0, 9, size=(n, 2)) / 8.0
    X = np.zeros((n, d))
    X[:, :2] = signs * mag
    if d > 2:  # small extra coordinates: the label does not depend on them
        X[:, 2:] = rng.integers(-2, 3, size=(n, d - 2)) / 8.0
    return X, signs[:, 0] * signs[:, 1]


def _circles(rng, n):
    # integer points of [-4, 4]^2 over 4; inner: ||z||^2 <= 4, outer: ||z||^2 >= 9
    Z = rng.integers(-4, 5, size=(4 * n + 8, 2))
    r2 = (Z * Z).sum(axis=1)
    keep = (r2 <= 4) | (r2 >= 9)
    Z, r2 = Z[keep][:n], r2[keep][:n]
    if Z.shape[0] == 0:
        Z, r2 = np.array([[0, 0], [3, 0]]), np.array([0, 9])
    y = np.where(r2 <= 4, 1.0, -1.0)
    return Z / 4.0, y


@st.composite
def _kernel_data(draw, kind, max_n, max_dim):
    if kind == "linear":
        ds = draw(planted_datasets(min_n=2, max_n=max_n, max_dim=max_dim, min_margin=0.05))
        kernel = draw(st.sampled_from(("linear", "poly:2")))
        return kernel_dataset(ds.X, ds.y, kernel, kind=kind)
    n = draw(st.integers(4, max_n))
    rng = _generator(draw)
    if kind == "xor":
        X, y = _xor(rng, n, draw(st.integers(2, max(2, max_dim))))
    else:
        X, y = _circles(rng, n)
    X, first = np.unique(X, axis=0, return_index=True)  # distinct points (rbf: separable)
    y = y[first]
    # (<a, b> + C)^D with C > 0 and D >= 2 has the features x1*x2 and ||x||^2
    kernel = draw(st.sampled_from(("poly:2", "poly:2:0.5", "poly:3", "rbf:1.0", "rbf:2.0")))
    return kernel_dataset(X, y, kernel, kind=kind)


def kernel_datasets(*, max_n: int = 24, max_dim: int = 4,
                    kinds=KERNEL_DATASET_KINDS) -> st.SearchStrategy[KernelDataset]:
    """Data fitted to a kernel (``KERNEL_DATASET_KINDS``): XOR-like and circle data separable
    only by poly/rbf kernels, planted data for linear and poly:2; separator certified."""
    _check_int("max_n", max_n, 4)
    _check_int("max_dim", max_dim, 2)
    kinds = tuple(kinds)
    if not kinds or any(k not in KERNEL_DATASET_KINDS for k in kinds):
        raise InvalidArgument(f"kinds={kinds!r} must be a non-empty subset of "
                              f"{KERNEL_DATASET_KINDS!r}")
    return st.one_of(*(_kernel_data(k, max_n, max_dim) for k in kinds))
