"""The exact replays: one function per claim kind, each deciding whether the run refutes it.

Everything is fractions.Fraction; vectors are tuples.  Each replay reads its fields (which checks
them), checks the claim's premises exactly, runs the algorithm as the notes state it, and returns
(refuted, summary).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from ._read import FORMAT, MAX_VISITS, MAX_WORK, Fields, WitnessError

__all__ = ["CLAIMS", "Outcome", "outcome"]

CLAIMS: dict[str, str] = {
    "normalising-preserves-run":
        "Scaling each example to unit length (or by any positive constant per example) does "
        "not change what the perceptron does, as scaling x_i does not change sign(w.x).",
    "batch-stop-separates":
        "The batch perceptron, run until ||Delta||_2 < epsilon, is guaranteed to find a "
        "separating hyperplane if one exists.",
    "hinge-bound-dataset-td":
        "With |x_i| <= 1 and ||w*|| = 1 the perceptron makes at most 1/gamma^2 + "
        "2 TD_gamma/gamma mistakes, TD_gamma being the hinge loss of the data set (each "
        "example counted once).",
    "converges-without-margin":
        "On linearly separable data (margin 0 allowed) the perceptron cycling through the data "
        "converges: it eventually stops making mistakes.",
    "converges-separable-with-bias":
        "On linearly separable data (a linear decision boundary, which may be affine) the "
        "perceptron without a bias term, cycling through the data, converges.",
}


@dataclass(frozen=True)
class Outcome:
    """What the exact replay of a witness showed."""

    claim: str       # the claim kind, a key of CLAIMS
    statement: str   # CLAIMS[claim]: the sentence the witness is meant to refute
    refuted: bool    # whether the replay exhibits the behaviour that contradicts it
    summary: str     # what the replay showed, with the numbers


# -- exact vectors -----------------------------------------------------------------------------

def _dot(u, v) -> Fraction:
    return sum((a * b for a, b in zip(u, v)), Fraction(0))


def _axpy(w, c, x) -> tuple[Fraction, ...]:
    """w + c*x."""
    return tuple(a + c * b for a, b in zip(w, x))


def _zero(d: int) -> tuple[Fraction, ...]:
    return (Fraction(0),) * d


def _sqrt(q: Fraction) -> Fraction | None:
    """sqrt(q) when it is rational (q >= 0 in lowest terms, both parts perfect squares)."""
    rn, rd = math.isqrt(q.numerator), math.isqrt(q.denominator)
    return Fraction(rn, rd) if rn * rn == q.numerator and rd * rd == q.denominator else None


def _show(q) -> str:
    """A number of a summary: exact when it is short, else its value to 6 digits and its size.
    A witness's fractions may have thousands of digits, which Python refuses to write out."""
    q = Fraction(q)
    if q.numerator.bit_length() + q.denominator.bit_length() <= 256:
        return str(q)
    try:
        value = f"{float(q):.6g}"
    except OverflowError:
        value = "-huge" if q < 0 else "huge"
    bits = q.numerator.bit_length() + q.denominator.bit_length()
    return f"{value} (a fraction of about {bits * 30103 // 100000 + 1} digits)"


def _vec(v) -> str:
    return "(" + ", ".join(_show(a) for a in v) + ")"


def _nums(v, limit: int = 24) -> str:
    v = [_show(a) for a in v]
    return "[" + ", ".join(v[:limit] + (["..."] if len(v) > limit else [])) + "]"


def _visits(epochs: int, length: int, X) -> None:
    """Refuse a replay too long to check (a witness is a small run).  Each visit is an exact dot
    product with the weights, a sum of examples: a weight's entry has the lcm of its column's
    denominators, so the work is visits x the 64-bit words of those entries (distinct 200-digit
    denominators would make every visit a gcd of numbers of thousands of digits)."""
    if epochs * length > MAX_VISITS:
        raise WitnessError(f"the run would visit {epochs} x {length} examples (at most "
                           f"{MAX_VISITS})")
    # At most MAX_WORK // visits words are allowed: stop counting (and computing the lcm, which
    # grows with every distinct denominator) as soon as they are exceeded.
    allowed, words = MAX_WORK // (epochs * length), 0
    for column in zip(*X):
        words += 1 + max(q.numerator.bit_length() for q in column) // 64
        lcm = 1
        for q in set(q.denominator for q in column):
            lcm = math.lcm(lcm, q)
            if words + lcm.bit_length() // 64 > allowed:
                break
        words += lcm.bit_length() // 64
        if words > allowed:
            break
    if words > allowed:
        raise WitnessError(f"the run would visit {epochs} x {length} examples of dimension "
                           f"{len(X[0])} whose entries take more than {allowed} 64-bit words "
                           f"(at most {MAX_WORK:,} visits x words)")


# -- the classic perceptron, cycling over an order ---------------------------------------------

@dataclass
class _Run:
    w: tuple[Fraction, ...]
    mistakes: list[tuple[int, int]]   # (visit number, example index) of every update
    epochs: int                       # epochs run
    converged: bool                   # the last epoch made no mistake


def _cyclic(X, y, order, epochs, *, stop_when_clean=True) -> _Run:
    """w0 = 0; for each visit i: if y_i<w, x_i> <= 0 then w += y_i x_i; pass after pass."""
    w, mistakes, t = _zero(len(X[0])), [], 0
    for e in range(1, epochs + 1):
        before = len(mistakes)
        for i in order:
            if y[i] * _dot(w, X[i]) <= 0:
                w = _axpy(w, y[i], X[i])
                mistakes.append((t, i))
            t += 1
        if stop_when_clean and len(mistakes) == before:
            return _Run(w, mistakes, e, True)
    return _Run(w, mistakes, epochs, False)


def _status(run: _Run) -> str:
    return (f"converged, epoch {run.epochs} clean" if run.converged
            else f"still making mistakes after {run.epochs} epochs")


# -- 1. normalising-preserves-run ---------------------------------------------------------------

def _normalising(f: Fields) -> tuple[bool, str]:
    X, y = f.data()
    n = len(X)
    order, epochs = f.order(n), f.count("max_epochs")
    _visits(epochs, len(order), X)
    if f.has("scales"):
        scales = f.positives("scales", n)
        how = f"scaled by {_nums(scales)}"
    else:
        scales = []
        for i, x in enumerate(X):
            r = _sqrt(_dot(x, x))
            if r is None:
                raise WitnessError(f"||X[{i}]||^2 = {_show(_dot(x, x))} is not the square of a "
                                   f"rational, so X[{i}] cannot be normalised exactly (use rows "
                                   f"such as (3, 4)), or give 'scales'")
            scales.append(1 / r)
        how = "normalised"
    Z = [tuple(c * a for a in x) for c, x in zip(scales, X)]
    _visits(epochs, len(order), Z)  # the scaled run's entries: 200-digit scales make them long
    a, b = _cyclic(X, y, order, epochs), _cyclic(Z, y, order, epochs)
    first = next((k for k, (p, q) in enumerate(zip(a.mistakes, b.mistakes)) if p != q), None)
    if first is None and len(a.mistakes) != len(b.mistakes):
        first = min(len(a.mistakes), len(b.mistakes))
    wrong_a = [i for i in range(n) if y[i] * _dot(a.w, X[i]) <= 0]
    wrong_b = [i for i in range(n) if y[i] * _dot(b.w, Z[i]) <= 0]
    text = (f"raw data: mistakes on examples {_nums(i for _, i in a.mistakes)} ({_status(a)}); "
            f"{how}: {_nums(i for _, i in b.mistakes)} ({_status(b)}); ")
    if first is not None:
        return True, text + f"the runs differ at update {first + 1}"
    if wrong_a != wrong_b:
        return True, text + (f"the same updates, but the final weights misclassify examples "
                             f"{wrong_a} (raw) and {wrong_b} ({how})")
    return False, text + "the same run (same updates, same final classification)"


# -- 2. batch-stop-separates --------------------------------------------------------------------

def _batch(f: Fields) -> tuple[bool, str]:
    X, y = f.data()
    n, d = len(X), len(X[0])
    w_star = f.vector("w_star", d)
    alpha, eps, T = f.positive("alpha"), f.positive("epsilon"), f.count("max_iterations")
    _visits(T, n, X)
    margins = [y[i] * _dot(w_star, X[i]) for i in range(n)]
    for i, m in enumerate(margins):
        if m <= 0:
            raise WitnessError(f"w_star does not separate the data: y[{i}]*<w_star, X[{i}]> = "
                               f"{_show(m)} <= 0")
    theta, stopped = _zero(d), 0
    for k in range(1, T + 1):
        delta = _zero(d)
        for i in range(n):
            if y[i] * _dot(X[i], theta) <= 0:
                delta = _axpy(delta, y[i], X[i])
        delta = tuple(a / n for a in delta)
        theta = _axpy(theta, alpha, delta)
        if _dot(delta, delta) < eps * eps:
            stopped = k
            break
    scores = [y[i] * _dot(X[i], theta) for i in range(n)]
    wrong = [i for i in range(n) if scores[i] <= 0]
    text = f"w_star = {_vec(w_star)} separates the data (margins {_nums(margins)}); "
    if not stopped:
        return False, text + f"the loop did not stop within {T} iterations"
    text += (f"the loop stopped after {stopped} iteration{'s' * (stopped > 1)} with "
             f"||Delta||^2 = {_show(_dot(delta, delta))} < epsilon^2 = {_show(eps * eps)}, at theta = "
             f"{_vec(theta)}, ")
    if wrong:
        return True, text + (f"which misclassifies example{'s' * (len(wrong) > 1)} {wrong} "
                             f"(y<x, theta> = {_nums(scores)})")
    return False, text + f"which separates the data (y<x, theta> = {_nums(scores)})"


# -- 3. hinge-bound-dataset-td ------------------------------------------------------------------

def _hinge(f: Fields) -> tuple[bool, str]:
    X, y = f.data()
    n, d = len(X), len(X[0])
    w_star, gamma = f.vector("w_star", d), f.positive("gamma")
    order, epochs = f.order(n), f.count("epochs")
    _visits(epochs, len(order), X)
    if _dot(w_star, w_star) != 1:
        raise WitnessError(f"||w_star||^2 = {_show(_dot(w_star, w_star))}: the bound needs a unit "
                           f"w_star, exactly (e.g. [\"3/5\", \"4/5\"])")
    for i, x in enumerate(X):
        if _dot(x, x) > 1:
            raise WitnessError(f"||X[{i}]||^2 = {_show(_dot(x, x))} > 1: the bound needs |x_i| <= 1")
    run = _cyclic(X, y, order, epochs, stop_when_clean=False)
    M = len(run.mistakes)
    hinge = [max(Fraction(0), gamma - y[i] * _dot(w_star, X[i])) for i in range(n)]
    td_data = sum(hinge, Fraction(0))
    td_seq = epochs * sum((hinge[i] for i in order), Fraction(0))
    bound_data = 1 / gamma ** 2 + 2 * td_data / gamma
    bound_seq = 1 / gamma ** 2 + 2 * td_seq / gamma
    refuted = M > bound_data
    return refuted, (
        f"M = {M} mistakes in {epochs} epochs (examples {_nums(i for _, i in run.mistakes)}); "
        f"TD over the data set = {_show(td_data)}, bound 1/gamma^2 + 2 TD/gamma = {_show(bound_data)} "
        f"{'<' if refuted else '>='} M; TD over the presented sequence = {_show(td_seq)}, bound "
        f"{_show(bound_seq)} {'>= M holds' if M <= bound_seq else '< M: VIOLATED, a bug'}")


# -- 4. converges-without-margin ----------------------------------------------------------------

def _no_margin(f: Fields) -> tuple[bool, str]:
    X, y = f.data()
    n, d = len(X), len(X[0])
    w_star = f.vector("w_star", d)
    order, epochs = f.order(n), f.count("max_epochs")
    _visits(epochs, len(order), X)
    if not any(w_star):
        raise WitnessError("w_star is the zero vector")
    margins = [y[i] * _dot(w_star, X[i]) for i in range(n)]
    for i, m in enumerate(margins):
        if m < 0:
            raise WitnessError(f"w_star does not separate the data: y[{i}]*<w_star, X[{i}]> = "
                               f"{_show(m)} < 0")
    boundary = [i for i in range(n) if margins[i] == 0]
    if not boundary:
        raise WitnessError(f"w_star separates with positive margin {_show(min(margins))}: this claim "
                           f"needs data separable with margin 0 (some y_i<w_star, x_i> = 0)")
    for i in boundary:
        if y[i] != 1:
            raise WitnessError(f"X[{i}] lies on w_star's boundary with label -1, which "
                               f"sign(<w_star, x>) with sign(0) = +1 gets wrong: w_star does "
                               f"not separate the data")
    text = (f"w_star = {_vec(w_star)} separates the data with margin 0 (y<w_star, x> = "
            f"{_nums(margins)}; the boundary examples {boundary} are labelled +1, and sign(0) "
            f"= +1); ")
    return _cycles(X, y, order, epochs, text)


# -- 5. converges-separable-with-bias ------------------------------------------------------------

def _bias_only(f: Fields) -> tuple[bool, str]:
    X, y = f.data()
    d = len(X[0])
    w_star, b_star = f.vector("w_star", d), f.number("b_star")
    order, epochs = f.order(len(X)), f.count("max_epochs")
    _visits(epochs, len(order), X)
    margins = [y[i] * (_dot(w_star, X[i]) + b_star) for i in range(len(X))]
    for i, m in enumerate(margins):
        if m <= 0:
            raise WitnessError(f"w_star, b_star do not separate the data: "
                               f"y[{i}]*(<w_star, X[{i}]> + b_star) = {_show(m)} <= 0")
    text = (f"the boundary <w_star, x> + b_star = 0 with w_star = {_vec(w_star)}, b_star = "
            f"{_show(b_star)} separates the data (y(<w_star, x> + b_star) = {_nums(margins)}, "
            f"all > 0); the perceptron without a bias term: ")
    return _cycles(X, y, order, epochs, text)


def _cycles(X, y, order, epochs, text) -> tuple[bool, str]:
    """Run the classic perceptron (w = 0, no bias) over the order for at most epochs passes:
    refuted (it makes mistakes forever) when a state (weights, position in the order) recurs
    with a mistake in between; converged when it recurs without one."""
    L, w, mistakes, seen = len(order), _zero(len(X[0])), [], {}
    for t in range(epochs * L):
        state = (w, t % L)
        if state in seen:
            t0, m0 = seen[state]
            if len(mistakes) == m0:  # a whole number of passes without a mistake
                return False, text + (f"the perceptron converged after {m0} mistakes "
                                      f"(no mistake from visit {t0} to visit {t})")
            loop = [i for _, i in mistakes[m0:]]
            return True, text + (f"the state (w = {_vec(w)}, position {t % L} of the order) "
                                 f"recurs at visits {t0} and {t} with {len(loop)} mistakes in "
                                 f"between (examples {_nums(loop)}), so the perceptron makes "
                                 f"mistakes forever")
        seen[state] = (t, len(mistakes))
        i = order[t % L]
        if y[i] * _dot(w, X[i]) <= 0:
            w = _axpy(w, y[i], X[i])
            mistakes.append((t, i))
    return False, text + (f"undecided: no state recurred within {epochs} epochs "
                          f"({len(mistakes)} mistakes)")


_KINDS = {
    "normalising-preserves-run": (("max_epochs",), ("order", "scales"), _normalising),
    "batch-stop-separates": (("w_star", "alpha", "epsilon", "max_iterations"), (), _batch),
    "hinge-bound-dataset-td": (("w_star", "gamma", "epochs"), ("order",), _hinge),
    "converges-without-margin": (("w_star", "max_epochs"), ("order",), _no_margin),
    "converges-separable-with-bias": (("w_star", "b_star", "max_epochs"), ("order",),
                                      _bias_only),
}


def outcome(obj: dict) -> Outcome:
    """Check and replay a witness given as its parsed JSON object."""
    if "format" not in obj:
        raise WitnessError("missing field 'format'")
    if obj["format"] != FORMAT:
        raise WitnessError(f"format {obj['format']!r} is not {FORMAT!r}")
    if "claim" not in obj:
        raise WitnessError("missing field 'claim'")
    claim = obj["claim"]
    if not isinstance(claim, str) or claim not in _KINDS:
        raise WitnessError(f"unknown claim kind {claim!r} (known: {', '.join(CLAIMS)})")
    required, optional, replay = _KINDS[claim]
    fields = Fields(obj, ("format", "claim", "X", "y") + required, ("note",) + optional)
    if "note" in obj and not isinstance(obj["note"], str):
        raise WitnessError("note must be a string")
    refuted, summary = replay(fields)
    return Outcome(claim, CLAIMS[claim], refuted, summary)
