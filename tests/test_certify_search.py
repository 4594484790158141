"""The untrusted certificate search (certify/search.py) on the obligations it used to leave to
Z3: "square both sides and divide" (the bias bound's last step), and the definitions of helper
atoms.  Whatever it finds the kernel's checker replays; a mutated certificate it refuses."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from novikoff.certify.search import _close_at_sight, _leaf, _reduce, _rules, find_certificate
from novikoff.checker import Checker, bundled_proofs_dir
from novikoff.kernel.certificates import (Branch, CertificateError, canonical_statement, check,
                                          parse_statement, poly_add, poly_from_json, poly_mul)
from novikoff.kernel.certified import LEDGER

BIAS = bundled_proofs_dir() / "bias.proof"


def _poly(*terms):
    """[("c", {"x": 1, ...}), ...] as the JSON form."""
    return [[c, [[a, e] for a, e in sorted(m.items())]] for c, m in terms]


def _pending(path: Path) -> dict:
    """label (FILE:LINE:COL) -> statement of each decision of the file, none replayed."""
    LEDGER.store = {}
    LEDGER.recording, LEDGER.pending, LEDGER.used, LEDGER.labels = True, {}, {}, {}
    LEDGER.unmodelled = {}
    try:
        Checker(timeout_ms=5000).check_file(path)
        return {LEDGER.labels.get(k, ""): s for k, s in LEDGER.pending.items()}
    finally:
        LEDGER.store, LEDGER.recording, LEDGER.pending, LEDGER.used = {}, False, {}, {}
        LEDGER.labels, LEDGER.unmodelled = {}, {}


@pytest.fixture(scope="module")
def bias_bound(tmp_path_factory):
    """The statement of `hence k <= (R^2 + 1)*(||w_star||^2 + b^2)/gamma^2` (bias.proof:72),
    from `k*gamma <= sqrt(||w_star||^2 + b^2)*sqrt(k*(R^2 + 1))`, and its certificate (a copy
    of the file without its certificates: the check loads a file's own)."""
    copy_ = tmp_path_factory.mktemp("bias") / "bias.proof"
    copy_.write_text(BIAS.read_text(encoding="utf-8"), encoding="utf-8")
    pending = _pending(copy_)
    [statement] = [s for label, s in pending.items() if label.endswith("bias.proof:72:3")]
    certificate = find_certificate(statement, 5000, 60.0)
    assert certificate is not None
    return statement, certificate


def _nodes(node):
    yield node
    for key in ("cases",):
        for case in node.get(key, []):
            yield from _nodes(case)
    for key in ("proof", "then"):
        if key in node:
            yield from _nodes(node[key])


def test_square_both_sides_and_divide_is_certified(bias_bound):
    statement, certificate = bias_bound
    check(statement, certificate)  # the kernel replays it
    cuts = [n for n in _nodes(certificate) if n["by"] == "cut"]
    # the cut squares both sides: (||w*||^2 + b^2)*k*(R^2 + 1) - gamma^2*k^2 >= 0, no root left
    assert cuts, certificate
    fact = poly_from_json(cuts[0]["fact"][1])
    assert cuts[0]["fact"][0] == "ge"
    assert not any(a.startswith("!") for m in fact for a, _ in m), fact
    assert fact[(("gamma", 2), ("k", 2))] == -1


def test_the_stored_certificate_is_the_one_replayed(bias_bound):
    """The library's file holds a certificate for the same statement, and the check uses it."""
    from novikoff.certify.store import load_certificates
    from novikoff.kernel.certificates import statement_key

    statement, _ = bias_bound
    stored = load_certificates(BIAS)[statement_key(statement)]
    check(statement, stored)


def _mutated_cuts(certificate):
    """Copies of the certificate with a cut's fact changed: a coefficient doubled, the relation
    made strict, a term dropped."""
    paths = []

    def walk(node, path):
        if node["by"] == "cut":
            paths.append(path)
        for i, case in enumerate(node.get("cases", [])):
            walk(case, path + [("cases", i)])
        for key in ("proof", "then"):
            if key in node:
                walk(node[key], path + [(key, None)])

    walk(certificate, [])
    for path in paths:
        for how in ("double", "strict", "drop", "shift"):
            mutated = copy.deepcopy(certificate)
            node = mutated
            for key, i in path:
                node = node[key] if i is None else node[key][i]
            kind, terms = node["fact"]
            if how == "double":
                terms[0][0] = str(2 * int(terms[0][0].split("/")[0])) + (
                    "/" + terms[0][0].split("/")[1] if "/" in terms[0][0] else "")
            elif how == "strict":
                node["fact"][0] = {"ge": "gt", "gt": "eq", "eq": "gt"}[kind]
            elif how == "drop":
                del terms[0]
            else:
                terms.append(["1", []])
            yield mutated


def _all_refused(statement, mutations) -> int:
    """How many mutated certificates were tried; each must be refused."""
    tried = 0
    for mutated in mutations:
        tried += 1
        with pytest.raises(CertificateError):
            check(statement, mutated)
    return tried


def test_a_mutated_cut_is_refused(bias_bound):
    statement, certificate = bias_bound
    assert _all_refused(statement, _mutated_cuts(certificate)) >= 4


def test_a_mutated_leaf_is_refused(bias_bound):
    statement, certificate = bias_bound
    leaves = [n for n in _nodes(certificate) if n["by"] == "psatz" and n["products"]]
    assert leaves
    for k in range(len(leaves)):
        mutated = copy.deepcopy(certificate)
        leaf = [n for n in _nodes(mutated) if n["by"] == "psatz" and n["products"]][k]
        leaf["products"][0][0] = str(Fraction_text(leaf["products"][0][0]) * 3)
        with pytest.raises(CertificateError):
            check(statement, mutated)


def Fraction_text(text):
    from fractions import Fraction

    return Fraction(text)


def test_the_certificate_does_not_move_to_a_false_bound(bias_bound):
    """The same certificate on the bound made tighter (k <= (R^2 + 1)*(||w*||^2 + b^2)/(2*gamma^2),
    which does not follow) is refused: the statement differs, and so does its identity."""
    statement, certificate = bias_bound
    data = json.loads(statement)
    text = json.dumps(data["facts"], separators=(",", ":"))
    # the negated goal's k > ... : halve the bound (the !inv[gamma]^2 terms)
    tighter = text.replace('["-1",[["!inv[[[\\"1\\",[[\\"gamma\\",1]]]]]",2]',
                           '["-1/2",[["!inv[[[\\"1\\",[[\\"gamma\\",1]]]]]",2]')
    assert tighter != text
    other = canonical_statement(json.loads(tighter), data["nats"])
    with pytest.raises(CertificateError):
        check(other, certificate)


# ---------------------------------------------------------------------------- the pieces

def test_divide_both_sides_by_the_atoms_signs():
    """From B*k*beta^2*n <= A (beta, n > 0) and the negated k <= A/(beta^2*n) written
    k - A*g > 0 with g*beta^2*n = 1 left out: the goal times beta*beta*n is a product of four
    literals the degrees tried before did not reach with the others; now a column."""
    facts = [["gt", _poly(("1", {"beta": 1}))], ["gt", _poly(("1", {"n": 1}))],
             ["gt", _poly(("1", {"eta": 1}))],
             ["ge", _poly(("1", {"A": 1}), ("-1", {"k": 1, "beta": 2, "eta": 2, "n": 1}))],
             ["gt", _poly(("1", {"k": 1, "eta": 2}), ("-1", {"A": 1, "inv": 1}))],
             ["eq", _poly(("1", {"inv": 1, "beta": 2, "n": 1}), ("-1", {}))]]
    statement = canonical_statement(facts, [])
    certificate = find_certificate(statement, 5000, 30.0)
    assert certificate is not None
    check(statement, certificate)


def test_definitions_rewrite_the_columns():
    """sqrt(a)^2 = a and inv(g)*g = 1 are rules; the reduction keeps p = reduced + sum Q*E."""
    s, i = "!sqrt[[[\"1\",[[\"a\",1]]]]]", "!inv[[[\"1\",[[\"g\",1]]]]]"
    literals = [("eq", {((s, 2),): 1, (("a", 1),): -1}),
                ("eq", {((i, 1), ("g", 1)): 1, (): -1})]
    rules, left = _rules(literals, [0, 1])
    assert len(rules) == 2 and left == []
    p = {tuple(sorted(((s, 4), (i, 1), ("g", 2)))): 1}
    reduced, quotients = _reduce(p, rules)
    assert reduced == {(("a", 2), ("g", 1)): 1}
    total = dict(reduced)
    for k, q in quotients.items():
        total = poly_add(total, poly_mul(q, literals[k][1]))
    assert total == p


def test_a_definition_case_closes_at_sight():
    """Delta = 0 where Delta > 0 is known closes with no solver: a unit split's other case."""
    delta = poly_from_json(_poly(("1", {"Delta": 1})))
    branch = Branch([("gt", delta)])
    node = _close_at_sight(branch, ("or", (("eq", delta),)), frozenset())
    assert node is not None and node["by"] == "or"
    statement = canonical_statement(
        [["gt", _poly(("1", {"Delta": 1}))],
         ["or", [["eq", _poly(("1", {"Delta": 1}))],
                 ["eq", _poly(("1", {"I": 1, "Delta": 1}), ("-1", {}))]]],
         ["gt", _poly(("1", {"x": 1}), ("-1", {"I": 1, "Delta": 1, "x": 1}))]], [])
    certificate = find_certificate(statement, 5000, 30.0)
    assert certificate is not None and certificate["by"] == "or"
    check(statement, certificate)


def test_a_leaf_of_a_high_degree_literal_and_its_negation():
    """A literal of degree 11 and its negation: the degree bound no longer leaves them out."""
    big = poly_from_json(_poly(("1", {"a": 3, "b": 4, "c": 4}), ("-1", {"d": 1})))
    literals = [("ge", big), ("gt", poly_add({}, big, -1))]
    node = _leaf(literals, [0, 1], degree=2)
    assert node is not None
    statement = canonical_statement([["ge", _poly(("1", {"a": 3, "b": 4, "c": 4}),
                                                  ("-1", {"d": 1}))],
                                     ["gt", _poly(("-1", {"a": 3, "b": 4, "c": 4}),
                                                  ("1", {"d": 1}))]], [])
    branch, _, _ = parse_statement(statement)
    check(statement, _leaf(branch.literals, [0, 1], degree=2))


WHOLE = """setting s:
  real gamma > 0
  nat T

lemma at_most_floor: T <= floor(1/gamma^2)
  given bound: T <= 1/gamma^2
proof:
  T <= floor(1/gamma^2)    by bound

lemma ceil_of_nat: ceil(T) = T
proof:
  ceil(T) = T
"""


def test_floor_and_ceil_steps_are_certified(tmp_path):
    """A whole P > 0 is P >= 1 (T > floor(a), ceil(T) > T): Z3 leaves 0 < ceil(T) - T < 1
    unknown, so the search splits first; without the statement's integers the kernel refuses
    the split."""
    path = tmp_path / "whole.proof"
    path.write_text(WHOLE, encoding="utf-8")
    pending = {label: s for label, s in _pending(path).items() if "!floor" in s or "!ceil" in s}
    assert len(pending) == 2, pending
    for label, statement in pending.items():
        certificate = find_certificate(statement)
        assert certificate is not None, label
        check(statement, certificate)
        assert '"by": "integer"' in json.dumps(certificate)
        without = {k: v for k, v in json.loads(statement).items() if k != "integers"}
        with pytest.raises(CertificateError, match="integers"):
            check(json.dumps(without), certificate)


# ---------------------------------------------------------------------------- 1/sqrt(a)^2 = 1/a

def _helper(kind: str, argument) -> str:
    """A helper atom's name, as statements write it: !sqrt[[P]], !inv[[P]]."""
    return kind + json.dumps([argument], separators=(",", ":"))


_ARG = _poly(("1", {}), ("1", {"d": 2, "e": 1}))            # a = 1 + d^2*e
_Z = _helper("!sqrt", _ARG)                                  # Z = sqrt(a)
_IZ = _helper("!inv", _poly(("1", {_Z: 1})))                 # 1/Z
_IA = _helper("!inv", _ARG)                                  # 1/a
_Z_DEF = ["eq", _poly(("1", {_Z: 2}), ("-1", {}), ("-1", {"d": 2, "e": 1}))]
_IZ_DEF = ["eq", _poly(("1", {_IZ: 1, _Z: 1}), ("-1", {}))]


def test_two_definitions_of_one_root_combine_in_a_leaf():
    """From Z^2 = a and inv(Z)*Z = 1, inv(Z)^2*a = 1: a multiple of Z's definition by
    inv(Z)^2, reduced by inv(Z)'s, which one rule per helper atom does not give."""
    statement = canonical_statement(
        [_Z_DEF, _IZ_DEF, ["gt", _poly(("1", {_IZ: 2}), ("1", {_IZ: 2, "d": 2, "e": 1}),
                                       ("-1", {}))]], [])
    branch, _, _ = parse_statement(statement)
    node = _leaf(branch.literals, list(range(len(branch.literals))), degree=2)
    assert node is not None
    check(statement, node)


@pytest.fixture(scope="module")
def inverse_root():
    """x/Z^2 = x/a for Z = sqrt(a), the shape of `||u||^2/Z^2` against `||u||^2/(1 + D^2/
    Delta^2)` (freund_schapire_nonseparable.proof:66), and its certificate."""
    statement = canonical_statement(
        [["ge", _poly(("1", {"e": 1}))], ["ge", _poly(("1", {_Z: 1}))], _Z_DEF, _IZ_DEF,
         ["eq", _poly(("1", {_IA: 1}), ("1", {_IA: 1, "d": 2, "e": 1}), ("-1", {}))],
         ["ne", _poly(("1", {"x": 1, _IZ: 2}), ("-1", {"x": 1, _IA: 1}))]], [])
    certificate = find_certificate(statement, 5000, 30.0)
    assert certificate is not None
    return statement, certificate


def test_the_inverse_of_a_root_squared_is_cut(inverse_root):
    statement, certificate = inverse_root
    check(statement, certificate)
    facts = [poly_from_json(n["fact"][1]) for n in _nodes(certificate)
             if n["by"] == "cut" and n["fact"][0] == "eq"]
    # inv(Z)^2*(1 + d^2*e) - 1 = 0
    assert {(): -1, ((_IZ, 2),): 1, tuple(sorted([("d", 2), ("e", 1), (_IZ, 2)])): 1} in facts, \
        certificate


def test_a_mutated_inverse_root_cut_or_leaf_is_refused(inverse_root):
    statement, certificate = inverse_root
    assert _all_refused(statement, _mutated_cuts(certificate)) >= 4
    leaves = [n for n in _nodes(certificate) if n["by"] == "psatz" and n["multiples"]]
    assert leaves
    for k in range(len(leaves)):
        mutated = copy.deepcopy(certificate)
        leaf = [n for n in _nodes(mutated) if n["by"] == "psatz" and n["multiples"]][k]
        leaf["multiples"][0][0].append(["1", [["x", 1]]])
        with pytest.raises(CertificateError):
            check(statement, mutated)
