"""Check Positivstellensatz certificates: exact proofs that an obligation's facts contradict.

Standard library only (fractions, hashlib, json, re): nothing here trusts a solver or SymPy.

An *obligation* (a statement) is a list of facts that must be shown contradictory, built by
``statements.py`` from the kernel's formulas: the hypotheses, the negated goal and the
definitions of helper variables (square roots, inverses, ``abs``, ``max``, ``min``).  A fact is

    ["ge", P]  P >= 0        ["gt", P]  P > 0        ["eq", P]  P = 0        ["ne", P]  P != 0
    ["and", [fact, ...]]     ["or", [fact, ...]]     (["or", []] is false, ["and", []] true)

and a polynomial ``P`` is a list of terms ``["p/q", [[atom, exponent], ...]]`` (atoms are the
solver names of the kernel's atoms; exponents are positive integers).  ``nats`` lists the atoms
that are natural numbers (whole numbers >= 0) and ``integers``, when a statement has any, the
atoms that are whole numbers of either sign (``floor`` and ``ceil``), for integer splits.

A *certificate* is a tree; each node closes the branch it is checked in.  A branch holds
*literals* (``ge``, ``gt``, ``eq`` facts, numbered in the order they were met) and *compounds*
(``or`` and ``ne`` facts, numbered the same way); an ``and`` adds its parts.  Nodes:

    {"by": "or", "at": i, "cases": [node, ...]}        compound i; one node per disjunct
                                                        (``ne P`` has two: P > 0, -P > 0)
    {"by": "sign", "poly": P, "cases": [pos, zero, neg]}          P > 0 | P = 0 | -P > 0
    {"by": "integer", "poly": P, "at": "n", "cases": [low, high]}  P <= n | P >= n + 1, for
                                                        P with integer coefficients in nats
                                                        and integers
    {"by": "cut", "fact": ["ge"|"gt"|"eq", P], "proof": node, "then": node}
                                                        proof: the branch with the fact
                                                        negated; then: the branch with it
    {"by": "psatz", "products": [["c", [i, ...]], ...], "squares": [["w", P, [i, ...]], ...],
     "multiples": [[Q, i], ...]}
        c > 0 times the product of literals i, ... (``ge``/``gt``; [] is the constant 1),
        w > 0 times P^2 times the product of literals i, ..., Q times the ``eq`` literal i: their
        sum must be the zero polynomial, and some product must have only ``gt`` factors (so
        the sum would be > 0 = 0).

``check`` accepts only a certificate that is exactly right and fails closed on anything else
(an unknown key, a float, an index out of range, a polynomial over the size limits).

The other side, a statement whose facts are *consistent* (a setting that is not vacuous), is
shown by a *model*, ``{"by": "model", "values": {atom: "p/q", ...}}``: ``check_model`` accepts
it only if it gives every atom of the facts an exact rational value (a nat a whole number >= 0,
an integer a whole number) at which every fact holds.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
from fractions import Fraction

__all__ = ["FORMAT", "Branch", "CertificateError", "check", "check_facts", "check_model",
           "fact_atoms", "statement_key", "canonical_statement", "canonical_text",
           "parse_statement", "read_statement", "poly_add", "poly_mul", "poly_to_json",
           "poly_from_json"]

FORMAT = "novikoff-certificates/1"

# Bounds that keep a hostile certificate from exhausting memory or time.
_MAX_DEPTH = 64
_MAX_NODES = 20_000
_MAX_DEGREE = 24
_MAX_TERMS = 5_000
_MAX_FACTORS = 12
_MAX_DIGITS = 400
# Monomial products one product of two polynomials, and one certificate in all, may cost the
# checker, counted before a product is made (the product of the sizes): far above what the
# stored certificates of the library take; a hostile certificate is refused in well under a
# second instead of being multiplied out.
_MAX_PRODUCT = 2 * _MAX_TERMS
_MAX_WORK = 1_000_000
_RATIONAL = re.compile(r"-?[0-9]+(/[0-9]+)?\Z")
_NODE_KEYS = {"or": {"by", "at", "cases"}, "sign": {"by", "poly", "cases"},
              "integer": {"by", "poly", "at", "cases"}, "cut": {"by", "fact", "proof", "then"},
              "psatz": {"by", "products", "squares", "multiples"}}


class CertificateError(Exception):
    """A certificate (or a statement) is malformed or does not prove the obligation."""


# ---------------------------------------------------------------------------- exact polynomials
# A polynomial is a dict {monomial: Fraction}, a monomial a sorted tuple of (atom, exponent).

def _rational(text) -> Fraction:
    if not isinstance(text, str) or len(text) > _MAX_DIGITS or not _RATIONAL.match(text):
        raise CertificateError(f"not an exact rational 'p/q': {text!r}")
    value = Fraction(text)
    return value


def _mono_mul(a: tuple, b: tuple) -> tuple:
    powers = dict(a)
    for atom, e in b:
        powers[atom] = powers.get(atom, 0) + e
    return tuple(sorted(powers.items()))


def poly_add(p: dict, q: dict, factor: Fraction = Fraction(1)) -> dict:
    """p + factor*q."""
    out = dict(p)
    for m, c in q.items():
        v = out.get(m, 0) + factor * c
        if v:
            out[m] = v
        else:
            out.pop(m, None)
    return out


def poly_mul(p: dict, q: dict) -> dict:
    out: dict = {}
    for m1, c1 in p.items():
        for m2, c2 in q.items():
            m = _mono_mul(m1, m2)
            v = out.get(m, 0) + c1 * c2
            if v:
                out[m] = v
            else:
                out.pop(m)
    if len(out) > _MAX_TERMS:
        raise CertificateError("a product has too many terms")
    return out


def _constant(c: Fraction) -> dict:
    return {(): c} if c else {}


def poly_from_json(data) -> dict:
    """A polynomial from its JSON form, refusing anything malformed."""
    if not isinstance(data, list) or len(data) > _MAX_TERMS:
        raise CertificateError("a polynomial is a list of terms")
    out: dict = {}
    for term in data:
        if not (isinstance(term, list) and len(term) == 2 and isinstance(term[1], list)):
            raise CertificateError(f"a term is [coefficient, monomial], not {term!r}")
        powers: dict = {}
        for factor in term[1]:
            if not (isinstance(factor, list) and len(factor) == 2 and isinstance(factor[0], str)
                    and type(factor[1]) is int and 1 <= factor[1] <= _MAX_DEGREE
                    and factor[0] not in powers):
                raise CertificateError(f"a factor is [atom, exponent >= 1], not {factor!r}")
            powers[factor[0]] = factor[1]
        monomial = tuple(sorted(powers.items()))
        if sum(powers.values()) > _MAX_DEGREE:
            raise CertificateError("a monomial's degree is too high")
        if monomial in out:
            raise CertificateError("a monomial appears twice in a polynomial")
        c = _rational(term[0])
        if c:
            out[monomial] = c
    return out


def _fraction_text(c: Fraction) -> str:
    return str(c.numerator) if c.denominator == 1 else f"{c.numerator}/{c.denominator}"


def poly_to_json(p: dict) -> list:
    return [[_fraction_text(c), [[a, e] for a, e in m]] for m, c in sorted(p.items())]


# ---------------------------------------------------------------------------- statements

def _fact_from_json(data, depth: int = 0):
    """A fact as (kind, poly) or (kind, tuple of facts)."""
    if depth > _MAX_DEPTH or not (isinstance(data, list) and len(data) == 2):
        raise CertificateError(f"not a fact: {data!r}"[:200])
    kind, body = data
    if kind in ("ge", "gt", "eq", "ne"):
        return kind, poly_from_json(body)
    if kind in ("and", "or") and isinstance(body, list):
        return kind, tuple(_fact_from_json(f, depth + 1) for f in body)
    raise CertificateError(f"unknown fact kind {kind!r}")


def canonical_statement(facts, nats, integers=()) -> str:
    """The statement's canonical text: facts (JSON forms) without repeats, sorted; nats and
    integers sorted (integers written only when there are some)."""
    return canonical_text([json.dumps(f, separators=(",", ":")) for f in facts], nats, integers)


def canonical_text(fact_texts, nats, integers=()) -> str:
    """canonical_statement of facts already written as compact JSON."""
    text = ('{"facts":[' + ",".join(sorted(set(fact_texts))) + '],"nats":'
            + json.dumps(sorted(set(nats)), separators=(",", ":")))
    if integers:
        text += ',"integers":' + json.dumps(sorted(set(integers)), separators=(",", ":"))
    return text + "}"


def statement_key(text: str) -> str:
    """The key a certificate is stored under: the SHA-256 of the canonical statement."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# ---------------------------------------------------------------------------- the check

class Branch:
    """What a branch of the certificate knows: literals and compounds, numbered as met."""

    def __init__(self, literals=(), compounds=()):
        self.literals = list(literals)
        self.compounds = list(compounds)

    def copy(self) -> "Branch":
        return Branch(self.literals, self.compounds)

    def add(self, fact) -> "Branch":
        kind, body = fact
        if kind == "and":
            for part in body:
                self.add(part)
        elif kind == "ne":
            self.compounds.append(("or", (("gt", body), ("gt", poly_add({}, body, -1)))))
        elif kind == "or":
            self.compounds.append(fact)
        else:
            self.literals.append(fact)
        return self


def _bits(p: dict) -> int:
    """The bit length of the longest coefficient of p (numerator and denominator)."""
    return max((c.numerator.bit_length() + c.denominator.bit_length() for c in p.values()),
               default=0)


def _negated(fact):
    kind, p = fact
    minus = poly_add({}, p, Fraction(-1))
    return {"ge": ("gt", minus), "gt": ("ge", minus), "eq": ("ne", p)}[kind]


class _Checker:
    def __init__(self, wholes):
        self.wholes = frozenset(wholes)  # the atoms that are whole numbers: nats and integers
        self.nodes = 0
        self.work = 0

    def _mul(self, p: dict, q: dict) -> dict:
        """poly_mul, refused before it is made when it costs more than _MAX_PRODUCT monomial
        products, or takes the certificate past _MAX_WORK.  A product of long coefficients
        counts as more (one more per 256 bits of its factors): 200 squares of 70 terms with
        390-digit coefficients, each under the bounds, took minutes of exact arithmetic."""
        self.work += len(p) * len(q) * (1 + (_bits(p) + _bits(q)) // 256)
        if len(p) * len(q) > _MAX_PRODUCT or self.work > _MAX_WORK:
            raise CertificateError("the certificate takes too much arithmetic to check")
        return poly_mul(p, q)

    def close(self, branch: Branch, node, depth: int) -> None:
        self.nodes += 1
        if depth > _MAX_DEPTH or self.nodes > _MAX_NODES:
            raise CertificateError("the certificate is too deep or too large")
        if not isinstance(node, dict) or node.get("by") not in _NODE_KEYS \
                or set(node) != _NODE_KEYS[node["by"]]:
            raise CertificateError(f"malformed node: {str(node)[:120]}")
        getattr(self, "_" + node["by"])(branch, node, depth)

    def _cases(self, branch: Branch, node, facts: list, depth: int) -> None:
        cases = node["cases"]
        if not isinstance(cases, list) or len(cases) != len(facts):
            raise CertificateError(f"{node['by']}: {len(facts)} cases needed")
        for fact, case in zip(facts, cases):
            self.close(branch.copy().add(fact), case, depth + 1)

    def _or(self, branch: Branch, node, depth: int) -> None:
        at = node["at"]
        if type(at) is not int or not 0 <= at < len(branch.compounds):
            raise CertificateError(f"or: no compound {at!r}")
        self._cases(branch, node, list(branch.compounds[at][1]), depth)

    def _sign(self, branch: Branch, node, depth: int) -> None:
        p = poly_from_json(node["poly"])
        self._cases(branch, node, [("gt", p), ("eq", p), ("gt", poly_add({}, p, -1))], depth)

    def _integer(self, branch: Branch, node, depth: int) -> None:
        p = poly_from_json(node["poly"])
        n = _rational(node["at"])
        if n.denominator != 1 or any(c.denominator != 1
                                     or any(a not in self.wholes for a, _ in m)
                                     for m, c in p.items()):
            raise CertificateError("integer: a whole number, and a polynomial with integer "
                                   "coefficients in the nats and integers, are needed")
        low = poly_add(_constant(n), p, -1)  # n - p >= 0
        high = poly_add(p, _constant(-n - 1))  # p - n - 1 >= 0
        self._cases(branch, node, [("ge", low), ("ge", high)], depth)

    def _cut(self, branch: Branch, node, depth: int) -> None:
        fact = _fact_from_json(node["fact"])
        if fact[0] not in ("ge", "gt", "eq"):
            raise CertificateError("cut: the fact is a ge, gt or eq literal")
        self.close(branch.copy().add(_negated(fact)), node["proof"], depth + 1)
        self.close(branch.copy().add(fact), node["then"], depth + 1)

    @staticmethod
    def _inequality(literals, i) -> dict:
        if type(i) is not int or not 0 <= i < len(literals) or literals[i][0] not in ("ge", "gt"):
            raise CertificateError(f"psatz: literal {i!r} is not an inequality here")
        return literals[i][1]

    def _psatz(self, branch: Branch, node, depth: int) -> None:
        products, squares, multiples = node["products"], node["squares"], node["multiples"]
        if not all(isinstance(x, list) for x in (products, squares, multiples)) \
                or len(products) + len(squares) + len(multiples) > _MAX_TERMS:
            raise CertificateError("psatz: products, squares and multiples are lists")
        literals = branch.literals
        total: dict = {}
        strict = False
        for item in products:
            if not (isinstance(item, list) and len(item) == 2 and isinstance(item[1], list)
                    and len(item[1]) <= _MAX_FACTORS):
                raise CertificateError(f"psatz: a product is [c, [literal, ...]], not {item!r}")
            c = _rational(item[0])
            if c <= 0:
                raise CertificateError("psatz: a product's coefficient must be > 0")
            term = {(): c}
            kinds = set()
            for i in item[1]:
                term = self._mul(term, self._inequality(literals, i))
                kinds.add(literals[i][0])
            strict = strict or kinds <= {"gt"}
            total = poly_add(total, term)
        for item in squares:
            if not (isinstance(item, list) and len(item) == 3 and isinstance(item[2], list)
                    and len(item[2]) <= _MAX_FACTORS):
                raise CertificateError(f"psatz: a square is [w, P, [literal, ...]], not "
                                       f"{item!r}"[:160])
            w, p = _rational(item[0]), poly_from_json(item[1])
            if w <= 0:
                raise CertificateError("psatz: a square's weight must be > 0")
            term = self._mul(p, p)
            for i in item[2]:
                term = self._mul(term, self._inequality(literals, i))
            total = poly_add(total, term, w)
        for item in multiples:
            if not (isinstance(item, list) and len(item) == 2 and type(item[1]) is int
                    and 0 <= item[1] < len(literals) and literals[item[1]][0] == "eq"):
                raise CertificateError(f"psatz: a multiple is [Q, equality], not {item!r}"[:160])
            total = poly_add(total, self._mul(poly_from_json(item[0]), literals[item[1]][1]))
        if total:
            raise CertificateError("psatz: the sum is not the zero polynomial")
        if not strict:
            raise CertificateError("psatz: no product of strict facts (> 0) has a positive "
                                   "coefficient, so the sum 0 contradicts nothing")


def read_statement(statement_text: str) -> tuple:
    """(facts, nats, integers) of a statement's canonical text, the facts in its order."""
    try:
        statement = json.loads(statement_text)
    except ValueError as exc:
        raise CertificateError(f"the statement is not JSON: {exc}") from None
    if not (isinstance(statement, dict)
            and set(statement) in ({"facts", "nats"}, {"facts", "nats", "integers"})
            and isinstance(statement["facts"], list)
            and all(isinstance(statement.get(key, []), list)
                    and all(isinstance(n, str) for n in statement.get(key, []))
                    for key in ("nats", "integers"))):
        raise CertificateError("a statement is {facts, nats} or {facts, nats, integers}")
    return ([_fact_from_json(f) for f in statement["facts"]], frozenset(statement["nats"]),
            frozenset(statement.get("integers", [])))


def parse_statement(statement_text: str) -> tuple:
    """(the root Branch, nats, integers) of a statement's canonical text."""
    facts, nats, integers = read_statement(statement_text)
    branch = Branch()
    for fact in facts:
        branch.add(fact)
    return branch, nats, integers


def check(statement_text: str, certificate) -> None:
    """Accept (return None) only if the certificate shows the statement's facts contradictory;
    raise CertificateError otherwise.  statement_text: canonical_statement's text."""
    try:
        facts, nats, integers = read_statement(statement_text)
    except RecursionError:
        raise CertificateError("the statement is nested too deeply") from None
    check_facts(facts, nats, certificate, integers)


def check_facts(facts, nats, certificate, integers=frozenset()) -> None:
    """check, for a statement's facts as read_statement reads its text (the kernel hands over
    the facts it built, so as not to print and parse them again)."""
    with _failing_closed("certificate", nested="certificate"):
        branch = Branch()
        for fact in facts:
            branch.add(fact)
        _Checker(frozenset(nats) | frozenset(integers)).close(branch, certificate, 0)


@contextlib.contextmanager
def _failing_closed(what: str, nested: str):
    """Whatever goes wrong while checking a certificate or a model is a CertificateError:
    nothing is accepted.  nested: what a RecursionError means is nested too deeply."""
    try:
        yield
    except CertificateError:
        raise
    except RecursionError:
        raise CertificateError(f"the {nested} is nested too deeply") from None
    except Exception as exc:
        raise CertificateError(f"the {what} could not be checked ({exc!r})") from None


# ---------------------------------------------------------------------------- models

def check_model(facts, nats, model, integers=frozenset()) -> None:
    """Accept (return None) only if the model satisfies every fact exactly, so the facts are
    consistent; raise CertificateError otherwise.  model: {"by": "model", "values": {atom:
    "p/q"}} with a value for each atom of the facts and for no other, a nat's whole and >= 0,
    an integer's whole."""
    with _failing_closed("model", nested="statement"):
        if not (isinstance(model, dict) and set(model) == {"by", "values"}
                and model["by"] == "model" and isinstance(model["values"], dict)):
            raise CertificateError("a model is {\"by\": \"model\", \"values\": {atom: \"p/q\"}}")
        values = {atom: _rational(text) for atom, text in model["values"].items()}
        atoms = set()
        for fact in facts:
            fact_atoms(fact, atoms)
        if set(values) != atoms:
            raise CertificateError("a model gives a value to every atom of the statement and "
                                   "to no other")
        for n in atoms & set(nats):
            if values[n].denominator != 1 or values[n] < 0:
                raise CertificateError(f"the nat {n} is not a whole number >= 0 in the model")
        for n in atoms & set(integers):
            if values[n].denominator != 1:
                raise CertificateError(f"the integer {n} is not a whole number in the model")
        for fact in facts:
            if not _holds(fact, values):
                raise CertificateError("a fact of the statement is false in the model")


def fact_atoms(fact, out: set) -> set:
    """out, with the atoms of a fact (as read_statement reads it) added."""
    kind, body = fact
    if kind in ("and", "or"):
        for part in body:
            fact_atoms(part, out)
    else:
        out.update(atom for monomial in body for atom, _ in monomial)
    return out


def _holds(fact, values: dict) -> bool:
    kind, body = fact
    if kind == "and":
        return all(_holds(part, values) for part in body)
    if kind == "or":
        return any(_holds(part, values) for part in body)
    # The polynomial's value as num/den with den > 0, in integers, reduced only where the
    # denominators differ (Fraction's gcd at every product was most of a model's check: replay
    # of the library's models 2x faster, benchmarks/bench_certificates.py).  Exponents are >= 1.
    num, den = 0, 1
    for monomial, c in body.items():
        n, d = c.numerator, c.denominator
        for atom, exponent in monomial:
            v = values[atom]
            n *= v.numerator ** exponent
            d *= v.denominator ** exponent
        num, den = (num + n, den) if d == den else (num * d + n * den, den * d)
    return {"ge": num >= 0, "gt": num > 0, "eq": num == 0, "ne": num != 0}[kind]
