"""The kernel alone: rules, refusals, and that a Theorem cannot be forged."""

from __future__ import annotations

import copy
import pickle
from pathlib import Path

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
KINDS = {"gamma": "real", "y": "label", "k": "nat", "x": "vector", "w_star": "vector",
         "w": "vector_sequence", "a": "real", "b": "real", "c": "real"}
SIG = K.make_setting("s", KINDS, {"gamma": (">", 0)}, {"x", "y"}, {})


def test_theorem_constructor_is_refused():
    with pytest.raises(KernelError):
        K.Theorem()


def test_forged_theorem_is_refused_by_every_rule():
    forged = object.__new__(K.Theorem)
    object.__setattr__(forged, "hyps", frozenset())
    object.__setattr__(forged, "concl", K.Relation(">=", gamma, 1))
    real = K.assume(SIG, K.Relation(">=", gamma, 1))
    with pytest.raises(KernelError):
        K.decide(SIG, [forged], K.Relation(">=", gamma, 1))
    with pytest.raises(KernelError):
        K.trans(SIG, forged, real)
    with pytest.raises(KernelError):
        K.accepts(SIG, forged, forged.concl)
    with pytest.raises(KernelError):
        K.discharge(SIG, forged, ())


def test_theorems_are_immutable_and_not_copyable():
    thm = K.assume(SIG, K.Relation(">=", gamma, 1))
    with pytest.raises(KernelError):
        thm.concl = K.Relation(">=", gamma, 2)
    with pytest.raises(KernelError):
        copy.copy(thm)
    with pytest.raises(KernelError):
        pickle.dumps(thm)


def test_decide_verifies_and_records_hypotheses():
    margin = K.assume(SIG, K.Relation(">=", y * K.ip(WS, X), gamma))
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
    a = K.assume(SIG, K.Relation("<=", k, gamma))
    b = K.assume(SIG, K.Relation("<=", gamma + 1, 2 * gamma))
    with pytest.raises(KernelError):
        K.trans(SIG, a, b)
    c = K.assume(SIG, K.Relation("<", gamma, 2 * gamma))
    assert K.trans(SIG, a, c).concl == K.Relation("<", k, 2 * gamma)
    d = K.assume(SIG, K.Relation(">=", gamma, 0))
    with pytest.raises(KernelError):
        K.trans(SIG, a, d)


def test_each_refusal_is_named_after_its_rule():
    """KernelError.rule names the rule that refused (as HOL Light's kernel fails with TRANS)."""
    a = K.assume(SIG, K.Relation("<=", k, gamma))
    b = K.assume(SIG, K.Relation("<=", gamma + 1, 2 * gamma))
    forged = object.__new__(K.Theorem)
    stmt = K.Relation(">=", k * gamma, 0)
    refusals = {
        "trans": lambda: K.trans(SIG, a, b),
        "induction": lambda: K.induction(SIG, gamma, stmt, a, b),
        "decide": lambda: K.decide(SIG, [forged], stmt),
        "discharge": lambda: K.discharge(SIG, forged, ()),
        "accepts": lambda: K.accepts(SIG, forged, stmt),
        "make_setting": lambda: K.make_setting("t", {"g": "colour"}, {}, set(), {}),
    }
    for rule, refused in refusals.items():
        with pytest.raises(KernelError) as caught:
            refused()
        assert caught.value.rule == rule, (rule, caught.value)


def test_induction_checks_base_and_step_instances():
    stmt = K.Relation(">=", k * gamma, 0)
    base = K.decide(SIG, [], stmt.subs(k, 0)).theorem
    step = K.decide(SIG, [K.assume(SIG, stmt)], stmt.subs(k, k + 1)).theorem
    thm = K.induction(SIG, k, stmt, base, step)
    assert thm.concl == stmt
    wrong_step = K.decide(SIG, [K.assume(SIG, stmt)], stmt.subs(k, k + 2)).theorem
    with pytest.raises(KernelError):
        K.induction(SIG, k, stmt, base, wrong_step)
    with pytest.raises(KernelError):
        K.induction(SIG, gamma, stmt, base, step)


def test_vector_definitions_substitute():
    update = K.assume(SIG, K.VectorEq(w(k + 1), W + X.scale(y)))
    goal = K.Relation("=", K.ip(WS, K.Vec.atom(w(k + 1))), K.ip(WS, W) + y * K.ip(WS, X))
    assert K.decide(SIG, [update], goal).status == "verified"
    assert K.decide(SIG, [], goal).status == "failed"


def test_supposition_is_never_an_assumption():
    f = K.Relation(">=", gamma, 1)
    thm = K.assume(SIG, f, label="failed step")
    ok, extra = K.accepts(SIG, thm, f)
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


# ---------------------------------------------------------------------------- soundness

from fractions import Fraction  # noqa: E402

from novikoff.kernel import written as WR  # noqa: E402

a_, b_ = sp.Symbol("a", real=True), sp.Symbol("b", real=True)
A, B, KK = WR.Sym("a", "real"), WR.Sym("b", "real"), WR.Sym("k", "nat")


def rel(op, lhs, rhs):
    return WR.formula_of(op, lhs, rhs)


def test_a_forged_setting_is_refused():
    forged = object.__new__(K.Setting)
    with pytest.raises(KernelError):
        K.assume(forged, K.Relation(">=", gamma, 1))
    with pytest.raises(KernelError):
        K.Setting()


def test_declarations_come_from_the_kinds_and_are_recorded():
    # A label's y^2 = 1 and a nat's k >= 0 are derived by the kernel, and rest in the theorem.
    d = K.decide(SIG, [], K.Relation("=", y ** 2, 1))
    assert d.status == "verified"
    assert K.Relation("=", y ** 2, 1) in d.theorem.hyps
    assert ("y", "label per update") in d.theorem.kinds
    as_real = K.make_setting("r", {"y": "real"}, {}, (), {})
    assert K.decide(as_real, [], K.Relation("=", y ** 2, 1)).status == "failed"
    with pytest.raises(KernelError):  # the label theorem means something else here
        K.decide(as_real, [d.theorem], K.Relation("=", y ** 2, 1))


def test_a_symbol_the_setting_does_not_declare_is_refused():
    with pytest.raises(KernelError):
        K.decide(SIG, [], K.Relation(">=", sp.Symbol("q", real=True), 0))


def test_per_update_kinds_travel_with_a_theorem():
    const = K.make_setting("c", {"x": "vector", "k": "nat", "w": "vector_sequence"}, {}, (),
                           {})
    thm = K.assume(const, K.Relation(">=", K.ip(X, X), 0))
    with pytest.raises(KernelError):
        K.decide(SIG, [thm], K.Relation(">=", K.ip(X, X), 0))


def test_undefined_terms_carry_their_domain():
    f = rel("=", WR.Div(KK, KK), WR.Num(Fraction(1)))
    assert f.lhs == 1 and K.Relation("!=", k, 0) in f.obligations()
    assert K.decide(SIG, [], f).kind == "domain"
    ge1 = K.assume(SIG, K.Relation(">=", k, 1))
    assert K.decide(SIG, [ge1], f).status == "verified"
    cancel = rel("=", WR.Div(WR.Sub(WR.Pow(A, Fraction(2)), WR.Num(Fraction(1))),
                            WR.Sub(A, WR.Num(Fraction(1)))), WR.Add(A, WR.Num(Fraction(1))))
    assert K.decide(SIG, [], cancel).status == "failed"
    ne1 = K.assume(SIG, K.Relation("!=", a_, 1))
    assert K.decide(SIG, [ne1], cancel).status == "verified"
    root = rel("=", WR.Pow(WR.Sqrt(A), Fraction(2)), A)
    assert K.decide(SIG, [], root).kind == "domain"


@pytest.mark.parametrize("term", [
    WR.Sqrt(WR.Num(Fraction(-1))),
    WR.Div(WR.Num(Fraction(1)), WR.Div(WR.Num(Fraction(1)), WR.Num(Fraction(0)))),
    WR.Pow(WR.Num(Fraction(0)), Fraction(-1)),
    WR.Sqrt(WR.Neg(WR.Abs(WR.Add(A, WR.Num(Fraction(1)))))),
    WR.Pow(WR.Num(Fraction(-1)), Fraction(1, 2)),
])
def test_no_imaginary_infinite_or_undefined_constant_is_interpreted(term):
    with pytest.raises(KernelError):
        WR.interpret(term)


def test_an_index_must_be_natural():
    f = rel(">=", WR.InnerOf(WR.Elem("w", "vector_sequence", WR.Sub(KK, WR.Num(Fraction(1)))),
                            WR.Sym("x", "vector")), WR.Num(Fraction(-10**6)))
    assert K.Relation(">=", k - 1, 0) in f.obligations()
    with pytest.raises(KernelError):
        WR.interpret(WR.Elem("w", "vector_sequence", WR.Div(KK, WR.Num(Fraction(2)))))


def test_induction_refuses_a_hypothesis_that_varies_with_k():
    big = K.assume(SIG, K.Relation(">=", k, 3))
    stmt = K.Relation("!=", k, 3)
    base = K.decide(SIG, [], stmt.subs(k, 0)).theorem
    step = K.decide(SIG, [big], stmt.subs(k, k + 1)).theorem
    with pytest.raises(KernelError, match="varies with k"):
        K.induction(SIG, k, stmt, base, step)
    # A hypothesis that does not vary with k is fine.
    pos = K.assume(SIG, K.Relation(">=", gamma, 1))
    stmt2 = K.Relation(">=", k * gamma + 1, 1)
    base2 = K.decide(SIG, [pos], stmt2.subs(k, 0)).theorem
    step2 = K.decide(SIG, [pos, K.assume(SIG, stmt2)], stmt2.subs(k, k + 1)).theorem
    assert K.induction(SIG, k, stmt2, base2, step2).concl == stmt2


def test_a_nat_constrained_by_an_assumption_is_a_problem_of_the_setting():
    s = K.make_setting("big", {"k": "nat"}, {}, (), {"big": K.Relation(">=", k, 3)})
    assert s.problems and "by itself" in s.problems[0][2]
    half = K.make_setting("half", {"k": "nat", "w": "real_sequence"}, {}, (),
                          {"h": K.Relation("=", k * sp.Function("w", real=True)(k), k / 2)})
    assert not half.problems  # w[k] = 1/2 for k >= 1 is a model


def test_contradictions_are_vacuous():
    z = sp.Symbol("z")
    s = K.make_setting("cs", {"x": "vector", "z": "vector"}, {}, (), {})
    Z = K.Vec.atom(z)
    hyps = [K.assume(s, K.Relation("=", K.ip(X, X), 1)), K.assume(s, K.Relation("=", K.ip(Z, Z), 1)),
            K.assume(s, K.Relation("=", K.ip(X, Z), 2))]
    assert K.decide(s, hyps, K.Relation("=", 1, 2)).kind == "vacuous"
    half = K.assume(SIG, K.Relation("=", k, sp.Rational(1, 2)))
    assert K.decide(SIG, [half], K.Relation("=", 1, 2), facts=[("nat_cases", k)]).kind == "vacuous"
    assert K.decide(SIG, [half], K.Relation("=", 1, 2)).kind == "vacuous"


def test_two_definitions_of_one_vector_give_an_equation():
    w0 = sp.Function("w")(0)
    first = K.assume(SIG, K.VectorEq(w0, X))
    second = K.assume(SIG, K.VectorEq(w0, WS))
    goal = K.Relation("=", K.ip(X - WS, X - WS), 0)
    assert K.decide(SIG, [first, second], goal).status == "verified"
    # Definitions that refer to each other do not crash: the second becomes an equation.
    loop = K.assume(SIG, K.VectorEq(x, WS.scale(2)))
    back = K.assume(SIG, K.VectorEq(ws, X))
    assert K.decide(SIG, [loop, back], K.Relation("=", K.ip(WS, WS), 0)).status == "verified"


def test_nats_are_integers_and_sequences_functions():
    assert K.decide(SIG, [], K.Relation(">=", (k - 1) * (k - 2), 0)).status == "verified"
    j = sp.Symbol("j", real=True)
    s = K.make_setting("two", dict(KINDS, j="nat", S="real_sequence"), {}, (), {})
    same = K.assume(s, K.Relation("=", j, k))
    wj = K.Vec.atom(w(j))
    assert K.decide(s, [same], K.Relation("=", K.ip(wj, X), K.ip(W, X))).status == "verified"
    S = sp.Function("S", real=True)
    zero = K.assume(s, K.Relation("=", k, 0))
    assert K.decide(s, [zero], K.Relation("=", S(k), S(0))).status == "verified"


def test_equality_composes_with_every_relation():
    a = K.assume(SIG, K.Relation("=", k, gamma))
    b = K.assume(SIG, K.Relation("!=", gamma, 2))
    assert K.trans(SIG, a, b).concl.rel == "!="
    assert K.trans(SIG, b, K.assume(SIG, K.Relation("=", 2, k))).concl.rel == "!="


def test_only_accepted_theorems_are_certified():
    f = K.Relation(">", gamma, 0)
    thm = K.decide(SIG, [], f).theorem
    assert not K.certifies(thm, f)
    assert K.accepts(SIG, thm, f)[0]
    assert K.certifies(thm, f)
    assert not K.certifies(thm, K.Relation(">", gamma, -1))
    forged = object.__new__(K.Theorem)
    assert not K.certifies(forged, f)


def test_consistency_learned_for_a_real_is_not_reused_for_a_nat():
    # k >= 0 and k = 1/2 is satisfiable where k is a real, not where k is a nat.
    as_real = K.make_setting("kr", {"k": "real"}, {"k": (">=", 0)}, (), {})
    half_real = K.assume(as_real, K.Relation("=", k, sp.Rational(1, 2)))
    assert K.decide(as_real, [half_real], K.Relation(">=", k, 0)).status == "verified"
    as_nat = K.make_setting("kn", {"k": "nat"}, {}, (), {})
    half_nat = K.assume(as_nat, K.Relation("=", k, sp.Rational(1, 2)))
    assert K.decide(as_nat, [half_nat], K.Relation(">=", k, 0)).kind == "vacuous"


def _counting_limits(monkeypatch):
    """Limits that count every check's units (a lemma budget too large to bind)."""
    from novikoff.kernel import solver

    limits = solver.Limits(lemma_units=10 ** 12)
    limits.start_file()
    monkeypatch.setattr(solver, "LIMITS", limits)
    return limits


_X, _Y, _Z = sp.symbols("x y z")
# An obligation that needs about 1,400 of Z3's units.
_COSTLY_HYPOTHESES = [K.Relation(">", _X * _Y, 1), K.Relation(">", _X, 0), K.Relation(">", _Y, 0),
                      K.Relation(">", _Z ** 2, _X ** 3 * _Y)]
_COSTLY_GOAL = K.Relation(">=", _X + _Y + _Z ** 2, 2)


def test_a_checks_budget_is_counted_in_solver_units_not_time(monkeypatch):
    # The same budget gives the same verdict on a fast or a slow machine: a budget of T ms is
    # T * UNITS_PER_MS of Z3's own steps.
    from novikoff.kernel.solver import UNITS_PER_MS, entails

    limits = _counting_limits(monkeypatch)
    starved = entails(_COSTLY_HYPOTHESES, _COSTLY_GOAL, timeout_ms=1)
    assert starved.answer == "unknown"
    assert "timeout" not in starved.reason  # out of units, not of time
    assert UNITS_PER_MS <= limits.spent_lemma < 2 * UNITS_PER_MS
    assert entails(_COSTLY_HYPOTHESES, _COSTLY_GOAL, timeout_ms=5000).answer == "valid"


def test_a_files_checks_cost_the_same_whatever_was_checked_before(monkeypatch):
    # Z3's search depends on the terms its context made before: this file's setting check once
    # cost twice the units (and ran past its budget in a long-lived process) after another file
    # was checked in the same process.  Each check has a context of its own, so a file costs the
    # same units, and gets the same verdicts, fresh or after other files.
    from novikoff.checker import Checker, bundled_proofs_dir
    from novikoff.kernel import logic, solver

    units = []
    check = solver.Limits.check

    def counting_check(self, z3_solver, timeout_ms):
        before = solver._context_units(z3_solver.ctx)
        answer = check(self, z3_solver, timeout_ms)
        units[-1] += solver._context_units(z3_solver.ctx) - before
        return answer

    monkeypatch.setattr(solver.Limits, "check", counting_check)
    target = (Path(__file__).parent / "soundness" / "cases" / "redteam_attack2"
              / "m14_norm_growth_unit_ok.proof")

    def cost_and_verdicts():
        units.append(0)
        logic._CONSISTENT.clear()  # the hypotheses known consistent: checked again
        report = Checker().check_file(target)  # a new checker: nothing cached
        return units[-1], [lemma.status for lemma in report.lemmas]

    first = cost_and_verdicts()
    Checker().check_file(bundled_proofs_dir() / "averaged.proof")
    assert cost_and_verdicts() == first
    assert first[0] > 0 and set(first[1]) == {"verified"}
