"""The kernel alone: rules, refusals, and that a Theorem cannot be forged."""

from __future__ import annotations

import copy
import pickle

import pytest
import sympy as sp
from hypothesis import given, settings, strategies as st

from novikoff import KernelError
from novikoff import kernel as K

k = sp.Symbol("k", real=True)
gamma = sp.Symbol("gamma", real=True)
y = sp.Symbol("y", real=True)
x, ws = sp.Symbol("x"), sp.Symbol("w_star")
w = sp.Function("w")
X, WS, W = K.Vec.atom(x), K.Vec.atom(ws), K.Vec.atom(w(k))
SIG = K.Signature((K.Relation(">", gamma, 0), K.Relation("=", y ** 2, 1),
                   K.Relation(">=", k, 0)), frozenset({y}), frozenset({k}), frozenset({x, y}))


def test_theorem_constructor_is_refused():
    with pytest.raises(KernelError):
        K.Theorem()


def test_forged_theorem_is_refused_by_every_rule():
    forged = object.__new__(K.Theorem)
    object.__setattr__(forged, "hyps", frozenset())
    object.__setattr__(forged, "concl", K.Relation(">=", gamma, 1))
    real = K.assume(K.Relation(">=", gamma, 1))
    with pytest.raises(KernelError):
        K.decide(SIG, [forged], K.Relation(">=", gamma, 1))
    with pytest.raises(KernelError):
        K.trans(SIG, forged, real)
    with pytest.raises(KernelError):
        K.accepts(forged, forged.concl, frozenset())
    with pytest.raises(KernelError):
        K.discharge(forged, ())


def test_theorems_are_immutable_and_not_copyable():
    thm = K.assume(K.Relation(">=", gamma, 1))
    with pytest.raises(KernelError):
        thm.concl = K.Relation(">=", gamma, 2)
    with pytest.raises(KernelError):
        copy.copy(thm)
    with pytest.raises(KernelError):
        pickle.dumps(thm)


def test_decide_verifies_and_records_hypotheses():
    margin = K.assume(K.Relation(">=", y * K.ip(WS, X), gamma))
    d = K.decide(SIG, [margin], K.Relation(">=", y * K.ip(WS, X), gamma / 2))
    assert d.status == "verified"
    assert margin.concl in d.theorem.hyps
    assert set(SIG.declarations) <= d.theorem.hyps


def test_decide_rejects_with_a_model():
    d = K.decide(SIG, [], K.Relation(">=", y * K.ip(WS, X), gamma))
    assert d.status == "failed" and d.verdict.model is not None


def test_unknown_is_not_verified():
    # A 1 ms budget on a hard nonlinear goal may time out; either way it is never "verified"
    # unless it is valid, and a timeout is reported as unknown.
    a, b, c = (sp.Symbol(n, real=True) for n in "abc")
    goal = K.Relation("<", a ** 7 * b ** 5 + c ** 3 * a - b ** 9, a * b * c + 17)
    d = K.decide(SIG, [], goal, timeout_ms=1)
    assert d.status in ("unknown", "failed")


def test_transitivity_checks_the_middle_term():
    a = K.assume(K.Relation("<=", k, gamma))
    b = K.assume(K.Relation("<=", gamma + 1, 2 * gamma))
    with pytest.raises(KernelError):
        K.trans(SIG, a, b)
    c = K.assume(K.Relation("<", gamma, 2 * gamma))
    assert K.trans(SIG, a, c).concl == K.Relation("<", k, 2 * gamma)
    d = K.assume(K.Relation(">=", gamma, 0))
    with pytest.raises(KernelError):
        K.trans(SIG, a, d)


def test_induction_checks_base_and_step_instances():
    stmt = K.Relation(">=", K.ip(WS, W), k * gamma)
    base = K.assume(K.Relation(">=", K.ip(WS, K.Vec.atom(w(0))), 0))
    step = K.assume(stmt.subs(k, k + 1))
    thm = K.induction(SIG, k, stmt, base, step)
    assert thm.concl == stmt
    wrong_step = K.assume(stmt.subs(k, k + 2))
    with pytest.raises(KernelError):
        K.induction(SIG, k, stmt, base, wrong_step)
    with pytest.raises(KernelError):
        K.induction(SIG, gamma, stmt, base, step)


def test_vector_definitions_substitute():
    update = K.assume(K.VectorEq(w(k + 1), W + X.scale(y)))
    goal = K.Relation("=", K.ip(WS, K.Vec.atom(w(k + 1))), K.ip(WS, W) + y * K.ip(WS, X))
    assert K.decide(SIG, [update], goal).status == "verified"
    assert K.decide(SIG, [], goal).status == "failed"


def test_supposition_is_never_an_assumption():
    f = K.Relation(">=", gamma, 1)
    thm = K.assume(f, label="failed step")
    ok, extra = K.accepts(thm, f, frozenset({f}))
    assert not ok and len(extra) == 1


def test_nat_cases_only_for_nats():
    with pytest.raises(KernelError):
        K.decide(SIG, [], K.Relation(">=", gamma, 0), facts=[("nat_cases", gamma)])


@settings(max_examples=30, deadline=None)
@given(st.integers(-5, 5), st.integers(-5, 5), st.integers(-5, 5))
def test_inner_products_are_bilinear_and_symmetric(a, b, c):
    u = X.scale(a) + WS.scale(b)
    v = W.scale(c) + X
    assert K.same_term(K.ip(u, v), K.ip(v, u))
    assert K.same_term(K.ip(u + v, u + v), K.ip(u, u) + 2 * K.ip(u, v) + K.ip(v, v))
    assert K.same_term(K.norm(u) ** 2, K.ip(u, u))


@settings(max_examples=25, deadline=None)
@given(st.integers(-20, 20), st.integers(1, 20))
def test_decide_agrees_with_arithmetic_on_constants(p, q):
    value = sp.Rational(p, q)
    goal = K.Relation("<=", value, sp.Integer(1))
    d = K.decide(SIG, [], goal)
    assert (d.status == "verified") == (value <= 1)


def test_a_norm_is_always_the_root_of_a_gram_form():
    with pytest.raises(TypeError):
        K.Norm(sp.Integer(-1))
    with pytest.raises(TypeError):
        K.Norm(sp.Tuple(sp.Tuple(gamma - 2, 1)))
    n = K.norm(X - WS)
    assert K.same_term(n.gram(), K.ip(X, X) - 2 * K.ip(X, WS) + K.ip(WS, WS))
    assert n ** 2 == n.gram()
    # Substituting an index keeps it a norm of a vector.
    assert K.norm(W).subs(k, k + 1) == K.norm(K.Vec.atom(w(k + 1)))
