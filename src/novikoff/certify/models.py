"""Search a model of a satisfiable statement (a consistency check's, or a decision's whose goal
does not follow: a counterexample), untrusted: the kernel replays it.

Z3, with the nats as integers, finds values that satisfy the statement's facts.  They are often
algebraic (a square root's helper atom at sqrt(2)), which no exact rational replay can take, so
for an irrational value (helper atoms first) an atom under the root is set to a value that makes
the root rational (R = 3/4 for sqrt(1 + R^2)), or else the value itself to a simple rational near
it (a whole number, a half, a tenth, a denominator up to 100), and the facts are solved again,
until every value is rational.  What is found is checked by the kernel's checker before it is
kept.
"""

from __future__ import annotations

import json
import math
import time
from fractions import Fraction

import z3

from ..kernel.certificates import CertificateError, check_model, read_statement
from .search import z3_fact

__all__ = ["find_model"]

# At most this many values pinned per statement (each pin is a few more solves).
_MAX_PINS = 8
# The longest value kept as it is (check_model reads at most 400 characters).
_MAX_TEXT = 60


def find_model(statement_text: str, timeout_ms: int = 3000, budget_s: float = 20.0) -> dict | None:
    """A model that the kernel's checker accepts for the statement, or None (also when the
    search takes more than budget_s seconds).

    First every atom is a value of its own (with two fifths of the budget); then (a fifth each)
    the vectors are given whole coordinates in one, two and three dimensions and each inner
    product is theirs: what real vectors satisfy (Cauchy-Schwarz, Gram determinants) then holds
    by construction, and in one dimension the norm of a combination of vectors is a whole number,
    where free values leave it a square root."""
    facts, nats, integers = read_statement(statement_text)
    # Each share counted from its own start: a search can run past its deadline by a solver
    # call or two, which must not leave the next one no time (a loaded machine did).
    for dimensions, share in ((None, 0.4), (1, 0.2), (2, 0.2), (3, 0.2)):
        model = _search(facts, nats, integers, dimensions, timeout_ms,
                        time.monotonic() + share * budget_s)
        if model is not None:
            return model
    return None


def _search(facts, nats, integers, dimensions, timeout_ms: int,
            deadline: float) -> dict | None:
    variables: dict = {}
    # Free values: the nats are reals for nlsat, which is complete for real arithmetic (on the
    # margin perceptron's setting it answered in 0.03 s, where Z3's default solver with whole
    # nats gave up after 20 s), and a nat that comes out fractional is pinned to a whole number
    # below.  Coordinates are whole numbers: Z3's integer arithmetic.
    whole_nats = dimensions is not None
    wholes = nats | integers

    def variable(name: str) -> z3.ArithRef:
        if name not in variables:
            variables[name] = (z3.ToReal(z3.Int(name)) if name in wholes and whole_nats
                               else z3.Real(name))
        return variables[name]

    built = [z3_fact(f, variable) for f in facts]
    # Searched in a Z3 context of its own: Z3's search depends on the context's history (the
    # terms made before), and in a long-lived process the same search found a model alone and
    # none after other searches.
    ctx = z3.Context()
    solver = z3.Solver(ctx=ctx) if whole_nats else z3.Then(
        z3.Tactic("simplify", ctx), z3.Tactic("qfnra-nlsat", ctx), ctx=ctx).solver()
    solver.set("timeout", timeout_ms)
    solver.add([f.translate(ctx) for f in built])
    variables = {name: v.translate(ctx) for name, v in variables.items()}
    if dimensions is not None:
        _realise(solver, variables, dimensions)
    for _ in range(_MAX_PINS + 1):
        if time.monotonic() > deadline or solver.check() != z3.sat:
            return None
        model = solver.model()
        values = {name: _fraction(model.eval(v, model_completion=True))
                  for name, v in variables.items()}
        # irrational, or a rational too long for a model (the checker reads at most 400
        # characters a value); helper atoms first, the innermost (shortest) first: a value that
        # makes 1/Delta rational can make the roots around it rational too (1 + D^2/Delta^2)
        unwieldy = sorted((not name.startswith("!"), len(name), name)
                          for name, value in values.items()
                          if value is None or len(str(value)) > _MAX_TEXT
                          or (name in wholes and value.denominator != 1))
        if not unwieldy:
            return _checked(facts, nats, integers, values)
        name = unwieldy[0][-1]
        if name in wholes:  # at a fraction (or an irrational): the whole numbers around it
            if not _pin(solver, variables[name], _whole_near(
                    model.eval(variables[name], model_completion=True), name in nats),
                    deadline):
                return None
            continue
        # An atom under the root at a value that makes the root rational (1 + R^2 is a square
        # at R = 3/4), else the root itself at a rational near its value
        helper = variables[name]
        pinned = values[name] is None and any(
            _pin(solver, variables[a], _nice_near(values[a]), deadline, helper)
            for a in _inside(name) if a in variables and values.get(a) is not None) \
            or _pin(solver, helper, _near(model.eval(helper, model_completion=True)), deadline)
        if not pinned:
            return None
    return None


def _realise(solver: z3.Solver, variables: dict, dimensions: int) -> None:
    """Add <u, v> = the dot product of the coordinates of u and v for every inner product among
    the variables, each vector given that many whole coordinates (with real ones Z3 found values
    of hundreds of digits, and pinning them one by one ran past its timeout)."""
    coordinates: dict = {}

    def of(vector: str) -> list:
        if vector not in coordinates:  # ('#' is in no atom's name)
            coordinates[vector] = [z3.ToReal(z3.Int(f"#{i}:{vector}", solver.ctx))
                                   for i in range(dimensions)]
        return coordinates[vector]

    for name, var in list(variables.items()):
        pair = _vectors_of(name)
        if pair is not None:
            u, v = of(pair[0]), of(pair[1])
            solver.add(var == z3.Sum([a * b for a, b in zip(u, v)]))


def _vectors_of(name: str) -> tuple | None:
    """(u, v) of an inner product's name `<u, v>` (solver.atom_name), or None."""
    if not (name.startswith("<") and name.endswith(">")):
        return None
    body, depth = name[1:-1], 0
    for i, ch in enumerate(body):
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif depth == 0 and body.startswith(", ", i):
            return body[:i], body[i + 2:]
    return None


# Values at which sums of squares are squares (1 + (3/4)^2 = (5/4)^2, 1 + (5/12)^2 = (13/12)^2),
# and small whole numbers: tried for an atom under a square root, nearest first.
_PYTHAGOREAN = [Fraction(n) for n in range(0, 6)] + [
    Fraction(a, b) for a, b in ((3, 4), (4, 3), (5, 12), (12, 5), (8, 15), (15, 8), (7, 24),
                                (24, 7), (3, 5), (4, 5), (1, 2))]


def _inside(helper: str) -> list:
    """The atoms of a helper atom's argument (its name holds the argument's polynomials)."""
    try:
        polys = json.loads(helper[helper.index("["):])
        return sorted({atom for poly in polys for _, monomial in poly for atom, _ in monomial})
    except (ValueError, TypeError):
        return []


def _nice_near(value: Fraction) -> list:
    return [c for c in sorted(_PYTHAGOREAN, key=lambda c: abs(c - value)) if c != value][:8]


def _approx(value: z3.ExprRef) -> Fraction:
    """A value of Z3's model, or a rational within 10^-20 of it where it is algebraic."""
    exact = _fraction(value)
    return Fraction(value.approx(20).as_fraction()) if exact is None else exact


def _whole_near(value: z3.ExprRef, nat: bool) -> list:
    """The whole numbers (>= 0 for a nat) next to a value, nearest first."""
    approx = _approx(value)
    below = max(0, math.floor(approx)) if nat else math.floor(approx)
    return sorted({Fraction(below), Fraction(below + 1)}, key=lambda c: abs(c - approx))


def _near(value: z3.ExprRef) -> list:
    """Simple rationals near a value: whole, halves, tenths, denominators <= 100."""
    approx = _approx(value)
    return list(dict.fromkeys([Fraction(round(approx)), Fraction(round(2 * approx), 2),
                               Fraction(round(10 * approx), 10), approx.limit_denominator(100)]))


def _pin(solver: z3.Solver, var: z3.ArithRef, candidates, deadline: float,
         rational=None) -> bool:
    """Add var = the first candidate that keeps the facts satisfiable (and, given `rational`,
    makes that term's value rational); False when none does before the deadline."""
    for near in candidates:
        if time.monotonic() > deadline:
            return False
        solver.push()
        solver.add(var == z3.RealVal(f"{near.numerator}/{near.denominator}", solver.ctx))
        if solver.check() == z3.sat and (rational is None or _fraction(
                solver.model().eval(rational, model_completion=True)) is not None):
            return True
        solver.pop()
    return False


def _fraction(value: z3.ExprRef) -> Fraction | None:
    if isinstance(value, z3.IntNumRef):
        return Fraction(value.as_long())
    if isinstance(value, z3.RatNumRef):
        return Fraction(value.numerator_as_long(), value.denominator_as_long())
    return None


def _checked(facts, nats, integers, values: dict) -> dict | None:
    model = {"by": "model", "values": {name: str(value) for name, value in sorted(values.items())}}
    try:
        check_model(facts, nats, model, integers)
    except CertificateError:
        return None
    return model
