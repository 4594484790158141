"""Bad input: a clear InvalidArgument naming the argument and the offending value."""

from __future__ import annotations

import numpy as np
import pytest

from novikoff.errors import InvalidArgument
from novikoff.runtime import run

from test_runtime_engine import separable  # noqa: E402

X0, Y0, WS0 = separable(20, 3, 0.1, seed=1, unit=False)


def _with(arr, where, value):
    arr = np.array(arr, dtype=float)
    arr[where] = value
    return arr


CASES = [
    ("nan", dict(X=_with(X0, (4, 1), np.nan)), r"X\[4, 1\]=nan is not finite"),
    ("inf", dict(X=_with(X0, (7, 2), -np.inf)), r"X\[7, 2\]=-inf is not finite"),
    ("zero row", dict(X=_with(X0, 3, 0.0)), r"X\[3\] is a zero row"),
    ("huge row", dict(X=_with(X0, (2, 0), 1e300)), r"X\[2\]: \|\|X\[2\]\|\|\^2 overflows"),
    ("label 0", dict(y=_with(Y0, 5, 0.0)), r"y\[5\]=0.0 is not a label"),
    ("label nan", dict(y=_with(Y0, 6, np.nan)), r"y\[6\]=nan is not a label"),
    ("labels 0/1", dict(y=(Y0 > 0).astype(int)), r"y\[\d+\]=0 is not a label"),
    ("shape", dict(y=Y0[:-1]), r"y: shape \(19,\) does not match X: shape \(20, 3\)"),
    ("X 1-d", dict(X=X0[:, 0]), r"X: shape \(20,\) is not 2-dimensional"),
    ("empty", dict(X=np.zeros((0, 3)), y=np.zeros(0)), r"X: shape \(0, 3\) is empty"),
    ("strings", dict(y=np.array(["a"] * 20)), r"y: dtype <U1 is not numeric"),
    ("w* shape", dict(w_star=np.ones(4)), r"w_star: shape \(4,\) does not match"),
    ("w* zero", dict(w_star=np.zeros(3)), r"w_star is the zero vector"),
    ("w* nan", dict(w_star=_with(WS0, 1, np.nan)), r"w_star\[1\]=nan is not finite"),
    ("w* wrong side", dict(w_star=-WS0),
     r"w_star does not separate the data: y\[14\]\*<w_star, X\[14\]> = -2.8"),
    ("gamma too big", dict(gamma=5.0), r"smaller margin than gamma.*gamma=5.0"),
    ("gamma negative", dict(gamma=-1.0), r"gamma=-1.0 is not a positive"),
    ("order range", dict(order=[0, 1, 25]), r"order\[2\]=25 is not an example index"),
    ("order empty", dict(order=[]), r"order: shape \(0,\) is empty"),
    ("variant", dict(variant="winnow"), r"variant='winnow' is not one of"),
    ("max_epochs", dict(max_epochs=0), r"max_epochs=0 is not a positive integer"),
]


@pytest.mark.parametrize("checks", [True, False])
@pytest.mark.parametrize("name, change, message", CASES, ids=[c[0] for c in CASES])
def test_bad_input_is_named(name, change, message, checks):
    args = dict(X=X0, y=Y0, w_star=WS0)
    args.update(change)
    if not checks and name.startswith(("w* wrong", "gamma too")):
        pytest.skip("certifying w* and gamma is part of the checks")
    with pytest.raises(InvalidArgument, match=message):
        run(args.pop("X"), args.pop("y"), lemmas=[], checks=checks, **args)


def test_non_separable_data_without_w_star():
    X = np.array([[1.0, 0.0], [-1.0, 0.0]])
    y = np.array([1.0, 1.0])  # no separator through the origin
    with pytest.raises(InvalidArgument, match="not linearly separable"):
        run(X, y, lemmas=[])


def test_bad_entries_are_found_after_the_fused_first_pass_too():
    # With w* given the first pass validates X through the norms it computes anyway.
    X = _with(X0, (19, 0), np.nan)
    with pytest.raises(InvalidArgument, match=r"X\[19, 0\]=nan"):
        run(X, Y0, w_star=WS0, lemmas=[])
    with pytest.raises(InvalidArgument, match=r"X\[19, 0\]=nan"):
        run(X, Y0, w_star=WS0, lemmas=[], backend="numpy")
