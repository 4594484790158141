"""Theorems and the rules that make them.  The only code in novikoff that creates a Theorem.

A Theorem is a sequent ``hyps |- concl``: ``hyps`` is the set of formulas it depends on (setting
assumptions, declarations, an induction hypothesis, a case condition, or a step that failed and was
assumed so that checking could go on).  A lemma is verified when its theorem's conclusion is its
statement and every hypothesis is an assumption or declaration of its setting.

Semantics of a setting: non-sequence symbols are constants, except those declared *per update*,
which denote the example of update k; every assumption holds at every k.  That is why the
induction rule refuses a statement that mentions a per-update symbol.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass

import sympy as sp

from ..errors import KernelError
from .formulas import (Disjunction, Implication, Relation, VectorEq, compose_relations,
                       free_symbols)
from .solver import Verdict, entails
from .terms import Inner, Norm, Vec, ip, normal_form, norm, same_term

__all__ = ["Signature", "Supposition", "Theorem", "Decision", "assume", "decide", "trans", "induction", "cases",
           "discharge", "conclusion_matches", "accepts", "cauchy_schwarz", "triangle", "nat_cases",
           "rewrite_vectors"]

_ISSUED: "weakref.WeakSet[Theorem]" = weakref.WeakSet()


@dataclass(frozen=True)
class Signature:
    """What a setting declares that the rules need: constraints, labels, naturals, per-update."""

    declarations: tuple  # Relations such as gamma > 0, y**2 = 1, k >= 0
    labels: frozenset
    nats: frozenset
    per_update: frozenset


class Theorem:
    """hyps |- concl, made only by the rules of this module."""

    __slots__ = ("hyps", "concl", "__weakref__")

    def __init__(self, *args, **kwargs):
        raise KernelError("a Theorem is made only by the kernel's rules")

    def __setattr__(self, name, value):
        raise KernelError("a Theorem is immutable")

    def __reduce__(self):
        raise KernelError("a Theorem cannot be copied or pickled")

    def __repr__(self) -> str:
        hyps = ", ".join(sorted(str(h) for h in self.hyps))
        return f"Theorem({hyps} |- {self.concl})"


def _make(hyps, concl) -> Theorem:
    thm = object.__new__(Theorem)
    object.__setattr__(thm, "hyps", frozenset(hyps))
    object.__setattr__(thm, "concl", concl)
    _ISSUED.add(thm)
    return thm


def _genuine(*theorems: Theorem) -> None:
    for thm in theorems:
        if not isinstance(thm, Theorem) or thm not in _ISSUED:
            raise KernelError(f"not a theorem made by the kernel: {thm!r}")


@dataclass(frozen=True)
class Supposition:
    """A labelled hypothesis: a formula supposed so that checking can go on past a failure.

    It never equals an assumption of a setting, so a theorem resting on it is never accepted.
    """

    label: str
    formula: object

    def __str__(self) -> str:
        return f"[{self.label}] {self.formula}"


def assume(formula, label: str | None = None) -> Theorem:
    """formula |- formula; with a label, [label] formula |- formula."""
    if not isinstance(formula, (Relation, VectorEq, Implication, Disjunction)):
        raise KernelError(f"not a formula: {formula!r}")
    return _make({Supposition(label, formula) if label else formula}, formula)


# ---------------------------------------------------------------------------- vector facts

def cauchy_schwarz(u: Vec, v: Vec) -> list:
    """|<u, v>| <= ||u|| ||v||, also squared."""
    p, nu, nv = ip(u, v), norm(u), norm(v)
    return [Relation("<=", p, nu * nv), Relation("<=", -p, nu * nv),
            Relation("<=", p ** 2, ip(u, u) * ip(v, v))]


def triangle(u: Vec, v: Vec) -> list:
    """||u + v|| <= ||u|| + ||v||."""
    return [Relation("<=", norm(u + v), norm(u) + norm(v))]


def nat_cases(k: sp.Symbol) -> list:
    """k = 0 or k >= 1, for a natural k (the solver treats k as a real >= 0)."""
    return [Disjunction((Relation("=", k, sp.Integer(0)), Relation(">=", k, sp.Integer(1))))]


_FACTS = {"cauchy_schwarz": cauchy_schwarz, "triangle": triangle, "nat_cases": nat_cases}


# ---------------------------------------------------------------------------- rewriting

def _replace_inner(expr: sp.Expr, defs: dict) -> sp.Expr:
    """Substitute vector definitions atom := Vec inside every Inner and Norm of expr."""
    def lin(a):
        return defs.get(a, Vec.atom(a))

    def inner(u, v):
        return ip(lin(u), lin(v))

    def norm_(n):
        v = Vec.zero()
        for a, c in n.vector().terms:
            v = v + lin(a).scale(c)
        return norm(v)

    out = expr.replace(lambda e: isinstance(e, Inner), lambda e: inner(*e.args))
    return out.replace(lambda e: isinstance(e, Norm), norm_)


def rewrite_vectors(formula, defs: dict):
    """Apply vector definitions to a scalar formula."""
    if not defs:
        return formula
    if isinstance(formula, Relation):
        return Relation(formula.rel, _replace_inner(formula.lhs, defs),
                        _replace_inner(formula.rhs, defs))
    if isinstance(formula, Implication):
        return Implication(tuple(rewrite_vectors(p, defs) for p in formula.premises),
                           rewrite_vectors(formula.conclusion, defs))
    if isinstance(formula, Disjunction):
        return Disjunction(tuple(rewrite_vectors(d, defs) for d in formula.disjuncts))
    return formula


def _vector_definitions(formulas) -> dict:
    defs = {}
    for f in formulas:
        if isinstance(f, VectorEq):
            if f.atom in f.rhs.atoms():
                raise KernelError(f"a vector definition may not mention its own atom: {f}")
            defs[f.atom] = f.rhs
    # Resolve chains (a := b + c, b := d) so that one pass of substitution suffices.
    for _ in range(len(defs) + 1):
        changed = False
        for atom, rhs in list(defs.items()):
            new = Vec.zero()
            for a, c in rhs.terms:
                new = new + (defs[a].scale(c) if a in defs else Vec.atom(a).scale(c))
            if new != rhs:
                defs[atom], changed = new, True
        if not changed:
            return defs
    raise KernelError("vector definitions are circular")


# ---------------------------------------------------------------------------- deciding a step

@dataclass(frozen=True)
class Decision:
    """The outcome of one obligation: status, the theorem if verified, and what the solver said.

    status: 'verified', 'failed' or 'unknown'.  kind: 'goal', 'vacuous', 'domain' (which check
    settled it).  obligation: the formula that failed or could not be decided; hypotheses: the
    formulas in force for it (after vector definitions were substituted).
    """

    status: str
    kind: str
    theorem: Theorem | None
    verdict: Verdict | None
    obligation: object
    hypotheses: tuple
    reason: str = ""


def domain_obligations(expr: sp.Expr) -> list:
    """Denominators must be non-zero, square-root arguments non-negative."""
    out = []
    for e in sp.preorder_traversal(expr):
        if e.is_Pow and e.exp.is_Rational:
            if e.exp < 0:
                out.append(Relation("!=", e.base, sp.Integer(0)))
            if e.exp.q == 2:
                out.append(Relation(">=", e.base, sp.Integer(0)))
    return out


def decide(sig: Signature, premises, goal, *, facts=(), timeout_ms: int = 5000) -> Decision:
    """Decide premises + declarations + instances of named facts |- goal.

    premises: Theorems; facts: (name, *arguments) of named facts, instantiated here:
    ('cauchy_schwarz', u, v), ('triangle', u, v) for vectors, ('nat_cases', k) for a nat.
    """
    _genuine(*premises)
    if not isinstance(goal, (Relation, Disjunction)):
        raise KernelError(f"a step proves a scalar relation, not {goal!r}")
    concls = [t.concl for t in premises]
    defs = _vector_definitions(concls)
    hyps = list(sig.declarations) + [rewrite_vectors(c, defs) for c in concls
                                     if not isinstance(c, VectorEq)]
    instances = []
    for name, *args in facts:
        if name not in _FACTS:
            raise KernelError(f"unknown named fact {name!r}")
        if name == "nat_cases" and (len(args) != 1 or args[0] not in sig.nats):
            raise KernelError(f"nat_cases applies to a declared nat, not {args!r}")
        if name != "nat_cases" and not (len(args) == 2 and all(isinstance(a, Vec)
                                                                for a in args)):
            raise KernelError(f"{name} applies to two vectors, not {args!r}")
        instances += [rewrite_vectors(f, defs) for f in _FACTS[name](*args)]
    target = rewrite_vectors(goal, defs)
    hyps_t = tuple(hyps)

    all_hyps = frozenset(sig.declarations).union(*(t.hyps for t in premises))
    vacuity = _contradictory(all_hyps, timeout_ms)
    if vacuity.answer == "valid":
        return Decision("failed", "vacuous", None, vacuity, None, hyps_t,
                        "the hypotheses in force contradict each other, so the step is vacuous")

    exprs = [target.lhs, target.rhs] if isinstance(target, Relation) else [
        side for d in target.disjuncts for side in (d.lhs, d.rhs)]
    for obligation in dict.fromkeys(o for e in exprs for o in domain_obligations(e)):
        verdict = entails(hyps_t + tuple(instances), obligation, timeout_ms)
        if verdict.answer != "valid":
            return Decision("failed" if verdict.answer == "invalid" else "unknown", "domain",
                            None, verdict, obligation, hyps_t, "")

    if (isinstance(target, Relation) and target.rel == "="
            and normal_form(target.lhs - target.rhs, sig.labels) == 0):
        return Decision("verified", "goal", _make(all_hyps, goal), None, target, hyps_t)
    verdict = entails(hyps_t + tuple(instances), target, timeout_ms)
    if verdict.answer == "valid":
        return Decision("verified", "goal", _make(all_hyps, goal), verdict, target, hyps_t)
    status = "failed" if verdict.answer == "invalid" else "unknown"
    return Decision(status, "goal", None, verdict, target, hyps_t + tuple(instances),
                    verdict.reason)


_CONSISTENT: list = []  # hypothesis sets found satisfiable (so are their subsets)


def _contradictory(hyps: frozenset, timeout_ms: int) -> Verdict:
    """Verdict 'valid' when the hypotheses contradict each other.

    A premise's conclusion follows from its hypotheses, so a step's hypotheses are consistent
    exactly when the union of its premises' hypotheses and the declarations is: that union is
    what is checked, and a set known consistent answers for all its subsets.
    """
    if any(hyps <= known for known in _CONSISTENT):
        return Verdict("invalid")
    formulas = [h.formula if isinstance(h, Supposition) else h for h in hyps]
    defs = _vector_definitions(formulas)
    verdict = entails([rewrite_vectors(f, defs) for f in formulas
                       if not isinstance(f, VectorEq)], None, timeout_ms)
    if verdict.answer == "invalid":
        _CONSISTENT.append(hyps)
        del _CONSISTENT[:-256]
    return verdict


# ---------------------------------------------------------------------------- structural rules

def _same_relation(a: Relation, b: Relation, labels) -> bool:
    return a.rel == b.rel and same_term(a.lhs, b.lhs, labels) and same_term(a.rhs, b.rhs, labels)


_FLIP = {"=": "=", "!=": "!=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}
_IMPLIES = {"=": {"=", "<=", ">="}, "<": {"<", "<=", "!="}, ">": {">", ">=", "!="},
            "<=": {"<="}, ">=": {">="}, "!=": {"!="}}


def conclusion_matches(shown, statement, labels=frozenset()) -> bool:
    """Tell whether `shown` gives `statement`: same sides (either way round), a relation as strong."""
    if isinstance(shown, Implication) and isinstance(statement, Implication):
        return (shown.premises == statement.premises
                and conclusion_matches(shown.conclusion, statement.conclusion, labels))
    if not (isinstance(shown, Relation) and isinstance(statement, Relation)):
        return shown == statement
    for rel, lhs, rhs in ((shown.rel, shown.lhs, shown.rhs),
                          (_FLIP[shown.rel], shown.rhs, shown.lhs)):
        if (statement.rel in _IMPLIES[rel] and same_term(lhs, statement.lhs, labels)
                and same_term(rhs, statement.rhs, labels)):
            return True
    return False


def trans(sig: Signature, first: Theorem, second: Theorem) -> Theorem:
    """a R1 b, b R2 c |- a R c."""
    _genuine(first, second)
    a, b = first.concl, second.concl
    if not (isinstance(a, Relation) and isinstance(b, Relation)):
        raise KernelError("transitivity joins two relations")
    if not same_term(a.rhs, b.lhs, sig.labels):
        raise KernelError(f"the chain is broken: {a.rhs} is not {b.lhs}")
    rel = compose_relations(a.rel, b.rel)
    if rel is None:
        raise KernelError(f"'{a.rel}' then '{b.rel}' do not compose")
    # same_term uses y**2 = 1 for labels: the declarations are hypotheses of the result.
    return _make(first.hyps | second.hyps | set(sig.declarations), Relation(rel, a.lhs, b.rhs))


def induction(sig: Signature, var: sp.Symbol, statement: Relation, base: Theorem,
              step: Theorem) -> Theorem:
    """P(0), P(k) |- P(k+1)  give  P(k) for the natural k."""
    _genuine(base, step)
    if var not in sig.nats:
        raise KernelError(f"induction on {var}, which is not declared nat")
    if not isinstance(statement, Relation):
        raise KernelError("induction proves a relation")
    varying = free_symbols(statement) & sig.per_update
    if varying:
        names = ", ".join(sorted(map(str, varying)))
        raise KernelError(f"the statement mentions {names}, which change with {var} "
                          f"(declared per update): induction on {var} does not apply")
    if not conclusion_matches(base.concl, statement.subs(var, 0), sig.labels):
        raise KernelError(f"the base case shows {base.concl}, not {statement.subs(var, 0)}")
    if not conclusion_matches(step.concl, statement.subs(var, var + 1), sig.labels):
        raise KernelError(f"the step shows {step.concl}, not {statement.subs(var, var + 1)}")
    return _make(base.hyps | (step.hyps - {statement}) | set(sig.declarations), statement)


def cases(sig: Signature, goal, branches, premises=(), timeout_ms: int = 5000):
    """(c1 or ... or cn), and goal under each ci  give  goal.  Returns (Decision, Theorem|None).

    branches: (condition, Theorem) pairs; coverage is decided from premises and declarations.
    """
    _genuine(*premises, *(t for _, t in branches))
    cover = decide(sig, premises, Disjunction(tuple(c for c, _ in branches)),
                   timeout_ms=timeout_ms)
    if cover.status != "verified":
        return cover, None
    hyps = set(cover.theorem.hyps)
    for condition, thm in branches:
        if not conclusion_matches(thm.concl, goal, sig.labels):
            raise KernelError(f"a case shows {thm.concl}, not {goal}")
        hyps |= thm.hyps - {condition}
    return cover, _make(hyps, goal)


def discharge(thm: Theorem, premises: tuple) -> Theorem:
    """Gamma, H1..Hn |- C  gives  Gamma |- (H1 and .. and Hn) => C."""
    _genuine(thm)
    return _make(thm.hyps - set(premises), Implication(tuple(premises), thm.concl))


def accepts(thm: Theorem, statement, allowed, labels=frozenset()) -> tuple:
    """Whether thm proves statement from allowed hypotheses; (ok, hypotheses not allowed)."""
    _genuine(thm)
    extra = tuple(h for h in thm.hyps if h not in allowed)
    return conclusion_matches(thm.concl, statement, labels) and not extra, extra

