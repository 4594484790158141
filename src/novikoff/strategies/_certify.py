"""Certified datasets: a separator w*, its margin gamma and radius R, checked exactly.

Generated data live on a dyadic grid (integers times a power of two), so every quantity the
certificate needs, y<w*, x> and ||x||^2, is an integer computation: exact in int64 when the bit
widths allow it, in Python integers otherwise.  Floats are dyadic rationals, so the same check
certifies any float data a user brings.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from ..errors import InvalidArgument

__all__ = ["CertifiedDataset", "certify", "exact_margins", "exact_sq_norms"]


def _dyadic_ints(a: np.ndarray) -> tuple[np.ndarray, int]:
    """Return (ints, e) with a == ints * 2**e exactly; ints is int64 when it fits, else object."""
    a = np.asarray(a, dtype=np.float64)
    if not np.all(np.isfinite(a)):
        raise InvalidArgument(f"a={a!r} has a non-finite entry")
    nz = a[a != 0]
    if nz.size == 0:
        return np.zeros(a.shape, dtype=np.int64), 0
    mant, ex = np.frexp(nz)  # nz = mant * 2**ex, 0.5 <= |mant| < 1, mant has 53 bits
    m = (mant * 2.0 ** 53).astype(np.int64)
    # Lowest set bit of each mantissa, so the common exponent is as large as possible.
    low = (m & -m).astype(np.float64)
    tz = np.frexp(low)[1] - 1
    e = int(np.min(ex - 53 + tz))
    top = int(np.max(ex)) - e  # bits of the largest integer
    if top < 62:
        return np.rint(np.ldexp(a, -e)).astype(np.int64), e
    out = np.empty(a.shape, dtype=object)
    for idx, v in np.ndenumerate(a):
        num, den = float(v).as_integer_ratio()
        out[idx] = num * (2 ** -e) // den if e < 0 else num // (den * 2 ** e)
    return out, e


def _exact_dot_rows(Xi: np.ndarray, wi: np.ndarray) -> np.ndarray:
    """Integer row dot products X @ w, exact (int64 if no overflow is possible, else Python ints)."""
    if Xi.dtype == np.int64 and wi.dtype == np.int64:
        bx = int(np.max(np.abs(Xi), initial=0)).bit_length()
        bw = int(np.max(np.abs(wi), initial=0)).bit_length()
        if bx + bw + max(Xi.shape[1], 1).bit_length() < 63:
            return Xi @ wi
    return Xi.astype(object) @ wi.astype(object)


def exact_margins(X, y, w_star) -> list[Fraction]:
    """Return y_i <w*, x_i> for every row, as exact fractions."""
    Xi, ex = _dyadic_ints(X)
    wi, ew = _dyadic_ints(w_star)
    yi = np.asarray(y).astype(np.int64)
    dots = _exact_dot_rows(Xi, wi)
    scale = Fraction(2) ** (ex + ew)
    return [int(yv) * int(dv) * scale for yv, dv in zip(yi, dots)]


def exact_sq_norms(X) -> list[Fraction]:
    """Return ||x_i||^2 for every row, as exact fractions."""
    Xi, ex = _dyadic_ints(X)
    if Xi.dtype == np.int64:
        b = int(np.max(np.abs(Xi), initial=0)).bit_length()
        if 2 * b + max(Xi.shape[1], 1).bit_length() < 63:
            sq = np.einsum("ij,ij->i", Xi, Xi)
            return [int(v) * Fraction(2) ** (2 * ex) for v in sq]
    Xo = Xi.astype(object)
    return [int(sum(r * r)) * Fraction(2) ** (2 * ex) for r in Xo]


def _float_down(q: Fraction) -> float:
    f = float(q)
    return math.nextafter(f, -math.inf) if Fraction(f) > q else f


def _float_up(q: Fraction) -> float:
    f = float(q)
    return math.nextafter(f, math.inf) if Fraction(f) < q else f


def _sqrt_up(q: Fraction) -> float:
    """A float >= sqrt(q), equal to it when q is the square of a float."""
    f = math.sqrt(float(q))
    while Fraction(f) ** 2 < q:
        f = math.nextafter(f, math.inf)
    return f


@dataclass(frozen=True, eq=False)
class CertifiedDataset:
    """Labelled data with a separator w*, margin gamma and radius R, certified exactly.

    ``gamma_exact`` is min_i y_i<w*, x_i> for separable data (for non-separable data the chosen
    margin parameter, with ``deviations`` d_i = max(0, gamma - y_i<w*, x_i>)); ``R2_exact`` is
    max_i ||x_i||^2 and ``w_star_norm2`` is ||w*||^2.  The float fields round the safe way:
    ``gamma`` down, ``R`` up.  ``unit_rows``: every row and w* has norm 1 up to the rounding of a
    normalisation (|‖v‖² - 1| <= 2^-40), as the margin perceptron and hinge lemmas assume.
    """

    X: np.ndarray
    y: np.ndarray
    w_star: np.ndarray
    gamma_exact: Fraction
    R2_exact: Fraction
    w_star_norm2: Fraction
    kind: str = "data"
    separable: bool = True
    deviations_exact: tuple = ()
    unit_rows: bool = False
    gamma: float = field(init=False)
    R: float = field(init=False)

    def __post_init__(self):
        object.__setattr__(self, "gamma", _float_down(self.gamma_exact))
        object.__setattr__(self, "R", _sqrt_up(self.R2_exact))
        for a in (self.X, self.y, self.w_star):
            a.setflags(write=False)

    @property
    def n(self) -> int:
        return self.X.shape[0]

    @property
    def d(self) -> int:
        return self.X.shape[1]

    @property
    def bound_exact(self) -> Fraction:
        """R^2 ||w*||^2 / gamma^2: Novikoff's mistake bound (separable data)."""
        return self.R2_exact * self.w_star_norm2 / self.gamma_exact ** 2

    @property
    def bound(self) -> float:
        return float(self.bound_exact)

    @property
    def deviations(self) -> np.ndarray:
        """d_i = max(0, gamma - y_i<w*, x_i>) as floats (exact for grid data)."""
        if not self.deviations_exact:
            return np.zeros(self.n)
        return np.array([float(v) for v in self.deviations_exact])

    def td_exact(self, order) -> Fraction:
        """TD_gamma summed over the examples presented, in the order given (repeats count)."""
        if not self.deviations_exact:
            return Fraction(0)
        return sum((self.deviations_exact[int(i)] for i in order), Fraction(0))

    def __repr__(self) -> str:
        return (f"CertifiedDataset(kind={self.kind!r}, n={self.n}, d={self.d}, "
                f"gamma={self.gamma!r}, R={self.R!r}, separable={self.separable})")


def certify(X, y, w_star, *, gamma=None, kind: str = "data",
            unit_rows: bool = False) -> CertifiedDataset:
    """Check w* against the data exactly and return the certified dataset.

    Without ``gamma``, the data must be separable by w*: gamma = min_i y_i<w*, x_i> > 0.
    With ``gamma``, the data may be non-separable and the deviations are computed for it.
    """
    X = np.array(X, dtype=np.float64)
    y = np.array(y, dtype=np.float64)
    w_star = np.array(w_star, dtype=np.float64)
    if X.ndim != 2 or X.shape[0] == 0 or X.shape[1] == 0:
        raise InvalidArgument(f"X.shape={X.shape!r} must be (n, d) with n, d >= 1")
    if y.shape != (X.shape[0],):
        raise InvalidArgument(f"y.shape={y.shape!r} does not match X.shape={X.shape!r}")
    if not np.all((y == 1) | (y == -1)):
        raise InvalidArgument(f"y={y!r} must take values in {{-1, +1}}")
    if w_star.shape != (X.shape[1],):
        raise InvalidArgument(f"w_star.shape={w_star.shape!r} does not match d={X.shape[1]!r}")
    margins = exact_margins(X, y, w_star)
    sq = exact_sq_norms(X)
    R2 = max(sq)
    if R2 == 0:
        raise InvalidArgument(f"X={X!r} has only zero rows")
    wn2 = exact_sq_norms(w_star[None, :])[0]
    if unit_rows:
        # Unit up to the rounding of a normalisation: |‖v‖² - 1| <= 2^-40.
        worst = max(abs(v - 1) for v in sq + [wn2])
        if worst > Fraction(1, 2 ** 40):
            raise InvalidArgument(f"unit_rows={unit_rows!r} but some ||x||^2 or ||w*||^2 is "
                                  f"{1 + float(worst)!r} away from 1")
    if gamma is None:
        g = min(margins)
        if g <= 0:
            raise InvalidArgument(f"w_star={w_star!r} does not separate the data: "
                                  f"min y<w*, x>={float(g)!r}")
        return CertifiedDataset(X, y, w_star, g, R2, wn2, kind=kind, unit_rows=unit_rows)
    g = Fraction(gamma)
    if g <= 0:
        raise InvalidArgument(f"gamma={gamma!r} must be > 0")
    devs = tuple(max(Fraction(0), g - m) for m in margins)
    return CertifiedDataset(X, y, w_star, g, R2, wn2, kind=kind,
                            separable=min(margins) > 0, deviations_exact=devs,
                            unit_rows=unit_rows)
