"""Finding witnesses: a seeded random search over small integer data, then shrinking.

The search may be clever; it does not have to be trusted: every candidate is judged by the same
exact replay that ``check_witness`` runs (on the JSON text that will be written), and only a
refuting run is returned.  Candidates are tried smallest first (2 examples in 2 dimensions, then
3, then 4, then 3 dimensions); the first refuting one is shrunk (examples dropped, the epoch
count lowered) while it still refutes.
"""

from __future__ import annotations

import functools
import json
import math
import random
from fractions import Fraction
from itertools import product

from ._read import FORMAT, WitnessError
from ._replay import CLAIMS, Outcome, _cyclic, _dot, _sqrt, outcome

__all__ = ["dumps", "find_witness"]

_SIZES = ((2, 2), (3, 2), (4, 2), (3, 3), (4, 3))
_TRIES = 400  # candidates per size


def _num(q):
    """A JSON number for an exact rational: an int, or the string "p/q"."""
    q = Fraction(q)
    return q.numerator if q.denominator == 1 else f"{q.numerator}/{q.denominator}"


def dumps(obj: dict) -> str:
    """The witness as small, readable JSON: one field per line, every number exact."""
    def conv(v):
        if isinstance(v, (list, tuple)):
            return [conv(a) for a in v]
        return _num(v) if isinstance(v, Fraction) else v
    lines = [f"  {json.dumps(k)}: {json.dumps(conv(v))}" for k, v in obj.items()]
    return "{\n" + ",\n".join(lines) + "\n}\n"


def _judge(obj: dict) -> Outcome | None:
    """The exact replay of what would be written (None for a file check_witness refuses)."""
    try:
        return outcome(json.loads(dumps(obj)))
    except WitnessError:
        return None


def _witness(claim: str, X, y, **params) -> dict:
    return {"format": FORMAT, "claim": claim, "X": [list(r) for r in X], "y": list(y), **params}


def _rows(rng, pool, n):
    return [rng.choice(pool) for _ in range(n)]


def _distinct(X) -> bool:
    return len(set(map(tuple, X))) == len(X)


# -- candidate generators: (rng, n, d) -> a witness object or None ------------------------------

@functools.cache
def _int_norm_rows(d: int):
    """Non-zero integer rows, entries in -5..5, with an integer norm (like (3, 4))."""
    return [v for v in product(range(-5, 6), repeat=d)
            if any(v) and math.isqrt(s := sum(a * a for a in v)) ** 2 == s]


def _normalising(rng, n, d):
    X = _rows(rng, _int_norm_rows(d), n)
    y = [rng.choice((1, -1)) for _ in range(n)]
    return _witness("normalising-preserves-run", X, y, max_epochs=50) if _distinct(X) else None


def _both_converge(obj) -> bool:
    """Both runs converge: the difference is then in what the runs do, not in an epoch bound."""
    X = [tuple(map(Fraction, r)) for r in obj["X"]]
    Z = [tuple(a / _sqrt(_dot(r, r)) for a in r) for r in X]
    order = list(range(len(X)))
    return all(_cyclic(D, obj["y"], order, obj["max_epochs"]).converged for D in (X, Z))


def _separable(rng, n, d, lo=-4, hi=4):
    w = tuple(rng.randint(-3, 3) for _ in range(d))
    if not any(w):
        return None
    X = [tuple(rng.randint(lo, hi) for _ in range(d)) for _ in range(n)]
    m = [sum(a * b for a, b in zip(w, x)) for x in X]
    if 0 in m or not _distinct(X):
        return None
    return w, X, [1 if v > 0 else -1 for v in m]


def _batch(rng, n, d):
    data = _separable(rng, n, d)
    if data is None:
        return None
    w, X, y = data
    return _witness("batch-stop-separates", X, y, w_star=list(w), alpha=1, epsilon=1,
                    max_iterations=100)


def _unit_rational(d: int):
    """Rational unit vectors with denominators 1, 3, 5."""
    base = {2: [(1, 0), (0, 1), (Fraction(3, 5), Fraction(4, 5)), (Fraction(4, 5), Fraction(3, 5))],
            3: [(1, 0, 0), (0, 1, 0), (0, 0, 1), (Fraction(1, 3), Fraction(2, 3), Fraction(2, 3)),
                (Fraction(2, 3), Fraction(1, 3), Fraction(2, 3))]}[d]
    return [tuple(s * a for s, a in zip(signs, v))
            for v in base for signs in product((1, -1), repeat=d)]


def _hinge(rng, n, d):
    units = _unit_rational(d)
    X = _rows(rng, units, n)
    y = [rng.choice((1, -1)) for _ in range(n)]
    if not _distinct(X):
        return None
    w = rng.choice(units)
    gamma = rng.choice([Fraction(1, 2), Fraction(1, 5), Fraction(2, 5), Fraction(3, 5), 1])
    # Six passes; _shrink lowers the count to the fewest that refute.
    return _witness("hinge-bound-dataset-td", X, y, w_star=list(w), gamma=gamma, epochs=6)


def _no_margin(rng, n, d):
    w = tuple(rng.randint(-1, 1) for _ in range(d))
    X = [tuple(rng.randint(-2, 2) for _ in range(d)) for _ in range(n)]
    if not any(w) or not all(any(x) for x in X) or not _distinct(X):
        return None
    y = [1 if sum(a * b for a, b in zip(w, x)) >= 0 else -1 for x in X]
    return _witness("converges-without-margin", X, y, w_star=list(w), max_epochs=50)


def _bias_only(rng, n, d):
    w = tuple(rng.randint(-1, 1) for _ in range(d))
    b = rng.choice((-3, -2, -1, 1, 2, 3))
    X = [tuple(rng.randint(-2, 2) for _ in range(d)) for _ in range(n)]
    scores = [sum(a * c for a, c in zip(w, x)) + b for x in X]
    if not any(w) or not all(any(x) for x in X) or not _distinct(X) or 0 in scores:
        return None
    y = [1 if s > 0 else -1 for s in scores]
    return _witness("converges-separable-with-bias", X, y, w_star=list(w), b_star=b,
                    max_epochs=50)


_GENERATORS = {
    "normalising-preserves-run": _normalising,
    "batch-stop-separates": _batch,
    "hinge-bound-dataset-td": _hinge,
    "converges-without-margin": _no_margin,
    "converges-separable-with-bias": _bias_only,
}


def _not_at_once(obj) -> bool:
    """The batch loop does not stop at its first iteration (theta = alpha * mean of y_i x_i)."""
    o = _judge(dict(obj, max_iterations=1))
    return o is not None and not o.refuted


_NICE = {
    "normalising-preserves-run": _both_converge,
    "batch-stop-separates": _not_at_once,
}


def _good(obj: dict) -> bool:
    """Refutes its claim, has both labels, and is nice for its kind (see _NICE)."""
    o = _judge(obj)
    return (o is not None and o.refuted and len(set(obj["y"])) == 2
            and _NICE.get(obj["claim"], bool)(obj))


def _shrink(obj: dict) -> dict:
    """Drop examples while the witness stays good; for a fixed-epoch claim, fewer epochs too."""
    changed = True
    while changed:
        changed = False
        for i in range(len(obj["X"])):
            smaller = dict(obj, X=obj["X"][:i] + obj["X"][i + 1:],
                           y=obj["y"][:i] + obj["y"][i + 1:])
            if _good(smaller):
                obj, changed = smaller, True
                break
    while "epochs" in obj and obj["epochs"] > 1 and _good(dict(obj, epochs=obj["epochs"] - 1)):
        obj = dict(obj, epochs=obj["epochs"] - 1)
    return obj


def find_witness(claim: str, seed: int = 0) -> tuple[dict, Outcome]:
    """The first refuting run of a seeded search, shrunk; WitnessError if none is found."""
    if claim not in _GENERATORS:
        raise WitnessError(f"unknown claim kind {claim!r} (known: {', '.join(CLAIMS)})")
    rng = random.Random(seed)
    for n, d in _SIZES:
        for _ in range(_TRIES):
            obj = _GENERATORS[claim](rng, n, d)
            if obj is None:
                continue
            if _good(obj):
                obj = _shrink(obj)
                obj["note"] = f"Found by `novikoff witness find {claim} --seed {seed}`."
                return obj, _judge(obj)
    raise WitnessError(f"no witness for {claim!r} found with seed {seed} "
                       f"({len(_SIZES) * _TRIES} candidates); try another --seed")
