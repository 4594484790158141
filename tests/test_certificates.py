"""Certificates: the kernel's checker accepts exact proofs only, and the shipped ones replay.

The checker (kernel/certificates.py) must refuse every certificate that does not prove its
statement: mutated stored certificates, certificates moved onto statements a solver found
satisfiable, and anything at all on a statement generated with a known model.
"""

from __future__ import annotations

import copy
import json
import math
import re
import subprocess
import sys
import time
from fractions import Fraction
from pathlib import Path

import pytest
import sympy as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from novikoff.certify.store import certificate_path, load_certificates
from novikoff.checker import Checker, bundled_proofs_dir, proof_files
from novikoff.kernel import certified
from novikoff.kernel.certificates import (CertificateError, canonical_statement, check,
                                          check_model, fact_atoms, parse_statement,
                                          poly_from_json, poly_mul, read_statement,
                                          statement_key)
from novikoff.kernel.certified import LEDGER
from novikoff.kernel.formulas import Relation
from novikoff.kernel.statements import statement_of

from helpers import PERCEPTRON  # noqa: E402  (tests/ is on sys.path)

PROOFS = bundled_proofs_dir()
CERTIFIED_FILES = [p for p in proof_files([PROOFS]) if certificate_path(Path(p)).is_file()]


def _poly(*terms):
    """[("c", {"x": 1, ...}), ...] as the JSON form."""
    return [[c, [[a, e] for a, e in sorted(m.items())]] for c, m in terms]


def _statement(*facts, nats=()):
    return canonical_statement(list(facts), nats)


def _leaf(products=(), squares=(), multiples=()):
    return {"by": "psatz", "products": list(products), "squares": list(squares),
            "multiples": list(multiples)}


# ---------------------------------------------------------------------------- the checker

GAMMA = _statement(["gt", _poly(("1", {"g": 1}))], ["ge", _poly(("-1", {"g": 1}))])


def _literal_index(text, fact):
    branch, _, _ = parse_statement(text)
    return branch.literals.index(fact)


def test_a_farkas_certificate_is_accepted():
    check(GAMMA, _leaf([["1", [0]], ["1", [1]]]))


@pytest.mark.parametrize("certificate, why", [
    (_leaf([["1", [0]], ["2", [1]]]), "not the zero polynomial"),
    (_leaf([["1", [0]]]), "not the zero polynomial"),
    (_leaf([["-1", [0]], ["-1", [1]]]), "must be > 0"),
    (_leaf([["1", [1]], ["1", [1]]]), "not the zero polynomial"),
    (_leaf([["1", [0]], ["1", [2]]]), "not an inequality"),
    (_leaf([["1.0", [0]], ["1", [1]]]), "exact rational"),
    (_leaf([[1, [0]], ["1", [1]]]), "exact rational"),
    ({"by": "psatz", "products": [["1", [0]], ["1", [1]]], "squares": [], "multiples": [],
      "extra": 1}, "malformed"),
    ({"by": "magic"}, "malformed"),
    (None, "malformed"),
    ({"by": "or", "at": 0, "cases": []}, "no compound"),
])
def test_the_checker_refuses(certificate, why):
    with pytest.raises(CertificateError, match=why):
        check(GAMMA, certificate)


def test_a_sum_of_zero_without_a_strict_product_is_refused():
    # p >= 0 and -p >= 0 hold at p = 0: their sum is 0, which contradicts nothing.
    text = _statement(["ge", _poly(("1", {"x": 1}))], ["ge", _poly(("-1", {"x": 1}))])
    with pytest.raises(CertificateError, match="strict"):
        check(text, _leaf([["1", [0]], ["1", [1]]]))


def test_cases_cuts_and_integer_splits():
    # x*x < 0 is impossible: a square.
    text = _statement(["gt", _poly(("-1", {"x": 2}))])
    check(text, _leaf([["1", [0]]], [["1", _poly(("1", {"x": 1})), []]]))
    # k > 0 and k < 1 for a nat k: the integer split k <= 0 | k >= 1.
    text = _statement(["gt", _poly(("1", {"k": 1}))], ["gt", _poly(("1", {}), ("-1", {"k": 1}))],
                      nats=["k"])
    low = _leaf([["1", [0]], ["1", [2]]])  # k + (0 - k) = 0, k > 0 strict
    high = _leaf([["1", [1]], ["1", [2]]])  # (1 - k) + (k - 1) = 0, 1 - k > 0 strict
    node = {"by": "integer", "poly": _poly(("1", {"k": 1})), "at": "0", "cases": [low, high]}
    check(text, node)
    with pytest.raises(CertificateError, match="nats"):
        check(text.replace('"nats":["k"]', '"nats":[]'), node)
    # a disjunction: (x > 1 or x > 2) and x <= 0
    text = _statement(["or", [["gt", _poly(("1", {"x": 1}), ("-1", {}))],
                              ["gt", _poly(("1", {"x": 1}), ("-2", {}))]]],
                      ["ge", _poly(("-1", {"x": 1}))])
    case = _leaf([["1", [0]], ["1", [1]], ["1", []]])
    check(text, {"by": "or", "at": 0, "cases": [case, _leaf([["1", [0]], ["1", [1]],
                                                              ["2", []]])]})
    with pytest.raises(CertificateError, match="2 cases"):
        check(text, {"by": "or", "at": 0, "cases": [case]})
    # a cut: x >= 1 from x > 2 ... then x <= 0 contradicts it (facts are sorted: literal 0 is
    # -x >= 0, literal 1 is x - 2 > 0; each branch adds its fact as literal 2)
    text = _statement(["gt", _poly(("1", {"x": 1}), ("-2", {}))], ["ge", _poly(("-1", {"x": 1}))])
    cut = {"by": "cut", "fact": ["ge", _poly(("1", {"x": 1}), ("-1", {}))],
           "proof": _leaf([["1", [1]], ["1", [2]], ["1", []]]),  # (x-2) + (1-x) + 1 = 0
           "then": _leaf([["1", [0]], ["1", [2]], ["1", []]])}  # -x + (x-1) + 1 = 0
    check(text, cut)


# ---------------------------------------------------------------------------- floor and ceil
# floor(a) and ceil(a) are helper atoms listed among the statement's integers: whole numbers
# of either sign, with f <= a < f + 1 (c - 1 < a <= c).  Integer splits may use them; a model
# must give them whole values.

def _whole_statement(kind: str, value: Fraction, n: int):
    """The kernel's statement of 'X = value gives kind(X) = n', and the name of kind(X)'s atom."""
    x = sp.Symbol("X", real=True)
    term = sp.floor(x) if kind == "floor" else sp.ceiling(x)
    statement = statement_of((Relation("=", x, sp.Rational(value.numerator, value.denominator)),),
                             Relation("=", term, n))
    atoms = set().union(*(fact_atoms(f, set()) for f in statement.facts))
    (whole,) = atoms - {"X"}
    return statement, whole


@settings(max_examples=150, deadline=None)
@given(kind=st.sampled_from(["floor", "ceil"]),
       value=st.fractions(min_value=-20, max_value=20, max_denominator=6),
       n=st.integers(-21, 21), guess=st.integers(-21, 21))
def test_floor_and_ceil_have_exactly_their_whole_value(kind, value, n, guess):
    """With X = value, the statement 'kind(X) = n' negated has a model exactly where the
    helper atom takes kind(value) (and that is not n): the definitions pin it, and it is whole."""
    statement, whole = _whole_statement(kind, value, n)
    assert statement.integers == {whole} and '"integers":[' in statement.text
    truth = math.floor(value) if kind == "floor" else math.ceil(value)
    for v in {Fraction(guess), Fraction(truth), truth + Fraction(1, 2)}:
        model = _model(X=value, **{whole: v})
        if v == truth and truth != n:
            check_model(statement.facts, statement.nats, model, statement.integers)
        else:
            with pytest.raises(CertificateError):
                check_model(statement.facts, statement.nats, model, statement.integers)


def test_an_integer_split_is_allowed_on_the_integers_only():
    """T > floor(a), T <= a: T - floor(a) > 0 is >= 1 for whole numbers; refused once floor(a)
    is not listed among the integers, or on a real atom."""
    f = "!floor[a]"
    facts = [["gt", _poly(("1", {"T": 1}), ("-1", {f: 1}))],  # T - f > 0
             ["ge", _poly(("1", {"a": 1}), ("-1", {"T": 1}))],  # a - T >= 0
             ["gt", _poly(("1", {f: 1}), ("1", {}), ("-1", {"a": 1}))]]  # f + 1 - a > 0
    text = canonical_statement(facts, ["T"], [f])
    assert text.endswith(f',"integers":{json.dumps([f])}}}')
    split = _poly(("1", {"T": 1}), ("-1", {f: 1}))
    literals = parse_statement(text)[0].literals
    t_minus_f, a_minus_t, f_above = (_literal_index(text, (k, poly_from_json(p)))
                                     for k, p in facts)
    low = _leaf([["1", [t_minus_f]], ["1", [len(literals)]]])  # P > 0 and -P >= 0
    high = _leaf([["1", [a_minus_t]], ["1", [f_above]], ["1", [len(literals)]]])
    node = {"by": "integer", "poly": split, "at": "0", "cases": [low, high]}
    check(text, node)
    with pytest.raises(CertificateError, match="integers"):
        check(canonical_statement(facts, ["T"]), node)
    moved = canonical_statement([[k, json.loads(json.dumps(p).replace(f, "b"))]
                                 for k, p in facts], ["T"], [f])
    with pytest.raises(CertificateError, match="integers"):
        check(moved, json.loads(json.dumps(node).replace(f, "b")))
    # a model gives an integer a whole value, of either sign
    facts_only, nats, integers = read_statement(text)
    with pytest.raises(CertificateError, match="whole"):
        check_model(facts_only, nats, _model(T=0, a=Fraction(-1, 2), **{f: Fraction(-1, 2)}),
                    integers)
    with pytest.raises(CertificateError, match="false"):
        check_model(facts_only, nats, _model(T=0, a=Fraction(-1, 2), **{f: -1}), integers)


# ---------------------------------------------------------------------------- cut nodes
# A cut proves an intermediate fact F in the branch with F negated ("proof"), then uses F as a
# hypothesis in the branch with it ("then").  Here: x >= 0 alone, which x = 0 satisfies.

SATISFIABLE = _statement(["ge", _poly(("1", {"x": 1}))])
NEGATIVE = ["ge", _poly(("-1", {"x": 1}), ("-1", {}))]  # -x - 1 >= 0, false where x >= 0
# With F = -x - 1 >= 0 as literal 1: x + (-x - 1) + 1 = 0, the constant 1 > 0: a valid leaf.
USES_THE_CUT = _leaf([["1", [0]], ["1", [1]], ["1", []]])


def _cut(fact, proof, then):
    return {"by": "cut", "fact": fact, "proof": proof, "then": then}


def test_a_cut_whose_own_proof_is_wrong_is_refused():
    # the branch with F negated (x + 1 > 0 as literal 1) is satisfiable: no proof closes it
    for proof in (USES_THE_CUT, _leaf([["1", [1]]]), _leaf([["1", [0]], ["1", [1]]]),
                  {"by": "or", "at": 0, "cases": []}):
        with pytest.raises(CertificateError):
            check(SATISFIABLE, _cut(NEGATIVE, proof, USES_THE_CUT))


def test_a_cut_cannot_smuggle_its_fact_into_its_own_proof():
    # The leaf that closes the branch with F closes it only there: in the proof branch literal
    # 1 is F negated (x + 1 > 0), and the same indices add up to 2x + 2, not 0.
    with pytest.raises(CertificateError, match="not the zero polynomial"):
        check(SATISFIABLE, _cut(NEGATIVE, USES_THE_CUT, USES_THE_CUT))
    # nor can a cut of the goal itself, nested, or a cut of a compound, prove anything
    nested = _cut(NEGATIVE, _cut(NEGATIVE, USES_THE_CUT, USES_THE_CUT), USES_THE_CUT)
    with pytest.raises(CertificateError):
        check(SATISFIABLE, nested)
    for kind in ("ne", "or", "and"):
        fact = [kind, NEGATIVE[1]] if kind == "ne" else [kind, [NEGATIVE]]
        with pytest.raises(CertificateError, match="cut: the fact"):
            check(SATISFIABLE, _cut(fact, USES_THE_CUT, USES_THE_CUT))
    for fact in (["ge"], ["ge", _poly(("1.5", {"x": 1}))], "x >= 1", None):
        with pytest.raises(CertificateError):
            check(SATISFIABLE, _cut(fact, USES_THE_CUT, USES_THE_CUT))


def test_cut_depth_and_size_bombs_are_refused():
    # nested 100 deep: past the checker's depth bound, refused before any leaf is checked
    node = USES_THE_CUT
    for _ in range(100):
        node = _cut(NEGATIVE, node, node)
    with pytest.raises(CertificateError, match="too deep or too large"):
        check(GAMMA, node)
    # a tree of 2^16 leaves shares its subtrees in memory, but the checker counts nodes
    node = _leaf([["1", [0]], ["1", [1]]])
    for _ in range(16):
        node = _cut(["ge", _poly(("1", {"g": 1}))], node, node)
    with pytest.raises(CertificateError, match="too deep or too large"):
        check(GAMMA, node)
    # a cut fact over the size bounds
    huge = [["1", [["x", 1], ["y" + str(i), 1]]] for i in range(6000)]
    with pytest.raises(CertificateError, match="list of terms"):
        check(GAMMA, _cut(["ge", huge], USES_THE_CUT, USES_THE_CUT))
    # a cut whose square is too large to multiply out
    wide = [["1", [["y" + str(i), 1]]] for i in range(200)]
    square = _leaf([["1", [0]]], [["1", wide, []]])
    with pytest.raises(CertificateError, match="too much arithmetic|not the zero"):
        check(GAMMA, _cut(["ge", wide], square, square))


def test_a_sound_cut_is_accepted():
    # GAMMA: -g >= 0 (literal 0) and g > 0 (literal 1).  Cut g >= 0: its proof has -g > 0 as
    # literal 2 (g + -g = 0, both strict); then -g + g = 0 with g > 0 strict.
    fact = ["ge", _poly(("1", {"g": 1}))]
    proof = _leaf([["1", [1]], ["1", [2]]])
    then = _leaf([["1", [0]], ["1", [1]]])
    check(GAMMA, _cut(fact, proof, then))
    with pytest.raises(CertificateError):  # the proof's literal moved: -g + -g is not 0
        check(GAMMA, _cut(fact, _leaf([["1", [0]], ["1", [2]]]), then))


def test_equalities_are_multiplied():
    # y^2 = 1 and y^2 < 1/2
    text = _statement(["eq", _poly(("1", {"y": 2}), ("-1", {}))],
                      ["gt", _poly(("1/2", {}), ("-1", {"y": 2}))])
    check(text, _leaf([["1", [1]], ["1/2", []]], multiples=[[_poly(("1", {})), 0]]))
    with pytest.raises(CertificateError, match="equality"):
        check(text, _leaf([["1", [1]], ["1/2", []]], multiples=[[_poly(("1", {})), 1]]))


# ---------------------------------------------------------------------------- false statements

_ATOMS = ("a", "b", "c")
_small = st.fractions(min_value=-3, max_value=3, max_denominator=3)


@st.composite
def false_obligations(draw):
    """(statement text, its literals' count): facts that all hold at a drawn rational point."""
    point = {a: draw(_small) for a in _ATOMS}
    facts = []
    for _ in range(draw(st.integers(1, 5))):
        terms = {}
        for _ in range(draw(st.integers(1, 3))):
            mono = tuple(sorted({a: draw(st.integers(1, 2)) for a in
                                 draw(st.sets(st.sampled_from(_ATOMS), max_size=2))}.items()))
            terms[mono] = terms.get(mono, 0) + draw(st.integers(-3, 3))
        value = sum(Fraction(c) * _value(m, point) for m, c in terms.items())
        terms[()] = terms.get((), 0) - value + draw(st.sampled_from([0, 0, 1]))
        poly = [[str(Fraction(c)), [[a, e] for a, e in m]] for m, c in terms.items() if c]
        total = sum(Fraction(c) * _value(m, point) for m, c in terms.items())
        kind = "eq" if total == 0 and draw(st.booleans()) else "gt" if total > 0 else "ge"
        facts.append([kind, poly])
        if draw(st.booleans()):  # its opposite too, where it holds (p = 0 at the point)
            if total == 0:
                facts.append(["ge", [[str(-Fraction(c)), m] for c, m in poly]])
    return _statement(*facts), point


def _value(monomial, point):
    out = Fraction(1)
    for a, e in monomial:
        out *= point[a] ** e
    return out


@st.composite
def certificates(draw, size: int):
    literal = st.integers(0, max(size - 1, 0))
    coefficient = st.sampled_from(["1", "2", "1/2", "3", "1/3"])
    poly = st.lists(st.tuples(coefficient, st.sampled_from(_ATOMS), st.integers(1, 2)),
                    max_size=3).map(lambda ts: [[c, [[a, e]]] for c, a, e in
                                                {a: (c, a, e) for c, a, e in ts}.values()])
    return _leaf(draw(st.lists(st.tuples(coefficient, st.lists(literal, max_size=3))
                               .map(list), min_size=1, max_size=6)),
                 draw(st.lists(st.tuples(coefficient, poly, st.lists(literal, max_size=2))
                               .map(list), max_size=2)),
                 draw(st.lists(st.tuples(poly, literal).map(list), max_size=2)))


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_no_certificate_is_accepted_for_a_satisfiable_statement(data):
    text, point = data.draw(false_obligations())
    branch, _, _ = parse_statement(text)
    for kind, p in branch.literals:  # the drawn point satisfies every fact
        value = sum(c * _value(m, point) for m, c in p.items())
        assert {"ge": value >= 0, "gt": value > 0, "eq": value == 0}[kind]
    certificate = data.draw(certificates(len(branch.literals)))
    with pytest.raises(CertificateError):
        check(text, certificate)
    # a cut of any fact, its proof and its use drawn alike (each branch has one more literal)
    fact = [data.draw(st.sampled_from(["ge", "gt", "eq"])),
            [[c, [[a, 1]]] for c, a in data.draw(st.lists(
                st.tuples(st.sampled_from(["1", "-1", "2", "-1/2"]), st.sampled_from(_ATOMS)),
                min_size=1, max_size=3, unique_by=lambda t: t[1]))]]
    inner = certificates(len(branch.literals) + 1)
    cut = {"by": "cut", "fact": fact, "proof": data.draw(inner), "then": data.draw(inner)}
    with pytest.raises(CertificateError):
        check(text, cut)


# ---------------------------------------------------------------------------- models

def _model(**values):
    return {"by": "model", "values": {a: str(v) for a, v in values.items()}}


def _check_model(text, model):
    facts, nats, integers = read_statement(text)
    check_model(facts, nats, model, integers)


# k is a nat with k*g >= 1, g > 0: satisfied at k = 2, g = 1/2
NAT_GAMMA = _statement(["ge", _poly(("1", {"k": 1, "g": 1}), ("-1", {}))],
                       ["gt", _poly(("1", {"g": 1}))], nats=["k"])


def test_a_model_that_satisfies_every_fact_is_accepted():
    _check_model(NAT_GAMMA, _model(k=2, g=Fraction(1, 2)))
    _check_model(NAT_GAMMA, _model(k=3, g=Fraction(1, 3)))


@pytest.mark.parametrize("model, why", [
    (_model(k=1, g=Fraction(1, 3)), "false in the model"),
    (_model(k=Fraction(5, 2), g=1), "not a whole number"),
    (_model(k=-1, g=-1), "not a whole number"),
    (_model(g=1), "every atom"),
    (_model(k=1, g=1, h=0), "every atom"),
    ({"by": "model", "values": {"k": 1, "g": "1"}}, "exact rational"),
    ({"by": "model", "values": {"k": "1.0", "g": "1"}}, "exact rational"),
    ({"by": "model", "values": {"k": "1", "g": "1"}, "extra": 1}, "a model is"),
    ({"by": "psatz", "values": {"k": "1", "g": "1"}}, "a model is"),
    (None, "a model is"),
])
def test_the_model_checker_refuses(model, why):
    with pytest.raises(CertificateError, match=why):
        _check_model(NAT_GAMMA, model)


def test_a_model_is_never_accepted_for_a_statement_a_certificate_shows_contradictory():
    """GAMMA (g > 0 and -g >= 0) has a certificate: no value of g is a model of it."""
    check(GAMMA, _leaf([["1", [0]], ["1", [1]]]))
    for g in (-1, 0, Fraction(1, 2), 1, 10**6):
        with pytest.raises(CertificateError):
            _check_model(GAMMA, _model(g=g))


def _satisfied(text, point) -> bool:
    """Whether every fact holds at the point, evaluated apart from the kernel (SymPy)."""
    def holds(fact):
        kind, body = fact
        if kind in ("and", "or"):
            return (all if kind == "and" else any)(holds(f) for f in body)
        value = sum(sp.Rational(c) * sp.Mul(*[sp.Rational(point[a]) ** e for a, e in m])
                    for c, m in body)
        return {"ge": value >= 0, "gt": value > 0, "eq": value == 0, "ne": value != 0}[kind]
    return all(holds(f) for f in json.loads(text)["facts"])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_a_model_is_accepted_exactly_where_every_fact_holds(data):
    """At the drawn point of a statement (which satisfies it) and at any other point, the model
    checker agrees with an evaluation apart from it: never a model where a fact fails."""
    text, point = data.draw(false_obligations())
    atoms = sorted({a for f in json.loads(text)["facts"] for _, m in f[1] for a, _ in m})
    _check_model(text, _model(**{a: point[a] for a in atoms}))
    other = {a: data.draw(_small) for a in atoms}
    if _satisfied(text, other):
        _check_model(text, _model(**other))
    else:
        with pytest.raises(CertificateError):
            _check_model(text, _model(**other))


# ---------------------------------------------------------------------------- the library

@pytest.fixture(scope="module")
def replayed():
    """key -> (statement, certificate) of every certificate the library's check replayed, and
    the statements a solver found satisfiable on the way."""
    LEDGER.recording, LEDGER.statements, LEDGER.satisfiable = True, {}, {}
    LEDGER.used, LEDGER.store = {}, {}  # (earlier tests in this process may have replayed some)
    built = certified.statement_of
    certified.statement_of = _kept(built)
    try:
        checker = Checker(timeout_ms=5000)
        reports = [checker.check_file(p) for p in CERTIFIED_FILES]
        used = {k: (LEDGER.statements[k], c) for k, c in LEDGER.used.items()}
        satisfiable = list(LEDGER.satisfiable.values())
    finally:
        certified.statement_of = built
        LEDGER.recording, LEDGER.store, LEDGER.used = False, {}, {}
        LEDGER.pending, LEDGER.statements, LEDGER.satisfiable = {}, {}, {}
    return reports, used, satisfiable


_STATEMENTS: list = []  # every Statement the kernel built in the library's check


def _kept(build):
    def keeping(*args):
        statement = build(*args)
        _STATEMENTS.append(statement)
        return statement
    return keeping


def test_the_kernel_hands_the_checker_the_facts_of_its_text(replayed):
    """The kernel replays a certificate on the facts it built, not on its statement's text
    parsed again: they must be the facts the text says, in its order (its key is the text's)."""
    assert len(_STATEMENTS) > 500
    renamed = 0
    for statement in _STATEMENTS:
        facts, nats, integers = read_statement(statement.text)
        assert (list(statement.facts), statement.nats, statement.integers) == (
            facts, nats, integers), statement.text[:300]
        assert statement.key == statement_key(statement.text)
        renamed += "~1" in statement.text or "dummy_index=1" in statement.text
    assert renamed > 50  # the statements whose fresh symbols are numbered are among them


def test_the_library_ships_certificates():
    assert len(CERTIFIED_FILES) >= 10, CERTIFIED_FILES


def test_every_stored_certificate_replays(replayed):
    _, used, _ = replayed
    stored = {k for p in CERTIFIED_FILES for k in load_certificates(Path(p))}
    # A kernel change that restates an obligation leaves its old certificate unused until
    # `novikoff certify` runs again (it keeps only what the check used or found).
    assert stored and len(stored - set(used)) <= len(stored) // 20, len(stored - set(used))


def _leaves(node):
    if node["by"] == "psatz":
        yield node
    for child in node.get("cases", []):
        yield from _leaves(child)
    for key in ("proof", "then"):
        if key in node:
            yield from _leaves(node[key])


def _cut_nodes(node):
    if node["by"] == "cut":
        yield node
    for child in node.get("cases", []):
        yield from _cut_nodes(child)
    for key in ("proof", "then"):
        if key in node:
            yield from _cut_nodes(node[key])


def _term_polys(text, certificate):
    """Per leaf (in _leaves order): the polynomial of each term, from the checker's arithmetic
    (only the root branch's literals are known here: leaves under cases are skipped)."""
    branch, _, _ = parse_statement(text)
    literals = branch.literals
    if certificate["by"] != "psatz":
        return None
    polys = []
    for c, idx in certificate["products"]:
        p = {(): Fraction(c)}
        for i in idx:
            p = poly_mul(p, literals[i][1])
        polys.append(p)
    return literals, polys


def _mutants(text, certificate):
    """Mutations that make any certificate wrong: a coefficient negated or changed, a term
    dropped, a literal moved (onto one with another polynomial)."""
    out = []
    for n, leaf in enumerate(_leaves(certificate)):
        for field in ("products", "squares"):
            for i, term in enumerate(leaf[field]):
                negated = copy.deepcopy(certificate)
                list(_leaves(negated))[n][field][i][0] = "-" + term[0]
                out.append(("negated", negated))
    for n, _ in enumerate(_cut_nodes(certificate)):  # a cut of the opposite fact
        negated = copy.deepcopy(certificate)
        fact = list(_cut_nodes(negated))[n]["fact"]
        fact[1] = [["-" + c if not c.startswith("-") else c[1:], m] for c, m in fact[1]]
        out.append(("cut negated", negated))
    if certificate["by"] == "psatz":
        literals, polys = _term_polys(text, certificate)
        for i, p in enumerate(polys):
            if not p:
                continue  # a product that is zero (0 > 0): changing it changes nothing
            changed = copy.deepcopy(certificate)
            c = Fraction(changed["products"][i][0])
            changed["products"][i][0] = str(c * 3)
            out.append(("changed", changed))
            dropped = copy.deepcopy(certificate)
            del dropped["products"][i]
            out.append(("dropped", dropped))
            idx = certificate["products"][i][1]
            if idx:
                for j, (kind, q) in enumerate(literals):
                    if kind in ("ge", "gt") and q != literals[idx[0]][1]:
                        moved = copy.deepcopy(certificate)
                        moved["products"][i][1][0] = j
                        out.append(("moved", moved))
                        break
        for i, (q, e) in enumerate(certificate["multiples"]):
            if poly_from_json(q) and literals[e][1]:
                dropped = copy.deepcopy(certificate)
                del dropped["multiples"][i]
                out.append(("dropped", dropped))
    return out


def test_every_mutated_certificate_is_refused(replayed):
    _, used, _ = replayed
    tried = cuts = 0
    for key, (text, certificate) in used.items():
        for what, mutant in _mutants(text, certificate):
            tried += 1
            cuts += what == "cut negated"
            with pytest.raises(CertificateError):
                check(text, mutant)
    assert tried >= 200, tried
    assert cuts >= 5, cuts  # the cut nodes' facts are mutated too


def test_no_certificate_moves_onto_a_satisfiable_statement(replayed):
    _, used, satisfiable = replayed
    # satisfiable: what a solver found so, and what a stored model shows so (the checker
    # accepted the model: values at which every fact holds)
    satisfiable = satisfiable + [text for text, c in used.values() if c["by"] == "model"]
    assert len(satisfiable) >= 20, len(satisfiable)
    certificates_ = [c for _, c in used.values() if c["by"] != "model"]
    for text in satisfiable[::max(1, len(satisfiable) // 60)]:
        for certificate in certificates_[::3]:
            with pytest.raises(CertificateError):
                check(text, certificate)


def test_the_library_steps_are_certified(replayed):
    """Every verified step of the bundled library rests on stored certificates, none on a
    solver alone."""
    reports, _, _ = replayed
    verified = [s for r in reports for s in r.steps if s.status == "verified"]
    solver = [f"{s.file}:{s.line}: {s.text}" for s in verified if s.basis != "certified"]
    assert verified and not solver, solver


_BLOCKED = """
import sys
class Block:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("z3", "cvc5"):
            raise ImportError(name + " is blocked")
sys.meta_path.insert(0, Block())
from novikoff.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_certified_lemmas_are_verified_without_any_solver(replayed, tmp_path):
    """With Z3 and cvc5 unimportable, the lemmas whose every step the check with them calls
    certified are verified again, the stored certificates and models (the settings, givens and
    steps shown consistent) alone carrying them (every satisfiable check of the library has a
    model)."""
    reports, _, _ = replayed
    certified = {(Path(s.file).name, s.line, s.column) for r in reports for s in r.steps
                 if s.basis == "certified"}
    whole = {(Path(r.path).name, lemma.name) for r in reports for lemma in r.lemmas
             if lemma.status == "verified" and lemma.steps
             and all(s.basis == "certified" for s in lemma.steps)}
    done = subprocess.run([sys.executable, "-c", _BLOCKED, "check", "--json",
                           *map(str, CERTIFIED_FILES)], capture_output=True, text=True)
    data = json.loads(done.stdout)
    steps = {(Path(s["file"]).name, s["line"], s["column"]): s for s in data["steps"]}
    again = {k for k, s in steps.items() if s["basis"] == "certified"}
    verified = {(Path(lemma["file"]).name, lemma["name"]) for lemma in data["lemmas"]
                if lemma["status"] == "verified"}
    assert len(whole) >= 100 and whole <= verified, sorted(whole - verified)
    assert certified <= again, (len(certified), sorted(certified - again))
    # The false steps fail again, each by a stored counterexample (a model of its hypotheses
    # and negated goal), where without one it would be unknown.
    expected = {(Path(s.file).name, s.line, s.column) for r in reports for s in r.steps
                if s.status == "expected_failure"}
    failing = {k for k, s in steps.items() if s["status"] == "expected_failure"}
    assert len(expected) >= 20 and expected <= failing, sorted(expected - failing)


# ---------------------------------------------------------------------------- the commands

PROGRESS = PERCEPTRON + """
lemma progress: <w_star, w[k]> >= k*gamma
proof by induction on k:
  base:
    <w_star, w[0]> = 0                                   by start
  step:
    <w_star, w[k+1]> = <w_star, w[k] + y*x>              by update
                     = <w_star, w[k]> + y*<w_star, x>
                     >= k*gamma + gamma                  by ih, margin
                     = (k+1)*gamma
"""


def _check_json(capsys, *args):
    from novikoff.cli import main

    code = main(["check", "--json", *map(str, args)])
    data = json.loads(capsys.readouterr().out)
    return code, {s["line"]: s for s in data["steps"]}


@pytest.fixture(scope="module")
def certified_once(tmp_path_factory):
    """PROGRESS certified by `novikoff certify`, once for the tests below (16 s each)."""
    from novikoff.cli import main

    path = tmp_path_factory.mktemp("certified") / "progress.proof"
    path.write_text(PROGRESS, encoding="utf-8")
    assert main(["certify", str(path)]) == 0
    assert certificate_path(path).is_file()
    return path


@pytest.fixture
def certified_file(certified_once, tmp_path, capsys):
    """A copy of the certified file and of its certificates, which each test may edit
    (certificates are keyed by the statements, not by the file's path)."""
    capsys.readouterr()
    path = tmp_path / certified_once.name
    path.write_text(certified_once.read_text(encoding="utf-8"), encoding="utf-8")
    stored = certificate_path(path)
    stored.parent.mkdir(parents=True, exist_ok=True)
    stored.write_text(certificate_path(certified_once).read_text(encoding="utf-8"),
                      encoding="utf-8")
    return path


def test_certify_then_check_replays(certified_file, capsys):
    code, steps = _check_json(capsys, certified_file)
    assert code == 0
    assert {s["basis"] for s in steps.values()} == {"certified"}, steps
    code, steps = _check_json(capsys, "--require-certificates", certified_file)
    assert code == 0 and {s["status"] for s in steps.values()} == {"verified"}
    # for that command only: what this process checks next needs no certificate
    assert LEDGER.required is False


def test_an_edited_step_loses_only_its_own_certificate(certified_file, capsys):
    text = PROGRESS.replace("by ih, margin", "by ih, margin, radius")  # one more hypothesis
    certified_file.write_text(text, encoding="utf-8")
    code, steps = _check_json(capsys, certified_file)
    assert code == 0
    line = text.splitlines().index(next(t for t in text.splitlines() if "radius" in t
                                         and "by" in t)) + 1
    solver = {n for n, s in steps.items() if s["basis"] == "solver"}
    assert solver == {line}, steps
    assert sum(1 for s in steps.values() if s["basis"] == "certified") >= 2
    code, steps = _check_json(capsys, "--require-certificates", certified_file)
    assert code == 1
    assert any(s["status"] == "unknown" and "certificate" in s["reason"]
               for s in steps.values())


def test_a_tampered_certificate_is_not_replayed(certified_file, capsys):
    path = certificate_path(certified_file)
    data = json.loads(path.read_text(encoding="utf-8"))
    for key, certificate in data["certificates"].items():
        for leaf in _leaves(certificate):  # (doubling every term would still be a proof)
            leaf["products"][0][0] = "-" + leaf["products"][0][0]
    path.write_text(json.dumps(data), encoding="utf-8")
    code, steps = _check_json(capsys, certified_file)
    assert code == 0  # Z3 still decides
    assert all(s["basis"] == "solver" for s in steps.values() if s["status"] == "verified")
    code, _ = _check_json(capsys, "--require-certificates", certified_file)
    assert code == 1


def test_a_malformed_certificate_file_is_a_usage_error(certified_file, capsys):
    from novikoff.cli import main

    certificate_path(certified_file).write_text("{not json", encoding="utf-8")
    code = main(["check", str(certified_file)])
    out = capsys.readouterr()
    assert code == 2
    assert "not a certificate file" in out.out + out.err


def test_certify_a_folder_certifies_its_notes_too(tmp_path, capsys):
    """`novikoff check DIR` checks the notes of DIR (a .md with a novikoff block): `certify DIR`
    stores their certificates too, and the check replays them."""
    from novikoff.cli import main

    notes = tmp_path / "notes.md"
    text = Path(PROOFS / "notes" / "seed_001_perceptron_notes.md").read_text(encoding="utf-8")
    notes.write_text(text[:text.index("```novikoff\nlemma relabel")], encoding="utf-8")
    assert main(["certify", str(tmp_path)]) == 0
    capsys.readouterr()
    assert certificate_path(notes).is_file()
    code = main(["check", "--json", str(tmp_path)])
    steps = json.loads(capsys.readouterr().out)["steps"]
    assert code == 0 and steps
    assert {s["basis"] for s in steps if s["status"] == "verified"} == {"certified"}, steps


ROOTED = """
setting s:
  real R > 0, b, c
  assume bound: b*sqrt(1 + R^2) <= c

lemma claim: b*sqrt(1 + R^2) <= c + 1
proof:
  b*sqrt(1 + R^2) <= c        by bound
                  <= c + 1
"""


def test_certify_stores_models_and_the_check_needs_no_solver(tmp_path, capsys):
    """`novikoff certify` keeps a model of each consistency check (sqrt(1 + R^2) made rational:
    R = 3/4 gives 5/4), and with Z3 and cvc5 unimportable the lemma is verified on the stored
    certificates and models alone; without the models it is not."""
    from novikoff.cli import main

    path = tmp_path / "rooted.proof"
    path.write_text(ROOTED, encoding="utf-8")
    assert main(["certify", str(path)]) == 0
    capsys.readouterr()
    stored = load_certificates(path)
    models = [c for c in stored.values() if c["by"] == "model"]
    assert any(atom.startswith("!sqrt") for m in models for atom in m["values"]), models

    def blocked_check():
        done = subprocess.run([sys.executable, "-c", _BLOCKED, "check", "--json", str(path)],
                              capture_output=True, text=True)
        return {lemma["name"]: lemma["status"] for lemma in json.loads(done.stdout)["lemmas"]}

    assert blocked_check() == {"claim": "verified"}
    certificate_path(path).write_text(json.dumps({"format": "novikoff-certificates/1",
                                                  "certificates": {
        k: c for k, c in stored.items() if c["by"] != "model"}}), encoding="utf-8")
    assert blocked_check()["claim"] == "failed"  # (its setting not shown consistent)


BOUNDED = """
setting s:
  real b, c
  assume bound: b <= c

lemma claim: b <= c + 1
  given small: c <= 1
proof:
  b <= c        by bound
    <= c + 1
"""


def test_consistency_shown_by_a_solver_alone_is_not_enough_when_certificates_are_required(
        tmp_path, capsys, monkeypatch):
    """Under --require-certificates a setting (and a lemma's givens) shown consistent only by a
    solver's model, where no model is stored or found on the fly (the search made to find
    none here), is not shown: no lemma of it is verified, and the reason says what is missing.
    `novikoff certify` stores models of both checks, and then the same check verifies it."""
    from novikoff.cli import main

    monkeypatch.setattr(LEDGER, "model_searcher", lambda text: None)
    path = tmp_path / "bounded.proof"
    path.write_text(BOUNDED, encoding="utf-8")
    code, steps = _check_json(capsys, path)
    assert code == 0  # a solver shows both consistent
    code, steps = _check_json(capsys, "--require-certificates", path)
    assert code == 1
    assert steps[2]["status"] == "unknown" and "no stored model" in steps[2]["reason"], steps
    given = next(s for s in steps.values() if s["text"].startswith("given"))
    assert given["status"] == "unknown" and "by a stored model" in given["reason"], given
    assert main(["certify", str(path)]) == 0
    stored = json.loads(certificate_path(path).read_text(encoding="utf-8"))["certificates"]
    assert sum(1 for c in stored.values() if c["by"] == "model") >= 2  # setting and givens
    capsys.readouterr()
    code, steps = _check_json(capsys, "--require-certificates", path)
    assert code == 0 and {s["status"] for s in steps.values()} == {"verified"}, steps


def test_a_setting_the_solver_cannot_decide_is_shown_consistent_by_a_model_searched(
        tmp_path, monkeypatch):
    """Where Z3 gives up on a setting's or givens' consistency check (a kernel perceptron's
    setting with three nats took it 50 s), the check searches a model, which the kernel's
    checker accepts: the lemmas are verified, the setting resting on an exact model.  Not where
    the solver's checks are bounded in units (grading): that search's budget is wall-clock."""
    from novikoff.kernel import solver
    from novikoff.kernel.solver import LIMITS, Verdict

    decide = solver.entails
    monkeypatch.setattr(solver, "entails", lambda h, goal, *a, **k: Verdict(
        "unknown", reason="gave up") if goal is None else decide(h, goal, *a, **k))
    path = tmp_path / "bounded.proof"
    path.write_text(BOUNDED, encoding="utf-8")
    report = Checker(timeout_ms=5000).check_file(path)
    assert [(lemma.name, lemma.status) for lemma in report.lemmas] == [("claim", "verified")]
    monkeypatch.setattr(LIMITS, "lemma_units", 10 ** 9)
    report = Checker(timeout_ms=5000).check_file(path)
    assert [lemma.status for lemma in report.lemmas] != ["verified"]


MISTAKES = """
setting chain:
  vectors  u, x
  sequence w
  real     gamma > 0, R > 0
  label    y
  nat      k
  per update: x, y
  assume   start:   w[0] = 0
  assume   update:  w[k+1] = w[k] + y*x
  assume   mistake: y*<w[k], x> <= 0
  assume   margin:  y*<u, x> >= gamma
  assume   radius:  ||x||^2 <= R^2

lemma claim: 0 <= 1
proof:
  0 <= 1
"""


def _consistency_statements(tmp_path, text: str) -> list:
    """The statements of the consistency checks a solver found satisfiable in a file's check."""
    path = tmp_path / "file.proof"
    path.write_text(text, encoding="utf-8")
    LEDGER.recording, LEDGER.unmodelled = True, {}
    try:
        Checker(timeout_ms=5000).check_file(path)
        return list(LEDGER.unmodelled.values())
    finally:
        LEDGER.recording, LEDGER.unmodelled = False, {}
        LEDGER.pending, LEDGER.used, LEDGER.statements, LEDGER.satisfiable = {}, {}, {}, {}


def test_a_model_of_a_run_of_mistakes_is_found_with_vectors_in_coordinates(tmp_path):
    """A setting whose instances are a run of mistakes on examples with a margin (each example
    misclassified by the sum of the earlier ones, all on the side of u): no run of two mistakes
    exists on a line, so the search gives the vectors whole coordinates in the plane, and its
    model (inner products the dot products of those coordinates) is one the checker accepts."""
    from novikoff.certify.models import _search, find_model

    statements = _consistency_statements(tmp_path, MISTAKES)
    assert statements
    for text in statements:
        model = find_model(text, 5000, 60.0)
        assert model is not None, text[:300]
        facts, nats, integers = read_statement(text)
        check_model(facts, nats, model, integers)
    facts, nats, integers = read_statement(statements[0])
    deadline = time.monotonic() + 30
    assert _search(facts, nats, integers, 1, 5000, deadline) is None  # not on a line
    assert _search(facts, nats, integers, 2, 5000, deadline) is not None


def test_no_model_is_accepted_for_a_statement_a_certificate_proves_contradictory(replayed):
    """The two checkers never both accept on one statement: on every certified statement of
    the library, the values of every stored model (0 for the atoms a model does not give) are
    refused, as are all zeros and all ones."""
    _, used, _ = replayed
    models = [c["values"] for _, c in used.values() if c["by"] == "model"]
    certified_ = [(text, c) for text, c in used.values() if c["by"] != "model"]
    assert len(models) >= 100 and len(certified_) >= 300, (len(models), len(certified_))
    for text, certificate in certified_[::4]:
        check(text, certificate)
        facts, nats, _ = read_statement(text)
        atoms = {a for fact in json.loads(text)["facts"] for a in _fact_atom_names(fact)}
        tries = [{a: "0" for a in atoms}, {a: "1" for a in atoms}] + [
            {a: values.get(a, "0") for a in atoms} for values in models[::7]]
        for values in tries:
            with pytest.raises(CertificateError):
                check_model(facts, nats, {"by": "model", "values": values})


def _fact_atom_names(fact):
    kind, body = fact
    if kind in ("and", "or"):
        for part in body:
            yield from _fact_atom_names(part)
    else:
        for _, monomial in body:
            for atom, _ in monomial:
                yield atom
