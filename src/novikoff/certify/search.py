"""Search a certificate for an obligation's statement (untrusted: the kernel replays it).

The tree is found top down.  At each branch Z3 (with the nats as integers) gives an unsat core
of the branch's literals and compounds; a Positivstellensatz leaf is sought over the core's
literals by a linear program (HiGHS): non-negative multipliers of the literals, their products
by pairs and squares of atoms, and multiples of the equalities, adding up to zero with the
strict products weighing 1.  The LP's solution is floating point: it only names the support, on
which the identity is solved again exactly in Fractions.  When no leaf is found, the branch is
split on a disjunction of its core (each disjunct a branch of its own); when none is left, the
core's literals are tried with products of three, four and five, then a cut that squares a
literal's sides, or takes their square roots (_root_cuts), then a cut of inv(s)^2*a = 1 for a
root s = sqrt(a) and its inverse (_inverse_root_cut), then an integer split on a nat
(n <= 0 | n >= 1), then a sign split on an atom of the core, nats first.
"""

from __future__ import annotations

import itertools
import json
import math
import time
from fractions import Fraction

import numpy as np
import z3
from scipy.optimize import linprog

from ..kernel.certificates import (Branch, CertificateError, check, fact_atoms, parse_statement,
                                   poly_add, poly_from_json, poly_mul, poly_to_json)

__all__ = ["find_certificate", "z3_fact"]

_MAX_DEPTH = 10
_MAX_COLUMNS = 4000
_MAX_UNITS = 32
# The running search's deadline, also checked inside a leaf (its rewriting and exact algebra
# can be long on a large branch), so that the budget holds.
_DEADLINE = None


def _in_time() -> None:
    if _DEADLINE is not None and time.monotonic() > _DEADLINE:
        raise _OutOfTime


def find_certificate(statement_text: str, timeout_ms: int = 3000,
                     budget_s: float = 20.0) -> dict | None:
    """A certificate that the kernel's checker accepts for the statement, or None (also when
    the search takes more than budget_s seconds)."""
    branch, nats, integers = parse_statement(statement_text)
    global _DEADLINE
    search = _Search(nats, integers, timeout_ms, time.monotonic() + budget_s)
    _DEADLINE = search.deadline
    try:
        node = search.close(branch, 0, frozenset())
    except _OutOfTime:
        return None
    finally:
        _DEADLINE = None
    if node is None:
        return None
    try:
        check(statement_text, node)
    except CertificateError:
        return None
    return node


def _monomial_z3(monomial, variables, ctx=None) -> z3.ArithRef:
    factors = [variables[a] ** e if e > 1 else variables[a] for a, e in monomial]
    return (z3.Product(factors) if len(factors) > 1 else factors[0] if factors
            else z3.RealVal(1, ctx))


def _z3_poly(p: dict, variables, ctx=None) -> z3.ArithRef:
    if not p:
        return z3.RealVal(0, ctx)
    terms = [z3.RealVal(f"{c.numerator}/{c.denominator}", ctx) * _monomial_z3(m, variables, ctx)
             for m, c in p.items()]
    return z3.Sum(terms) if len(terms) > 1 else terms[0]


def z3_fact(fact, variable, ctx=None) -> z3.BoolRef:
    """A statement's fact for Z3; variable(name) gives an atom's Z3 term (in the context
    ctx, Z3's main context when None)."""
    kind, body = fact
    if kind in ("and", "or"):
        parts = [z3_fact(f, variable, ctx) for f in body]
        if not parts:
            return z3.BoolVal(kind == "and", ctx)
        return z3.And(parts) if kind == "and" else z3.Or(parts)
    p = _z3_poly(body, {a: variable(a) for m in body for a, _ in m}, ctx)
    return {"ge": p >= 0, "gt": p > 0, "eq": p == 0, "ne": p != 0}[kind]


class _OutOfTime(Exception):
    pass


class _Search:
    def __init__(self, nats, integers, timeout_ms: int, deadline: float):
        # The integers (floor, ceil) are whole numbers as the nats are: Z3's integers, and
        # atoms to split on by whole numbers (nothing here uses a nat's sign unless a fact says
        # it).
        self.nats = nats | integers
        self.integers = integers
        self.timeout_ms = timeout_ms
        self.deadline = deadline
        self.variables: dict = {}
        self.translated: dict = {}
        # A context of its own: a search's Z3 calls do not depend on what the process asked
        # Z3 before (in one process after a dozen others, a core that took 0.1 s timed out).
        self.ctx = z3.Context()

    def _var(self, name: str):
        if name not in self.variables:
            self.variables[name] = (z3.ToReal(z3.Int(name, self.ctx)) if name in self.nats
                                    else z3.Real(name, self.ctx))
        return self.variables[name]

    def _z3(self, fact):
        # Branches share their facts (a copy copies the lists, not the facts): each is
        # translated once (the translation took most of a search's time), kept with the fact
        # so that its id is not reused.
        cached = self.translated.get(id(fact))
        if cached is None or cached[0] is not fact:
            cached = self.translated[id(fact)] = (fact, z3_fact(fact, self._var, self.ctx))
        return cached[1]

    def core(self, branch: Branch, spent: frozenset):
        """(literal indices, compound indices) of an unsat core, or None if not shown unsat.
        spent: compounds already split on above (each case holds one of their disjuncts), and
        ("literal", i) for the literals a cut's proof leaves out (_root_cut)."""
        solver = z3.Solver(ctx=self.ctx)
        solver.set("timeout", self.timeout_ms)
        tracks = {}
        for i, lit in enumerate(branch.literals):
            if ("literal", i) in spent:
                continue
            t = z3.Bool(f"!l{i}", self.ctx)
            tracks[t.get_id()] = ("l", i)
            solver.assert_and_track(self._z3(lit), t)
        for j, comp in enumerate(branch.compounds):
            if j in spent:
                continue
            t = z3.Bool(f"!c{j}", self.ctx)
            tracks[t.get_id()] = ("c", j)
            solver.assert_and_track(self._z3(comp), t)
        if solver.check() != z3.unsat:
            return None
        lits, comps = [], []
        for t in solver.unsat_core():
            kind, i = tracks[t.get_id()]
            (lits if kind == "l" else comps).append(i)
        return sorted(lits), sorted(comps)

    def close(self, branch: Branch, depth: int, spent: frozenset):
        if time.monotonic() > self.deadline:
            raise _OutOfTime
        if depth > _MAX_DEPTH:
            return None
        pair = _opposite_pair(branch)
        if pair is not None:
            # p >= 0 and -p >= 0: cut p = 0 (two linear cases), so the leaves may multiply it.
            p, i, j = pair
            at, low = len(branch.compounds), len(branch.literals)
            proof = {"by": "or", "at": at, "cases": [
                {"by": "psatz", "products": [["1", [low]], ["1", [j]]], "squares": [],
                 "multiples": []},
                {"by": "psatz", "products": [["1", [low]], ["1", [i]]], "squares": [],
                 "multiples": []}]}
            then = self.close(branch.copy().add(("eq", p)), depth, spent)
            if then is None:
                return None
            return {"by": "cut", "fact": ["eq", poly_to_json(p)], "proof": proof, "then": then}
        node = _trivial(branch, spent)
        if node is not None:
            return node
        node = self._unit(branch, depth, spent)
        if node is None:
            node = self._whole_strict(branch, depth, spent)
        if node is not None:
            return node if node else None
        found = self.core(branch, spent)
        if found is None:
            return None
        lits, comps = found
        for j in comps:
            if not branch.compounds[j][1]:
                return {"by": "or", "at": j, "cases": []}
        leaf = _leaf(branch.literals, lits, degree=2)
        if leaf is None and not comps and len(branch.literals) <= 24:
            leaf = _leaf(branch.literals, [i for i in range(len(branch.literals))
                                           if ("literal", i) not in spent], degree=2)
        if leaf is not None:
            return leaf
        # Compounds whose disjuncts are closed at sight but one first (a definition's "Delta =
        # 0" cases where Delta > 0 is known): splitting them costs no call to Z3.
        comps = sorted(comps, key=lambda j: sum(not _refuted(branch, d, spent)
                                                for d in branch.compounds[j][1]))
        for j in comps[:3]:
            cases = []
            for disjunct in branch.compounds[j][1]:
                case = self.close(branch.copy().add(disjunct), depth + 1, spent | {j})
                if case is None:
                    break
                cases.append(case)
            else:
                return {"by": "or", "at": j, "cases": cases}
        if not comps:
            for degree in (3, 4, 5):
                leaf = _leaf(branch.literals, lits, degree=degree)
                if leaf is not None:
                    return leaf
            # A root's two definitions combined (inv(s)^2*a = 1 from s^2 = a, inv(s)*s = 1) are
            # a cut of their own: a leaf rewrites by one rule per helper atom, and a goal that
            # writes 1/a where the facts have 1/s^2 needs both at once.
            return (self._root_cut(branch, lits, depth, spent)
                    or self._inverse_root_cut(branch, depth, spent)
                    or self._sign_split(branch, lits, depth, spent))
        return None

    def _unit(self, branch: Branch, depth: int, spent: frozenset):
        """Unit propagation: split on a compound whose disjuncts but one close at sight (a
        definition's "Delta = 0" cases where Delta > 0 is known), with no call to Z3, and go
        on with the one left.  None when there is no such compound (or the splits are at their
        bound), {} when the branch with the disjunct left is not closed."""
        if sum(1 for x in spent if isinstance(x, tuple) and x[0] == "unit") >= _MAX_UNITS:
            return None
        for j, (_, disjuncts) in enumerate(branch.compounds):
            if j in spent:
                continue
            cases, live = [], None
            for k, d in enumerate(disjuncts):
                node = _close_at_sight(branch, d, spent)
                if node is None:
                    if live is not None:
                        break
                    live = k
                cases.append(node)
            else:
                if live is None:
                    return {"by": "or", "at": j, "cases": cases}
                case = self.close(branch.copy().add(disjuncts[live]), depth,
                                  spent | {j, ("unit", j)})
                if case is None:
                    return {}
                cases[live] = case
                return {"by": "or", "at": j, "cases": cases}
        return None

    def _whole_strict(self, branch: Branch, depth: int, spent: frozenset):
        """A strict literal P > 0 of whole numbers that holds a floor or a ceil is P >= 1 (an
        integer split whose case P <= 0 closes at sight): T > floor(a) is T >= floor(a) + 1.
        Z3 leaves `0 < ceil(T) - T < 1` unknown, so this is done before its core is asked.  None
        when there is no such literal, {} when the branch with P >= 1 is not closed."""
        for i, (kind, p) in enumerate(branch.literals):
            key = ("integer", _key(p))
            if kind != "gt" or ("literal", i) in spent or key in spent \
                    or not _atoms(p) & self.integers \
                    or not all(c.denominator == 1 and all(a in self.nats for a, _ in m)
                               for m, c in p.items()):
                continue
            low = {"by": "psatz", "products": [["1", [i]], ["1", [len(branch.literals)]]],
                   "squares": [], "multiples": []}  # P > 0 and -P >= 0
            high = self.close(branch.copy().add(("ge", poly_add(p, {(): Fraction(-1)}))),
                              depth, spent | {key})
            if high is None:
                return {}
            return {"by": "integer", "poly": poly_to_json(p), "at": "0", "cases": [low, high]}
        return None

    def _root_cut(self, branch: Branch, lits, depth: int, spent: frozenset):
        """A cut that squares, or takes the square root of, both sides of a literal of the
        core (_root_cuts): its proof and the rest are searched as branches of their own."""
        roots = _root_arguments(branch)
        if not roots:
            return None
        known = {_key(p) for kind, p in branch.literals}
        for i, fact in _root_cuts(branch, lits, roots):
            key = ("cut", _key(fact[1]))
            if key in spent or fact[1] and _key(fact[1]) in known:
                continue
            # The cut's proof is searched with the facts on its atoms alone (the literal's,
            # the cut's and their roots' arguments): the whole branch is contradictory, so
            # with it any cut, true or not, would be as hard to prove as the branch.
            allowed = _atoms(branch.literals[i][1]) | _atoms(fact[1])
            allowed |= set().union(*(_atoms(roots[a]) for a in allowed if a in roots))
            hidden = {("literal", j) for j, lit in enumerate(branch.literals)
                      if not fact_atoms(lit, set()) <= allowed}
            hidden |= {j for j, comp in enumerate(branch.compounds)
                       if not fact_atoms(comp, set()) <= allowed}
            proof = self.close(branch.copy().add(("gt", poly_add({}, fact[1], -1))), depth + 1,
                               spent | hidden | {key})
            if proof is None:
                continue
            then = self.close(branch.copy().add(fact), depth + 1, spent | {key})
            if then is not None:
                return {"by": "cut", "fact": [fact[0], poly_to_json(fact[1])], "proof": proof,
                        "then": then}
        return None

    def _inverse_root_cut(self, branch: Branch, depth: int, spent: frozenset):
        """A cut of inv(s)^2*a = 1 where the branch defines s = sqrt(a) (s^2 = a) and its
        inverse (inv(s)*s = 1): the two definitions combined, which the leaves' rewriting (one
        rule per atom) does not do (1/Z^2 = 1/(1 + D^2/Delta^2) for Z = sqrt(1 + D^2/Delta^2)).
        Only where the branch also has 1/a (the atom !inv[[a]]): the cut links the facts on 1/s
        to those on 1/a; elsewhere it is true but of no use, and the search under it can take
        the budget that the splits after it need (freund_schapire_nonseparable.proof:120)."""
        atoms: set = set()
        for fact in branch.literals + branch.compounds:
            fact_atoms(fact, atoms)
        squares, inverses = {}, []
        for kind, p in branch.literals:
            if kind != "eq" or len(p) < 2:
                continue
            for m, c in p.items():
                if len(m) == 1 and m[0][1] == 2 and m[0][0].startswith(_ROOT + "[") \
                        and all(m[0][0] not in dict(o) for o in p if o != m):
                    squares[m[0][0]] = poly_add({}, {o: d for o, d in p.items() if o != m},
                                                -1 / c)
                if len(m) == 2 and all(e == 1 for _, e in m) and len(p) == 2 \
                        and () in p and any(a.startswith("!inv[") for a, _ in m):
                    inverses.append((m, -p[()] / c))
        for m, value in inverses:
            (a, _), (b, _) = m
            inverse, root = (a, b) if a.startswith("!inv[") else (b, a)
            if root not in squares or "!inv" + root[len(_ROOT):] not in atoms:
                continue
            fact = poly_add(poly_mul({((inverse, 2),): Fraction(1)}, squares[root]),
                            {(): value * value}, -1)
            key = ("cut", _key(fact))
            if key in spent:
                continue
            # its proof with the facts on its atoms alone, as for _root_cut
            allowed = _atoms(fact) | {root}
            hidden = {("literal", j) for j, lit in enumerate(branch.literals)
                      if not fact_atoms(lit, set()) <= allowed}
            hidden |= {j for j, comp in enumerate(branch.compounds)
                       if not fact_atoms(comp, set()) <= allowed}
            proof = self.close(branch.copy().add(("ne", fact)), depth + 1,
                               spent | hidden | {key})
            if proof is None:
                continue
            then = self.close(branch.copy().add(("eq", fact)), depth + 1, spent | {key})
            if then is not None:
                return {"by": "cut", "fact": ["eq", poly_to_json(fact)], "proof": proof,
                        "then": then}
        return None

    def _sign_split(self, branch: Branch, lits, depth: int, spent: frozenset):
        """Split on an atom of the core: a nat n first by whole numbers (n <= 0 | n >= 1: no
        nat lies strictly between), then on a sign (a > 0 | a = 0 | a < 0): dividing by k, as
        the mistake bounds' last step does, needs k > 0, and k = 0 is its own case."""
        atoms = sorted({a for i in lits for m in branch.literals[i][1] for a, _ in m},
                       key=lambda a: (a not in self.nats, a))
        for a in atoms:
            if a not in self.nats or ("integer", a) in spent:
                continue
            k = {((a, 1),): Fraction(1)}
            low = self.close(branch.copy().add(("ge", poly_add({}, k, -1))), depth + 1,
                             spent | {("integer", a)})
            high = low and self.close(branch.copy().add(("ge", poly_add(k, {(): Fraction(-1)}))),
                                      depth + 1, spent | {("integer", a)})
            if high:
                return {"by": "integer", "poly": poly_to_json(k), "at": "0",
                        "cases": [low, high]}
        for a in atoms:
            if ("sign", a) in spent:
                continue
            k = {((a, 1),): Fraction(1)}
            cases = []
            for fact in (("gt", k), ("eq", k), ("gt", poly_add({}, k, -1))):
                case = self.close(branch.copy().add(fact), depth + 1, spent | {("sign", a)})
                if case is None:
                    break
                cases.append(case)
            else:
                return {"by": "sign", "poly": poly_to_json(k), "cases": cases}
        return None


def _trivial(branch: Branch, spent: frozenset):
    """A psatz leaf of two literals that contradict at sight, or None: P > 0 with P = 0, -P = 0,
    -P >= 0 or -P > 0; or a constant that is not 0 = 0, or a constant < 0 >= 0.  The disjuncts
    of the helper atoms' definitions (Delta = 0 where Delta > 0 is known) are closed without a
    call to Z3."""
    strict: dict = {}
    for i, (kind, p) in enumerate(branch.literals):
        if ("literal", i) in spent:
            continue
        if kind == "gt":
            strict.setdefault(_key(p), i)
        if p and all(not m for m in p):
            (c,) = p.values()
            if kind == "eq" or kind == "gt" and c < 0 or kind == "ge" and c < 0:
                lits = [] if kind == "eq" else [i]
                node = {"by": "psatz", "products": [["1", []]], "squares": [], "multiples": []}
                if kind == "eq":
                    node["multiples"].append([poly_to_json({(): -1 / c}), i])
                else:
                    node["products"].append([_text(-1 / c), lits])
                return node
    if not strict:
        return None
    for j, (kind, p) in enumerate(branch.literals):
        if ("literal", j) in spent or not p:
            continue
        minus = _key(poly_add({}, p, -1))
        if kind == "eq":
            for key, sign in ((_key(p), -1), (minus, 1)):
                i = strict.get(key)
                if i is not None:
                    return {"by": "psatz", "products": [["1", [i]]], "squares": [],
                            "multiples": [[poly_to_json({(): Fraction(sign)}), j]]}
        elif minus in strict and strict[minus] != j:
            return {"by": "psatz", "products": [["1", [strict[minus]]], ["1", [j]]],
                    "squares": [], "multiples": []}
    return None


def _refuted(branch: Branch, fact, spent: frozenset) -> bool:
    """Whether adding the fact to the branch closes it at sight (_close_at_sight)."""
    return _close_at_sight(branch, fact, spent) is not None


def _close_at_sight(branch: Branch, fact, spent: frozenset):
    """A node that closes the branch with the fact added by _trivial leaves alone (an or: each
    part; an and: its literals, or one of its ors), or None."""
    kind, body = fact
    if kind == "ne":
        return None
    if kind == "or":
        at = len(branch.compounds)
        grown = branch.copy().add(fact)
        cases = []
        for part in body:
            node = _close_at_sight(grown, part, spent)
            if node is None:
                return None
            cases.append(node)
        return {"by": "or", "at": at, "cases": cases}
    grown = branch.copy().add(fact)
    node = _trivial(grown, spent)
    if node is not None or kind != "and":
        return node
    for at in range(len(branch.compounds), len(grown.compounds)):
        cases = []
        for part in grown.compounds[at][1]:
            node = _close_at_sight(grown, part, spent)
            if node is None:
                break
            cases.append(node)
        else:
            return {"by": "or", "at": at, "cases": cases}
    return None


def _key(p: dict) -> tuple:
    return tuple(sorted(p.items()))


_ROOT = "!sqrt"


def _root_arguments(branch: Branch) -> dict:
    """The square-root helper atoms of the branch (statements name them ``!sqrt[[P]]`` after
    their argument P) -> their arguments."""
    atoms: set = set()
    for fact in branch.literals + branch.compounds:
        fact_atoms(fact, atoms)
    roots = {}
    for a in atoms:
        if a.startswith(_ROOT + "["):
            try:
                roots[a] = poly_from_json(json.loads(a[len(_ROOT):])[0])
            except (ValueError, IndexError, CertificateError):
                continue
    return roots


def _reduced(p: dict, roots: dict) -> dict:
    """p with every square of a root atom replaced by its argument (sqrt(a)^2 = a where the
    argument is >= 0: the cut's own proof must show it)."""
    for _ in range(4):
        out: dict = {}
        changed = False
        for m, c in p.items():
            term = {(): c}
            rest = []
            for a, e in m:
                if a in roots and e >= 2:
                    changed = True
                    for _ in range(e // 2):
                        term = poly_mul(term, roots[a])
                    e %= 2
                if e:
                    rest.append((a, e))
            out = poly_add(out, poly_mul(term, {tuple(rest): Fraction(1)}))
        p = out
        if not changed:
            break
    return p


def _monomial_root(m: tuple, c: Fraction, roots_of: dict):
    """A monomial whose square reduces to c*m (c > 0 a rational square), through the root
    atoms the branch has, or None."""
    num, den = c.numerator, c.denominator
    rn, rd = math.isqrt(num), math.isqrt(den)
    if rn * rn != num or rd * rd != den:
        return None
    powers: dict = {}
    odd = []
    for a, e in m:
        if e // 2:
            powers[a] = powers.get(a, 0) + e // 2
        if e % 2:
            odd.append(a)
    if odd:
        # sqrt of the product of the odd atoms, or of each of them
        whole = roots_of.get(_key({tuple((a, 1) for a in sorted(odd)): Fraction(1)}))
        if whole is not None:
            powers[whole] = powers.get(whole, 0) + 1
        else:
            for a in odd:
                root = roots_of.get(_key({((a, 1),): Fraction(1)}))
                if root is None:
                    return None
                powers[root] = powers.get(root, 0) + 1
    return {tuple(sorted(powers.items())): Fraction(rn, rd)}


def _root_cuts(branch: Branch, lits, roots: dict):
    """(i, cut fact) for the core's literals P >= 0 (P > 0), P = A - B:
    squared, reduce(A^2 - B^2) >= 0 when P holds root atoms, A and B its terms with and without
    them or its positive and negative terms (each way round: which one holds is the proof's
    to show); square-rooted, A - B >= 0 when P = a - b for single terms whose roots are
    monomials of the branch's root atoms (||w||^2 <= R^2*k gives ||w|| <= R*sqrt(k))."""
    roots_of = {_key(arg): name for name, arg in roots.items()}
    seen = set()
    for i in lits:
        kind, p = branch.literals[i]
        if kind not in ("ge", "gt") or len(p) < 2:
            continue
        splits = []
        rooted = {m: c for m, c in p.items() if any(a in roots for a, _ in m)}
        if rooted and len(rooted) < len(p):
            rest = {m: c for m, c in p.items() if m not in rooted}
            splits += [(rooted, poly_add({}, rest, -1)), (rest, poly_add({}, rooted, -1))]
        positive = {m: c for m, c in p.items() if c > 0}
        if positive and len(positive) < len(p):
            negative = {m: -c for m, c in p.items() if c < 0}
            if rooted:
                splits.append((positive, negative))
            if len(positive) == 1 and len(negative) == 1:
                (ma, ca), = positive.items()
                (mb, cb), = negative.items()
                a, b = _monomial_root(ma, ca, roots_of), _monomial_root(mb, cb, roots_of)
                if a is not None and b is not None:
                    splits.append(("root", poly_add(a, b, -1)))
        for a, b in splits:
            if a == "root":
                fact = b
            else:
                fact = _reduced(poly_add(poly_mul(a, a), poly_mul(b, b), -1), roots)
            if fact and _key(fact) not in seen:
                seen.add(_key(fact))
                yield i, ("ge", fact)


def _opposite_pair(branch: Branch):
    """(p, i, j) with literal i p >= 0 and literal j -p >= 0, p = 0 not yet a literal."""
    seen = {}
    equalities = {tuple(sorted(p.items())) for kind, p in branch.literals if kind == "eq"}
    for i, (kind, p) in enumerate(branch.literals):
        if kind != "ge" or not p:
            continue
        key = tuple(sorted(p.items()))
        minus = tuple(sorted(poly_add({}, p, -1).items()))
        if minus in seen and key not in equalities and minus not in equalities:
            return p, i, seen[minus]
        seen.setdefault(key, i)
    return None


# ---------------------------------------------------------------------------- the LP leaf

def _divide(t: tuple, m: tuple):
    """The monomial t/m, or None when m does not divide t."""
    powers = dict(t)
    for a, e in m:
        if powers.get(a, 0) < e:
            return None
        powers[a] -= e
    return tuple(sorted((a, e) for a, e in powers.items() if e))


def _mono_mul(a: tuple, b: tuple) -> tuple:
    powers = dict(a)
    for atom, e in b:
        powers[atom] = powers.get(atom, 0) + e
    return tuple(sorted(powers.items()))


def _atoms(p: dict) -> set:
    return {a for m in p for a, _ in m}


def _deg(p: dict) -> int:
    return max((sum(e for _, e in m) for m in p), default=0)


def _add_square_columns(columns: list, m: dict, literals, inequalities, size: int) -> None:
    """A column m^2 * (product of `size` inequality literals) for each choice of them, while
    the columns are under half their bound."""
    for combo in itertools.combinations_with_replacement(inequalities, size):
        if len(columns) > _MAX_COLUMNS // 2:
            break
        p = poly_mul(m, m)
        for i in combo:
            p = poly_mul(p, literals[i][1])
        columns.append(("square", (m, list(combo)), p, True, False))


def _signed_atoms(literals, inequalities) -> dict:
    """atom -> the literal that says it is > 0 (or else >= 0), for the literals a*c > 0, c > 0."""
    signed: dict = {}
    for i in inequalities:
        kind, p = literals[i]
        if len(p) == 1:
            (m, c), = p.items()
            if len(m) == 1 and m[0][1] == 1 and c > 0:
                a = m[0][0]
                if a not in signed or kind == "gt" and literals[signed[a]][0] != "gt":
                    signed[a] = i
    return signed


def _add_scaled_columns(columns: list, literals, inequalities, rounds: int = 2) -> None:
    """Products of one literal by the atoms' signs that make one of its terms a term of another
    column: from k*beta^2*eta^2*n in ``||a[k] - alpha*a_hat||^2 >= k*beta^2*eta^2*n`` and k in the
    negated goal ``k > alpha^2*||a_hat||^2/(beta^2*eta^2*n)``, the goal times beta*beta*eta*eta*n
    (the "divide both sides" of a bound: a product of six literals, past the degrees tried)."""
    signed = _signed_atoms(literals, inequalities)
    if not signed:
        return
    general = [i for i in inequalities if i not in signed.values()]
    seen = {tuple(col[1]) for col in columns if col[0] == "product"}
    for _ in range(rounds):
        targets = {m for col in columns for m in col[2]}
        for i in general:
            for m in literals[i][1]:
                for t in targets:
                    q = _divide(t, m)
                    if not q or any(a not in signed for a, _ in q) or sum(e for _, e in q) > 8:
                        continue
                    combo = tuple(sorted([i] + [signed[a] for a, e in q for _ in range(e)]))
                    if combo in seen or len(combo) > 12:
                        continue
                    seen.add(combo)
                    p = poly_mul({q: Fraction(1)}, literals[i][1])
                    columns.append(("product", list(combo), p, True,
                                    all(literals[j][0] == "gt" for j in combo)))
                    if len(columns) > _MAX_COLUMNS:
                        return


def _leaf(literals, chosen, degree: int):
    """A psatz node over the chosen literals, or None."""
    inequalities = [i for i in chosen if literals[i][0] in ("ge", "gt")]
    equalities = [i for i in chosen if literals[i][0] == "eq"]
    atoms = sorted(set().union(*(_atoms(literals[i][1]) for i in chosen)) if chosen else set())
    columns = []  # (kind, payload, polynomial, nonnegative, strict)
    columns.append(("product", [], {(): Fraction(1)}, True, True))
    # A product's degree is bounded by twice the degree asked for, or by the highest degree of
    # a chosen literal: a literal of degree 11 (||a[k] - alpha*a_hat||^2 >= 0 multiplied out)
    # is a column of its own, and its products by the atoms' signs may reach its degree.
    top = max((_deg(literals[i][1]) for i in inequalities), default=0)
    for size in range(1, degree + 1):
        for combo in itertools.combinations_with_replacement(inequalities, size):
            if len(columns) > _MAX_COLUMNS:
                break
            p = {(): Fraction(1)}
            for i in combo:
                p = poly_mul(p, literals[i][1])
            if _deg(p) > max(2 * degree, top):
                continue
            columns.append(("product", list(combo), p, True,
                            all(literals[i][0] == "gt" for i in combo)))
    for a in atoms:
        m = {((a, 1),): Fraction(1)}
        columns.append(("square", (m, []), poly_mul(m, m), True, False))
        for i in inequalities:
            columns.append(("square", (m, [i]), poly_mul(poly_mul(m, m), literals[i][1]),
                            True, False))
    # Squares of the monomials whose squares divide a term (beta^2*eta^2*m*n: (beta*eta)^2),
    # times up to two inequalities: k*(n - k)*beta^2 >= 0 is no product of literals alone.
    halves = {tuple((a, e // 2) for a, e in m if e >= 2) for i in chosen for m in literals[i][1]}
    for half in sorted(h for h in halves if h and (len(h) > 1 or h[0][1] > 1)):
        for size in range(0, 3):
            _add_square_columns(columns, {half: Fraction(1)}, literals, inequalities, size)
    for a in atoms if degree > 2 else ():
        _add_square_columns(columns, {((a, 1),): Fraction(1)}, literals, inequalities, 2)
    # The definitions of helper atoms (sqrt(a)^2 = a, inv(g)*g = 1) are used as rewriting rules:
    # every column is reduced by them, and the multiples of the definitions that the reduction
    # took are added back exactly (quotients); the LP sees the reduced columns only.
    rules, left = _rules(literals, equalities)
    quotients: dict = {}
    if not _reduce_columns(columns, quotients, rules, 0):
        return None
    done = len(columns)
    _add_scaled_columns(columns, literals, inequalities)
    if not _reduce_columns(columns, quotients, rules, done):
        return None
    done = len(columns)
    equalities = left
    base = {()} | {((a, 1),) for a in atoms}
    if len(atoms) <= 8:
        base |= {_mono_mul(((a, 1),), ((b, 1),))
                 for a, b in itertools.combinations_with_replacement(atoms, 2)}
    # Multipliers that can cancel a monomial of the other columns (twice: a chain of two).
    targets = {m for col in columns for m in col[2]}
    multipliers = {i: set(base) for i in equalities}
    for _ in range(2):
        for i in equalities:
            for m in literals[i][1]:
                for t in targets:
                    q = _divide(t, m)
                    if q is not None:
                        multipliers[i].add(q)
        targets |= {_mono_mul(q, m) for i in equalities for q in multipliers[i]
                    for m in literals[i][1]}
        if sum(len(v) for v in multipliers.values()) > _MAX_COLUMNS:
            return None
    for i in equalities:
        for q in sorted(multipliers[i]):
            qp = {q: Fraction(1)}
            columns.append(("multiple", (qp, i), poly_mul(qp, literals[i][1]), False, False))
    # The definitions made rules, times the base monomials only: reduced by another rule, a
    # multiple is what combining two definitions gives (inv(Z)^2*(Z^2 - a) is 1 - inv(Z)^2*a
    # once inv(Z)*Z is 1); the others reduce to 0 and are dropped.
    ruled = [i for i in chosen if literals[i][0] == "eq" and i not in left]
    if len(ruled) > 1:
        for i in ruled:
            for q in sorted(base):
                qp = {q: Fraction(1)}
                columns.append(("multiple", (qp, i), poly_mul(qp, literals[i][1]), False,
                                False))
    if len(columns) > _MAX_COLUMNS:
        return None
    if not _reduce_columns(columns, quotients, rules, done):
        return None
    kept = [j for j, col in enumerate(columns) if col[2] or col[0] != "multiple"]
    if len(kept) < len(columns):
        quotients = {new: quotients[j] for new, j in enumerate(kept) if j in quotients}
        columns = [columns[j] for j in kept]
    rows: dict = {}
    for col in columns:
        for m in col[2]:
            rows.setdefault(m, len(rows))
    n, r = len(columns), len(rows) + 1
    a_eq = np.zeros((r, n))
    for j, col in enumerate(columns):
        for m, c in col[2].items():
            a_eq[rows[m], j] = float(c)
        if col[4]:
            a_eq[r - 1, j] = 1.0
    b_eq = np.zeros(r)
    b_eq[r - 1] = 1.0
    bounds = [(0, None) if col[3] else (None, None) for col in columns]
    cost = np.array([1.0 if col[3] else 0.0 for col in columns])
    try:
        result = linprog(cost, A_eq=a_eq, b_eq=b_eq, bounds=bounds, method="highs")
    except ValueError:
        return None
    if result.status != 0:
        return None
    support = [j for j in range(n) if abs(result.x[j]) > 1e-9]
    exact = _exact(columns, rows, support, result.x)
    if exact is None:
        return None
    node = {"by": "psatz", "products": [], "squares": [], "multiples": []}
    multiples: dict = {}
    for j, value in exact.items():
        if value == 0:
            continue
        kind, payload = columns[j][0], columns[j][1]
        text = _text(value)
        if kind == "product":
            node["products"].append([text, payload])
        elif kind == "square":
            node["squares"].append([text, poly_to_json(payload[0]), payload[1]])
        else:
            q, i = payload
            multiples[i] = poly_add(multiples.get(i, {}), q, value)
        # the column is its reduced form plus these multiples of the definitions: take them away
        for i, q in quotients.get(j, {}).items():
            multiples[i] = poly_add(multiples.get(i, {}), q, -value)
    for i in sorted(multiples):
        if multiples[i]:
            node["multiples"].append([poly_to_json(multiples[i]), i])
    return node


def _helper_lead(p: dict):
    """(lead monomial, its coefficient, helper atom) of an equality that defines a helper atom
    ('!sqrt[...]', '!inv[...]') by one of its monomials, the helper atom in that monomial and
    in no other (sqrt(a)^2 - a = 0, inv(g)*g - 1 = 0), the lowest such monomial; or None."""
    found = None
    for m, c in sorted(p.items()):
        helpers = [a for a, _ in m if a.startswith("!")
                   and all(a not in dict(other) for other in p if other != m)]
        if helpers and (found is None or sum(e for _, e in m) < sum(e for _, e in found[0])):
            found = (m, c, min(helpers))
    return found


def _rules(literals, equalities) -> tuple:
    """(rules, the equalities left to the LP).  A rule (lead, c, rest, combination) rewrites
    lead to -rest/c, for the equation c*lead + rest = 0 that is the combination {i: Q} of the
    equality literals, sum Q*E_i.  The rules are taken lowest lead first, one per helper atom,
    each equation reduced by the rules before it (with sqrt(w*) = B, inv(sqrt(w*))*sqrt(w*) = 1
    is inv(sqrt(w*))*B = 1); an equality that defines no helper atom once reduced (sqrt(x)^2 =
    x after sqrt(x) = 1) stays an equality of the LP, and one that reduces to 0 is dropped."""
    pending = {i: (literals[i][1], {i: {(): Fraction(1)}}) for i in equalities}
    rules: list = []
    taken: set = set()
    while True:
        best = None
        for i, (p, combo) in sorted(pending.items()):
            reduced = _reduce(p, rules)
            if reduced is None:
                continue
            p, quotients = reduced
            for k, q in quotients.items():
                combo = _combine(combo, {k: q}, -1)
            pending[i] = (p, combo)
            lead = _helper_lead(p)
            if lead is not None and lead[2] not in taken and (
                    best is None or sum(e for _, e in lead[0]) < sum(e for _, e in best[1][0])):
                best = (i, lead)
        if best is None:
            break
        i, (m, c, helper) = best
        p, combo = pending.pop(i)
        taken.add(helper)
        rules.append((m, c, {o: d for o, d in p.items() if o != m}, combo))
    left = [i for i in equalities if i in pending and pending[i][0]]
    return rules, left


def _combine(combo: dict, other: dict, factor) -> dict:
    """combo + factor*other, combinations {i: Q} of the equality literals."""
    out = dict(combo)
    for i, q in other.items():
        out[i] = poly_add(out.get(i, {}), q, factor)
        if not out[i]:
            del out[i]
    return out


def _reduce(p: dict, rules: list, limit: int = 500):
    """(p rewritten by the rules until none applies, {i: Q}) with p = reduced + sum Q*E_i over
    the equality literals i, or None when the rewriting does not settle within the bounds."""
    quotients: dict = {}
    for _ in range(12):
        out: dict = {}
        changed = False
        for m, c in p.items():
            for lead, cl, rest, combo in rules:
                q = _divide(m, lead)
                if q is None:
                    continue
                factor = {q: c / cl}
                for i, e in combo.items():
                    quotients[i] = poly_add(quotients.get(i, {}), poly_mul(factor, e))
                out = poly_add(out, poly_mul(factor, rest), -1)
                changed = True
                break
            else:
                out = poly_add(out, {m: c})
        p = out
        if len(p) > limit:
            return None
        if not changed:
            return p, {i: q for i, q in quotients.items() if q}
    return None


def _reduce_columns(columns: list, quotients: dict, rules: list, start: int) -> bool:
    """Reduce the columns from start on by the rules (in place; their quotients into
    quotients); False when one does not settle."""
    if not rules:
        return True
    for j in range(start, len(columns)):
        _in_time()
        kind, payload, p, nonnegative, strict = columns[j]
        reduced = _reduce(p, rules)
        if reduced is None:
            return False
        columns[j] = (kind, payload, reduced[0], nonnegative, strict)
        if reduced[1]:
            quotients[j] = reduced[1]
    return True


def _text(c: Fraction) -> str:
    return str(c.numerator) if c.denominator == 1 else f"{c.numerator}/{c.denominator}"


def _exact(columns, rows, support, approx):
    """Exact values on the support that satisfy the identity and the normalisation, with the
    signs the columns need; None if rounding the LP's free values does not give them."""
    r = len(rows) + 1
    matrix = [[Fraction(0)] * len(support) + [Fraction(0)] for _ in range(r)]
    for k, j in enumerate(support):
        for m, c in columns[j][2].items():
            matrix[rows[m]][k] = c
        if columns[j][4]:
            matrix[r - 1][k] = Fraction(1)
    matrix[r - 1][-1] = Fraction(1)
    pivots = _row_reduce(matrix, len(support))
    if pivots is None:
        return None
    free = [k for k in range(len(support)) if k not in pivots.values()]
    for limit in (1, 10, 1000, 10 ** 6):
        values = {k: Fraction(float(approx[support[k]])).limit_denominator(limit) for k in free}
        for row, k in pivots.items():
            v = matrix[row][-1] - sum(matrix[row][f] * values[f] for f in free)
            values[k] = v
        if all(values[k] >= 0 for k in range(len(support)) if columns[support[k]][3]):
            return {support[k]: values[k] for k in range(len(support))}
    return None


def _row_reduce(matrix, width: int):
    """Reduced row echelon form in place; {row: pivot column}, or None if inconsistent."""
    pivots = {}
    row = 0
    for col in range(width):
        _in_time()
        pivot = next((i for i in range(row, len(matrix)) if matrix[i][col] != 0), None)
        if pivot is None:
            continue
        matrix[row], matrix[pivot] = matrix[pivot], matrix[row]
        lead = matrix[row][col]
        matrix[row] = [x / lead for x in matrix[row]]
        for i in range(len(matrix)):
            if i != row and matrix[i][col] != 0:
                f = matrix[i][col]
                matrix[i] = [x - f * y for x, y in zip(matrix[i], matrix[row])]
        pivots[row] = col
        row += 1
    if any(all(x == 0 for x in matrix[i][:-1]) and matrix[i][-1] != 0
           for i in range(row, len(matrix))):
        return None
    return pivots
