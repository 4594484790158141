"""Strategies for orderings: which example the learner sees at each visit.

An ordering is an int64 array of example indices, repeats allowed.  Permutations come from one
byte string used as sort keys (all-zero bytes shrink to the identity order).
"""

from __future__ import annotations

import functools

import numpy as np
from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

__all__ = ["permutation_orders", "epoch_orders", "repeat_orders", "orderings"]


def _check_n(n):
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise InvalidArgument(f"n={n!r} must be an integer >= 1")


def _perm(draw, n) -> np.ndarray:
    keys = np.frombuffer(draw(st.binary(min_size=2 * n, max_size=2 * n)), dtype="<u2")
    return np.argsort(keys, kind="stable").astype(np.int64)


@st.composite
def _permutation(draw, n):
    return _perm(draw, n)


def permutation_orders(*, n: int) -> st.SearchStrategy[np.ndarray]:
    """One pass over the n examples in some order."""
    _check_n(n)
    return _permutation(n)


@st.composite
def _epochs(draw, n, min_epochs, max_epochs, reshuffle):
    e = draw(st.integers(min_epochs, max_epochs))
    if not reshuffle:
        return np.tile(_perm(draw, n), e)
    return np.concatenate([_perm(draw, n) for _ in range(e)])


def epoch_orders(*, n: int, min_epochs: int = 1, max_epochs: int = 5,
                 reshuffle: bool = True) -> st.SearchStrategy[np.ndarray]:
    """Several passes over the data: a fresh permutation per epoch, or one repeated."""
    _check_n(n)
    for name, v in (("min_epochs", min_epochs), ("max_epochs", max_epochs)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise InvalidArgument(f"{name}={v!r} must be an integer >= 1")
    if min_epochs > max_epochs:
        raise InvalidArgument(f"min_epochs={min_epochs!r} must be <= max_epochs={max_epochs!r}")
    if not isinstance(reshuffle, bool):
        raise InvalidArgument(f"reshuffle={reshuffle!r} must be a bool")
    return _epochs(n, min_epochs, max_epochs, reshuffle)


@st.composite
def _repeats(draw, n, min_length, max_length):
    t = draw(st.integers(min_length, max_length))
    raw = np.frombuffer(draw(st.binary(min_size=2 * t, max_size=2 * t)), dtype="<u2")
    return (raw.astype(np.int64) % n)


def repeat_orders(*, n: int, min_length: int = 1,
                  max_length: int | None = None) -> st.SearchStrategy[np.ndarray]:
    """Any sequence of indices in range(n): repeats and omissions allowed."""
    _check_n(n)
    if max_length is None:
        max_length = 4 * n
    for name, v in (("min_length", min_length), ("max_length", max_length)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise InvalidArgument(f"{name}={v!r} must be an integer >= 1")
    if min_length > max_length:
        raise InvalidArgument(f"min_length={min_length!r} must be <= max_length={max_length!r}")
    return _repeats(n, min_length, max_length)


def orderings(*, n: int, max_epochs: int = 5) -> st.SearchStrategy[np.ndarray]:
    """Permutations, several epochs, or sequences with repeats."""
    _check_n(n)
    if isinstance(max_epochs, int) and not isinstance(max_epochs, bool):
        return _orderings(n, max_epochs)
    return _orderings.__wrapped__(n, max_epochs)  # raises InvalidArgument


@functools.lru_cache(maxsize=512)
def _orderings(n: int, max_epochs: int) -> st.SearchStrategy[np.ndarray]:
    # Built once per (n, max_epochs): the fuzz driver draws an ordering for every generated
    # dataset, and a strategy built afresh is validated afresh on its first draw.
    return st.one_of(permutation_orders(n=n),
                     epoch_orders(n=n, max_epochs=max_epochs),
                     epoch_orders(n=n, max_epochs=max_epochs, reshuffle=False),
                     repeat_orders(n=n, max_length=max_epochs * n))
