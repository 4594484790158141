"""Strategies for datasets with a certified separator: valid by construction, checked exactly.

Rows are dense, pairwise distinct integer vectors on a dyadic grid, X = ints * 2**-e, drawn by a
numpy generator whose seed Hypothesis draws (Hypothesis draws the size, margin and shape
parameters; a byte string per matrix made half the datasets one repeated row, because
Hypothesis often draws it all zero).  A planted separator w* is also a grid vector; rows whose
margin is too small are moved along w*'s largest axis by an integer amount, so every row is
valid by construction (no ``assume``, no rejection).  The certificate (gamma, R, ||w*||) is then
computed from the generated data in integer arithmetic.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

from ._certify import CertifiedDataset, certify, exact_margins

__all__ = ["planted_datasets", "orthonormal_datasets", "hadamard_datasets",
           "separable_datasets", "nonseparable_datasets", "DATASET_KINDS"]

_BITS = 15            # raw entries are int16: [-2^15, 2^15)
_SCALE_BITS = 4       # scaled rows: integer factors 1..2^4

DATASET_KINDS = ("planted", "near_degenerate", "duplicates", "scaled", "high_dimension",
                 "orthonormal", "mirrored")


def _check_int(name, value, lo=0):
    if isinstance(value, bool) or not isinstance(value, int) or value < lo:
        raise InvalidArgument(f"{name}={value!r} must be an integer >= {lo}")


def _check_range(lo_name, lo, hi_name, hi, floor=1):
    _check_int(lo_name, lo, floor)
    _check_int(hi_name, hi, floor)
    if lo > hi:
        raise InvalidArgument(f"{lo_name}={lo!r} must be <= {hi_name}={hi!r}")


def _check_margins(min_margin, max_margin):
    for name, v in (("min_margin", min_margin), ("max_margin", max_margin)):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 < v <= 1:
            raise InvalidArgument(f"{name}={v!r} must be a number in (0, 1]")
    if min_margin > max_margin:
        raise InvalidArgument(f"min_margin={min_margin!r} must be <= max_margin={max_margin!r}")


def _generator(draw) -> np.random.Generator:
    """A numpy generator seeded by Hypothesis: the entries are dense whatever seed is drawn."""
    return np.random.default_rng(draw(st.integers(0, 2 ** 64 - 1)))


def _ints(rng, shape) -> np.ndarray:
    """Dense int16-range entries."""
    return rng.integers(-(2 ** _BITS), 2 ** _BITS, size=shape, dtype=np.int64)


_HASH_MULT = np.uint64(0x9E3779B97F4A7C15)  # odd: x -> x * mult is a bijection mod 2^64


def _all_distinct(Z) -> bool:
    """True only if the rows of Z are pairwise distinct (a row hash mod 2^64, all different).

    Equal rows hash equal, so distinct hashes prove distinct rows; a collision (equal rows, or
    rarely distinct ones) answers False and the caller checks exactly.
    """
    h = np.zeros(Z.shape[0], dtype=np.uint64)
    for k in range(Z.shape[1]):
        h = h * _HASH_MULT + Z[:, k].astype(np.uint64)
    h.sort()
    return not np.any(h[1:] == h[:-1])


def _distinct_rows(rng, n, d) -> np.ndarray:
    """n pairwise distinct dense rows: a repeated row is redrawn (2^16d >= 65536 candidates)."""
    Z = _ints(rng, (n, d))
    if _all_distinct(Z):  # the common case: no repeated row, Z as the loop below returns it
        return Z
    while True:
        _, first = np.unique(Z, axis=0, return_index=True)
        if first.size == n:
            return Z
        again = np.setdiff1d(np.arange(n), first)
        Z[again] = _ints(rng, (again.size, d))


def _separator(rng, d) -> tuple[np.ndarray, int]:
    """A dense grid separator and the index of its largest (non-zero) coordinate."""
    w = _ints(rng, (d,))
    j = int(np.argmax(np.abs(w)))
    if abs(w[j]) < 2 ** (_BITS - 3):
        # A separator with a strong axis keeps the margin repair small.
        w[j] = 2 ** (_BITS - 1) if w[j] >= 0 else -(2 ** (_BITS - 1))
    return w, j


def _labels_and_repair(Z, w, j, G, keep=None, tight=0, mirror=0):
    """Label rows by the side of w they fall on, and move rows of margin < G onto margin >= G.

    A row is moved along axis j by ceil(deficit / |w_j|): an integer, so it stays on the grid.
    The first ``tight`` rows are moved onto the margin's edge, G <= y<w, x> < G + |w_j|, so the
    planted margin is the data's margin.  Rows with keep[i] True are left where they are (noise
    for non-separable data).  Rows 1, 3, ..., 2*mirror - 1 are the negations of the rows before
    them and keep their labels: the repair moves each onto the margin, so a row near the
    hyperplane and its mirror are nearly opposite (signed) examples of the same class.
    """
    odd = slice(1, 2 * mirror, 2)
    if mirror:
        Z[odd] = -Z[0:2 * mirror:2]
    m = Z @ w
    y = np.where(m < 0, -1, 1).astype(np.int64)
    if mirror:
        # The label of the row mirrored, i.e. the side opposite to where the mirror fell.
        y[odd] = np.where(m[odd] > 0, -1, 1)
    deficit = G - y * m
    need = deficit > 0
    need[:tight] = True
    if keep is not None:
        need &= ~keep
    if need.any():
        wj = abs(int(w[j]))
        c = -(-deficit[need] // wj)
        Z[need, j] += y[need] * (1 if w[j] > 0 else -1) * c
    return y


def _build(Xi, ex, y, wi, ew, *, kind, gamma_int=None) -> CertifiedDataset:
    """Certify grid data exactly: integer margins and squared norms, then the fractions."""
    m = y * (Xi @ wi)                     # exact: entries < 2^21, d small enough for int64
    sq = np.einsum("ij,ij->i", Xi, Xi)
    unit = Fraction(2) ** (ex + ew)
    R2 = int(np.max(sq)) * Fraction(2) ** (2 * ex)
    wn2 = int(np.dot(wi, wi)) * Fraction(2) ** (2 * ew)
    X = np.ldexp(Xi.astype(np.float64), ex)
    w_star = np.ldexp(wi.astype(np.float64), ew)
    yf = y.astype(np.float64)
    if gamma_int is None:
        g = int(np.min(m))
        if g <= 0:  # cannot happen by construction; the check is the certificate
            raise AssertionError(f"construction bug: min margin {g} <= 0 ({kind})")
        return CertifiedDataset(X, yf, w_star, g * unit, R2, wn2, kind=kind)
    dev = np.maximum(0, gamma_int - m)
    devs = tuple(int(v) * unit for v in dev)
    return CertifiedDataset(X, yf, w_star, gamma_int * unit, R2, wn2, kind=kind,
                            separable=bool(np.min(m) > 0), deviations_exact=devs)


@st.composite
def _planted(draw, *, min_n, max_n, min_dim, max_dim, min_margin, max_margin,
             duplicate_rows=False, scaled_rows=False, unit_rows=False, mirrored_rows=False,
             noise=0.0, kind="planted"):
    n = draw(st.integers(min_n, max_n))
    d = draw(st.integers(min_dim, max_dim))
    rng = _generator(draw)
    w, j = _separator(rng, d)
    if duplicate_rows:
        # Each row of a small pool of distinct rows at least once, the rest drawn from it.
        lo = min(2, n)  # a pool of one would be one repeated row
        pool = draw(st.integers(lo, max(lo, n // 2)))
        base = _distinct_rows(rng, pool, d)
        pick = np.concatenate([np.arange(pool), rng.integers(0, pool, size=n - pool)])
        Z = base[rng.permutation(pick)]
    else:
        Z = _distinct_rows(rng, n, d)
    rho = draw(st.floats(min_margin, max_margin))
    wn = math.sqrt(float(np.dot(w, w)))
    # Margin threshold in grid units: rho times the nominal ||w*|| * max||x||.
    G = max(1, math.ceil(rho * wn * 2 ** _BITS * math.sqrt(d)))
    keep = None
    if noise > 0:
        frac = draw(st.floats(0.0, noise))
        u = np.frombuffer(draw(st.binary(min_size=n, max_size=n)), dtype=np.uint8)
        keep = u < int(round(frac * 256))
    tight = draw(st.integers(1, n)) if noise == 0 else 0
    mirror = draw(st.integers(1, n // 2)) if mirrored_rows and n >= 2 else 0
    y = _labels_and_repair(Z, w, j, G, keep, tight, mirror)
    if keep is not None:
        # Zero rows are bad input, not noise: give a zero noise row a unit step along axis j.
        zero = keep & ~Z.any(axis=1)
        Z[zero, j] = 1
        # Noise: half the kept rows also get the wrong label.
        y = np.where(keep & (u % 2 == 1), -y, y)
    ex = -_BITS
    if scaled_rows:
        f = np.frombuffer(draw(st.binary(min_size=n, max_size=n)), dtype=np.uint8)
        Z = Z * (1 + f.astype(np.int64) % (2 ** _SCALE_BITS))[:, None]
        ex = -_BITS - _SCALE_BITS
    if unit_rows:
        return _unit_dataset(Z, y, w, G, d, noise > 0, kind)
    gamma_int = None
    if noise > 0:
        # The margin parameter, in the units of the final grid.
        gamma_int = G * (2 ** _SCALE_BITS if scaled_rows else 1)
    return _build(Z, ex, y, w, -_BITS, kind=kind, gamma_int=gamma_int)


def _unit_dataset(Z, y, w, G, d, noisy, kind):
    """Rows and w* normalised in floats (unit up to one rounding), then certified exactly."""
    Zf = Z.astype(np.float64)
    X = Zf / np.sqrt(np.einsum("ij,ij->i", Zf, Zf))[:, None]
    wf = w.astype(np.float64)
    w_star = wf / math.sqrt(float(wf @ wf))
    yf = y.astype(np.float64)
    if not noisy:
        m = exact_margins(X, yf, w_star)
        bad = [i for i, v in enumerate(m) if v <= 0]
        if bad:
            # Rounding moved a near-degenerate row across w*: put it on w*'s side.
            X[bad] = yf[bad][:, None] * w_star[None, :]
        return certify(X, yf, w_star, kind=kind, unit_rows=True)
    gamma = G / (math.sqrt(float(wf @ wf)) * 2 ** _BITS * math.sqrt(d))
    return certify(X, yf, w_star, gamma=gamma, kind=kind, unit_rows=True)


def planted_datasets(*, min_n: int = 1, max_n: int = 50, min_dim: int = 1, max_dim: int = 8,
                     min_margin: float = 1e-3, max_margin: float = 0.5,
                     duplicate_rows: bool = False, scaled_rows: bool = False,
                     unit_rows: bool = False,
                     mirrored_rows: bool = False) -> st.SearchStrategy[CertifiedDataset]:
    """Separable data with a planted separator w* and relative margin in [min_margin, max_margin].

    ``duplicate_rows`` draws rows from a small pool; ``scaled_rows`` multiplies rows by integer
    factors 1..16 (non-unit norms); ``unit_rows`` normalises rows and w* in floats (norm 1 up to
    one rounding; the certificate is exact for the rounded data); ``mirrored_rows`` follows
    some rows by their negation with the same label, moved back onto the margin along w*: pairs
    of nearly opposite examples of one class (for small margins), on which an update can shrink
    ||w|| (the margin perceptron's regime ||w|| < 1).
    """
    _check_range("min_n", min_n, "max_n", max_n)
    _check_range("min_dim", min_dim, "max_dim", max_dim)
    _check_margins(min_margin, max_margin)
    if max_dim > 4096:
        raise InvalidArgument(f"max_dim={max_dim!r} must be <= 4096 (exact int64 certificate)")
    for name, v in (("duplicate_rows", duplicate_rows), ("scaled_rows", scaled_rows),
                    ("unit_rows", unit_rows), ("mirrored_rows", mirrored_rows)):
        if not isinstance(v, bool):
            raise InvalidArgument(f"{name}={v!r} must be a bool")
    if unit_rows and scaled_rows:
        raise InvalidArgument(f"scaled_rows={scaled_rows!r} contradicts unit_rows={unit_rows!r}")
    kind = ("duplicates" if duplicate_rows else "scaled" if scaled_rows
            else "mirrored" if mirrored_rows else "planted")
    return _planted(min_n=min_n, max_n=max_n, min_dim=min_dim, max_dim=max_dim,
                    min_margin=min_margin, max_margin=max_margin, duplicate_rows=duplicate_rows,
                    scaled_rows=scaled_rows, unit_rows=unit_rows, mirrored_rows=mirrored_rows,
                    kind=kind)


@st.composite
def _orthonormal(draw, *, min_m, max_m, scaled):
    m = draw(st.integers(min_m, max_m))
    signs = np.frombuffer(draw(st.binary(min_size=m, max_size=m)), dtype=np.uint8)
    y = np.where(signs % 2 == 1, -1.0, 1.0)
    c = draw(st.one_of(st.just(1.0), st.floats(2.0 ** -4, 2.0 ** 4))) if scaled else 1.0
    X = np.eye(m) * c
    # w* = y / sqrt(m) in floats: the bound R^2 ||w*||^2 / gamma^2 is m exactly whatever the
    # rounding of 1/sqrt(m), because w*'s scale cancels.
    sf = 1.0 / math.sqrt(m)
    while m * Fraction(sf) ** 2 > 1:  # keep ||w*|| <= 1 exactly
        sf = math.nextafter(sf, 0.0)
    w_star = y * sf
    cf, s = Fraction(c), Fraction(sf)
    return CertifiedDataset(X, y, w_star, cf * s, cf * cf, m * s * s, kind="orthonormal",
                            unit_rows=c == 1.0)


def orthonormal_datasets(*, min_m: int = 1, max_m: int = 50,
                         scaled: bool = False) -> st.SearchStrategy[CertifiedDataset]:
    """The tight construction: x_i = c*e_i in d = m dimensions, y_i = +-1, w* = y/sqrt(m).

    Every visit of a first pass is a mistake, so the classic perceptron makes exactly
    m = (R/gamma)^2 mistakes: Novikoff's bound is attained.  ``scaled`` draws c in [1/16, 16].
    """
    _check_range("min_m", min_m, "max_m", max_m)
    if not isinstance(scaled, bool):
        raise InvalidArgument(f"scaled={scaled!r} must be a bool")
    return _orthonormal(min_m=min_m, max_m=max_m, scaled=scaled)


def _sylvester(m: int) -> np.ndarray:
    H = np.ones((1, 1), dtype=np.int64)
    while H.shape[0] < m:
        H = np.block([[H, H], [H, -H]])
    return H


@st.composite
def _hadamard(draw, *, min_j, max_j, scaled, min_bits):
    j = draw(st.integers(min_j, max_j))
    m = 4 ** j
    H = _sylvester(m)
    # Labels: a column k of H, up to sign, so w* = +-e_k and every update adds c/sqrt(m) to
    # coordinate k of w, with the same sign: m terms accumulate in one coordinate.
    y = H[:, draw(st.integers(0, m - 1))] * draw(st.sampled_from([1, -1]))
    c = 1.0
    if scaled:
        # c = (odd b-bit integer) * 2^e: every inner product of the run, an integer below m^2
        # times c^2/m, stays exact in float64 while 2b + 2 log2(m) <= 53, so a first pass makes
        # exactly m mistakes in floats too; float32's 24 bits round a coordinate of w once it
        # is a sum of more than 2^(24 - b) terms of the same sign.
        top = (53 - 2 * 2 * j) // 2
        b = draw(st.integers(min(min_bits, top), top))
        odd = draw(st.integers(2 ** (b - 1), 2 ** b - 1)) | 1
        c = math.ldexp(odd, draw(st.integers(-4, 3)) - b + 1)
    X = np.ldexp(c * H.astype(np.float64), -j)      # c * h_i / sqrt(m), exactly
    w_star = (H.T @ y).astype(np.float64) / m       # sum_i y_i h_i / m: unit, exactly
    return certify(X, y.astype(np.float64), w_star, kind="hadamard", unit_rows=c == 1.0)


def hadamard_datasets(*, min_m: int = 1, max_m: int = 64, scaled: bool = False,
                      min_bits: int = 1) -> st.SearchStrategy[CertifiedDataset]:
    """The tight construction in a rotated basis: x_i = c*h_i/sqrt(m), h_i the rows of a
    Sylvester Hadamard matrix (m = 4^j in [min_m, max_m], so sqrt(m) is a power of two and every
    entry is exact), labels a column k of H up to sign, w* = sum_i y_i h_i / m = +-e_k.

    The rows are orthogonal with norm c and margin c/sqrt(m), so, as in the axis-aligned
    construction, every visit of a first pass is a mistake and the classic perceptron makes
    exactly m = (R/gamma)^2 mistakes, with progress and norm growth equalities at every update;
    but each update adds +-c/sqrt(m) to *every* coordinate of w, and the same y*c/sqrt(m) to
    coordinate k, which accumulates m terms of one sign.

    ``scaled`` draws c with a b-bit significand times 2^-4..2^3, b at most (53 - 2 log2 m)/2 so
    that every inner product of a first pass is exact in float64 (its ties are exact ties), and
    at least ``min_bits`` where that allows.  A learner that accumulates w in float32 rounds
    coordinate k once it sums more than 2^(24 - b) terms, after many updates, and breaks the
    progress or the norm-growth equality (rounding down or up).
    """
    _check_range("min_m", min_m, "max_m", max_m)
    if not isinstance(scaled, bool):
        raise InvalidArgument(f"scaled={scaled!r} must be a bool")
    _check_int("min_bits", min_bits, 1)
    lo = math.ceil(math.log(min_m, 4) - 1e-12)
    hi = math.floor(math.log(max_m, 4) + 1e-12)
    if lo > hi:
        raise InvalidArgument(f"min_m={min_m!r}, max_m={max_m!r}: no power of 4 between them")
    return _hadamard(min_j=lo, max_j=hi, scaled=scaled, min_bits=min_bits)


def separable_datasets(*, max_n: int = 50, max_dim: int = 8, high_dim: int | None = None,
                       kinds=DATASET_KINDS,
                       unit_rows: bool = False) -> st.SearchStrategy[CertifiedDataset]:
    """Any kind of certified separable data: planted, near-degenerate margins, duplicate rows,
    scaled rows, high dimension (d up to ``high_dim``, default 8*max_dim), orthonormal,
    mirrored rows (nearly opposite pairs of one class)."""
    _check_int("max_n", max_n, 1)
    _check_int("max_dim", max_dim, 1)
    if high_dim is None:
        high_dim = 8 * max_dim
    _check_int("high_dim", high_dim, 1)
    kinds = tuple(kinds)
    if not kinds or any(k not in DATASET_KINDS for k in kinds):
        raise InvalidArgument(f"kinds={kinds!r} must be a non-empty subset of {DATASET_KINDS!r}")
    if not isinstance(unit_rows, bool):
        raise InvalidArgument(f"unit_rows={unit_rows!r} must be a bool")
    common = dict(min_n=1, max_n=max_n, min_dim=1, max_dim=max_dim)
    table = {
        "planted": lambda: _planted(**common, min_margin=1e-3, max_margin=0.5,
                                    unit_rows=unit_rows, kind="planted"),
        "near_degenerate": lambda: _planted(**common, min_margin=1e-9, max_margin=1e-4,
                                            unit_rows=unit_rows, kind="near_degenerate"),
        "duplicates": lambda: _planted(**common, min_margin=1e-3, max_margin=0.5,
                                       duplicate_rows=True, unit_rows=unit_rows,
                                       kind="duplicates"),
        "scaled": lambda: _planted(**common, min_margin=1e-3, max_margin=0.5,
                                   scaled_rows=not unit_rows, unit_rows=unit_rows,
                                   kind="scaled"),
        "high_dimension": lambda: _planted(min_n=1, max_n=max(1, min(max_n, high_dim // 2)),
                                           min_dim=min(high_dim, max(max_dim, 2)),
                                           max_dim=high_dim, min_margin=1e-3, max_margin=0.5,
                                           unit_rows=unit_rows, kind="high_dimension"),
        "orthonormal": lambda: _orthonormal(min_m=1, max_m=min(max_n, high_dim),
                                            scaled=not unit_rows),
        "mirrored": lambda: _planted(min_n=min(2, max_n), max_n=max_n, min_dim=min(2, max_dim),
                                     max_dim=max_dim, min_margin=1e-3, max_margin=0.25,
                                     mirrored_rows=True, unit_rows=unit_rows,
                                     kind="mirrored"),
    }
    return st.one_of(*(table[k]() for k in kinds))


def nonseparable_datasets(*, min_n: int = 1, max_n: int = 50, min_dim: int = 1,
                          max_dim: int = 8, min_margin: float = 1e-2, max_margin: float = 0.5,
                          noise: float = 0.3,
                          unit_rows: bool = True) -> st.SearchStrategy[CertifiedDataset]:
    """Data that w* need not separate, with gamma and exact deviations d_i for (w*, gamma).

    A fraction of at most ``noise`` of the rows is left inside the margin, half of those with
    the wrong label; ``dataset.td_exact(order)`` is TD_gamma over the examples presented.
    """
    _check_range("min_n", min_n, "max_n", max_n)
    _check_range("min_dim", min_dim, "max_dim", max_dim)
    _check_margins(min_margin, max_margin)
    if isinstance(noise, bool) or not isinstance(noise, (int, float)) or not 0 < noise <= 1:
        raise InvalidArgument(f"noise={noise!r} must be a number in (0, 1]")
    if not isinstance(unit_rows, bool):
        raise InvalidArgument(f"unit_rows={unit_rows!r} must be a bool")
    return _planted(min_n=min_n, max_n=max_n, min_dim=min_dim, max_dim=max_dim,
                    min_margin=min_margin, max_margin=max_margin, unit_rows=unit_rows,
                    noise=float(noise), kind="nonseparable")
