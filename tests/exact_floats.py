"""Exact arithmetic for the tests' float comparisons.

A float computed by numpy (a matrix product, a sum, a norm) depends on the summation order, and
that order depends on the BLAS, the SIMD width and the numpy version.  A test that compares such
a float with an exact, certified or hard-coded value therefore compares either exactly (the
Fractions of the float data, as here) or through the rounding bound that the runtime documents
(runtime/_bounds.py, Higham's analysis): a dot product of length d, summed in any order, is
within gamma_d * sum|a_i b_i| of its exact value, gamma_n = n*u / (1 - n*u), u = 2^-53.  A sum
of n floats, in any order, is within gamma_(n-1) * sum|c_i| of the exact sum.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

U = Fraction(1, 2 ** 53)


def gamma_n(n: int) -> Fraction:
    """Higham's gamma_n, exactly."""
    return n * U / (1 - n * U)


def fr(v) -> list:
    """The exact values of a float vector."""
    return [Fraction(float(a)) for a in np.asarray(v, dtype=np.float64).ravel()]


def dot(a, b) -> Fraction:
    """<a, b> of two float vectors, exactly."""
    return sum((x * z for x, z in zip(fr(a), fr(b))), Fraction(0))


def dot_bound(a, b) -> Fraction:
    """The documented bound on |fl(<a, b>) - <a, b>| for every summation order."""
    return gamma_n(len(fr(a))) * sum((abs(x * z) for x, z in zip(fr(a), fr(b))), Fraction(0))


def margins(X, y, w) -> list:
    """y_i <w, x_i> for every row, exactly."""
    return [int(y[i]) * dot(X[i], w) for i in range(np.asarray(X).shape[0])]
