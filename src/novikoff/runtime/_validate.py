"""Argument checking for the runtime: every error names the argument and the offending value."""

from __future__ import annotations

import math

import numpy as np

from ..errors import InvalidArgument

__all__ = ["check_data", "check_vector", "check_order", "check_gamma", "check_positive",
           "check_choice", "check_flag", "check_positive_int", "numeric_array", "check_finite",
           "finite_float64"]


def numeric_array(name: str, value, meaning: str = "") -> np.ndarray:
    """value as an array of numbers, its shape left to the caller; `meaning` (what the array
    holds) is said when it is not numeric."""
    try:
        arr = np.asarray(value)
    except Exception as err:  # noqa: BLE001 - anything unconvertible is a bad argument
        raise InvalidArgument(f"{name}={value!r} is not an array ({err})") from None
    if arr.dtype == object or arr.dtype.kind not in "biuf":
        raise InvalidArgument(f"{name}: dtype {arr.dtype} is not numeric"
                              + (f" ({meaning})" if meaning else ""))
    return arr


def _array(name: str, value, ndim: int) -> np.ndarray:
    arr = numeric_array(name, value)
    if arr.ndim != ndim:
        raise InvalidArgument(f"{name}: shape {arr.shape} is not {ndim}-dimensional")
    return arr


def check_finite(name: str, arr: np.ndarray) -> None:
    """InvalidArgument naming the first entry of arr that is not finite."""
    bad = ~np.isfinite(arr)
    if bad.any():
        where = np.argwhere(bad)[0]
        index = ", ".join(str(int(i)) for i in where)
        raise InvalidArgument(f"{name}[{index}]={arr[tuple(where)].item()!r} is not finite")


def finite_float64(name: str, arr) -> np.ndarray:
    """arr as a contiguous float64 array, InvalidArgument naming its first entry that is not
    finite."""
    arr = np.ascontiguousarray(arr, dtype=np.float64)
    check_finite(name, arr)
    return arr


def check_data(X, y, *, names=("X", "y"), rows: bool = True):
    """(X, y) as float64 arrays: X (n, d) finite with no zero row, y (n,) in {-1, +1}.

    rows=False leaves the entries of X to the caller (the engine checks them through the squared
    norms it computes in its first pass: see _bounds.check_rows).
    """
    nx, ny = names
    X = _array(nx, X, 2)
    y = _array(ny, y, 1)
    if X.shape[0] == 0 or X.shape[1] == 0:
        raise InvalidArgument(f"{nx}: shape {X.shape} is empty")
    if y.shape[0] != X.shape[0]:
        raise InvalidArgument(f"{ny}: shape {y.shape} does not match {nx}: shape {X.shape} "
                              f"({y.shape[0]} labels for {X.shape[0]} rows)")
    X = np.ascontiguousarray(X, dtype=np.float64)
    if rows:
        from ._bounds import check_rows, first_bad_row
        check_rows(X, first_bad_row(np.einsum("ij,ij->i", X, X)), nx)
    yf = np.ascontiguousarray(y, dtype=np.float64)
    # numpy, not a numba scan: 0.3 ms at n = 1M, paid alike by the monitored and the bare run
    labels = np.abs(yf) == 1.0
    if not labels.all():
        i = int(np.argmin(labels))
        raise InvalidArgument(f"{ny}[{i}]={y[i].item()!r} is not a label in {{-1, +1}}")
    return X, yf


def check_vector(name: str, value, d: int, *, nonzero: bool = True) -> np.ndarray:
    """A finite float64 vector of length d."""
    v = _array(name, value, 1)
    if v.shape[0] != d:
        raise InvalidArgument(f"{name}: shape {v.shape} does not match the data's dimension "
                              f"d={d}")
    v = finite_float64(name, v)
    if nonzero and not v.any():
        raise InvalidArgument(f"{name} is the zero vector")
    return v


def check_w_star(value, d: int, name: str = "w_star") -> np.ndarray:
    """A separator candidate: a finite, non-zero vector of length d whose squared norm is a
    positive float (the error bounds of <w_star, x> scale with it)."""
    v = check_vector(name, value, d)
    with np.errstate(over="ignore", under="ignore"):
        s = float(v @ v)
    if not np.isfinite(s):
        raise InvalidArgument(f"{name}: ||{name}||^2 overflows (entries up to "
                              f"{float(np.abs(v).max())!r}); rescale it")
    if s == 0.0:
        raise InvalidArgument(f"{name}: ||{name}||^2 underflows to 0 (entries up to "
                              f"{float(np.abs(v).max())!r}); rescale it")
    return v


def check_order(value, n: int, name: str = "order") -> np.ndarray:
    """A non-empty int64 sequence of example indices in [0, n)."""
    arr = _array(name, value, 1)
    if arr.shape[0] == 0:
        raise InvalidArgument(f"{name}: shape {arr.shape} is empty")
    if arr.dtype.kind == "f":
        check_finite(name, arr)
        if not np.all(arr == np.round(arr)):
            i = int(np.flatnonzero(arr != np.round(arr))[0])
            raise InvalidArgument(f"{name}[{i}]={arr[i].item()!r} is not an integer index")
    arr = arr.astype(np.int64)
    bad = np.flatnonzero((arr < 0) | (arr >= n))
    if bad.size:
        i = int(bad[0])
        raise InvalidArgument(f"{name}[{i}]={int(arr[i])} is not an example index in "
                              f"[0, {n})")
    return np.ascontiguousarray(arr)


def check_gamma(gamma, name: str = "gamma") -> float | None:
    return None if gamma is None else check_positive(gamma, name)


def check_positive(value, name: str) -> float:
    """value as a float, or InvalidArgument unless it is a positive finite number."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise InvalidArgument(f"{name}={value!r} is not a number") from None
    if not math.isfinite(v) or v <= 0:
        raise InvalidArgument(f"{name}={value!r} is not a positive finite number")
    return v


def check_choice(name: str, value, choices) -> str:
    if value not in choices:
        raise InvalidArgument(f"{name}={value!r} is not one of {', '.join(map(repr, choices))}")
    return value


def check_positive_int(name: str, value) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise InvalidArgument(f"{name}={value!r} is not a positive integer")
    return int(value)


def check_flag(value, name: str) -> bool:
    """A boolean read from a file: a 0-d array holding 0/1 or True/False."""
    arr = np.asarray(value)
    if arr.shape != () or arr.dtype.kind not in "biu" or int(arr) not in (0, 1):
        raise InvalidArgument(f"{name}={arr.tolist()!r} is not a boolean (0/1 or True/False)")
    return bool(arr)
